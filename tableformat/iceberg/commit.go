package iceberg

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// ErrFileRemoved (always with ErrConflict): a file the commit removes is no
// longer in the table. Retrying cannot help; the work must be redone.
var ErrFileRemoved = errors.New("data file is no longer in the table")

// Change is what one commit makes visible, as one snapshot.
type Change struct {
	// Adds are data files; Deletes are equality or position delete files.
	// With deletes the snapshot is a row delta.
	Adds    []ice.DataFile
	Deletes []ice.DataFile
	// Removes are paths of live data files this commit takes out: the
	// copy-on-write half of an upsert. Not combined with Deletes.
	Removes []string
	// Summary goes into the snapshot summary (the epoch record).
	Summary map[string]string
	// DVBases maps the data file of each deletion vector in Deletes to the
	// DV it replaces (WriteDeletionVectors): the commit removes that one,
	// and fails with ErrDVChanged when the data file's live DV is another.
	DVBases map[string]DVBase
	// CheckDuplicates refuses files the table already holds. It reads every
	// manifest, so callers that know their files are new (an exactly-once
	// commit whose epoch was checked) leave it off.
	CheckDuplicates bool
}

// Commit makes ch one snapshot on tbl's main branch, pinned to the head
// tbl was loaded with (AssertRefSnapshotID): if any other snapshot landed
// since, nothing is written and the error wraps ErrConflict. iceberg-go's
// SQL, Hive and Hadoop catalogs report that race as a plain "requirement
// failed" error, REST as ErrCommitFailed; both become ErrConflict here, so
// the caller's loop can reload, re-check and retry. A change with no files
// still makes a snapshot (an empty append), so that an empty epoch is
// recorded too.
func Commit(ctx context.Context, tbl *table.Table, ch Change) (*table.Table, error) {
	if len(ch.Removes) > 0 && len(ch.Deletes) > 0 {
		return nil, fmt.Errorf("%w: a commit either removes data files or adds delete files, not both", ErrInvalid)
	}
	if err := emptyStringPartition(tbl.Metadata(), append(slices.Clip(ch.Adds), ch.Deletes...)); err != nil {
		return nil, err
	}
	tx := tbl.NewTransaction()
	if err := tx.AssertRefSnapshotID(table.MainBranch); err != nil {
		return nil, fmt.Errorf("pin main branch: %w", err)
	}
	props := ice.Properties(ch.Summary)
	var opts []table.WriteOption
	if !ch.CheckDuplicates {
		opts = append(opts, table.WithoutDuplicateCheck())
	}
	var err error
	v3 := tbl.Metadata().Version() >= MinDVFormatVersion
	switch {
	case len(ch.Removes) > 0 && v3:
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, ErrNoV3Rewrite)
	case len(ch.Removes) > 0:
		var live map[string]ice.DataFile
		live, err = LiveDataFiles(ctx, tbl)
		if err != nil {
			return nil, err
		}
		doomed := make([]ice.DataFile, 0, len(ch.Removes))
		for _, p := range ch.Removes {
			df, ok := live[p]
			if !ok {
				return nil, fmt.Errorf("%w: %w: %s (another writer removed it)", ErrConflict, ErrFileRemoved, p)
			}
			doomed = append(doomed, df)
		}
		err = tx.ReplaceDataFilesWithDataFiles(ctx, doomed, ch.Adds, props, opts...)
	case len(ch.Deletes) > 0 || (len(ch.Adds) > 0 && v3):
		// On v3, appends go through a row delta too: iceberg-go's
		// AddDataFiles wants each file's first_row_id set, which nobody
		// knows before the commit; a row delta leaves it null, for the
		// manifest's first_row_id to assign (the spec's inheritance).
		if v3 && ch.CheckDuplicates {
			if err := checkNotReferenced(ctx, tbl, ch.Adds); err != nil {
				return nil, err
			}
		}
		if len(ch.Deletes) > 0 && tbl.Metadata().Version() < 2 {
			return nil, fmt.Errorf("%w: delete files need format version 2, the table is version 1", ErrUnsupported)
		}
		replaced, rerr := replacedDVs(ctx, tbl, ch.Deletes, ch.DVBases)
		if rerr != nil {
			return nil, rerr
		}
		rd := tx.NewRowDelta(props)
		rd.AddRows(ch.Adds...)
		rd.AddDeletes(ch.Deletes...)
		rd.RemoveDeletes(replaced...)
		err = rd.Commit(ctx)
	case len(ch.Adds) > 0:
		err = tx.AddDataFiles(ctx, ch.Adds, props, opts...)
	default:
		err = tx.AddFiles(ctx, nil, props, false)
	}
	if err != nil {
		return nil, fmt.Errorf("build commit: %w", err)
	}
	return commitTx(ctx, tx)
}

// commitTx commits tx; a lost race wraps ErrConflict.
func commitTx(ctx context.Context, tx *table.Transaction) (*table.Table, error) {
	out, err := tx.Commit(ctx)
	switch {
	case err != nil && IsConflict(err):
		return nil, fmt.Errorf("%w: %w", ErrConflict, err)
	case err != nil:
		return nil, err
	}
	return out, nil
}

// IsConflict tells whether a commit error means "the table moved": a lost
// compare-and-swap in any catalog, or a requirement the fresh table fails.
func IsConflict(err error) bool {
	if errors.Is(err, ErrConflict) || errors.Is(err, table.ErrCommitFailed) {
		return true
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "requirement failed")
}

// LiveDataFiles maps the path of every data file in tbl's current snapshot
// to its DataFile.
func LiveDataFiles(ctx context.Context, tbl *table.Table) (map[string]ice.DataFile, error) {
	out := map[string]ice.DataFile{}
	if tbl.CurrentSnapshot() == nil {
		return out, nil
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("list data files of %s: %w", strings.Join(tbl.Identifier(), "."), err)
	}
	for _, t := range tasks {
		out[t.File.FilePath()] = t.File
	}
	return out, nil
}

// ReferencedFiles is the set of every data and delete file the manifests
// of tbl's current snapshot list as live (added or existing). Unlike a
// scan plan, it includes delete files that apply to no data file (an
// equality delete whose keys no older file holds), which the table
// references all the same and which must not be deleted.
func ReferencedFiles(ctx context.Context, tbl *table.Table) (map[string]bool, error) {
	out := map[string]bool{}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return out, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		return nil, fmt.Errorf("list manifests of snapshot %d: %w", snap.SnapshotID, err)
	}
	for _, m := range manifests {
		entries, err := m.FetchEntries(fsys, true)
		if err != nil {
			return nil, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
		}
		for _, e := range entries {
			out[e.DataFile().FilePath()] = true
		}
	}
	return out, nil
}
