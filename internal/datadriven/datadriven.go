// Package datadriven runs test cases kept in text files: each case is a
// command, its input and the output expected from it, and the test's own
// function turns a command and its input into output. Tests only.
//
// A file is a sequence of cases:
//
//	# A comment, between cases.
//	parse
//	CREATE SINK s INTO DELTA 't' (id BIGINT)
//	----
//	CREATE SINK `s` INTO DELTA 't' (`id` BIGINT)
//
// The first line of a case is the command, then words for its arguments
// (name or name=value). The input is every line up to a line "----" (none
// is an empty input), and the expected output every line after it up to
// the first blank line or the end of the file. Blank lines and lines
// starting with # separate cases.
//
// A line a block cannot hold as it is (blank, with trailing blanks,
// control characters or invalid UTF-8, or starting with a double quote) is
// written as a Go string literal: a line of a block that starts with a
// double quote is one.
//
// With -rewrite (go test ./pkg -rewrite) the expected blocks are replaced
// by what the test printed, and everything else in the file is kept.
package datadriven

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output in data-driven test files with what the tests print")

// separator ends a case's input and starts its expected output.
const separator = "----"

// Case is one case of a file.
type Case struct {
	Pos   string   // file:line of the command, for messages
	Line  int      // the command's line, 1-based
	Cmd   string   // the command
	Args  []string // the words after it
	Input string   // the lines up to the separator, joined by newlines
	Want  string   // the expected output

	// The expected block's lines in the file: [wantFrom, wantTo), 0-based.
	wantFrom, wantTo int
}

// Arg reports whether the command line has the argument name, and the value
// after its '=' if it has one.
func (c *Case) Arg(name string) (value string, ok bool) {
	for _, a := range c.Args {
		if k, v, _ := strings.Cut(a, "="); k == name {
			return v, true
		}
	}
	return "", false
}

// Func runs one case and returns its output. It may fail t itself, for a
// property the output does not show; c.Pos says where the case is.
type Func func(t *testing.T, c *Case) string

// RunFiles runs the cases of each file matching pattern, one subtest per file.
func RunFiles(t *testing.T, pattern string, f Func) {
	t.Helper()
	for _, path := range glob(t, pattern) {
		t.Run(filepath.Base(path), func(t *testing.T) { Run(t, path, f) })
	}
}

// Run runs the cases of the file at path, one subtest per case named by its
// line, and compares each output with the expected one; with -rewrite it
// writes the outputs into the file instead.
func Run(t *testing.T, path string, f Func) {
	t.Helper()
	lines, cases := read(t, path)
	// A case that stops its test (t.Fatal) keeps its expected output.
	got := make([]string, len(cases))
	for i, c := range cases {
		got[i] = c.Want
		t.Run(strconv.Itoa(c.Line), func(t *testing.T) {
			got[i] = strings.TrimSuffix(f(t, c), "\n")
			if !*rewrite {
				// By lines: cmp shows a long string's change as bytes.
				if d := cmp.Diff(strings.Split(c.Want, "\n"), strings.Split(got[i], "\n")); d != "" {
					t.Errorf("%s: %s: output differs (-want +got):\n%s", c.Pos, c.Cmd, d)
				}
			}
		})
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(rewritten(lines, cases, got)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// ReadFiles returns the cases of every file matching pattern, for a test
// that wants their inputs (a fuzz target's seeds).
func ReadFiles(tb testing.TB, pattern string) []*Case {
	tb.Helper()
	var all []*Case
	for _, path := range glob(tb, pattern) {
		_, cases := read(tb, path)
		all = append(all, cases...)
	}
	return all
}

func glob(tb testing.TB, pattern string) []string {
	tb.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no data-driven files match %s (%v)", pattern, err)
	}
	return paths
}

func read(tb testing.TB, path string) ([]string, []*Case) {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	lines, cases, err := parse(path, string(data))
	if err != nil {
		tb.Fatal(err)
	}
	return lines, cases
}

// parse splits the text of a file into its lines and its cases; name is
// the file's name in positions.
func parse(name, text string) ([]string, []*Case, error) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var cases []*Case
	for i := 0; i < len(lines); {
		line := lines[i]
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			i++
			continue
		}
		fields := strings.Fields(line)
		c := &Case{Pos: fmt.Sprintf("%s:%d", name, i+1), Line: i + 1, Cmd: fields[0], Args: fields[1:]}
		from := i + 1
		for i++; i < len(lines) && lines[i] != separator; i++ {
		}
		if i == len(lines) {
			return nil, nil, fmt.Errorf("%s: %s has no %s line", c.Pos, c.Cmd, separator)
		}
		input, err := block(lines[from:i])
		if err != nil {
			return nil, nil, fmt.Errorf("%s: the input: %v", c.Pos, err)
		}
		c.Input = input
		i++
		c.wantFrom = i
		for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
		}
		c.wantTo = i
		if c.Want, err = block(lines[c.wantFrom:c.wantTo]); err != nil {
			return nil, nil, fmt.Errorf("%s: the expected output: %v", c.Pos, err)
		}
		cases = append(cases, c)
	}
	return lines, cases, nil
}

// block is the text of a block's lines, each as it is or, when it starts
// with a double quote, the Go string literal it holds.
func block(lines []string) (string, error) {
	text := make([]string, len(lines))
	for i, l := range lines {
		text[i] = l
		if strings.HasPrefix(l, `"`) {
			var err error
			if text[i], err = strconv.Unquote(l); err != nil {
				return "", fmt.Errorf("line %q: %v", l, err)
			}
		}
	}
	return strings.Join(text, "\n"), nil
}

// format is how a block holding text is written: each line as it is when
// it reads back the same, else as a Go string literal.
func format(text string) string {
	if text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if !plain(l) {
			lines[i] = strconv.Quote(l)
		}
	}
	return strings.Join(lines, "\n")
}

// plain reports whether a line reads back the same as it is.
func plain(line string) bool {
	if !utf8.ValidString(line) || strings.HasPrefix(line, `"`) ||
		strings.TrimSpace(line) == "" || strings.TrimRightFunc(line, unicode.IsSpace) != line {
		return false
	}
	for _, r := range line {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// rewritten returns the file of lines with each case's expected block
// replaced by its output in got.
func rewritten(lines []string, cases []*Case, got []string) string {
	var b strings.Builder
	next := 0
	for i, c := range cases {
		for _, l := range lines[next:c.wantFrom] {
			b.WriteString(l + "\n")
		}
		if out := format(got[i]); out != "" {
			b.WriteString(out + "\n")
		}
		next = c.wantTo
	}
	for _, l := range lines[next:] {
		b.WriteString(l + "\n")
	}
	return b.String()
}
