// Package goldentest compares a program's output with the expected output
// kept beside it, which the examples also show their readers.
package goldentest

import (
	"flag"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the expected output files with what the programs print")

// Check fails t when got differs from the contents of path; with -update
// it rewrites path with got first.
func Check(t testing.TB, got []byte, path string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("output (-%s +got):\n%s", path, diff)
	}
}
