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

	// Seven deliveries, five versions after the create: the replays of
	// batches 2 and 3 wrote nothing.
	table := filepath.Join(dir, "lake", "events")
	if got := deltatest.Versions(t, table); got != 6 {
		t.Errorf("Delta versions = %d, want 6", got)
	}
	// The table's own exactly-once record: the writer's last epoch is 5.
	store, err := delta.NewLocalStorage(table)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := delta.NewTable(store).Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := snap.TxnVersion("lakesql-events"); !ok || v != 5 {
		t.Errorf("txn version of lakesql-events = %d, %v; want 5, true", v, ok)
	}
}
