package wire

import "testing"

func TestEmptyQuery(t *testing.T) {
	for q, want := range map[string]bool{
		"":                         true,
		" \n\t":                    true,
		"/* nothing */":            true,
		"-- a line\n":              true,
		"# hash\n  /* and */ -- x": true,
		"#only":                    true,
		"SELECT 1":                 false,
		"/* c */ SELECT 1":         false,
		"# c\nSELECT 1":            false,
		"/*!40101 SET @x=1 */":     false,
	} {
		if got := emptyQuery(q); got != want {
			t.Errorf("emptyQuery(%q) = %v, want %v", q, got, want)
		}
	}
}
