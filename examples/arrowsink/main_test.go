package main

import (
	"bytes"
	"path/filepath"
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

	// Versions 0 (create), 1 and 2 (the epochs); the replay and the
	// rollback made none.
	table := filepath.Join(dir, "lake", "orders")
	if got := deltatest.Versions(t, table); got != 3 {
		t.Errorf("Delta versions = %d, want 3", got)
	}
	if v, ok := deltatest.TxnVersion(t, table, "lakesql-orders"); !ok || v != 2 {
		t.Errorf("txn version of lakesql-orders = %d, %v; want 2, true", v, ok)
	}
}
