package intconv

import (
	"math"
	"testing"
)

func TestToInt64(t *testing.T) {
	for _, c := range []struct {
		v    any
		want int64
		ok   bool
	}{
		{int8(-128), -128, true},
		{int16(-32768), -32768, true},
		{int32(math.MinInt32), math.MinInt32, true},
		{int64(math.MinInt64), math.MinInt64, true},
		{int(7), 7, true},
		{uint8(255), 255, true},
		{uint16(65535), 65535, true},
		{uint32(math.MaxUint32), math.MaxUint32, true},
		{uint64(math.MaxInt64), math.MaxInt64, true},
		{uint64(math.MaxInt64 + 1), 0, false},
		{uint(math.MaxUint64), 0, false},
		{1.0, 0, false},
		{"1", 0, false},
		{nil, 0, false},
	} {
		got, ok := ToInt64(c.v)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("ToInt64(%T %v) = %d, %v; want %d, %v", c.v, c.v, got, ok, c.want, c.ok)
		}
	}
}
