package deltalake

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/clocktest"
)

// OPTIMIZE rewrites a lone file with a deletion vector (there is nothing
// to compact it with, but its deleted rows are purged); auto-compaction,
// which keeps DVs, leaves it. VACUUM keeps the DV file while a retained
// version references it and deletes it past the retention.
func TestOptimizePurgesALoneDeletionVector(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	clock := clocktest.New(t0)
	p := New(db, testOptions(clock))
	table := copyTable(t, filepath.Join(sharedDelta(t), "kernel/table-with-dv-small"))
	id := catalogadapter.TableIdent{Name: table}
	const dvFile = "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin"
	before := scanAll(t, p, db, id, -1)
	if len(before) != 8 {
		t.Fatalf("%d rows, want 8", len(before))
	}
	out, err := p.Compact(ctx, id, db, catalogadapter.CompactOptions{KeepDeletionVectors: true})
	if err != nil || out.Committed {
		t.Fatalf("a compaction that keeps DVs: %+v, %v; want nothing done", out, err)
	}
	out, err = p.Compact(ctx, id, db, catalogadapter.CompactOptions{})
	if err != nil || !out.Committed || out.FilesRemoved != 1 || out.FilesAdded != 1 {
		t.Fatalf("OPTIMIZE of a lone file with a DV: %+v, %v; want it rewritten", out, err)
	}
	_, snap, _ := p.latest(ctx, id)
	if f := snap.Files(); len(f) != 1 || f[0].DeletionVector != nil {
		t.Fatalf("files after OPTIMIZE: %+v", f)
	}
	if d := cmp.Diff(before, scanAll(t, p, db, id, -1)); d != "" {
		t.Fatalf("rows (-before +after):\n%s", d)
	}
	clock.Advance(day)
	if _, err := p.Vacuum(ctx, id, catalogadapter.VacuumOptions{Retain: -1}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(table, dvFile)); err != nil {
		t.Fatalf("VACUUM within the retention deleted the DV a retained version reads: %v", err)
	}
	clock.Advance(8 * day)
	vo, err := p.Vacuum(ctx, id, catalogadapter.VacuumOptions{Retain: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(table, dvFile)); !os.IsNotExist(err) {
		t.Fatalf("VACUUM past the retention kept the unreferenced DV file (%v); deleted %+v", err, vo.Files)
	}
	if d := cmp.Diff(before, scanAll(t, p, db, id, -1)); d != "" {
		t.Fatalf("rows after VACUUM (-before +after):\n%s", d)
	}
}
