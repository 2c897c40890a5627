package benchmark

import (
	"fmt"
	"math"
	"strconv"
)

// Target is the bound a workload's ratio (lakesql / reference) should
// meet: at least Ratio for speeds, at most Ratio for costs (time, memory).
type Target struct {
	Ratio  float64
	AtMost bool
}

// AtLeast is the target of a speed: lakesql should reach r times the
// reference's rate.
func AtLeast(r float64) Target { return Target{Ratio: r} }

// AtMost is the target of a cost: lakesql should spend at most r times the
// reference's.
func AtMost(r float64) Target { return Target{Ratio: r, AtMost: true} }

// Met reports whether ratio meets the target; a NaN or infinite ratio
// never does.
func (t Target) Met(ratio float64) bool {
	if math.IsNaN(ratio) || math.IsInf(ratio, 0) {
		return false
	}
	if t.AtMost {
		return ratio <= t.Ratio
	}
	return ratio >= t.Ratio
}

// String is the target as the output shows it: "≥ 0.85", "≤ 2".
func (t Target) String() string {
	op := "≥"
	if t.AtMost {
		op = "≤"
	}
	return op + " " + strconv.FormatFloat(t.Ratio, 'f', -1, 64)
}

// ASCII is the target in plain ASCII (">= 0.85"), for JSON readers.
func (t Target) ASCII() string {
	op := ">="
	if t.AtMost {
		op = "<="
	}
	return fmt.Sprintf("%s %s", op, strconv.FormatFloat(t.Ratio, 'f', -1, 64))
}
