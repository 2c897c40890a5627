package iceberg

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// MergeModeKey is the Iceberg table property that says how a MERGE
// writes: merge-on-read (delete files) or copy-on-write (rewritten files).
const MergeModeKey = "write.merge.mode"

// WriteFiles writes records as Parquet data files of tbl, with the
// table's partitioning, field ids and column statistics, and commits
// nothing: the files stay invisible until a Commit adds them. Records are
// matched to the table's columns by name and released as they are written.
func WriteFiles(ctx context.Context, tbl *table.Table, schema *arrow.Schema,
	records iter.Seq2[arrow.RecordBatch, error], targetFileSize int64) ([]ice.DataFile, error) {
	var opts []table.WriteRecordOption
	if targetFileSize > 0 {
		opts = append(opts, table.WithTargetFileSize(targetFileSize))
	}
	var out []ice.DataFile
	for df, err := range table.WriteRecords(ctx, tbl, schema, records, opts...) {
		if err != nil {
			return out, fmt.Errorf("write data files: %w", err)
		}
		out = append(out, df)
	}
	return out, nil
}

// EqualityColumns returns the columns an equality delete keyed on key must
// carry, in table order, and their field ids; it refuses keys equality
// deletes cannot serve: floating-point keys (NaN and -0 make equality
// ambiguous), format version 1, and partitioned tables whose partition
// columns are not all in the key (the delete would land in the new row's
// partition while the old row sits in another), and partitioned tables
// whose live data files are not all of the current spec (oldSpecData);
// and tables whose write.merge.mode is copy-on-write.
func EqualityColumns(ctx context.Context, tbl *table.Table, key []string) ([]string, []int, error) {
	meta := tbl.Metadata()
	if meta.Version() < 2 {
		return nil, nil, fmt.Errorf("%w: equality deletes need format version 2, the table is version 1", ErrUnsupported)
	}
	// An upsert epoch is a MERGE by key; a table whose owner asked for
	// copy-on-write merges gets no delete files (pyiceberg 0.12, for one,
	// reads no equality deletes).
	if strings.EqualFold(tbl.Properties().Get(MergeModeKey, ""), "copy-on-write") {
		return nil, nil, fmt.Errorf("%w: the table's %s is copy-on-write", ErrUnsupported, MergeModeKey)
	}
	schema := meta.CurrentSchema()
	inKey := map[int]bool{}
	for _, k := range key {
		f, ok := schema.FindFieldByName(k)
		if !ok {
			return nil, nil, fmt.Errorf("%w: key column %q is not in the table", ErrInvalid, k)
		}
		switch f.Type.(type) {
		case ice.Float32Type, ice.Float64Type:
			return nil, nil, fmt.Errorf("%w: key column %q is floating-point", ErrUnsupported, k)
		case *ice.StructType, *ice.ListType, *ice.MapType:
			return nil, nil, fmt.Errorf("%w: key column %q is nested", ErrUnsupported, k)
		}
		inKey[f.ID] = true
	}
	spec := meta.PartitionSpec()
	for _, pf := range spec.Fields() {
		if !inKey[pf.SourceID()] {
			name, _ := schema.FindColumnName(pf.SourceID())
			return nil, nil, fmt.Errorf("%w: partition column %q is not part of the key", ErrUnsupported, name)
		}
	}
	if err := oldSpecData(ctx, tbl); err != nil {
		return nil, nil, err
	}
	var cols []string
	var ids []int
	for _, f := range schema.Fields() {
		if inKey[f.ID] {
			cols = append(cols, f.Name)
			ids = append(ids, f.ID)
		}
	}
	return cols, ids, nil
}

// oldSpecData refuses (ErrUnsupported) a table with live data files of a
// partition spec other than the current one, when the current one is
// partitioned: a partitioned equality delete applies only to data files of
// its own spec and partition (Iceberg spec, and both readers), so it would
// miss rows written before the spec changed. Deletes of an unpartitioned
// spec are global and reach every file. Only a table that has had several
// specs costs a read, of the current manifest list, whose entries name
// their spec and say whether they hold live files.
func oldSpecData(ctx context.Context, tbl *table.Table) error {
	meta := tbl.Metadata()
	spec := meta.PartitionSpec()
	snap := tbl.CurrentSnapshot()
	if spec.NumFields() == 0 || len(meta.PartitionSpecs()) < 2 || snap == nil {
		return nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return fmt.Errorf("open the file IO of %s: %w", tbl.Location(), err)
	}
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		return fmt.Errorf("list manifests of snapshot %d: %w", snap.SnapshotID, err)
	}
	for _, m := range manifests {
		if m.ManifestContent() != ice.ManifestContentData || int(m.PartitionSpecID()) == spec.ID() {
			continue
		}
		if m.HasAddedFiles() || m.HasExistingFiles() {
			return fmt.Errorf("%w: data files of partition spec %d are live, which equality deletes of the current spec %d do not reach",
				ErrUnsupported, m.PartitionSpecID(), spec.ID())
		}
	}
	return nil
}

// WriteEqualityDeletes writes key rows as equality-delete files on the
// given field ids, without committing them. Records must hold exactly the
// columns EqualityColumns returned, in that order.
func WriteEqualityDeletes(ctx context.Context, tbl *table.Table, ids []int,
	records iter.Seq2[arrow.RecordBatch, error]) ([]ice.DataFile, error) {
	if len(ids) == 0 {
		return nil, errors.New("equality deletes need key columns")
	}
	files, err := tbl.NewTransaction().WriteEqualityDeletes(ctx, ids, records)
	if err != nil {
		return nil, fmt.Errorf("write equality deletes: %w", err)
	}
	return files, nil
}
