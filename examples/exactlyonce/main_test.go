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

	// Seven deliveries, five versions after the create: the replays of
	// batches 2 and 3 wrote nothing.
	table := filepath.Join(dir, "lake", "events")
	if got := deltatest.Versions(t, table); got != 6 {
		t.Errorf("Delta versions = %d, want 6", got)
	}
	// The table's own exactly-once record: the writer's last epoch is 5.
	if v, ok := deltatest.TxnVersion(t, table, "lakesql-events"); !ok || v != 5 {
		t.Errorf("txn version of lakesql-events = %d, %v; want 5, true", v, ok)
	}
}
