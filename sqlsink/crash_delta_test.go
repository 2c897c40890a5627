package sqlsink

import (
	"context"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter/providertest"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// What TestCrashRecovery checks of a Delta table, read with the Delta
// reader: one version per epoch, each recording its epoch in the writer's
// txn action and readable on its own, and the files the crashes orphaned.
var deltaCrashChecks = crashChecks{history: verifyDeltaCrashTable}

// verifyDeltaCrashTable checks every version of the phase's table:
// version v holds exactly the serial result of epochs 1..v and records
// epoch v.
func verifyDeltaCrashTable(t *testing.T, root string, ph crashPhase) {
	t.Helper()
	ctx := context.Background()
	db := providertest.OpenDuckDB(t)
	dir := filepath.Join(root, crashTableName(ph.mode))
	writer, n := crashWriterID(ph.mode), ph.n
	store, err := delta.NewLocalStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	tbl := delta.NewTable(store)
	latest, err := tbl.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if latest.Version != n {
		t.Errorf("%s: latest version %d, want %d (one version per epoch)", ph.mode, latest.Version, n)
	}
	if v, ok := latest.TxnVersion(writer); !ok || v != n {
		t.Errorf("%s: txn version of %s: %d %v, want %d", ph.mode, writer, v, ok, n)
	}
	if err := delta.PrepareDuckDB(ctx, db); err != nil {
		t.Fatal(err)
	}
	model := crashModel{}
	for v := int64(0); v <= latest.Version; v++ {
		if v > 0 {
			model.apply(ph.mode, v)
		}
		want := model.sorted()
		snap, err := tbl.At(ctx, v)
		if err != nil {
			t.Errorf("%s: version %d is not readable: %v", ph.mode, v, err)
			continue
		}
		txn, ok := snap.TxnVersion(writer)
		if (v == 0 && ok) || (v > 0 && (!ok || txn != v)) {
			t.Errorf("%s: version %d records epoch %d (%v), want %d", ph.mode, v, txn, ok, v)
		}
		q, err := snap.ScanSQL(ctx, db)
		if err != nil {
			t.Errorf("%s: version %d: scan: %v", ph.mode, v, err)
			continue
		}
		got := []string{}
		rs, err := db.QueryContext(ctx, "SELECT id, amount, region FROM ("+q+")")
		if err != nil {
			t.Errorf("%s: version %d: read: %v", ph.mode, v, err)
			continue
		}
		for rs.Next() {
			var r row
			if err := rs.Scan(&r.ID, &r.Amount, &r.Region); err != nil {
				t.Fatal(err)
			}
			got = append(got, r.String())
		}
		if err := rs.Close(); err != nil {
			t.Fatal(err)
		}
		sort.Strings(got)
		if len(got) != len(want) {
			t.Errorf("%s: version %d has %d rows, want %d (epochs 1..%d)", ph.mode, v, len(got), len(want), v)
		}
		if !slices.Equal(want, got) {
			t.Errorf("%s: version %d rows (-want +got):\n%s", ph.mode, v, cmp.Diff(want, got))
		}
	}
	// Files the crashes orphaned (staged, never committed) are harmless.
	// The staging journal removes most; a kill between DuckDB writing a
	// file and the journal naming it can still leave one. Files an
	// upsert rewrote stay on disk for the older versions.
	live := map[string]bool{}
	for _, f := range latest.Files() {
		live[filepath.Join(dir, filepath.FromSlash(f.Path))] = true
	}
	orphans := 0
	for _, p := range parquetFilesUnder(dir) {
		if !live[p] {
			orphans++
		}
	}
	t.Logf("%s: table: %d versions, %d live files, %d other files on disk (orphaned by kills, or removed by upserts)", ph.mode, latest.Version+1, len(latest.Files()), orphans)
}
