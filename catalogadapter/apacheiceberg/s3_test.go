package apacheiceberg

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/lakesql/lakesql/internal/s3test"
	"github.com/lakesql/lakesql/sqlsink"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

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
