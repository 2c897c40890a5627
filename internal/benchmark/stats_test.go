package benchmark

import (
	"math"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{5, 5, 1, 9, 5}, 5},
	} {
		if got := median(tc.xs); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median of nothing is a number")
	}
	xs := []float64{3, 1, 2}
	median(xs)
	if xs[0] != 3 || xs[1] != 1 {
		t.Errorf("median reordered its input: %v", xs)
	}
}

func TestSummarize(t *testing.T) {
	s := summarize([]float64{90, 110, 100})
	if s.Median != 100 || s.Min != 90 || s.Max != 110 || s.SpreadPct != 20 {
		t.Errorf("summarize = %+v, want median 100, 90..110, spread 20%%", s)
	}
	if s := summarize([]float64{7}); s.SpreadPct != 0 || s.Median != 7 {
		t.Errorf("one run: %+v", s)
	}
	if s := summarize(nil); !math.IsNaN(s.Median) {
		t.Errorf("no runs: %+v", s)
	}
}

func TestQuantile(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	if got := quantile(ds, .5); got != 50*time.Millisecond {
		t.Errorf("p50 = %v", got)
	}
	if got := quantile(ds, .99); got != 99*time.Millisecond {
		t.Errorf("p99 = %v", got)
	}
	if got := quantile(ds[:1], .99); got != 1*time.Millisecond && got != 100*time.Millisecond {
		t.Errorf("p99 of one = %v", got)
	}
	if got := quantile(nil, .5); got != 0 {
		t.Errorf("quantile of nothing = %v", got)
	}
}

func TestTarget(t *testing.T) {
	for _, tc := range []struct {
		t     Target
		ratio float64
		met   bool
		text  string
	}{
		{AtLeast(0.85), 0.9, true, "≥ 0.85"},
		{AtLeast(0.85), 0.85, true, "≥ 0.85"},
		{AtLeast(0.85), 0.84, false, "≥ 0.85"},
		{AtMost(2), 1.9, true, "≤ 2"},
		{AtMost(2), 2.1, false, "≤ 2"},
		{AtMost(2), math.NaN(), false, "≤ 2"},
		{AtLeast(0.5), math.Inf(1), false, "≥ 0.5"},
	} {
		if got := tc.t.Met(tc.ratio); got != tc.met {
			t.Errorf("%s met by %v: %v, want %v", tc.t, tc.ratio, got, tc.met)
		}
		if tc.t.String() != tc.text {
			t.Errorf("String() = %q, want %q", tc.t.String(), tc.text)
		}
	}
	if AtMost(1).ASCII() != "<= 1" || AtLeast(0.7).ASCII() != ">= 0.7" {
		t.Errorf("ASCII: %q %q", AtMost(1).ASCII(), AtLeast(0.7).ASCII())
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		unit string
		want string
	}{
		{11_234_567, "rows/s", "11.2M rows/s"},
		{66_400, "rows/s", "66.4k rows/s"},
		{58.83, "commits/s", "58.8 commits/s"},
		{12.21, "ms", "12.2 ms"},
		{516.4, "MiB", "516 MiB"},
		{1.234, "ms", "1.23 ms"},
	} {
		if got := formatValue(tc.v, tc.unit); got != tc.want {
			t.Errorf("formatValue(%v, %q) = %q, want %q", tc.v, tc.unit, got, tc.want)
		}
	}
	for n, want := range map[int]string{10_000_000: "10M", 1_500_000: "1.5M", 100_000: "100k", 2000: "2k", 37: "37"} {
		if got := formatCount(n); got != want {
			t.Errorf("formatCount(%d) = %q, want %q", n, got, want)
		}
	}
}
