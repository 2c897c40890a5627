package iceberg

import (
	"context"
	"errors"
	"fmt"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// ErrDVChanged (always with ErrConflict): since the delete read the table,
// another commit gave one of its data files a different deletion vector.
// The new DV lacks that one's positions: the delete must be redone.
var ErrDVChanged = errors.New("the data file's deletion vector changed")

// replacedDVs resolves, on tbl's current snapshot, the live DVs the new
// ones in dels replace: for each, the live DV of its data file must be
// the one it was made from (bases), else ErrDVChanged; a data file no
// longer live is ErrFileRemoved.
func replacedDVs(ctx context.Context, tbl *table.Table, dels []ice.DataFile, bases map[string]DVBase) ([]ice.DataFile, error) {
	var dvs []ice.DataFile
	for _, d := range dels {
		if table.IsDeletionVector(d) {
			dvs = append(dvs, d)
		}
	}
	if len(dvs) == 0 {
		return nil, nil
	}
	live, err := LiveDataFiles(ctx, tbl)
	if err != nil {
		return nil, err
	}
	snap := tbl.CurrentSnapshot()
	current := map[string]ice.DataFile{}
	if snap != nil {
		files, err := LiveDeleteFiles(ctx, tbl, snap.SnapshotID)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if table.IsDeletionVector(f) && f.ReferencedDataFile() != nil {
				current[*f.ReferencedDataFile()] = f
			}
		}
	}
	var out []ice.DataFile
	for _, d := range dvs {
		ref := d.ReferencedDataFile()
		if ref == nil {
			return nil, fmt.Errorf("%w: deletion vector in %s names no data file", ErrInvalid, d.FilePath())
		}
		if _, ok := live[*ref]; !ok {
			return nil, fmt.Errorf("%w: %w: %s (another writer removed it)", ErrConflict, ErrFileRemoved, *ref)
		}
		base, ok := bases[*ref]
		if !ok {
			return nil, fmt.Errorf("%w: deletion vector for %s without the DV it replaces", ErrInvalid, *ref)
		}
		cur := current[*ref]
		switch {
		case cur == nil && base.Path == "":
		case cur != nil && cur.FilePath() == base.Path && cur.ContentOffset() != nil && *cur.ContentOffset() == base.Offset:
			out = append(out, cur)
		default:
			return nil, fmt.Errorf("%w: %w: %s", ErrConflict, ErrDVChanged, *ref)
		}
	}
	return out, nil
}

// ErrNoV3Rewrite: iceberg-go v0.7.0 replaces data files on a format
// version 3 table (Transaction.ReplaceDataFilesWithDataFiles, ReplaceFiles)
// only when every added file carries an explicit first_row_id, and row
// lineage asks a rewrite to carry each moved row's _row_id and
// _last_updated_sequence_number, which lakesql's writers do not write.
// Copy-on-write upserts on such tables are refused with it.
var ErrNoV3Rewrite = errors.New("copy-on-write on an Iceberg format version 3 table: iceberg-go v0.7.0 needs an explicit first_row_id on every added file " +
	"(Transaction.ReplaceDataFilesWithDataFiles), and the rewritten rows would lose their _row_id; v3 upserts and deletes write deletion vectors")

// checkNotReferenced refuses files tbl's current snapshot already names
// (what AddDataFiles' duplicate check does on the other path).
func checkNotReferenced(ctx context.Context, tbl *table.Table, files []ice.DataFile) error {
	if len(files) == 0 {
		return nil
	}
	refs, err := ReferencedFiles(ctx, tbl)
	if err != nil {
		return err
	}
	for _, f := range files {
		if refs[f.FilePath()] {
			return fmt.Errorf("%w: data file %s is already in the table", ErrInvalid, f.FilePath())
		}
	}
	return nil
}
