package delta

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/internal/clocktest"
)

const lcDay = 24 * time.Hour

// lcTable creates a table whose commits take their time from clock.
func lcTable(t *testing.T, clock *clocktest.Clock, conf map[string]string) (*LocalStorage, *Table) {
	t.Helper()
	store, err := NewLocalStorage(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Create(context.Background(), store, CreateOptions{Name: "t", Schema: atSchema(), Configuration: conf, Now: clock.Now}); err != nil {
		t.Fatal(err)
	}
	return store, OpenTable(store, TableOptions{Now: clock.Now})
}

// lcCommit commits one add (and a txn of app at version) at the clock's time.
func lcCommit(t *testing.T, table *Table, clock *clocktest.Clock, path, app string, version int64) int64 {
	t.Helper()
	snap, err := table.Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	now := clock.Now().UnixMilli()
	actions := []Action{{Add: ctAdd(path)}}
	if app != "" {
		actions = append(actions, Action{Txn: &Txn{AppID: app, Version: version, LastUpdated: &now}})
	}
	res, err := snap.Commit(context.Background(), actions, CommitOptions{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if res.CheckpointErr != nil {
		t.Fatal(res.CheckpointErr)
	}
	return res.Version
}

type lcState struct {
	Files []string
	Txns  []Txn
}

func lcRead(t *testing.T, table *Table, v int64) lcState {
	t.Helper()
	snap, err := table.At(context.Background(), v)
	if err != nil {
		t.Fatalf("At(%d): %v", v, err)
	}
	return lcState{Files: ctPaths(snap), Txns: snap.Txns()}
}

// TestCleanupLog: entries older than the retention and below a checkpoint
// go, with their .crc and older checkpoints and unreferenced old sidecars;
// every version within retention reads as before, the latest still reads
// from its checkpoint, txns of writers seen only in the cleaned part
// survive, and an older version fails naming the oldest left.
func TestCleanupLog(t *testing.T) {
	ctx := context.Background()
	clock := clocktest.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	store, table := lcTable(t, clock, map[string]string{"delta.checkpointInterval": "3"})
	lcCommit(t, table, clock, "a0.parquet", "early", 5) // v1
	for i := 2; i <= 6; i++ {
		lcCommit(t, table, clock, "a"+string(rune('0'+i))+".parquet", "steady", int64(i))
	}
	clock.Advance(40 * lcDay)
	for i := 7; i <= 11; i++ {
		lcCommit(t, table, clock, "b"+string(rune('0'+i-7))+".parquet", "steady", int64(i))
	}
	clock.Advance(lcDay)
	logDirPath := filepath.Join(store.Root, "_delta_log")
	for _, name := range []string{"00000000000000000001.crc", "00000000000000000002.00000000000000000004.compacted.json", "_sidecars/old.parquet", "_sidecars/new.parquet"} {
		p := filepath.Join(logDirPath, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := clock.Now().Add(-60 * lcDay)
	os.Chtimes(filepath.Join(logDirPath, "_sidecars/old.parquet"), old, old)
	before := map[int64]lcState{}
	for v := int64(0); v <= 11; v++ {
		before[v] = lcRead(t, table, v)
	}

	res, err := table.CleanupLog(ctx, map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	// Version 7 is the oldest within 30 days; checkpoint 6 the newest at or below it.
	if res.Oldest != 6 {
		t.Errorf("oldest after cleanup = %d, want 6", res.Oldest)
	}
	for _, gone := range []string{"00000000000000000000.json", "00000000000000000005.json", "00000000000000000003.checkpoint.parquet",
		"00000000000000000001.crc", "00000000000000000002.00000000000000000004.compacted.json", "_sidecars/old.parquet"} {
		if _, err := os.Stat(filepath.Join(logDirPath, gone)); !os.IsNotExist(err) {
			t.Errorf("%s survived cleanup: %v", gone, err)
		}
	}
	for _, kept := range []string{"00000000000000000006.json", "00000000000000000006.checkpoint.parquet", "00000000000000000009.checkpoint.parquet", "_sidecars/new.parquet"} {
		if _, err := os.Stat(filepath.Join(logDirPath, kept)); err != nil {
			t.Errorf("%s was cleaned up: %v", kept, err)
		}
	}
	for v := int64(6); v <= 11; v++ {
		if diff := cmp.Diff(before[v], lcRead(t, table, v)); diff != "" {
			t.Errorf("version %d after cleanup (-before +after):\n%s", v, diff)
		}
	}
	latest, err := table.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if latest.Version != 11 || latest.CheckpointVersion != 9 {
		t.Errorf("latest = %d from checkpoint %d; want 11 from 9", latest.Version, latest.CheckpointVersion)
	}
	if v, ok := latest.TxnVersion("early"); !ok || v != 5 {
		t.Errorf("txn of the writer seen only in the cleaned part: %d, %v; want 5", v, ok)
	}
	_, err = table.At(ctx, 2)
	var ee *VersionExpiredError
	if !errors.As(err, &ee) || ee.Version != 2 || ee.Oldest != 6 {
		t.Errorf("At(2) after cleanup: %v; want a VersionExpiredError naming 6", err)
	}
	if lr, err := table.LogRange(ctx); err != nil || lr.Oldest != 6 || lr.Latest != 11 || lr.Checkpoint != 9 {
		t.Errorf("LogRange = %+v, %v; want oldest 6, latest 11, checkpoint 9", lr, err)
	}
	// Nothing more is due: a second run deletes nothing.
	if res, err := table.CleanupLog(ctx, nil); err != nil || len(res.Deleted) != 0 {
		t.Errorf("second cleanup deleted %v (%v)", res.Deleted, err)
	}
}

// TestCleanupLogKeepsRetainedAndUncheckpointed: nothing goes while the
// entries are within retention, nor when no checkpoint covers them, nor
// when the table turns cleanup off.
func TestCleanupLogKeepsRetainedAndUncheckpointed(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		conf    map[string]string
		advance time.Duration
	}{
		"within retention": {map[string]string{"delta.checkpointInterval": "2"}, 29 * lcDay},
		"short retention":  {map[string]string{"delta.checkpointInterval": "2", "delta.logRetentionDuration": "interval 2 days"}, -1},
		"no checkpoint":    {map[string]string{"delta.checkpointInterval": "100"}, 40 * lcDay},
		"turned off":       {map[string]string{"delta.checkpointInterval": "2", "delta.enableExpiredLogCleanup": "false"}, 40 * lcDay},
	} {
		t.Run(name, func(t *testing.T) {
			clock := clocktest.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
			_, table := lcTable(t, clock, tc.conf)
			for i := 0; i < 4; i++ {
				lcCommit(t, table, clock, "f"+string(rune('0'+i))+".parquet", "", 0)
			}
			adv := tc.advance
			if adv < 0 {
				adv = 3 * lcDay
			}
			clock.Advance(adv)
			lcCommit(t, table, clock, "g.parquet", "", 0)
			res, err := table.CleanupLog(ctx, tc.conf)
			if err != nil {
				t.Fatal(err)
			}
			if tc.advance < 0 {
				if res.Oldest != 4 {
					t.Errorf("with a 2-day retention, oldest = %d; want 4", res.Oldest)
				}
				return
			}
			if len(res.Deleted) != 0 {
				t.Errorf("deleted %v", res.Deleted)
			}
			if _, err := table.At(ctx, 0); err != nil {
				t.Errorf("At(0): %v", err)
			}
		})
	}
}

// TestCheckpointExpiresTxnsOnlyWhenTheTableSaysSo: a checkpoint drops a
// txn older than delta.setTransactionRetentionDuration, and keeps every
// txn of a table without it, however old.
func TestCheckpointExpiresTxnsOnlyWhenTheTableSaysSo(t *testing.T) {
	for _, tc := range []struct {
		conf map[string]string
		kept bool
	}{
		{map[string]string{"delta.checkpointInterval": "2"}, true},
		{map[string]string{"delta.checkpointInterval": "2", "delta.setTransactionRetentionDuration": "interval 1 days"}, false},
	} {
		clock := clocktest.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
		_, table := lcTable(t, clock, tc.conf)
		lcCommit(t, table, clock, "a.parquet", "idle", 3)
		clock.Advance(400 * lcDay)
		lcCommit(t, table, clock, "b.parquet", "busy", 1) // v2: checkpoint
		snap, err := table.Latest(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if snap.CheckpointVersion != 2 {
			t.Fatalf("checkpoint at %d, want 2", snap.CheckpointVersion)
		}
		if _, ok := snap.TxnVersion("idle"); ok != tc.kept {
			t.Errorf("conf %v: idle writer's txn kept = %v, want %v", tc.conf, ok, tc.kept)
		}
		if v, ok := snap.TxnVersion("busy"); !ok || v != 1 {
			t.Errorf("busy writer's txn: %d, %v", v, ok)
		}
	}
}

func TestParseInterval(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"interval 7 days":           7 * lcDay,
		"interval 1 day":            lcDay,
		"INTERVAL 30 DAYS":          30 * lcDay,
		"interval 2 weeks":          14 * lcDay,
		"interval 168 hours":        7 * lcDay,
		"interval 1 day 12 hours":   36 * time.Hour,
		"7 days":                    7 * lcDay,
		"interval 500 milliseconds": 500 * time.Millisecond,
	} {
		if got, err := parseInterval(in); err != nil || got != want {
			t.Errorf("parseInterval(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "interval", "interval 7", "interval x days", "interval 7 fortnights", "interval 99999999999999 weeks"} {
		if got, err := parseInterval(bad); err == nil {
			t.Errorf("parseInterval(%q) = %s; want an error", bad, got)
		}
	}
}

func TestVacuumHiddenPaths(t *testing.T) {
	parts := []string{"_p", "q"}
	for key, hidden := range map[string]bool{
		"part-1.parquet":                       false,
		"q=_x/part-1.parquet":                  false, // a partition value may start with _
		"_p=1/part-1.parquet":                  false, // a partition column may too
		"_p=1/q=2/part-1.parquet":              false,
		"_delta_log/00000000000000000000.json": true,
		"_SUCCESS":                             true,
		".part-1.parquet.crc":                  true,
		"q=1/.tmp-x":                           true,
		"_change_data/cdc-1.parquet":           true,
		"_other=1/part-1.parquet":              true, // not a partition column
		"q=1/_p=1":                             true, // a file, not a folder
		"deletion_vector_0d9e8f1a.bin":         false,
	} {
		if got := hiddenKey(key, parts); got != hidden {
			t.Errorf("hiddenKey(%q) = %v, want %v", key, got, hidden)
		}
	}
}
