package delta

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestGoldenTablesReadAfterVacuumAndLogCleanup: the shared tables, written
// by Spark, delta-rs and the kernels (partitions, deletion vectors, column
// mapping, checkpoints of every kind), read the same rows after the most
// eager VACUUM there can be (every tombstone expired, every unnamed file
// stale) and a log cleanup far in the future: VACUUM never takes a file the
// latest version reads, nor cleanup an entry it needs.
func TestGoldenTablesReadAfterVacuumAndLogCleanup(t *testing.T) {
	tables := collectGoldenTables(t)
	db := openDuckDB(t)
	ctx := context.Background()
	future := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
	tried, deleted := 0, 0
	for _, g := range tables {
		root := g.root
		if abs, _ := filepath.Abs(sharedTestData); strings.HasPrefix(root, abs) || strings.HasPrefix(root, sharedTestData) {
			// A folder of the shared data itself: work on a copy.
			root = filepath.Join(t.TempDir(), "t")
			if err := os.CopyFS(root, os.DirFS(g.root)); err != nil {
				t.Fatalf("%s: copy: %v", g.name, err)
			}
		}
		store, err := NewLocalStorage(root)
		if err != nil {
			t.Fatal(err)
		}
		table := OpenTable(store, TableOptions{Now: func() time.Time { return future }})
		snap, err := table.Latest(ctx)
		if err != nil || !dataFilesPresent(snap) {
			continue // refused, broken or log-only: the golden test judges those
		}
		query, err := snap.ScanSQL(ctx, db)
		if err != nil {
			continue
		}
		before, _, err := rowsAsText(ctx, db, query, nil)
		if err != nil {
			continue
		}
		tried++
		plan, err := table.PlanVacuum(ctx, VacuumPlanOptions{Cutoff: future, StageCutoff: future})
		if err != nil {
			t.Errorf("%s: plan: %v", g.name, err)
			continue
		}
		keys := make([]string, len(plan.Files))
		for i, f := range plan.Files {
			keys[i] = f.Key
		}
		deleted += len(keys)
		if err := table.DeleteKeys(ctx, keys); err != nil {
			t.Errorf("%s: delete: %v", g.name, err)
			continue
		}
		if _, err := table.CleanupLog(ctx, snap.Metadata.Configuration); err != nil {
			t.Errorf("%s: log cleanup: %v", g.name, err)
			continue
		}
		after, err := OpenTable(store, TableOptions{}).Latest(ctx)
		if err != nil {
			t.Errorf("%s after vacuum (%d files) and log cleanup: %v", g.name, len(keys), err)
			continue
		}
		q2, err := after.ScanSQL(ctx, db)
		if err != nil {
			t.Errorf("%s after vacuum (%d files) and log cleanup: %v", g.name, len(keys), err)
			continue
		}
		got, _, err := rowsAsText(ctx, db, q2, nil)
		if err != nil {
			t.Errorf("%s after vacuum (%d files: %v): %v", g.name, len(keys), keys, err)
			continue
		}
		if diff := cmp.Diff(before, got); diff != "" {
			t.Errorf("%s: rows changed by vacuum and log cleanup (-before +after):\n%s", g.name, diff)
		}
	}
	if tried < 20 {
		t.Fatalf("only %d golden tables were vacuumed", tried)
	}
	if deleted == 0 {
		t.Fatal("the vacuums deleted nothing: the test proves nothing")
	}
	t.Logf("%d golden tables read the same after vacuum (%d files deleted) and log cleanup", tried, deleted)
}
