package delta

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/lakesql/lakesql/internal/stagename"
	"github.com/lakesql/lakesql/tableformat/filecache"
)

// VacuumPlanOptions say what PlanVacuum may choose.
type VacuumPlanOptions struct {
	// Cutoff: a file removed (its tombstone's deletionTimestamp) at or
	// before it is no longer needed by any version VACUUM keeps readable.
	Cutoff time.Time
	// StageCutoff: a file no version names is kept when it was staged
	// (the time its name carries, internal/stagename) or, without a stamp
	// in its name, last modified after it, or after Cutoff: a stage in
	// flight may still commit it, and a file removed after Cutoff whose
	// tombstone a checkpoint dropped still serves a version kept.
	StageCutoff time.Time
}

// VacuumFile is a file PlanVacuum chose to delete.
type VacuumFile struct {
	Key  string // storage key, relative to the table root
	Size int64
	// Reason is "removed" (a tombstone past the cutoff names it, or its
	// deletion vector) or "orphan" (no action the snapshot holds names it).
	Reason string
}

// VacuumPlan is what VACUUM would delete from the table's latest version.
type VacuumPlan struct {
	// Snapshot is the latest version, read with every tombstone.
	Snapshot *Snapshot
	Files    []VacuumFile // sorted by key
	Bytes    int64
	// Directories counts the folders walked, the table root included.
	Directories int
}

// PlanVacuum lists the table's files and picks those no version after
// opts.Cutoff can need: every file under the root but the log and hidden
// paths (a name segment starting with _ or ., except a partition folder
// "col=value" of a partition column, as Spark's VACUUM skips them), that
// the latest version does not hold, no tombstone removed after the cutoff
// (or without a time) names, with their deletion vectors, and that is not
// a fresh stage or fresh unnamed file (VacuumPlanOptions.StageCutoff).
// It deletes nothing.
func (t *Table) PlanVacuum(ctx context.Context, opts VacuumPlanOptions) (VacuumPlan, error) {
	snap, err := t.snapshot(ctx, -1, true)
	if err != nil {
		return VacuumPlan{}, err
	}
	root := strings.TrimSuffix(t.store.URI(), "/")
	keep := map[string]bool{}
	removed := map[string]bool{}
	name := func(set map[string]bool, p string, dv *DeletionVectorDescriptor) error {
		set[CanonicalPath(root, p)] = true
		if dv == nil {
			return nil
		}
		switch dv.StorageType {
		case "u":
			key, err := deletionVectorKey(dv.PathOrInlineDv)
			if err != nil {
				return fmt.Errorf("deletion vector of %s: %w", p, err)
			}
			set[root+"/"+key] = true
		case "p":
			set[CanonicalPath(root, dv.PathOrInlineDv)] = true
		}
		return nil
	}
	for _, f := range snap.files {
		if err := name(keep, f.Path, f.DeletionVector); err != nil {
			return VacuumPlan{}, err
		}
	}
	cutoff := opts.Cutoff.UnixMilli()
	for _, r := range snap.tombstones {
		set := keep
		if r.DeletionTimestamp != nil && *r.DeletionTimestamp <= cutoff {
			set = removed
		}
		if err := name(set, r.Path, r.DeletionVector); err != nil {
			return VacuumPlan{}, err
		}
	}
	objs, err := t.store.ListAll(ctx, "")
	if err != nil {
		return VacuumPlan{}, fmt.Errorf("vacuum: %w", err)
	}
	parts := snap.Metadata.PartitionColumns
	orphanCutoff := opts.StageCutoff
	if opts.Cutoff.Before(orphanCutoff) {
		orphanCutoff = opts.Cutoff
	}
	plan := VacuumPlan{Snapshot: snap}
	dirs := map[string]bool{"/": true}
	for _, o := range objs {
		if hiddenKey(o.Key, parts) {
			continue
		}
		dirs[path.Dir("/"+o.Key)] = true
		canon := root + "/" + path.Clean(o.Key)
		if keep[canon] {
			continue
		}
		if removed[canon] {
			plan.Files = append(plan.Files, VacuumFile{Key: o.Key, Size: o.Size, Reason: "removed"})
			plan.Bytes += o.Size
			continue
		}
		if !staleOrphan(o, orphanCutoff) {
			continue
		}
		plan.Files = append(plan.Files, VacuumFile{Key: o.Key, Size: o.Size, Reason: "orphan"})
		plan.Bytes += o.Size
	}
	plan.Directories = len(dirs)
	sort.Slice(plan.Files, func(i, j int) bool { return plan.Files[i].Key < plan.Files[j].Key })
	return plan, nil
}

// staleOrphan tells whether a file no version names is older than cutoff:
// by the stage time its name carries, else by its modification time. An
// unknown age is never stale.
func staleOrphan(o ObjectInfo, cutoff time.Time) bool {
	// Only the file name: a partition value could look like a token.
	if at, ok := stagename.Stamp(path.Base(o.Key)); ok {
		return at.Before(cutoff)
	}
	return !o.ModTime.IsZero() && o.ModTime.Before(cutoff)
}

// hiddenKey tells whether VACUUM leaves key alone: the log, and any path
// with a segment starting with _ or . (temp files, _SUCCESS markers,
// _change_data, indexes) other than a partition folder "col=value" of a
// partition column, whose name may start with _.
func hiddenKey(key string, partitionColumns []string) bool {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		if s == "" || !(strings.HasPrefix(s, "_") || strings.HasPrefix(s, ".")) {
			continue
		}
		if i < len(segs)-1 && isPartitionDir(s, partitionColumns) {
			continue
		}
		return true
	}
	return false
}

func isPartitionDir(seg string, partitionColumns []string) bool {
	for _, c := range partitionColumns {
		if strings.HasPrefix(seg, c+"=") {
			return true
		}
	}
	return false
}

// DeleteKeys deletes the objects of keys, several at a time; a missing
// one is no error.
func (t *Table) DeleteKeys(ctx context.Context, keys []string) error {
	return filecache.ForEach(ctx, keys, func(k string) error {
		if err := t.store.Delete(ctx, k); err != nil {
			return fmt.Errorf("vacuum: %w", err)
		}
		return nil
	})
}
