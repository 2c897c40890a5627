package planner

// The INSERT path's last step: a successful statement's rows, converted
// by go-mysql-server to the columns' types, become one Arrow batch that
// the session's transaction writes into the sink's epoch.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/shopspring/decimal"

	"github.com/lakesql/lakesql/internal/intconv"
	"github.com/lakesql/lakesql/sinkddl"
	"github.com/lakesql/lakesql/sqlsink"
)

// rowsToRecord converts go-mysql-server rows (already converted to the
// columns' types) into an Arrow batch of the sink's schema.
func rowsToRecord(schema *arrow.Schema, rows []gms.Row) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for r, row := range rows {
		if len(row) != len(schema.Fields()) {
			return nil, fmt.Errorf("row %d has %d values, the sink has %d columns", r+1, len(row), len(schema.Fields()))
		}
		for c, v := range row {
			if err := appendValue(b.Field(c), schema.Field(c).Type, v); err != nil {
				return nil, fmt.Errorf("row %d, column %s: %w", r+1, schema.Field(c).Name, err)
			}
		}
	}
	return b.NewRecordBatch(), nil
}

// appendValue appends v, refusing a value the builder's type cannot hold
// rather than wrapping it.
func appendValue(fb array.Builder, t arrow.DataType, v any) error {
	if v == nil {
		fb.AppendNull()
		return nil
	}
	if isNested(t) {
		return appendNested(fb, t, v)
	}
	bad := func() error { return fmt.Errorf("%w: value %v (%T) does not fit %s", sqlsink.ErrBadRow, v, v, t) }
	switch b := fb.(type) {
	case *array.BooleanBuilder:
		n, ok := intconv.ToInt64(v)
		if !ok {
			if x, isBool := v.(bool); isBool {
				b.Append(x)
				return nil
			}
			return bad()
		}
		b.Append(n != 0)
	case *array.Int8Builder:
		n, ok := intconv.ToInt64(v)
		if !ok || n != int64(int8(n)) {
			return bad()
		}
		b.Append(int8(n))
	case *array.Int16Builder:
		n, ok := intconv.ToInt64(v)
		if !ok || n != int64(int16(n)) {
			return bad()
		}
		b.Append(int16(n))
	case *array.Int32Builder:
		n, ok := intconv.ToInt64(v)
		if !ok || n != int64(int32(n)) {
			return bad()
		}
		b.Append(int32(n))
	case *array.Int64Builder:
		n, ok := intconv.ToInt64(v)
		if !ok {
			return bad()
		}
		b.Append(n)
	case *array.Float32Builder:
		switch x := v.(type) {
		case float32:
			b.Append(x)
		case float64:
			// Never an infinity from a finite value (valuecheck.go refuses
			// those first; this is the last line).
			if math.IsInf(float64(float32(x)), 0) && !math.IsInf(x, 0) {
				return bad()
			}
			b.Append(float32(x))
		default:
			return bad()
		}
	case *array.Float64Builder:
		switch x := v.(type) {
		case float64:
			b.Append(x)
		case float32:
			b.Append(float64(x))
		default:
			return bad()
		}
	case *array.Decimal128Builder:
		dt := t.(*arrow.Decimal128Type)
		var s string
		switch x := v.(type) {
		case decimal.Decimal:
			s = x.StringFixed(dt.Scale)
		case string:
			s = x
		default:
			return bad()
		}
		n, err := decimal128.FromString(s, dt.Precision, dt.Scale)
		if err != nil {
			return fmt.Errorf("%w: %v", sqlsink.ErrBadRow, err)
		}
		b.Append(n)
	case *array.StringBuilder:
		switch x := v.(type) {
		case string:
			b.Append(x)
		case []byte:
			b.Append(string(x))
		default:
			return bad()
		}
	case *array.BinaryBuilder:
		switch x := v.(type) {
		case []byte:
			b.Append(x)
		case string:
			b.AppendString(x)
		default:
			return bad()
		}
	case *array.Date32Builder:
		x, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		b.Append(arrow.Date32FromTime(x))
	case *array.TimestampBuilder:
		x, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		b.Append(arrow.Timestamp(x.UnixMicro()))
	default:
		return fmt.Errorf("%w: %s", sinkddl.ErrUnsupportedType, t)
	}
	return nil
}

// write hands a successful statement's rows for one sink to the session's
// transaction, opening the sink's epoch first if this is the transaction's
// first write to it. The rows have the sink's columns, then extra (the
// columns schema evolution adds), then perhaps _op.
func (s *Session) write(ctx *gms.Context, h *sinkHandle, extra []arrow.Field, rows []gms.Row) error {
	return s.fail(s.writeRows(ctx, h, extra, rows))
}

func (s *Session) writeRows(ctx *gms.Context, h *sinkHandle, extra []arrow.Field, rows []gms.Row) error {
	sink, err := h.open(ctx)
	if err != nil {
		return err
	}
	schema := sink.Schema()
	if len(extra) > 0 {
		schema = arrow.NewSchema(append(slices.Clone(schema.Fields()), extra...), nil)
	}
	if len(rows) > 0 && len(rows[0]) == len(schema.Fields())+1 {
		schema = withOpColumn(schema)
	}
	rec, err := rowsToRecord(schema, rows)
	if err != nil {
		return fmt.Errorf("sink %s: %w", h.rec.Name, err)
	}
	defer rec.Release()
	t := s.current()
	_, open := t.epochs[h]
	if open {
		return writeAlone(ctx, h, sink, rec, nil)
	}
	p, kept := t.pending[h]
	if !kept {
		p = &pendingRows{}
	}
	if s.groupable(ctx, t, h, sink, rec) && p.fits(sink, rec) {
		if !kept {
			if !t.shared[h] {
				if err := h.share(ctx); err != nil {
					return err
				}
				t.shared[h] = true
			}
			t.pending[h] = p
			t.order = append(t.order, h)
		}
		p.add(rec)
		return nil
	}
	// Written alone from here on: the sink's lock and an epoch, which
	// takes the rows the transaction kept for a group commit first.
	took, err := s.beginAlone(ctx, t, h, sink)
	if err != nil {
		return err
	}
	if kept {
		for _, r := range p.recs {
			if err := sink.Write(ctx, r); err != nil {
				// The kept rows stay kept: the COMMIT tries them again.
				_ = sink.RollbackEpoch(context.WithoutCancel(ctx), t.epochs[h])
				delete(t.epochs, h)
				if took {
					t.unlock(h)
				}
				return fmt.Errorf("sink %s: %w", h.rec.Name, err)
			}
		}
		delete(t.pending, h)
		p.release()
	}
	if kept {
		return writeAlone(ctx, h, sink, rec, nil)
	}
	return writeAlone(ctx, h, sink, rec, func() {
		// These rows were to be the epoch's first. Without them it must
		// not commit: an empty version would use up its number, and an
		// explicit epoch would then read as replayed.
		_ = sink.RollbackEpoch(context.WithoutCancel(ctx), t.epochs[h])
		delete(t.epochs, h)
		t.order = slices.DeleteFunc(t.order, func(o *sinkHandle) bool { return o == h })
		if took {
			t.unlock(h)
		}
	})
}

// groupable says whether the transaction may keep rec for a group commit
// of sink h (groupcommit.go) rather than write it alone.
func (s *Session) groupable(ctx *gms.Context, t *txn, h *sinkHandle, sink *sqlsink.Sink, rec arrow.RecordBatch) bool {
	if t.held[h] || sink.Config().Mode != sqlsink.ModeAppend || sink.ChecksRows() ||
		len(rec.Schema().Fields()) != len(sink.Schema().Fields()) { // schema evolution's columns, or _op
		return false
	}
	if t.pending[h] == nil {
		if _, named := s.explicitEpoch(ctx); named {
			return false
		}
	}
	return true
}

// beginAlone takes h's lock for the transaction and opens its epoch: the
// session's lakesql_epoch, else the sink's next.
func (s *Session) beginAlone(ctx *gms.Context, t *txn, h *sinkHandle, sink *sqlsink.Sink) (took bool, err error) {
	if took, err = t.lock(ctx, h); err != nil {
		return false, err
	}
	// An epoch the session names may be a replay; one lakesql numbers
	// never is (BeginNextEpoch): if another process under the same
	// writer id took the number, the commit takes the next one.
	e, named := s.explicitEpoch(ctx)
	if named && t.pending[h] == nil {
		err = sink.BeginEpoch(ctx, e)
		if t.named == nil {
			t.named = map[*sinkHandle]bool{}
		}
		t.named[h] = true
	} else {
		e, err = sink.BeginNextEpoch(ctx)
	}
	if err != nil {
		if took {
			t.unlock(h)
		}
		return false, fmt.Errorf("sink %s: %w", h.rec.Name, err)
	}
	t.epochs[h] = e
	if !slices.Contains(t.order, h) {
		t.order = append(t.order, h)
	}
	return took, nil
}

// writeAlone writes rec into the transaction's epoch on h; undo runs
// when the sink refuses it.
func writeAlone(ctx *gms.Context, h *sinkHandle, sink *sqlsink.Sink, rec arrow.RecordBatch, undo func()) error {
	if err := sink.Write(ctx, rec); err != nil {
		if undo != nil {
			undo()
		}
		return fmt.Errorf("sink %s: %w", h.rec.Name, err)
	}
	return nil
}
