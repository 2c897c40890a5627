package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/internal/deltatest"
)

var update = flag.Bool("update", false, "rewrite expected.txt with the program's output")

func TestRun(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(&out, dir); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("expected.txt", out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("expected.txt")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), out.String()); diff != "" {
		t.Errorf("output (-expected.txt +got):\n%s", diff)
	}

	// One version per transaction; the refused statement made none.
	table := filepath.Join(dir, "lake", "customers")
	if got := deltatest.Versions(t, table); got != 4 {
		t.Errorf("Delta versions = %d, want 4", got)
	}
	// Updates and deletes are copy-on-write: the commits of transactions 2
	// and 3 remove the file that held the keys they change.
	for v := 2; v <= 3; v++ {
		b, err := os.ReadFile(filepath.Join(table, "_delta_log", fmt.Sprintf("%020d.json", v)))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `{"remove":`) {
			t.Errorf("version %d has no remove action:\n%s", v, b)
		}
	}
}
