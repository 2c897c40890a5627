package iceberg

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Rewrite is a compaction's change: data files replaced by files holding
// the same rows with their deletes applied, as one replace snapshot.
type Rewrite struct {
	// Removes are the rewritten data files; Adds the files written from
	// their rows. Adds may be empty (every row was deleted).
	Removes, Adds []ice.DataFile
	// DeleteRemoves are the delete files no live data file needs once the
	// rewrite lands.
	DeleteRemoves []ice.DataFile
	// DVRemoves are the deletion vectors of rewritten data files, whose
	// rows the new files hold without the deleted ones.
	DVRemoves []ice.DataFile
	// DataSequenceNumber is the data sequence number the added files get:
	// the sequence number of the snapshot the rewrite read (Java's
	// use-starting-sequence-number). Deletes committed after that snapshot
	// then still apply to the rewritten rows, and the ones it applied do
	// not apply again. Below 0 (and on format version 1) the new
	// snapshot's own number.
	DataSequenceNumber int64
	// Summary goes into the snapshot summary.
	Summary map[string]string
}

// CommitRewrite makes rw one snapshot of operation "replace" on tbl's main
// branch, pinned to the head tbl was loaded with: when another snapshot
// landed since, nothing is written and the error wraps ErrConflict.
// The caller validates rw against the snapshots between the one it read
// and tbl's head (ChangesSince).
func CommitRewrite(ctx context.Context, tbl *table.Table, rw Rewrite) (*table.Table, error) {
	if len(rw.Removes) == 0 {
		return nil, fmt.Errorf("%w: a rewrite removes at least one data file", ErrInvalid)
	}
	if err := emptyStringPartition(tbl.Metadata(), rw.Adds); err != nil {
		return nil, err
	}
	tx := tbl.NewTransaction()
	if err := tx.AssertRefSnapshotID(table.MainBranch); err != nil {
		return nil, fmt.Errorf("pin main branch: %w", err)
	}
	b := tx.NewRewrite(ice.Properties(rw.Summary))
	if rw.DataSequenceNumber >= 0 && tbl.Metadata().Version() >= 2 {
		b.DataSequenceNumber(rw.DataSequenceNumber)
	}
	for _, f := range rw.Removes {
		b.DeleteFile(f)
	}
	for _, f := range rw.Adds {
		b.AddDataFile(f)
	}
	for _, f := range rw.DeleteRemoves {
		b.DeleteFile(f)
	}
	if len(rw.DVRemoves) > 0 {
		b.ApplyResult(table.CompactionGroupResult{SafeDeletionVectors: rw.DVRemoves})
	}
	if err := b.Commit(ctx); err != nil {
		return nil, fmt.Errorf("build rewrite: %w", err)
	}
	return commitTx(ctx, tx)
}

// Changes are what the snapshots after one a rewrite read did, as their
// summaries tell.
type Changes struct {
	// Snapshots counts them.
	Snapshots int
	// Removed: one of them removed data or delete files (an overwrite, a
	// copy-on-write merge, another compaction).
	Removed bool
	// PositionDeletes: one of them added position deletes or deletion
	// vectors, which name data files by path.
	PositionDeletes bool
	// Why says what made Replan true.
	Why string
	// Replan: the read snapshot is no longer an ancestor of the head, a
	// snapshot has no summary, or the schema or partition spec changed.
	Replan bool
}

// ChangesSince summarises the main-branch snapshots of tbl after read.
func ChangesSince(tbl *table.Table, read *table.Snapshot, readSpec, readSchema int) Changes {
	var c Changes
	meta := tbl.Metadata()
	if meta.DefaultPartitionSpec() != readSpec || meta.CurrentSchema().ID != readSchema {
		return Changes{Replan: true, Why: "the table's schema or partition spec changed"}
	}
	head := meta.SnapshotByName(table.MainBranch)
	if head == nil {
		return Changes{Replan: true, Why: "the table has no snapshot"}
	}
	for s := head; s != nil && s.SnapshotID != read.SnapshotID; {
		c.Snapshots++
		if s.Summary == nil {
			return Changes{Replan: true, Why: fmt.Sprintf("snapshot %d has no summary", s.SnapshotID)}
		}
		props := s.Summary.Properties
		for _, k := range []string{"deleted-data-files", "removed-delete-files", "removed-position-delete-files", "removed-equality-delete-files", "removed-dvs"} {
			if nonzero(props[k]) {
				c.Removed = true
			}
		}
		if nonzero(props["added-position-delete-files"]) || nonzero(props["added-dvs"]) ||
			count(props["added-delete-files"]) > count(props["added-equality-delete-files"]) {
			c.PositionDeletes = true
			c.Why = fmt.Sprintf("snapshot %d added position deletes", s.SnapshotID)
		}
		if s.ParentSnapshotID == nil {
			return Changes{Replan: true, Why: fmt.Sprintf("snapshot %d, which the rewrite read, is no longer an ancestor of the head", read.SnapshotID)}
		}
		s = meta.SnapshotByID(*s.ParentSnapshotID)
		if s == nil {
			return Changes{Replan: true, Why: fmt.Sprintf("snapshot %d, which the rewrite read, is no longer an ancestor of the head", read.SnapshotID)}
		}
	}
	return c
}

func nonzero(v string) bool { return v != "" && v != "0" }

// count reads a summary count; a missing or bad one is 0.
func count(v string) int64 {
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

// LiveDeleteFiles lists the delete files (position and equality) the
// manifests of tbl's snapshot snapID list as live, those that apply to no
// data file included.
func LiveDeleteFiles(ctx context.Context, tbl *table.Table, snapID int64) ([]ice.DataFile, error) {
	snap := tbl.SnapshotByID(snapID)
	if snap == nil {
		return nil, fmt.Errorf("%w: snapshot %d is not in the table", ErrInvalid, snapID)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		return nil, fmt.Errorf("list manifests of snapshot %d: %w", snapID, err)
	}
	var out []ice.DataFile
	for _, m := range manifests {
		if m.ManifestContent() != ice.ManifestContentDeletes {
			continue
		}
		entries, err := m.FetchEntries(fsys, true)
		if err != nil {
			return nil, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
		}
		for _, e := range entries {
			out = append(out, e.DataFile())
		}
	}
	return out, nil
}

// PartitionKey spells a data file's spec and partition values, for
// grouping files by partition.
func PartitionKey(f ice.DataFile) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d", f.SpecID())
	spec := f.Partition()
	ids := make([]int, 0, len(spec))
	for id := range spec {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		fmt.Fprintf(&b, "/%d=%T:%v", id, spec[id], spec[id])
	}
	return b.String()
}
