package deltalake

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/clocktest"
	"github.com/lakesql/lakesql/internal/stagename"
	"github.com/lakesql/lakesql/tableformat/delta"
)

const day = 24 * time.Hour

// vacuumTable makes a provider on a pinned clock and an orders table.
func vacuumTable(t *testing.T, def catalogadapter.TableDef) (*clocktest.Clock, *sql.DB, *Provider, catalogadapter.TableIdent) {
	t.Helper()
	clock := clocktest.New(t0)
	db := openDB(t)
	p := New(db, testOptions(clock))
	t.Cleanup(func() { p.Close() })
	return clock, db, p, newTable(t, p, def)
}

// commitRows stages rows and commits them, removing the files of remove.
func commitRows(t *testing.T, p *Provider, id catalogadapter.TableIdent, rows []row, remove []string, writer string, epoch int64) (int64, []string) {
	t.Helper()
	r := writeRows(t, p, id, rows)
	opts := catalogadapter.CommitOptions{Epoch: -1, Removes: remove}
	if writer != "" {
		opts.WriterID, opts.Epoch = writer, epoch
	}
	out, err := p.Commit(context.Background(), id, []catalogadapter.Receipt{r}, opts)
	if err != nil {
		t.Fatal(err)
	}
	_, files, err := p.Files(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	return out.Version, paths
}

func dataFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".parquet" && !isUnder(p, filepath.Join(dir, "_delta_log")) {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func isUnder(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !filepath.IsAbs(rel) && (len(rel) < 3 || rel[:3] != "../")
}

// TestVacuumKeepsRetainedVersions: files a version within retention needs
// stay, the ones only older versions needed go, and those versions then
// fail with a VersionUnavailableError naming the oldest readable, also
// for a provider that did not run the vacuum.
func TestVacuumKeepsRetainedVersions(t *testing.T) {
	ctx := context.Background()
	clock, db, p, id := vacuumTable(t, catalogadapter.TableDef{})

	v1, files1 := commitRows(t, p, id, idRows(1, 3), nil, "w", 1)
	clock.Advance(day)
	v2, files2 := commitRows(t, p, id, idRows(4, 3), files1, "w", 2) // replaces v1's rows
	clock.Advance(10 * day)
	v3, _ := commitRows(t, p, id, idRows(7, 2), files2, "w", 3)
	clock.Advance(day)
	want := map[int64][]row{v2: idRows(4, 3), v3: idRows(7, 2)}

	out, err := p.Vacuum(ctx, id, catalogadapter.VacuumOptions{Retain: -1})
	if err != nil {
		t.Fatal(err)
	}
	if out.Retain != catalogadapter.DefaultRetention || out.OldestVersion != v2 {
		t.Errorf("vacuum: retain %s, oldest %d; want %s, %d", out.Retain, out.OldestVersion, catalogadapter.DefaultRetention, v2)
	}
	wantDeleted := []catalogadapter.VacuumedFile{{Path: files1[0], Reason: "removed"}}
	got := append([]catalogadapter.VacuumedFile(nil), out.Files...)
	for i := range got {
		got[i].Size = 0
	}
	if diff := cmp.Diff(wantDeleted, got); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(id.Name, files1[0])); !os.IsNotExist(err) {
		t.Errorf("v1's removed file is still there: %v", err)
	}
	for v, rows := range want {
		if diff := cmp.Diff(rows, scanRows(t, p, db, id, v, nil)); diff != "" {
			t.Errorf("version %d after vacuum (-want +got):\n%s", v, diff)
		}
	}
	if st, err := p.Stats(ctx, id, 0); err != nil || st.OldestVersion != v2 {
		t.Errorf("Stats oldest version = %d, %v; want %d", st.OldestVersion, err, v2)
	}
	fresh := New(db, testOptions(clock)) // knows nothing of the vacuum but the log
	defer fresh.Close()
	for _, prov := range []*Provider{p, fresh} {
		for _, v := range []int64{0, v1} {
			_, err := prov.ScanSQL(ctx, id, db, v, nil)
			var ve *catalogadapter.VersionUnavailableError
			if !errors.As(err, &ve) || ve.Version != v || ve.Oldest != v2 || ve.Why != "vacuumed" {
				t.Errorf("scan of vacuumed version %d: %v; want a VersionUnavailableError naming %d", v, err, v2)
			}
		}
		if _, err := prov.ScanSQL(ctx, id, db, 99, nil); !errors.Is(err, catalogadapter.ErrInvalid) {
			t.Errorf("scan past the latest version: %v; want ErrInvalid", err)
		}
		if got, err := prov.VersionAt(ctx, id, t0.Add(day+time.Hour)); err != nil || got != v2 {
			t.Errorf("VersionAt(t0+1d1h) = %d, %v; want %d", got, err, v2)
		}
		if _, err := prov.VersionAt(ctx, id, t0.Add(time.Hour)); !errors.Is(err, catalogadapter.ErrVersionUnavailable) {
			t.Errorf("VersionAt(t0+1h), a vacuumed version: %v; want ErrVersionUnavailable", err)
		}
		if _, err := prov.VersionAt(ctx, id, t0.Add(-time.Hour)); !errors.Is(err, catalogadapter.ErrInvalid) {
			t.Errorf("VersionAt before the table: %v; want ErrInvalid", err)
		}
	}
	h, err := p.History(ctx, id, 3)
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, e := range h {
		ops = append(ops, e.Operation)
	}
	if diff := cmp.Diff([]string{"VACUUM END", "VACUUM START", "WRITE"}, ops); diff != "" {
		t.Errorf("history operations (-want +got):\n%s", diff)
	}
	if w := h[2]; w.Version != v3 || w.WriterID != "w" || w.Epoch != 3 || w.RowsAdded != 2 || w.RowsRemoved != 3 || w.FilesAdded != 1 || w.FilesRemoved != 1 {
		t.Errorf("history of version %d: %+v", v3, w)
	}
	if e, ok, _ := p.LastEpoch(ctx, id, "w"); !ok || e != 3 {
		t.Errorf("LastEpoch after vacuum = %d, %v; want 3", e, ok)
	}
}

// TestVacuumStagesAndOrphans: a fresh stage survives even RETAIN 0 and
// then commits; a stage older than StageLifetime is refused at commit and
// deleted by the next vacuum, with 0-byte crash leftovers; DRY RUN and a
// refused retention delete nothing.
func TestVacuumStagesAndOrphans(t *testing.T) {
	ctx := context.Background()
	clock, db, p, id := vacuumTable(t, catalogadapter.TableDef{})
	commitRows(t, p, id, idRows(1, 2), nil, "", 0)

	fresh := writeRows(t, p, id, idRows(10, 2))
	if _, err := p.Vacuum(ctx, id, catalogadapter.VacuumOptions{Retain: 0, AllowShortRetention: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{fresh}, catalogadapter.CommitOptions{Epoch: -1}); err != nil {
		t.Fatalf("commit of a stage a vacuum ran beside: %v", err)
	}
	if diff := cmp.Diff(append(idRows(1, 2), idRows(10, 2)...), scanRows(t, p, db, id, -1, nil)); diff != "" {
		t.Fatalf("table (-want +got):\n%s", diff)
	}

	stale := writeRows(t, p, id, idRows(20, 2))
	empty := "part-" + stagename.New(t0) + "-crash.snappy.parquet"
	if err := os.WriteFile(filepath.Join(id.Name, empty), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	clock.Advance(catalogadapter.StageLifetime + time.Minute)
	// Refused at commit from now on; VACUUM waits out stageGrace as well.
	before, _, _ := p.Files(ctx, id)
	if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{stale}, catalogadapter.CommitOptions{Epoch: -1}); !errors.Is(err, catalogadapter.ErrStageExpired) {
		t.Fatalf("commit of an expired stage: %v; want ErrStageExpired", err)
	}
	if after, _, _ := p.Files(ctx, id); after != before {
		t.Fatalf("the refused commit made version %d", after)
	}
	if dry, err := p.Vacuum(ctx, id, catalogadapter.VacuumOptions{Retain: 0, AllowShortRetention: true, DryRun: true}); err != nil || len(dry.Files) != 0 {
		t.Errorf("within the grace after the stage lifetime, VACUUM would delete %v (%v)", dry.Files, err)
	}
	clock.Advance(stageGrace)
	onDisk := dataFiles(t, id.Name)

	if _, err := p.Vacuum(ctx, id, catalogadapter.VacuumOptions{Retain: time.Hour}); !errors.Is(err, catalogadapter.ErrRetention) {
		t.Errorf("RETAIN 1 HOURS without the override: %v; want ErrRetention", err)
	}
	dry, err := p.Vacuum(ctx, id, catalogadapter.VacuumOptions{Retain: 0, AllowShortRetention: true, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(onDisk, dataFiles(t, id.Name)); diff != "" {
		t.Errorf("DRY RUN or the refused vacuum deleted files (-before +after):\n%s", diff)
	}
	if v, _, _ := p.Files(ctx, id); v != before || dry.Version != -1 {
		t.Errorf("DRY RUN committed: version %d, outcome version %d", v, dry.Version)
	}
	var orphans []string
	for _, f := range dry.Files {
		if f.Reason != "orphan" {
			t.Errorf("dry run lists %s as %q, want orphan", f.Path, f.Reason)
		}
		orphans = append(orphans, f.Path)
	}
	wantOrphans := append(receiptPaths(t, stale), empty)
	sort.Strings(wantOrphans)
	if diff := cmp.Diff(wantOrphans, orphans); diff != "" {
		t.Errorf("orphans (-want +got):\n%s", diff)
	}

	out, err := p.Vacuum(ctx, id, catalogadapter.VacuumOptions{Retain: 0, AllowShortRetention: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Files) != len(wantOrphans) || out.Version <= before {
		t.Errorf("vacuum deleted %d files at version %d; want %d after version %d", len(out.Files), out.Version, len(wantOrphans), before)
	}
	for _, f := range wantOrphans {
		if _, err := os.Stat(filepath.Join(id.Name, f)); !os.IsNotExist(err) {
			t.Errorf("orphan %s is still there", f)
		}
	}
	if diff := cmp.Diff(append(idRows(1, 2), idRows(10, 2)...), scanRows(t, p, db, id, -1, nil)); diff != "" {
		t.Errorf("table after vacuum (-want +got):\n%s", diff)
	}
}

func receiptPaths(t *testing.T, r catalogadapter.Receipt) []string {
	t.Helper()
	adds, _, err := (&Provider{}).parseReceipts("/", []catalogadapter.Receipt{r})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range adds {
		out = append(out, a.Path)
	}
	return out
}

// TestLogCleanupKeepsEpochsAndRetainedVersions: after the log is cleaned
// up, every writer's last epoch is still there (including one that wrote
// only in the cleaned part), the versions within retention read as they
// were written, and an older one fails naming the oldest readable.
func TestLogCleanupKeepsEpochsAndRetainedVersions(t *testing.T) {
	ctx := context.Background()
	clock, db, p, id := vacuumTable(t, catalogadapter.TableDef{CheckpointInterval: 3})

	commitRows(t, p, id, idRows(1, 1), nil, "early", 7) // v1
	var files []string
	for i := 0; i < 4; i++ { // v2..v5, 40 days ago
		_, files = commitRows(t, p, id, idRows(int64(10+i), 1), nil, "steady", int64(i))
	}
	clock.Advance(40 * day)
	want := map[int64][]row{}
	var all []row
	all = append(all, idRows(1, 1)...)
	for i := 0; i < 4; i++ {
		all = append(all, idRows(int64(10+i), 1)...)
	}
	var last int64
	for i := 0; i < 6; i++ { // v6..v11, within retention
		last, files = commitRows(t, p, id, idRows(int64(100+i), 1), nil, "steady", int64(10+i))
		all = append(all, idRows(int64(100+i), 1)...)
		want[last] = append([]row(nil), all...)
		sort.Slice(want[last], func(a, b int) bool { return want[last][a].ID < want[last][b].ID })
	}
	_ = files
	p.checkpoints.wait()
	if _, err := os.Stat(filepath.Join(id.Name, "_delta_log", "00000000000000000000.json")); !os.IsNotExist(err) {
		t.Fatalf("version 0's entry survived log cleanup: %v", err)
	}
	if _, err := os.Stat(filepath.Join(id.Name, "_delta_log", "00000000000000000006.json")); err != nil {
		t.Fatalf("version 6, within retention, was cleaned up: %v", err)
	}
	for _, w := range []struct {
		id    string
		epoch int64
	}{{"early", 7}, {"steady", 15}} {
		if e, ok, err := p.LastEpoch(ctx, id, w.id); err != nil || !ok || e != w.epoch {
			t.Errorf("LastEpoch(%s) = %d, %v, %v; want %d", w.id, e, ok, err, w.epoch)
		}
	}
	for v, rows := range want {
		if diff := cmp.Diff(rows, scanRows(t, p, db, id, v, nil)); diff != "" {
			t.Errorf("version %d after log cleanup (-want +got):\n%s", v, diff)
		}
	}
	_, err := p.ScanSQL(ctx, id, db, 2, nil)
	var ve *catalogadapter.VersionUnavailableError
	if !errors.As(err, &ve) || ve.Why != "log cleaned up" || ve.Oldest < 3 || ve.Oldest > 6 {
		t.Fatalf("scan of a cleaned-up version: %v; want a VersionUnavailableError naming the checkpoint the log starts at", err)
	}
	if _, err := p.ScanSQL(ctx, id, db, ve.Oldest, nil); err != nil {
		t.Errorf("the oldest readable version %d: %v", ve.Oldest, err)
	}
	h, err := p.History(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := h[len(h)-1].Version; n != ve.Oldest {
		t.Errorf("history ends at version %d, want %d", n, ve.Oldest)
	}
}

// TestVacuumObjectStorage: on S3 (versitygw) VACUUM finds files in the
// listing, ages an unstamped one by its LastModified, and leaves the table
// reading right.
func TestVacuumObjectStorage(t *testing.T) {
	ctx := context.Background()
	clock := clocktest.New(time.Now().UTC())
	p := s3Provider(t, clock)
	id := s3Table(t)
	if err := p.CreateTable(ctx, id, catalogadapter.TableDef{Schema: ordersSchema()}); err != nil {
		t.Fatal(err)
	}
	_, files1 := commitRows(t, p, id, idRows(1, 3), nil, "w", 1)
	commitRows(t, p, id, idRows(4, 3), files1, "w", 2)
	orphan := writeRows(t, p, id, idRows(9, 1))
	tbl, _, err := p.table(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.Storage().Put(ctx, "junk.parquet", []byte("not ours")); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Storage().Put(ctx, "_SUCCESS", nil); err != nil {
		t.Fatal(err)
	}
	clock.Advance(8 * day)
	out, err := p.Vacuum(ctx, id, catalogadapter.VacuumOptions{Retain: -1})
	if err != nil {
		t.Fatal(err)
	}
	var got []catalogadapter.VacuumedFile
	for _, f := range out.Files {
		got = append(got, catalogadapter.VacuumedFile{Path: f.Path, Reason: f.Reason})
	}
	want := []catalogadapter.VacuumedFile{{Path: "junk.parquet", Reason: "orphan"}, {Path: files1[0], Reason: "removed"}, {Path: receiptPaths(t, orphan)[0], Reason: "orphan"}}
	sort.Slice(want, func(i, j int) bool { return want[i].Path < want[j].Path })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
	for _, k := range []string{"junk.parquet", files1[0]} {
		if _, err := tbl.Storage().Stat(ctx, k); !errors.Is(err, delta.ErrNotFound) {
			t.Errorf("%s is still there: %v", k, err)
		}
	}
	if _, err := tbl.Storage().Stat(ctx, "_SUCCESS"); err != nil {
		t.Errorf("the hidden _SUCCESS was deleted: %v", err)
	}
	if diff := cmp.Diff(idRows(4, 3), scanRows(t, p, p.db, id, -1, nil)); diff != "" {
		t.Errorf("table after vacuum (-want +got):\n%s", diff)
	}
}
