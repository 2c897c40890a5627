package sqlquote

import "testing"

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{"": `""`, "a": `"a"`, `say "hi"`: `"say ""hi"""`, "it's": `"it's"`} {
		if got := Ident(in); got != want {
			t.Errorf("Ident(%q) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{"": "''", "a": "'a'", "it's": "'it''s'", `a\b`: `'a\b'`} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %s, want %s", in, got, want)
		}
	}
}
