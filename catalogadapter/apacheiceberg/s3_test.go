package apacheiceberg

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/lakesql/lakesql/internal/s3test"
	"github.com/lakesql/lakesql/sqlsink"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// TestS3SinkAppendRollbackReplayRestart is TestSinkAppendRollbackReplayRestart
// with the warehouse on a real S3 server (versitygw) and the catalog on
// SQLite: one snapshot per epoch with the epoch record, data files in the
// bucket under the table's location, a rollback that deletes the uploaded
// objects (and their cached copies), a replay skipped, a restarted sink
// that recovers its epoch, and both readers agreeing, DuckDB's also from
// an empty cache. Every object left in the bucket is a live file.
func TestS3SinkAppendRollbackReplayRestart(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	l := s3Lake(t, srv)
	p := l.provider(t)
	cfg := sinkConfig(t, p, "orders")
	cfg.StateDir = t.TempDir()
	s := openSink(t, cfg)

	res := epoch(t, s, 1, batch(t, row{ID: 1, Amount: 1.5, Region: "eu"}), batch(t, row{ID: 2, Amount: 2.5, Region: "us"}))
	if res.Skipped || res.Rows != 2 {
		t.Fatalf("epoch 1: %+v", res)
	}
	snaps := l.snapshots(t, ordersID)
	if len(snaps) != 1 {
		t.Fatalf("%d snapshots after one epoch", len(snaps))
	}
	if props := snaps[0].Summary.Properties; props[icetable.SummaryWriterID] != "lakesql-orders" || props[icetable.SummaryEpoch] != "1" || snaps[0].SnapshotID != res.Version {
		t.Fatalf("snapshot summary %v, version %d", props, res.Version)
	}
	files := l.storedFiles(t, ordersID)
	if len(files) == 0 || !slices.Equal(files, l.liveFiles(t, ordersID)) {
		t.Fatalf("objects %v, live files %v", files, l.liveFiles(t, ordersID))
	}
	loc := l.table(t, ordersID).Location()
	if !strings.HasPrefix(loc, l.props["warehouse"]+"/") {
		t.Fatalf("table at %s, not in the warehouse %s", loc, l.props["warehouse"])
	}

	// Rollback: the uploaded objects are deleted, no snapshot.
	if err := s.BeginEpoch(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, batch(t, row{ID: 99, Region: "gone"})); err != nil {
		t.Fatal(err)
	}
	if err := s.PreCommit(ctx, 2); err != nil {
		t.Fatal(err)
	}
	staged := l.storedFiles(t, ordersID)
	if len(staged) == len(files) {
		t.Fatal("PreCommit uploaded no file")
	}
	var added []string
	for _, f := range staged {
		if !slices.Contains(files, f) {
			added = append(added, f)
			if _, err := os.Stat(icetable.CachePath(p.cat.CacheDir(), f)); err != nil {
				t.Errorf("staged file %s is not in the cache: %v", f, err)
			}
		}
	}
	if err := s.RollbackEpoch(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if got := l.storedFiles(t, ordersID); !slices.Equal(got, files) {
		t.Fatalf("rollback left objects: %v", got)
	}
	for _, f := range added {
		if _, err := os.Stat(icetable.CachePath(p.cat.CacheDir(), f)); !os.IsNotExist(err) {
			t.Errorf("the cached copy of discarded %s is still there: %v", f, err)
		}
	}
	if n := len(l.snapshots(t, ordersID)); n != 1 {
		t.Fatalf("%d snapshots after rollback", n)
	}

	// A replay of epoch 1 is skipped; the next epochs land.
	if res := epoch(t, s, 1, batch(t, row{ID: 1, Amount: 1.5, Region: "eu"})); !res.Skipped {
		t.Fatalf("replay of epoch 1: %+v", res)
	}
	epoch(t, s, 2, batch(t, row{ID: 3, Amount: 3, Region: "eu"}))
	epoch(t, s, 42, batch(t, row{ID: 4, Amount: 4, Region: "us"}))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Restart, with an empty cache: a new provider and sink recover epoch 42.
	cat2, err := icetable.OpenCatalog(ctx, icetable.CatalogConfig{DataDir: l.dir, CacheDir: t.TempDir(), Properties: l.props})
	if err != nil {
		t.Fatal(err)
	}
	defer cat2.Close()
	p2 := New(cat2, Options{})
	cfg2 := sinkConfig(t, p2, "orders")
	cfg2.Schema = nil // attach
	cfg2.StateDir = cfg.StateDir
	s2 := openSink(t, cfg2)
	if e, ok := s2.LastCommittedEpoch(); !ok || e != 42 {
		t.Fatalf("recovered epoch %d %v, want 42", e, ok)
	}
	if res := epoch(t, s2, 42, batch(t, row{ID: 4, Amount: 4, Region: "us"})); !res.Skipped {
		t.Fatalf("replay of 42 after restart: %+v", res)
	}
	want := rowStrings(row{ID: 1, Amount: 1.5, Region: "eu"}, row{ID: 2, Amount: 2.5, Region: "us"},
		row{ID: 3, Amount: 3, Region: "eu"}, row{ID: 4, Amount: 4, Region: "us"})
	if got := l.rows(t, ordersID); !slices.Equal(got, want) {
		t.Fatalf("iceberg-go reads %q, want %q", got, want)
	}
	if got := duckRows(t, p2); !slices.Equal(got, want) {
		t.Fatalf("ScanSQL reads %q, want %q", got, want)
	}
	if n := len(l.snapshots(t, ordersID)); n != 3 {
		t.Fatalf("%d snapshots, want 3 (epochs 1, 2, 42)", n)
	}
	if got, live := l.storedFiles(t, ordersID), l.liveFiles(t, ordersID); !slices.Equal(got, live) {
		t.Fatalf("objects %v, live files %v", got, live)
	}
}

// TestS3SinkUpsertRowDelta is TestSinkUpsertRowDelta on S3: upserts and
// deletes land as one row delta per epoch, equality-delete files (written
// by iceberg-go straight to the bucket) beside uploaded data files, and
// both readers agree, DuckDB's through downloaded copies of both kinds.
func TestS3SinkUpsertRowDelta(t *testing.T) {
	srv := s3test.Start(t)
	l := s3Lake(t, srv)
	p := l.provider(t)
	cfg := sinkConfig(t, p, "orders")
	cfg.Mode, cfg.Key = sqlsink.ModeUpsert, []string{"id"}
	s := openSink(t, cfg)
	epoch(t, s, 1, batch(t, row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 2, Region: "eu"}, row{ID: 3, Amount: 3, Region: "us"}))
	files := l.storedFiles(t, ordersID)
	epoch(t, s, 2, batch(t,
		row{Op: "U", ID: 2, Amount: 20, Region: "eu"},
		row{Op: "D", ID: 3},
		row{Op: "I", ID: 4, Amount: 4, Region: "us"},
		row{Op: "U", ID: 4, Amount: 40, Region: "us"}))
	want := rowStrings(row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 20, Region: "eu"}, row{ID: 4, Amount: 40, Region: "us"})
	if got := l.rows(t, ordersID); !slices.Equal(got, want) {
		t.Fatalf("iceberg-go reads %q, want %q", got, want)
	}
	if got := duckRows(t, p); !slices.Equal(got, want) {
		t.Fatalf("ScanSQL reads %q, want %q", got, want)
	}
	snaps := l.snapshots(t, ordersID)
	last := snaps[len(snaps)-1].Summary
	if last.Properties["added-delete-files"] == "" || last.Properties["deleted-data-files"] != "" {
		t.Fatalf("epoch 2 is not a row delta: %v %v", last.Operation, last.Properties)
	}
	now := l.storedFiles(t, ordersID)
	for _, f := range files {
		if !slices.Contains(now, f) {
			t.Fatalf("file %s of epoch 1 was rewritten", f)
		}
	}
	// A later epoch re-inserts a deleted key: the old delete must not hide it.
	epoch(t, s, 3, batch(t, row{ID: 3, Amount: 33, Region: "eu"}))
	want = rowStrings(row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 20, Region: "eu"}, row{ID: 3, Amount: 33, Region: "eu"}, row{ID: 4, Amount: 40, Region: "us"})
	if got := duckRows(t, p); !slices.Equal(got, want) {
		t.Fatalf("ScanSQL reads %q, want %q", got, want)
	}
	if got := l.rows(t, ordersID); !slices.Equal(got, want) {
		t.Fatalf("iceberg-go reads %q, want %q", got, want)
	}
	// A reader with an empty cache downloads data and delete files alike.
	cat2, err := icetable.OpenCatalog(context.Background(), icetable.CatalogConfig{DataDir: l.dir, CacheDir: t.TempDir(), Properties: l.props})
	if err != nil {
		t.Fatal(err)
	}
	defer cat2.Close()
	if got := duckRows(t, New(cat2, Options{})); !slices.Equal(got, want) {
		t.Fatalf("ScanSQL with an empty cache reads %q, want %q", got, want)
	}
	// What the scan needs: every data file and the deletes that apply to
	// them (the first epoch's deletes apply to nothing older).
	tasks, err := l.table(t, ordersID).Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	needed := map[string]bool{}
	deletes := 0
	for _, task := range tasks {
		needed[task.File.FilePath()] = true
		for _, d := range task.EqualityDeleteFiles {
			if !needed[d.FilePath()] {
				deletes++
			}
			needed[d.FilePath()] = true
		}
	}
	if deletes != 2 {
		t.Fatalf("%d equality-delete files apply, want epoch 2's and epoch 3's", deletes)
	}
	for f := range needed {
		if _, err := os.Stat(icetable.CachePath(cat2.CacheDir(), f)); err != nil {
			t.Errorf("file %s was not downloaded: %v", f, err)
		}
	}
	live := l.liveFiles(t, ordersID)
	if got := l.storedFiles(t, ordersID); !slices.Equal(got, live) {
		t.Fatalf("objects %v, live files %v", got, live)
	}
	if n := len(l.snapshots(t, ordersID)); n != 3 {
		t.Fatalf("%d snapshots, want 3", n)
	}
}
