package delta

import (
	"strconv"
	"testing"
)

// TestFloatText pins the float32 bounds DuckDB's statistics spell
// otherwise than the shortest text (checked against DuckDB's
// FLOAT::VARCHAR): an exact tie between two shortest candidates, and a
// shortest text that reads back only by rounding a tie to even.
func TestFloatText(t *testing.T) {
	for _, c := range []struct {
		v    float32
		want string
	}{
		{94.92, "94.92"},
		{0.1, "0.1"},
		{-1.5e30, "-1.5e+30"},
		{-1356.59375, "-1356.59375"}, // between -1356.5937 and -1356.5938
		{57833.8125, "57833.8125"},
		{381.046875, "381.046875"},
		{-34240048, "-3.4240048e+07"}, // not -3.424005e+07, the tie below and above
		{650530, "650530"},
	} {
		got := floatText(float64(c.v), 32)
		if got != c.want {
			t.Errorf("floatText(%v) = %s, want %s", c.v, got, c.want)
		}
		if back, err := strconv.ParseFloat(got, 32); err != nil || float32(back) != c.v {
			t.Errorf("floatText(%v) = %s reads back as %v, %v", c.v, got, back, err)
		}
	}
	if got := floatText(0.1, 64); got != "0.1" {
		t.Errorf("floatText(0.1, 64) = %s", got)
	}
}
