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
	// with every commit after it (log cleanup removed the ones before).
	Oldest int64
}

// LogRange lists the log and reports its range of versions. It lists the
// whole folder, so its cost grows with the log (which log cleanup bounds).
func (t *Table) LogRange(ctx context.Context) (LogRange, error) {
	files, err := t.listLog(ctx, "")
	if err != nil {
		return LogRange{}, err
	}
	seg, err := planSegment(files, -1)
	if err != nil {
		return LogRange{}, err
	}
	oldest, latest := readableRange(files)
	if oldest < 0 {
		oldest = seg.checkpointVersion // the latest reads, so this cannot be
	}
	return LogRange{Latest: latest, Checkpoint: seg.checkpointVersion, Oldest: oldest}, nil
}

// readableRange is LogRange.Oldest and Latest over a listing; oldest is
// -1 when no version can be rebuilt.
func readableRange(files []logFile) (oldest, latest int64) {
	commits := map[int64]bool{}
	latest = -1
	for _, f := range files {
		if f.version > latest {
			latest = f.version
		}
		if f.kind == kindCommit {
			commits[f.version] = true
		}
	}
	// from: the oldest version from which every commit up to latest is there.
	from := latest + 1
	for from > 0 && commits[from-1] {
		from--
	}
	if from == 0 {
		return 0, latest
	}
	cps := completeCheckpoints(files)
	for _, c := range cps {
		if c+1 >= from {
			return c, latest
		}
	}
	return -1, latest
}

// completeCheckpoints returns the versions of the checkpoints that are
// whole (classic, V2, or every part of a multi-part one), ascending.
func completeCheckpoints(files []logFile) []int64 {
	parts := map[int64]map[int]map[int]bool{} // version -> numParts -> parts seen
	whole := map[int64]bool{}
	for _, f := range files {
		switch f.kind {
		case kindCheckpointClassic, kindCheckpointV2:
			whole[f.version] = true
		case kindCheckpointPart:
			if parts[f.version] == nil {
				parts[f.version] = map[int]map[int]bool{}
			}
			if parts[f.version][f.numParts] == nil {
				parts[f.version][f.numParts] = map[int]bool{}
			}
			parts[f.version][f.numParts][f.part] = true
		}
	}
	for v, byN := range parts {
		for n, seen := range byN {
			if len(seen) == n {
				whole[v] = true
			}
		}
	}
	out := make([]int64, 0, len(whole))
	for v := range whole {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
