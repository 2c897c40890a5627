package driver

import (
	"database/sql/driver"
	"strings"
	"testing"
)

// FuzzInterpolate checks that a string argument can never break out of the
// literal it becomes: the quoted text ends exactly where the literal ends,
// and no placeholder appears in the result.
func FuzzInterpolate(f *testing.F) {
	for _, s := range []string{"", "it's", `back\slash`, `'; DROP SINK x; --`, "?", "\x00\n\r\x1a", `\'`, "é'\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := interpolate("SELECT ?", []driver.NamedValue{{Ordinal: 1, Value: s}})
		if err != nil {
			return
		}
		if !strings.HasPrefix(got, "SELECT ") {
			t.Fatalf("interpolate(%q) = %q", s, got)
		}
		start := len("SELECT ")
		for start < len(got) && got[start] != '\'' && got[start] != '"' {
			start++ // e.g. a charset introducer
		}
		if start == len(got) {
			t.Fatalf("interpolate(%q) = %q: no quoted literal", s, got)
		}
		if end := skipQuoted(got, start); end != len(got)-1 {
			t.Fatalf("interpolate(%q) = %q: the literal closes at %d, before the end", s, got, end)
		}
		if p := placeholders(got); len(p) != 0 {
			t.Fatalf("interpolate(%q) = %q: placeholders %v", s, got, p)
		}
	})
}
