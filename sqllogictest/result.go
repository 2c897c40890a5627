package sqllogictest

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// FormatValue renders one value the way the classic format writes it:
// NULL as "NULL", an empty string as "(empty)", and otherwise by the
// column's type letter: I as an integer, R with three decimals, anything
// else as text. A value that does not fit its letter (text under I, a
// fraction under I) is written as text, so the mismatch shows.
func FormatValue(v any, typ rune) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		v = string(x)
	case bool:
		if x {
			v = int64(1)
		} else {
			v = int64(0)
		}
	case int:
		v = int64(x)
	case int32:
		v = int64(x)
	case float32:
		v = float64(x)
	}
	var s string
	switch typ {
	case 'I':
		s = formatInteger(v)
	case 'R':
		s = formatReal(v)
	default:
		s = formatText(v)
	}
	if s == "" {
		return "(empty)"
	}
	return s
}

func formatInteger(v any) string {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
			return strconv.FormatInt(int64(x), 10)
		}
	case string:
		t := strings.TrimSpace(x)
		if _, err := strconv.ParseInt(t, 10, 64); err == nil {
			return t
		}
		if _, err := strconv.ParseUint(t, 10, 64); err == nil {
			return t
		}
		if f, err := strconv.ParseFloat(t, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<63 {
			return strconv.FormatInt(int64(f), 10)
		}
	}
	return formatText(v)
}

func formatReal(v any) string {
	switch x := v.(type) {
	case int64:
		return fmt.Sprintf("%.3f", float64(x))
	case uint64:
		return fmt.Sprintf("%.3f", float64(x))
	case float64:
		return fmt.Sprintf("%.3f", x)
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
			return fmt.Sprintf("%.3f", f)
		}
	}
	return formatText(v)
}

// formatText writes times as MySQL does (fractions only when there are
// some), so the embedded driver's time.Time and a server's text agree.
func formatText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case time.Time:
		return x.Format("2006-01-02 15:04:05.999999")
	}
	return fmt.Sprint(v)
}

// HashValues is the classic result hash: the MD5 of every value followed by
// a newline.
func HashValues(values []string) string {
	h := md5.New()
	for _, v := range values {
		h.Write([]byte(v))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// hashLine is the one-line form of a hashed result.
func hashLine(values []string) string {
	return fmt.Sprintf("%d values hashing to %s", len(values), HashValues(values))
}

var hashLineRE = regexp.MustCompile(`^\s*(\d+) values hashing to ([0-9a-fA-F]{32})\s*$`)

// result is a query's formatted values, row by row.
type result struct {
	cols int
	rows [][]string
}

// values returns the values in the order the sort mode puts them.
func (r result) values(mode SortMode) []string {
	rows := r.rows
	if mode == RowSort {
		rows = slices.Clone(rows)
		slices.SortStableFunc(rows, slices.Compare)
	}
	var out []string
	for _, row := range rows {
		out = append(out, row...)
	}
	if mode == ValueSort {
		slices.Sort(out)
	}
	return out
}

// matches compares a result with a query's expected lines, which may be
// one hash line, one value per line (the classic layout), or one row per
// line with values separated by tabs or spaces (compared with runs of
// white space collapsed). Under rowsort and valuesort the expected side is
// sorted too, so a file need not list rows in sorted order.
func matches(expected []string, r result, mode SortMode) bool {
	vals := r.values(mode)
	if len(expected) == 1 {
		if m := hashLineRE.FindStringSubmatch(expected[0]); m != nil {
			return m[1] == strconv.Itoa(len(vals)) && strings.EqualFold(m[2], HashValues(vals))
		}
	}
	if len(expected) == len(vals) {
		exp := slices.Clone(expected)
		switch mode {
		case RowSort:
			exp = sortedChunks(exp, max(r.cols, 1))
		case ValueSort:
			slices.Sort(exp)
		}
		if slices.Equal(exp, vals) {
			return true
		}
	}
	if mode == ValueSort {
		var exp, act []string
		for _, l := range expected {
			exp = append(exp, strings.Fields(l)...)
		}
		for _, v := range vals {
			act = append(act, strings.Fields(v)...)
		}
		slices.Sort(exp)
		slices.Sort(act)
		return slices.Equal(exp, act)
	}
	if len(expected) != len(r.rows) {
		return false
	}
	exp := make([]string, len(expected))
	for i, l := range expected {
		exp[i] = collapse(l)
	}
	act := make([]string, len(r.rows))
	for i, row := range r.rows {
		act[i] = collapse(strings.Join(row, " "))
	}
	if mode == RowSort {
		slices.Sort(exp)
		slices.Sort(act)
	}
	return slices.Equal(exp, act)
}

// sortedChunks sorts a one-value-per-line listing by rows of n values.
func sortedChunks(vals []string, n int) []string {
	var rows [][]string
	for i := 0; i < len(vals); i += n {
		rows = append(rows, vals[i:min(i+n, len(vals))])
	}
	slices.SortStableFunc(rows, slices.Compare)
	var out []string
	for _, row := range rows {
		out = append(out, row...)
	}
	return out
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// render writes a result for a failure report, in the layout the expected
// lines use: the hash line above the threshold (or when a hash was
// expected), one value per line for classic listings, else one row per
// line with tabs.
func render(expected []string, r result, mode SortMode, threshold int) []string {
	vals := r.values(mode)
	if (threshold > 0 && len(vals) > threshold) || (len(expected) == 1 && hashLineRE.MatchString(expected[0])) {
		return []string{hashLine(vals)}
	}
	valuewise := r.cols == 1 || mode == ValueSort || (len(expected) > 0 && len(expected) == len(vals))
	if valuewise {
		return vals
	}
	rows := r.rows
	if mode == RowSort {
		rows = slices.Clone(rows)
		slices.SortStableFunc(rows, slices.Compare)
	}
	out := make([]string, len(rows))
	for i, row := range rows {
		out[i] = strings.Join(row, "\t")
	}
	return out
}
