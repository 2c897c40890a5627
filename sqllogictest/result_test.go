package sqllogictest

import (
	"testing"
	"time"
)

func TestFormatValue(t *testing.T) {
	ts := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	for _, tc := range []struct {
		v    any
		typ  rune
		want string
	}{
		{nil, 'I', "NULL"},
		{nil, 'T', "NULL"},
		{"", 'T', "(empty)"},
		{[]byte{}, 'T', "(empty)"},
		{int64(-3), 'I', "-3"},
		{uint64(18446744073709551615), 'I', "18446744073709551615"},
		{[]byte("42"), 'I', "42"},
		{float64(4), 'I', "4"},
		{2.5, 'I', "2.5"},   // a fraction under I shows as itself
		{"abc", 'I', "abc"}, // so does text
		{true, 'I', "1"},
		{int64(1), 'R', "1.000"},
		{1.0 / 3, 'R', "0.333"},
		{[]byte("2.71828"), 'R', "2.718"},
		{float32(0.5), 'R', "0.500"},
		{2.5, 'T', "2.5"},
		{int64(7), 'T', "7"},
		{"a # b", 'T', "a # b"},
		{ts, 'T', "2024-05-06 07:08:09"},
		{ts.Add(1500 * time.Microsecond), 'T', "2024-05-06 07:08:09.0015"},
	} {
		if got := FormatValue(tc.v, tc.typ); got != tc.want {
			t.Errorf("FormatValue(%#v, %c) = %q, want %q", tc.v, tc.typ, got, tc.want)
		}
	}
}

func TestHashValues(t *testing.T) {
	// md5("1\n") and md5("1\n2\n"), as `printf '1\n2\n' | md5sum` gives.
	if got := HashValues([]string{"1"}); got != "b026324c6904b2a9cb4b88d6d61c81d1" {
		t.Errorf("hash of 1: %s", got)
	}
	if got := hashLine([]string{"1", "2"}); got != "2 values hashing to 6ddb4095eb719e2a9f0a3f95677d24e0" {
		t.Errorf("hash line of 1, 2: %s", got)
	}
}

func TestMatches(t *testing.T) {
	r := result{cols: 2, rows: [][]string{{"2", "b c"}, {"1", "a"}}}
	for _, tc := range []struct {
		exp  []string
		mode SortMode
		want bool
	}{
		{[]string{"2\tb c", "1\ta"}, NoSort, true},
		{[]string{"2  b c", "1 a"}, NoSort, true},
		{[]string{"2", "b c", "1", "a"}, NoSort, true},
		{[]string{"1\ta", "2\tb c"}, NoSort, false},
		{[]string{"1\ta", "2\tb c"}, RowSort, true},
		{[]string{"2\tb c", "1\ta"}, RowSort, true},
		{[]string{"1", "a", "2", "b c"}, RowSort, true},
		{[]string{"1", "2", "a", "b c"}, ValueSort, true},
		{[]string{"1 2", "a b c"}, ValueSort, true},
		{[]string{"1", "2", "a", "b"}, ValueSort, false},
		{[]string{"2\tb c"}, NoSort, false},
		{nil, NoSort, false},
		{[]string{hashLine([]string{"2", "b c", "1", "a"})}, NoSort, true},
		{[]string{hashLine([]string{"1", "a", "2", "b c"})}, NoSort, false},
		{[]string{hashLine([]string{"1", "a", "2", "b c"})}, RowSort, true},
	} {
		if got := matches(tc.exp, r, tc.mode); got != tc.want {
			t.Errorf("matches(%q, mode %d) = %v, want %v", tc.exp, tc.mode, got, tc.want)
		}
	}
	if !matches(nil, result{cols: 1}, NoSort) {
		t.Error("no expected lines must match no rows")
	}
}
