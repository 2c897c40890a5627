package planner

import (
	"errors"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	gms "github.com/dolthub/go-mysql-server/sql"

	"github.com/lakesql/lakesql/sqlsink"
)

// TestRowsToRecordRefusesWhatDoesNotFit: the last step before a sink
// refuses a value its Arrow type cannot hold instead of wrapping it
// (int8(200) is -56) or turning it into an infinity; valuecheck.go
// refuses such values first, this keeps any path that misses it honest.
func TestRowsToRecordRefusesWhatDoesNotFit(t *testing.T) {
	cases := []struct {
		t arrow.DataType
		v any
	}{
		{arrow.PrimitiveTypes.Int8, int64(200)},
		{arrow.PrimitiveTypes.Int16, int32(40000)},
		{arrow.PrimitiveTypes.Int32, int64(math.MaxInt32 + 1)},
		{arrow.PrimitiveTypes.Int64, uint64(math.MaxUint64)},
		{arrow.PrimitiveTypes.Float32, float64(1e39)},
	}
	for _, c := range cases {
		schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: c.t, Nullable: true}}, nil)
		rec, err := rowsToRecord(schema, []gms.Row{{c.v}})
		if err == nil {
			rec.Release()
			t.Errorf("%s from %T %v: no error", c.t, c.v, c.v)
			continue
		}
		if !errors.Is(err, sqlsink.ErrBadRow) {
			t.Errorf("%s from %T %v: %v, want ErrBadRow", c.t, c.v, c.v, err)
		}
	}
	// The ends of each type still fit.
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int8}, {Name: "b", Type: arrow.PrimitiveTypes.Int64},
		{Name: "c", Type: arrow.PrimitiveTypes.Float32}, {Name: "d", Type: arrow.PrimitiveTypes.Float32},
	}, nil)
	rec, err := rowsToRecord(schema, []gms.Row{{int64(-128), uint64(math.MaxInt64), float64(math.MaxFloat32), math.Inf(-1)}})
	if err != nil {
		t.Fatal(err)
	}
	rec.Release()
}
