package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/internal/deltatest"
	"github.com/lakesql/lakesql/tableformat/delta"
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

	// Versions 0 (create), 1 and 2 (the epochs); the replay and the
	// rollback made none.
	table := filepath.Join(dir, "lake", "orders")
	if got := deltatest.Versions(t, table); got != 3 {
		t.Errorf("Delta versions = %d, want 3", got)
	}
	store, err := delta.NewLocalStorage(table)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := delta.NewTable(store).Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := snap.TxnVersion("lakesql-orders"); !ok || v != 2 {
		t.Errorf("txn version of lakesql-orders = %d, %v; want 2, true", v, ok)
	}
}
