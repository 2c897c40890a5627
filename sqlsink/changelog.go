package sqlsink

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// OpColumn is the changelog column: what each row does.
const OpColumn = "_op"

// Op is what a changelog row does to its key.
type Op byte

// The two effects a changelog row can have.
const (
	OpUpsert Op = 'u' // insert, or replace the row with the same key
	OpDelete Op = 'd'
)

// ErrBadOp marks a changelog value that is neither an upsert nor a delete.
var ErrBadOp = errors.New("invalid changelog _op")

// OpError names the row and the value that made a batch invalid.
type OpError struct {
	Row int // 0-based index in the batch; the message counts from 1, as MySQL does

	Value string
	Null  bool
}

func (e *OpError) Error() string {
	if e.Null {
		return fmt.Sprintf("%v: row %d has a NULL _op", ErrBadOp, e.Row+1)
	}
	return fmt.Sprintf("%v: row %d has _op %q (expected one of I, U, +U, r, c, D, -D, U-, -U)", ErrBadOp, e.Row+1, e.Value)
}

// Unwrap lets errors.Is(err, ErrBadOp) match.
func (e *OpError) Unwrap() error { return ErrBadOp }

// ParseOp maps an _op value as DESIGN.md specifies: I, U (after image), +U,
// r (snapshot read) and c (create) upsert; D, -D and U-/-U (before image)
// delete. Anything else is an error.
func ParseOp(v string) (Op, bool) {
	switch v {
	case "I", "U", "+U", "r", "c":
		return OpUpsert, true
	case "D", "-D", "U-", "-U":
		return OpDelete, true
	}
	return 0, false
}

// rowOps reads the _op column of a batch into one Op per row, or nil when
// the batch has no _op (every row upserts). The first bad row fails it all.
func rowOps(rec arrow.RecordBatch) ([]Op, error) {
	idx := rec.Schema().FieldIndices(OpColumn)
	if len(idx) > 1 {
		return nil, fmt.Errorf("%w: the batch has %d %s columns", ErrBadOp, len(idx), OpColumn)
	}
	if len(idx) == 0 {
		// Columns named with a leading _ are never written: an _OP or
		// _Op column would be dropped, its deletes turned into upserts.
		for _, f := range rec.Schema().Fields() {
			if strings.EqualFold(f.Name, OpColumn) {
				return nil, fmt.Errorf("%w: column %q is not the changelog column, which is spelled %s", ErrBadOp, f.Name, OpColumn)
			}
		}
		return nil, nil
	}
	col := rec.Column(idx[0])
	var value func(i int) string
	switch a := col.(type) {
	case *array.String:
		value = a.Value
	case *array.LargeString:
		value = a.Value
	case *array.StringView:
		value = a.Value
	default:
		return nil, fmt.Errorf("%w: the _op column must be a string, got %s", ErrBadOp, col.DataType())
	}
	ops := make([]Op, col.Len())
	for i := range ops {
		if col.IsNull(i) {
			return nil, &OpError{Row: i, Null: true}
		}
		v := value(i)
		op, ok := ParseOp(v)
		if !ok {
			return nil, &OpError{Row: i, Value: v}
		}
		ops[i] = op
	}
	return ops, nil
}

// SplitChangelog splits a changelog batch into the rows that upsert and the
// rows that delete, in their original order, without the metadata columns
// (names beginning with _). A batch without _op is all upserts. An unknown
// or NULL _op fails the whole batch with an error naming the row and value.
// The caller releases both results.
func SplitChangelog(rec arrow.RecordBatch) (upserts, deletes arrow.RecordBatch, err error) {
	ops, err := rowOps(rec)
	if err != nil {
		return nil, nil, err
	}
	data := dropMetadataColumns(rec)
	defer data.Release()
	if ops == nil {
		data.Retain()
		empty := data.NewSlice(0, 0)
		return data, empty, nil
	}
	mem := memory.DefaultAllocator
	ub, db := array.NewBooleanBuilder(mem), array.NewBooleanBuilder(mem)
	defer ub.Release()
	defer db.Release()
	for _, op := range ops {
		ub.Append(op == OpUpsert)
		db.Append(op == OpDelete)
	}
	um, dm := ub.NewBooleanArray(), db.NewBooleanArray()
	defer um.Release()
	defer dm.Release()
	ctx := context.Background()
	opts := compute.DefaultFilterOptions()
	upserts, err = compute.FilterRecordBatch(ctx, data, um, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("split changelog: %w", err)
	}
	deletes, err = compute.FilterRecordBatch(ctx, data, dm, opts)
	if err != nil {
		upserts.Release()
		return nil, nil, fmt.Errorf("split changelog: %w", err)
	}
	return upserts, deletes, nil
}

// dropMetadataColumns returns rec without the columns whose names begin
// with _: they steer the sink and are never written to the table.
func dropMetadataColumns(rec arrow.RecordBatch) arrow.RecordBatch {
	var fields []arrow.Field
	var cols []arrow.Array
	for i, f := range rec.Schema().Fields() {
		if strings.HasPrefix(f.Name, "_") {
			continue
		}
		fields = append(fields, f)
		cols = append(cols, rec.Column(i))
	}
	md := rec.Schema().Metadata()
	return array.NewRecordBatch(arrow.NewSchema(fields, &md), cols, rec.NumRows())
}
