package sqlsink

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/lakesql/lakesql/catalogadapter/apacheiceberg"
	"github.com/lakesql/lakesql/internal/icebergtest"
	"github.com/lakesql/lakesql/internal/s3test"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// TestS3SinkUpsertRowDelta is TestSinkUpsertRowDelta on S3: upserts and
// deletes land as one row delta per epoch, equality-delete files (written
// by iceberg-go straight to the bucket) beside uploaded data files, and
// both readers agree, DuckDB's through downloaded copies of both kinds.
func TestS3SinkUpsertRowDelta(t *testing.T) {
	srv := s3test.Start(t)
	l := icebergtest.S3(t, srv)
	_, want := sinkUpsertRowDelta(t, l)
	// A reader with an empty cache downloads data and delete files alike.
	cat2, err := icetable.OpenCatalog(context.Background(), icetable.CatalogConfig{DataDir: l.Dir, CacheDir: t.TempDir(), Properties: l.Props})
	if err != nil {
		t.Fatal(err)
	}
	defer cat2.Close()
	if got := duckRows(t, apacheiceberg.New(cat2, apacheiceberg.Options{})); !slices.Equal(got, want) {
		t.Fatalf("ScanSQL with an empty cache reads %q, want %q", got, want)
	}
	// What the scan needs: every data file and the deletes that apply to
	// them (the first epoch's deletes apply to nothing older).
	tasks, err := l.Table(t, ordersID).Scan().PlanFiles(context.Background())
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
	live := l.LiveFiles(t, ordersID)
	if got := l.StoredFiles(t, ordersID); !slices.Equal(got, live) {
		t.Fatalf("objects %v, live files %v", got, live)
	}
	if n := len(l.Snapshots(t, ordersID)); n != 3 {
		t.Fatalf("%d snapshots, want 3", n)
	}
}
