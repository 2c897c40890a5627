package datadriven

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func example(t *testing.T, c *Case) string {
	switch c.Cmd {
	case "upper":
		return strings.ToUpper(c.Input)
	case "lines":
		var b strings.Builder
		for i, l := range strings.Split(c.Input, "\n") {
			fmt.Fprintf(&b, "%d %s\n", i+1, l)
		}
		return b.String()
	case "args":
		var b strings.Builder
		for _, name := range []string{"kind", "verbose", "absent"} {
			v, ok := c.Arg(name)
			fmt.Fprintf(&b, "%s: %v %q\n", name, ok, v)
		}
		return b.String()
	}
	t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
	return ""
}

func TestRun(t *testing.T) {
	Run(t, "testdata/example.txt", example)
}

func TestParse(t *testing.T) {
	text := "# c\n\ncmd a b=1\nin 1\n\nin 2\n----\nout\n\n\"x\"\n\"\\x00\"\n----\n\"\\n\"\n"
	_, cases, err := parse("f.txt", text)
	if err != nil {
		t.Fatal(err)
	}
	want := []*Case{
		{Pos: "f.txt:3", Line: 3, Cmd: "cmd", Args: []string{"a", "b=1"}, Input: "in 1\n\nin 2", Want: "out", wantFrom: 7, wantTo: 8},
		{Pos: "f.txt:10", Line: 10, Cmd: `"x"`, Args: []string{}, Input: "\x00", Want: "\n", wantFrom: 12, wantTo: 13},
	}
	if d := cmp.Diff(want, cases, cmp.AllowUnexported(Case{})); d != "" {
		t.Errorf("parse (-want +got):\n%s", d)
	}
	for _, bad := range []string{"cmd\ninput\n", "cmd\n\"a\" b\n----\n", "cmd\n----\n\"unterminated\n"} {
		if _, _, err := parse("f.txt", bad); err == nil {
			t.Errorf("parse(%q) = nil error", bad)
		}
	}
}

func TestFormat(t *testing.T) {
	for text, want := range map[string]string{
		"":               "",
		"a\nb":           "a\nb",
		"  indented":     "  indented",
		"trailing ":      `"trailing "`,
		"a\n\nb":         "a\n\"\"\nb",
		"two\nlines\x00": "two\n\"lines\\x00\"",
		"end\n":          "end\n\"\"",
		"tab\t":          `"tab\t"`,
		"nul\x00":        `"nul\x00"`,
		"\xff":           `"\xff"`,
		`"leading quote`: `"\"leading quote"`,
		"nbsp\u00a0here": `"nbsp\u00a0here"`,
		"größe `a` '😀'":  "größe `a` '😀'",
	} {
		got := format(text)
		if got != want {
			t.Errorf("format(%q) = %s, want %s", text, got, want)
		}
		if back, err := block(strings.Split(got, "\n")); err != nil || back != text {
			t.Errorf("block(format(%q)) = %q, %v", text, back, err)
		}
	}
}

func TestRewritten(t *testing.T) {
	text := "# head\ncmd\nin\n----\nold\nold 2\n\n# between\ncmd\n----\n\ncmd\n----\nlast"
	lines, cases, err := parse("f.txt", text)
	if err != nil {
		t.Fatal(err)
	}
	got := rewritten(lines, cases, []string{"new", "filled\nin", "\x00"})
	want := "# head\ncmd\nin\n----\nnew\n\n# between\ncmd\n----\nfilled\nin\n\ncmd\n----\n\"\\x00\"\n"
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rewritten (-want +got):\n%s", d)
	}
	// The same outputs give the same file back.
	if again := rewritten(lines, cases, []string{"old\nold 2", "", "last"}); again != text+"\n" {
		t.Errorf("rewriting with the expected outputs changed the file:\n%s", cmp.Diff(text+"\n", again))
	}
}
