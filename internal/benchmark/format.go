package benchmark

import (
	"fmt"
	"math"
	"strings"
)

// formatValue shows a figure with three significant digits or so, and
// M/k for large rates: "11.2M rows/s", "66.4k rows/s", "12.2 ms".
func formatValue(v float64, unit string) string {
	return formatNumber(v, strings.HasSuffix(unit, "/s")) + " " + unit
}

func formatNumber(v float64, scale bool) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Sprint(v)
	case scale && math.Abs(v) >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case scale && math.Abs(v) >= 1e4:
		return fmt.Sprintf("%.3gk", v/1e3)
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// formatCount shows a size: 10000000 as "10M", 100000 as "100k".
func formatCount(n int) string {
	switch {
	case n >= 1_000_000 && n%100_000 == 0:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e6), ".0") + "M"
	case n >= 1_000 && n%100 == 0:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e3), ".0") + "k"
	}
	return fmt.Sprint(n)
}

// formatRatio shows a ratio with two decimals, or three when it is small
// enough that two would round it away.
func formatRatio(r float64) string {
	if math.Abs(r) < 0.1 {
		return fmt.Sprintf("%.3f", r)
	}
	return fmt.Sprintf("%.2f", r)
}
