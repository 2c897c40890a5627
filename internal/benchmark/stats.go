package benchmark

import (
	"math"
	"slices"
	"time"
)

// Summary is one side's runs: the median, the extremes, and the spread
// ((max - min) / median, in percent), which says how far apart the runs
// were on this machine at that time.
type Summary struct {
	Median, Min, Max float64
	SpreadPct        float64
}

// summarize condenses runs; it needs at least one.
func summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{Median: math.NaN(), Min: math.NaN(), Max: math.NaN(), SpreadPct: math.NaN()}
	}
	lo, hi := slices.Min(xs), slices.Max(xs)
	m := median(xs)
	sp := math.NaN()
	if m != 0 {
		sp = 100 * (hi - lo) / math.Abs(m)
	}
	return Summary{Median: m, Min: lo, Max: hi, SpreadPct: sp}
}

// median of xs (the mean of the two middle values for an even count).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// quantile is the nearest-rank q-quantile of ds, which it sorts.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(math.Ceil(q*float64(len(ds)))) - 1
	return ds[max(0, min(i, len(ds)-1))]
}

// ms is a duration in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
