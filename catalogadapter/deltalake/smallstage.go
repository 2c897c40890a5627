package deltalake

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/tableformat/delta"
)

var _ catalogadapter.SmallStager = (*Provider)(nil)

// StageSmall implements catalogadapter.SmallStager: WriteBatch, which
// writes a small record with arrow-go (delta.WriteRecord) and syncs it
// before it returns, as StageSQL does.
func (p *Provider) StageSmall(ctx context.Context, id catalogadapter.TableIdent, rec arrow.RecordBatch) (catalogadapter.Receipt, error) {
	return p.WriteBatch(ctx, id, rec)
}

// writeRecord stages rec with arrow-go when it is small and its columns
// already have the table's Arrow types; ok is false when DuckDB must
// write it (a cast to make, a partition value only DuckDB spells). src
// is rec's columns as selectList accepted them.
func (p *Provider) writeRecord(ctx context.Context, path string, t *delta.Table, snap *delta.Snapshot,
	schema *delta.StructType, rec arrow.RecordBatch, src []srcColumn) (catalogadapter.Receipt, bool, error) {
	if rec.NumRows() > catalogadapter.SmallBatchRows {
		return catalogadapter.Receipt{}, false, nil
	}
	conformed, ok := tableRecord(schema, rec, src)
	if !ok {
		return catalogadapter.Receipt{}, false, nil
	}
	defer conformed.Release()
	adds, err := snap.WriteRecord(ctx, conformed, delta.WriteOptions{TargetFileSize: p.targetFileSize(snap), Now: p.opts.Now})
	if errors.Is(err, delta.ErrNeedsDuckDB) {
		return catalogadapter.Receipt{}, false, nil
	}
	if err != nil {
		if errors.Is(err, delta.ErrUnsupportedFeature) {
			err = fmt.Errorf("%w: %w", catalogadapter.ErrUnsupported, err)
		}
		return catalogadapter.Receipt{}, true, fmt.Errorf("stage rows into %s: %w", path, err)
	}
	if err := checkNotNull(snap, adds); err != nil {
		if derr := t.DeleteFiles(context.WithoutCancel(ctx), adds); derr != nil {
			err = errors.Join(err, derr)
		}
		return catalogadapter.Receipt{}, true, fmt.Errorf("stage rows into %s: %w", path, err)
	}
	return p.receipt(t, snap, adds), true, nil
}

// tableRecord is rec with the table's columns in table order, matched by
// name as selectList matches them, and absent nullable columns all NULL;
// ok is false when a column's Arrow type is not the table's.
func tableRecord(schema *delta.StructType, rec arrow.RecordBatch, src []srcColumn) (arrow.RecordBatch, bool) {
	want, err := delta.ToArrowSchema(schema)
	if err != nil {
		return nil, false
	}
	from := map[string]int{}
	for i, c := range src {
		if isMetadataColumn(schema, c.name) {
			continue
		}
		f := schema.Field(c.name)
		if f == nil {
			for _, g := range schema.Fields {
				if strings.EqualFold(g.Name, c.name) {
					f = g // selectList made sure only one matches
				}
			}
		}
		from[f.Name] = i
	}
	cols := make([]arrow.Array, want.NumFields())
	for k, f := range want.Fields() {
		i, present := from[f.Name]
		if !present {
			cols[k] = array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, int(rec.NumRows()))
			continue
		}
		if !arrow.TypeEqual(rec.Column(i).DataType(), f.Type) {
			for _, c := range cols[:k] {
				c.Release()
			}
			return nil, false
		}
		cols[k] = rec.Column(i)
		cols[k].Retain()
	}
	out := array.NewRecordBatch(want, cols, rec.NumRows())
	for _, c := range cols {
		c.Release()
	}
	return out, true
}
