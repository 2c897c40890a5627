package sqlsink

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/internal/icebergtest"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// What TestCrashRecovery checks of an Iceberg table, read with iceberg-go
// from a fresh catalog handle: the snapshots' epoch records, their rows,
// the files they reference and leave unreferenced, and the SQLite catalog
// file the killed processes wrote.
var icebergCrashChecks = crashChecks{
	history:  verifyIcebergCrashTable,
	afterRun: func(t *testing.T, root string) { checkIcebergCatalogFile(t, root) },
	end:      checkIcebergCrashCatalog,
}

// icebergScan reads table tbl at snapshot snap with iceberg-go's own scan, sorted.
func icebergScan(t testing.TB, tbl *table.Table, snap int64) []string {
	t.Helper()
	return icebergtest.Rows(t, tbl, table.WithSnapshotID(snap))
}

// verifyIcebergCrashTable reads the phase's table through a fresh catalog
// handle: one snapshot per epoch, in order, each carrying the writer id
// and its epoch; snapshot k holds exactly the serial result of epochs
// 1..k; every file a snapshot references exists; files the crashes left
// unreferenced are bounded by the kills that could have cut a staging
// short (a kill between a file's write and the journal naming it).
func verifyIcebergCrashTable(t *testing.T, dir string, ph crashPhase) {
	ctx := context.Background()
	id := icebergTableIdent(crashTableName(ph.mode))
	tbl := freshTable(t, dir, id)
	meta := tbl.Metadata()
	snaps := icebergtest.Snapshots(tbl)
	if len(snaps) != int(ph.n) || len(meta.Snapshots()) != int(ph.n) {
		t.Errorf("%s: %d snapshots on main, %d in the metadata, want %d (one per epoch)", ph.mode, len(snaps), len(meta.Snapshots()), ph.n)
	}
	model := crashModel{}
	prev := int64(0)
	epochs, commitIDs := map[int64]bool{}, map[string]bool{}
	referenced := map[string]bool{}
	var want []string
	mismatches := 0
	for _, s := range snaps {
		props := map[string]string{}
		if s.Summary != nil {
			props = s.Summary.Properties
		}
		e, err := strconv.ParseInt(props[icetable.SummaryEpoch], 10, 64)
		switch {
		case props[icetable.SummaryWriterID] != crashWriterID(ph.mode) || err != nil:
			t.Errorf("%s: snapshot %d summary %v: want writer %s and an epoch", ph.mode, s.SnapshotID, props, crashWriterID(ph.mode))
			continue
		case epochs[e]:
			t.Errorf("%s: epoch %d committed twice (snapshot %d)", ph.mode, e, s.SnapshotID)
		case e <= prev:
			t.Errorf("%s: snapshot %d records epoch %d after epoch %d", ph.mode, s.SnapshotID, e, prev)
		case e != prev+1:
			t.Errorf("%s: snapshot %d records epoch %d after epoch %d: epochs lost", ph.mode, s.SnapshotID, e, prev)
		}
		if c := props[icetable.SummaryCommitID]; c == "" || commitIDs[c] {
			t.Errorf("%s: snapshot %d has an empty or repeated commit id %q", ph.mode, s.SnapshotID, c)
		} else {
			commitIDs[c] = true
		}
		epochs[e] = true
		for ep := prev + 1; ep <= e; ep++ {
			model.apply(ph.mode, ep)
		}
		prev = max(prev, e)
		want = model.sorted()
		if got := icebergScan(t, tbl, s.SnapshotID); !slices.Equal(got, want) {
			if mismatches++; mismatches <= 3 { // the first ones tell enough
				t.Errorf("%s: snapshot %d (epoch %d) holds %d rows, want %d (epochs 1..%d serially) (-want +got):\n%s",
					ph.mode, s.SnapshotID, e, len(got), len(want), e, cmp.Diff(want, got))
			}
		}
		tasks, err := tbl.Scan(table.WithSnapshotID(s.SnapshotID)).PlanFiles(ctx)
		if err != nil {
			t.Fatalf("%s: plan snapshot %d: %v", ph.mode, s.SnapshotID, err)
		}
		for _, task := range tasks {
			files := []ice.DataFile{task.File}
			for _, g := range [][]ice.DataFile{task.DeleteFiles, task.EqualityDeleteFiles, task.DeletionVectorFiles} {
				files = append(files, g...)
			}
			for _, f := range files {
				p, err := icetable.LocalPath(f.FilePath())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(p); err != nil {
					t.Errorf("%s: snapshot %d references a file that is gone: %v", ph.mode, s.SnapshotID, err)
				}
				referenced[p] = true
			}
		}
	}
	if mismatches > 3 {
		t.Errorf("%s: %d snapshots in all differ from the serial result", ph.mode, mismatches)
	}
	for e := int64(1); e <= ph.n; e++ {
		if !epochs[e] {
			t.Errorf("%s: epoch %d has no snapshot", ph.mode, e)
		}
	}
	// The head, read once more through a fresh handle: the whole upstream,
	// every row exactly once.
	if head := tbl.CurrentSnapshot(); head != nil {
		got := icebergScan(t, freshTable(t, dir, id), head.SnapshotID)
		seen := map[string]int{}
		for _, r := range got {
			if seen[r]++; seen[r] == 2 {
				t.Errorf("%s: row %s is in the table twice", ph.mode, r)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: final table (-want +got):\n%s", ph.mode, cmp.Diff(want, got))
		}
	}
	loc, err := icetable.LocalPath(tbl.Location())
	if err != nil {
		t.Fatal(err)
	}
	var orphans []string
	onDisk := 0
	filepath.WalkDir(filepath.Join(loc, "data"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			onDisk++
			if !referenced[p] {
				orphans = append(orphans, strings.TrimPrefix(p, loc+"/"))
			}
		}
		return nil
	})
	// A kill can orphan at most what one staging step writes before the
	// journal names it: a data file, and in upsert mode an equality-delete
	// file before it.
	if bound := 2 * ph.stagingKills; len(orphans) > bound {
		t.Errorf("%s: %d unreferenced files in the table's data directory, more than the %d that %d kills during staging can explain: %v",
			ph.mode, len(orphans), bound, ph.stagingKills, orphans)
	}
	t.Logf("%s: table has %d snapshots, %d rows, %d referenced files; %d files on disk, %d orphaned by kills during staging (%d such kills)",
		ph.mode, len(snaps), len(want), len(referenced), onDisk, len(orphans), ph.stagingKills)
}

// checkIcebergCatalogFile opens the SQLite catalog file the killed
// processes wrote and checks it is sound and holds the catalog's tables.
func checkIcebergCatalogFile(t *testing.T, dir string) []string {
	t.Helper()
	path := filepath.Join(dir, "iceberg", "catalog.db")
	if _, err := os.Stat(path); err != nil {
		return nil // a kill before the catalog existed
	}
	db, err := sql.Open("sqlite", icetable.SQLiteDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res []string
	rs, err := db.Query("PRAGMA integrity_check")
	if err != nil {
		t.Fatalf("catalog %s: integrity check: %v", path, err)
	}
	for rs.Next() {
		var s string
		if err := rs.Scan(&s); err != nil {
			t.Fatal(err)
		}
		res = append(res, s)
	}
	if err := errors.Join(rs.Err(), rs.Close()); err != nil || !slices.Equal(res, []string{"ok"}) {
		t.Fatalf("catalog %s is corrupt: %v %v", path, res, err)
	}
	var tables []string
	rs, err = db.Query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
	if err != nil {
		t.Fatalf("catalog %s: list tables: %v", path, err)
	}
	defer rs.Close()
	for rs.Next() {
		var s string
		if err := rs.Scan(&s); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, s)
	}
	return tables
}

// checkIcebergCrashCatalog: at the end, the SQLite file is sound, and a
// fresh catalog handle lists exactly the crash tables.
func checkIcebergCrashCatalog(t *testing.T, dir string, phases []crashPhase) {
	sqlTables := checkIcebergCatalogFile(t, dir)
	cat, err := icetable.OpenCatalog(context.Background(), icetable.CatalogConfig{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	var got, want []string
	for ident, err := range cat.Iceberg().ListTables(context.Background(), table.Identifier{"db"}) {
		if err != nil {
			t.Fatalf("list catalog tables: %v", err)
		}
		got = append(got, strings.Join(ident, "."))
	}
	for _, ph := range phases {
		want = append(want, icebergTableIdent(crashTableName(ph.mode)).String())
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("catalog lists tables %v, want %v", got, want)
	}
	t.Logf("catalog file: integrity ok, SQL tables %v; Iceberg tables %v", sqlTables, got)
}
