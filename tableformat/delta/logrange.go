package delta

import (
	"context"
	"sort"
)

// LogRange is what the log folder holds, as one listing tells it.
type LogRange struct {
	// Latest is the newest version.
	Latest int64
	// Checkpoint is the newest complete checkpoint at or below Latest, -1
	// when there is none.
	Checkpoint int64
	// Oldest is the oldest version a reader can still reconstruct: 0 while
	// every commit from 0 on is there, else the oldest complete checkpoint
	// with every commit after it.
	Oldest int64
}

// LogRange lists the log and reports its range of versions. It lists the
// whole folder, so its cost grows with the log (which log cleanup bounds).
func (t *Table) LogRange(ctx context.Context) (LogRange, error) {
	files, err := t.listLog(ctx, "")
	if err != nil {
		return LogRange{}, err
	}
	latest := int64(-1)
	commits := map[int64]bool{}
	cps := map[int64]bool{}
	for _, f := range files {
		latest = max(latest, f.version)
		if f.kind == kindCommit {
			commits[f.version] = true
		} else {
			cps[f.version] = true
		}
	}
	seg, err := planSegment(files, -1)
	if err != nil {
		return LogRange{}, err
	}
	r := LogRange{Latest: latest, Checkpoint: seg.checkpointVersion, Oldest: seg.checkpointVersion}
	// gap is the newest version whose commit is missing: no reader starts
	// before it.
	gap := int64(-1)
	for v := latest; v >= 0; v-- {
		if !commits[v] {
			gap = v
			break
		}
	}
	if gap < 0 {
		r.Oldest = 0
		return r, nil
	}
	var starts []int64
	for v := range cps {
		if v >= gap {
			starts = append(starts, v)
		}
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	for _, v := range starts {
		if s, err := planSegment(files, v); err == nil && s.checkpointVersion == v {
			r.Oldest = v
			break
		}
	}
	return r, nil
}
