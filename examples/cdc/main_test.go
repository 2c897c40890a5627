package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakesql/lakesql/internal/deltatest"
	"github.com/lakesql/lakesql/internal/goldentest"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(&out, dir); err != nil {
		t.Fatal(err)
	}
	goldentest.Check(t, out.Bytes(), "expected.txt")

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
