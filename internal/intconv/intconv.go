// Package intconv converts the Go integers that values arrive as (from
// go-mysql-server rows, JSON decoding, Arrow builders) to int64, the one
// width lakesql computes in.
package intconv

import "math"

// ToInt64 returns v as an int64 when v is a Go integer of any width whose
// value fits; ok is false for other types and for unsigned values above
// math.MaxInt64.
func ToInt64(v any) (n int64, ok bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint:
		return int64(x), uint64(x) <= math.MaxInt64
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		return int64(x), x <= math.MaxInt64
	}
	return 0, false
}
