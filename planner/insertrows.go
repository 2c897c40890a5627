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
	took := false
	if !open {
		if took, err = t.lock(ctx, h); err != nil {
			return err
		}
		// An epoch the session names may be a replay; one lakesql numbers
		// never is (BeginNextEpoch): if another process under the same
		// writer id took the number, the commit takes the next one.
		e, named := s.explicitEpoch(ctx)
		if named {
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
			return fmt.Errorf("sink %s: %w", h.rec.Name, err)
		}
		t.epochs[h] = e
		t.order = append(t.order, h)
	}
	if err := sink.Write(ctx, rec); err != nil {
		if !open {
			// These rows were to be the epoch's first. Without them the
			// epoch must not commit: an empty version would use up its
			// number, and an explicit epoch would then read as replayed.
			_ = sink.RollbackEpoch(context.WithoutCancel(ctx), t.epochs[h])
			delete(t.epochs, h)
			t.order = t.order[:len(t.order)-1]
			if took {
				t.unlock(h)
			}
		}
		return fmt.Errorf("sink %s: %w", h.rec.Name, err)
	}
	return nil
}
