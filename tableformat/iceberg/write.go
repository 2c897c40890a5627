package iceberg

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

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
// partition while the old row sits in another).
func EqualityColumns(tbl *table.Table, key []string) ([]string, []int, error) {
	meta := tbl.Metadata()
	if meta.Version() < 2 {
		return nil, nil, fmt.Errorf("%w: equality deletes need format version 2, the table is version 1", ErrUnsupported)
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
