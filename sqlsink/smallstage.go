package sqlsink

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesql/lakesql/catalogadapter"
)

// stageSmall stages a small append flush straight from the Arrow batches
// it is waiting in, through the provider's SmallStager: for a few rows,
// DuckDB's planning of the COPY costs more than the whole write does in
// arrow-go. ok is false when the flush is not one (too big, rows already
// in the DuckDB table, a schema change in flight, a provider without the
// interface or declining it); the caller then stages it with StageSQL.
func (s *Sink) stageSmall(ctx context.Context) (r catalogadapter.Receipt, ok bool, err error) {
	b := s.buf
	ss, can := s.cfg.Provider.(catalogadapter.SmallStager)
	if !can || len(s.evolving) > 0 || len(b.pending) == 0 || b.inTable ||
		b.rows > catalogadapter.SmallBatchRows || b.bytes > catalogadapter.SmallBatchBytes {
		return catalogadapter.Receipt{}, false, nil
	}
	rec, err := concatBatches(b.pending)
	if err != nil {
		return catalogadapter.Receipt{}, false, nil // the DuckDB path reads them as they are
	}
	defer rec.Release()
	r, err = ss.StageSmall(ctx, s.cfg.Table, rec)
	if errors.Is(err, catalogadapter.ErrNotSmall) {
		return catalogadapter.Receipt{}, false, nil
	}
	if err != nil {
		return catalogadapter.Receipt{}, true, fmt.Errorf("stage %d rows: %w", rec.NumRows(), err)
	}
	return r, true, nil
}

// concatBatches joins batches of one schema into one record.
func concatBatches(recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	if len(recs) == 1 {
		recs[0].Retain()
		return recs[0], nil
	}
	schema := recs[0].Schema()
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	for i := range cols {
		parts := make([]arrow.Array, len(recs))
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		c, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	return array.NewRecordBatch(schema, cols, n), nil
}

// KeepsSmall reports whether rows and bytes, as a caller keeping batches
// for a later epoch counts them (with RecordBytes), stay within the
// small-epoch bound and the sink's flush thresholds: such an epoch is
// staged from Arrow in one file and never flushes early.
func (s *Sink) KeepsSmall(rows, bytes int64) bool {
	return rows <= min(catalogadapter.SmallBatchRows, s.cfg.FlushRows) &&
		bytes <= min(catalogadapter.SmallBatchBytes, s.cfg.FlushBytes)
}
