package duckdbtype

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestOf(t *testing.T) {
	for _, c := range []struct {
		t    arrow.DataType
		want string
	}{
		{arrow.PrimitiveTypes.Int8, "TINYINT"},
		{arrow.PrimitiveTypes.Uint64, "UBIGINT"},
		{arrow.BinaryTypes.LargeString, "VARCHAR"},
		{&arrow.FixedSizeBinaryType{ByteWidth: 16}, "BLOB"},
		{&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, "TIMESTAMPTZ"},
		{&arrow.TimestampType{Unit: arrow.Nanosecond}, "TIMESTAMP"},
		{&arrow.Decimal128Type{Precision: 12, Scale: 3}, "DECIMAL(12,3)"},
		{arrow.StructOf(arrow.Field{Name: "a b", Type: arrow.PrimitiveTypes.Int64}), `STRUCT("a b" BIGINT)`},
		{arrow.MapOf(arrow.BinaryTypes.String, arrow.ListOf(arrow.PrimitiveTypes.Float64)), "MAP(VARCHAR, DOUBLE[])"},
	} {
		if got, err := Of(c.t); err != nil || got != c.want {
			t.Errorf("Of(%s) = %q, %v; want %q", c.t, got, err, c.want)
		}
	}
	for _, bad := range []arrow.DataType{arrow.StructOf(), arrow.FixedWidthTypes.Time64us, arrow.ListOf(arrow.FixedWidthTypes.Time32s)} {
		if got, err := Of(bad); err == nil {
			t.Errorf("Of(%s) = %q, want an error", bad, got)
		}
	}
}
