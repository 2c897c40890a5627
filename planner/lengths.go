package planner

// What a column's declared type says beyond its Arrow type. A sink's table
// stores CHAR(n) and VARCHAR(n) as plain strings and BINARY(n) and
// VARBINARY(n) as plain binary (Delta has no length), and the
// go-mysql-server schema uses the unbounded types, so the declared lengths
// are checked here, as MySQL's strict mode does: a longer value fails the
// statement with error 1406. DATETIME(p) and TIMESTAMP(p) are stored at
// microseconds; p sets the go-mysql-server type, which rounds and shows
// values with p digits.

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"unicode/utf8"
)

// ErrDataTooLong marks a value longer than its column's declared length.
var ErrDataTooLong = errors.New("data too long")

// lengthLimit is a column's declared length: characters, or bytes for
// binary columns. max 0 means none.
type lengthLimit struct {
	max   int
	bytes bool
}

// sizedType matches the canonical spellings with a length; CHAR and
// BINARY without one mean a length of 1, as in MySQL.
var sizedType = regexp.MustCompile(`^(CHAR|VARCHAR|BINARY|VARBINARY)(?:\((\d+)\))?$`)

// lengthLimits returns the declared length of each of the definition's
// columns, by name. A sink that attached without columns declares none.
func lengthLimits(def *CreateSink) map[string]lengthLimit {
	out := map[string]lengthLimit{}
	if def == nil {
		return out
	}
	for _, c := range def.Columns {
		m := sizedType.FindStringSubmatch(c.SQLType)
		if m == nil {
			continue
		}
		n := 1
		if m[2] != "" {
			var err error
			if n, err = strconv.Atoi(m[2]); err != nil || n <= 0 {
				continue
			}
		}
		out[c.Name] = lengthLimit{max: n, bytes: m[1] == "BINARY" || m[1] == "VARBINARY"}
	}
	return out
}

// check returns an error naming the column and the row (1-based, within
// the statement) when v is longer than the limit.
func (l lengthLimit) check(v any, column string, row int) error {
	if l.max == 0 {
		return nil
	}
	n := 0
	switch v := v.(type) {
	case string:
		n = len(v)
		if !l.bytes {
			n = utf8.RuneCountInString(v)
		}
	case []byte:
		n = len(v)
		if !l.bytes {
			n = utf8.RuneCount(v)
		}
	default:
		return nil
	}
	if n > l.max {
		return fmt.Errorf("%w for column '%s' at row %d (%d %s, the column holds %d)",
			ErrDataTooLong, column, row, n, map[bool]string{false: "characters", true: "bytes"}[l.bytes], l.max)
	}
	return nil
}

var timeType = regexp.MustCompile(`^(DATETIME|TIMESTAMP)(?:\((\d)\))?$`)

// fractionDigits returns the declared fractional-second digits of the
// definition's DATETIME and TIMESTAMP columns, by name (0 when none are
// written, as in MySQL).
func fractionDigits(def *CreateSink) map[string]int {
	out := map[string]int{}
	if def == nil {
		return out
	}
	for _, c := range def.Columns {
		if m := timeType.FindStringSubmatch(c.SQLType); m != nil {
			p := 0
			if m[2] != "" {
				p = int(m[2][0] - '0')
			}
			out[c.Name] = p
		}
	}
	return out
}
