package apacheiceberg

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/providertest"
	"github.com/lakesql/lakesql/internal/icebergtest"
	"github.com/lakesql/lakesql/internal/s3test"
	"github.com/lakesql/lakesql/internal/stagename"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// commitEpoch stages rows and commits them as writer's epoch e (e < 0: no
// exactly-once record), taking out the files in removes.
func commitEpoch(t testing.TB, p *Provider, writer string, e int64, removes []string, rows ...row) catalogadapter.CommitOutcome {
	t.Helper()
	out, err := p.Commit(context.Background(), ordersID, []catalogadapter.Receipt{stage(t, p, rows...)},
		catalogadapter.CommitOptions{WriterID: writer, Epoch: e, Removes: removes})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// versionRows reads snapshot version of the orders table through ScanSQL.
func versionRows(t testing.TB, p *Provider, db *sql.DB, version int64) []string {
	t.Helper()
	q, err := p.ScanSQL(context.Background(), ordersID, db, version, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := db.Query("SELECT id, amount, region FROM (" + q + ")")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var out []row
	for rs.Next() {
		var r row
		var amount sql.NullFloat64
		var region sql.NullString
		if err := rs.Scan(&r.ID, &amount, &region); err != nil {
			t.Fatal(err)
		}
		r.Amount, r.Region = amount.Float64, region.String
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return rowStrings(out...)
}

// fileExists tells whether the table's file IO finds path.
func fileExists(t testing.TB, l icebergtest.Lake, path string) bool {
	t.Helper()
	fsys, err := l.Table(t, ordersID).FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f, err := fsys.Open(path)
	if err == nil {
		f.Close()
		return true
	}
	if !errors.Is(err, fs.ErrNotExist) && !strings.Contains(strings.ToLower(err.Error()), "not found") &&
		!strings.Contains(err.Error(), "NoSuchKey") {
		t.Fatalf("open %s: %v", path, err)
	}
	return false
}

// lastEpochs reads every writer's last epoch through p.
func lastEpochs(t testing.TB, p *Provider, writers ...string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, w := range writers {
		e, ok, err := p.LastEpoch(context.Background(), ordersID, w)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			out[w] = e
		}
	}
	return out
}

// TestVacuumExpiresSnapshots: snapshots older than the retention expire
// (the current one and those within it stay readable, each with the rows
// written up to it); the files only they referenced go (a data file a
// copy-on-write merge took out, their manifest lists); a dry run first
// lists exactly that and changes nothing; every writer's last epoch
// survives, that of a writer whose only snapshot expired included, and a
// replay of it is skipped; an expired snapshot is reported as such when
// read, one that never existed as invalid. On the local disk and on S3.
func TestVacuumExpiresSnapshots(t *testing.T) {
	t.Run("local", func(t *testing.T) { testVacuumExpiresSnapshots(t, icebergtest.Local(t)) })
	t.Run("s3", func(t *testing.T) { testVacuumExpiresSnapshots(t, icebergtest.S3(t, s3test.Start(t))) })
}

func testVacuumExpiresSnapshots(t *testing.T, l icebergtest.Lake) {
	ctx := context.Background()
	p := lakeProvider(t, l)
	createOrders(t, p)
	db := providertest.OpenDuckDB(t)
	r1, r2, r3 := row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 2, Region: "us"}, row{ID: 3, Amount: 3, Region: "eu"}
	s1 := commitEpoch(t, p, "a", 1, nil, r1, r2)
	_, files, err := p.Files(ctx, ordersID)
	if err != nil || len(files) != 1 {
		t.Fatalf("files after epoch 1: %v %v", files, err)
	}
	merged := files[0].Path
	s2 := commitEpoch(t, p, "c", 7, nil, r3)
	r1b := row{ID: 1, Amount: 10, Region: "eu"}
	s3 := commitEpoch(t, p, "a", 2, []string{merged}, r1b, r2) // copy-on-write: the first file goes
	r4 := row{ID: 4, Amount: 4, Region: "us"}
	s4 := commitEpoch(t, p, "b", 1, nil, r4)
	want := map[int64][]string{
		s3.Version: rowStrings(r1b, r2, r3),
		s4.Version: rowStrings(r1b, r2, r3, r4),
	}
	snaps := l.Snapshots(t, ordersID)
	if len(snaps) != 4 || !(snaps[1].TimestampMs < snaps[2].TimestampMs) {
		t.Fatalf("want 4 snapshots, the second older than the third: %+v", snaps)
	}
	epochs := lastEpochs(t, p, "a", "b", "c")
	if diff := cmp.Diff(map[string]int64{"a": 2, "b": 1, "c": 7}, epochs); diff != "" {
		t.Fatalf("last epochs before vacuum (-want +got):\n%s", diff)
	}
	// The clock stands a second after the last commit; the retention
	// reaches exactly back to the third snapshot.
	now := time.UnixMilli(snaps[3].TimestampMs + 1000)
	retain := now.Sub(time.UnixMilli(snaps[2].TimestampMs))
	opts := catalogadapter.VacuumOptions{Retain: retain, AllowShortRetention: true, DryRun: true, Now: func() time.Time { return now }}
	storedBefore := l.StoredFiles(t, ordersID)
	dry, err := p.Vacuum(ctx, ordersID, opts)
	if err != nil {
		t.Fatal(err)
	}
	var wantGone []string
	for _, f := range []string{merged, snaps[0].ManifestList, snaps[1].ManifestList} {
		wantGone = append(wantGone, icetable.FileKey(f))
	}
	var listed, manifests []string
	for _, f := range dry.Files {
		if f.Reason != "expired" {
			t.Errorf("dry run lists %s as %q; want only expired files", f.Path, f.Reason)
		}
		if strings.HasSuffix(f.Path, ".avro") && !strings.Contains(filepath.Base(f.Path), "snap-") {
			manifests = append(manifests, f.Path)
			continue
		}
		listed = append(listed, icetable.FileKey(f.Path))
	}
	sort.Strings(listed)
	sort.Strings(wantGone)
	if diff := cmp.Diff(wantGone, listed); diff != "" {
		t.Errorf("dry run's expired data files and manifest lists (-want +got):\n%s", diff)
	}
	if len(manifests) == 0 {
		t.Errorf("dry run lists no manifest of the expired snapshots: %+v", dry.Files)
	}
	if dry.SnapshotsExpired != 2 || dry.OldestVersion != s3.Version || dry.Retain != retain {
		t.Errorf("dry run: %+v; want 2 snapshots expired, oldest %d, retain %v", dry, s3.Version, retain)
	}
	if n := len(l.Snapshots(t, ordersID)); n != 4 {
		t.Fatalf("dry run left %d snapshots, want 4", n)
	}
	if got := l.StoredFiles(t, ordersID); !slices.Equal(got, storedBefore) {
		t.Fatalf("dry run changed the files: %v, was %v", got, storedBefore)
	}

	opts.DryRun = false
	inFlight := stage(t, p, row{ID: 5, Amount: 5, Region: "eu"})
	out, err := p.Vacuum(ctx, ordersID, opts)
	if err != nil {
		t.Fatal(err)
	}
	if out.SnapshotsExpired != 2 || out.OldestVersion != s3.Version || len(out.Files) != len(dry.Files) {
		t.Fatalf("vacuum: %+v; want what the dry run listed (%d files), 2 snapshots expired, oldest %d", out, len(dry.Files), s3.Version)
	}
	if got := l.Snapshots(t, ordersID); len(got) != 2 || got[0].SnapshotID != s3.Version || got[1].SnapshotID != s4.Version {
		t.Fatalf("snapshots after vacuum: %+v", got)
	}
	for _, f := range dry.Files {
		if fileExists(t, l, f.Path) {
			t.Errorf("%s (%s) is still there", f.Path, f.Reason)
		}
	}
	for v, rows := range want {
		if got := versionRows(t, p, db, v); !slices.Equal(got, rows) {
			t.Errorf("snapshot %d reads %q, want %q", v, got, rows)
		}
	}
	if got := icebergtest.Rows(t, l.Table(t, ordersID)); !slices.Equal(got, want[s4.Version]) {
		t.Errorf("iceberg-go reads %q, want %q", got, want[s4.Version])
	}
	if diff := cmp.Diff(epochs, lastEpochs(t, p, "a", "b", "c")); diff != "" {
		t.Errorf("last epochs changed by the vacuum (-before +after):\n%s", diff)
	}
	again, err := p.Commit(ctx, ordersID, []catalogadapter.Receipt{stage(t, p, r3)}, catalogadapter.CommitOptions{WriterID: "c", Epoch: 7})
	if err != nil || !again.Skipped {
		t.Errorf("replay of writer c's epoch 7, whose snapshot expired: %+v %v; want it skipped", again, err)
	}
	// A commit whose answer was lost, and whose snapshot then expired,
	// still learns that it landed: the kept record carries its commit id.
	tbl := l.Table(t, ordersID)
	rec, ok, err := icetable.LastEpoch(tbl.Metadata(), "c")
	if err != nil || !ok || rec.SnapshotID != s2.Version || rec.CommitID == "" {
		t.Fatalf("kept record of writer c: %+v %v %v; want snapshot %d with its commit id", rec, ok, err, s2.Version)
	}
	lost, done, err := landed(tbl, catalogadapter.CommitOptions{WriterID: "c", Epoch: 7}, rec.CommitID, 1)
	if err != nil || !done || lost.Skipped || lost.Version != s2.Version || !lost.CommitTime.Equal(s2.CommitTime) {
		t.Errorf("a lost answer of the expired snapshot's commit: %+v done %v %v; want it landed as %+v", lost, done, err, s2)
	}
	for _, v := range []int64{s1.Version, s2.Version} {
		_, err := p.ScanSQL(ctx, ordersID, db, v, nil)
		var gone *catalogadapter.VersionUnavailableError
		if !errors.As(err, &gone) || gone.Version != v || gone.Oldest != s3.Version || gone.Why != "snapshot expired" {
			t.Errorf("scan of expired snapshot %d: %v; want a VersionUnavailableError naming %d", v, err, s3.Version)
		}
	}
	if _, err := p.ScanSQL(ctx, ordersID, db, 12345, nil); !errors.Is(err, catalogadapter.ErrInvalid) || errors.Is(err, catalogadapter.ErrVersionUnavailable) {
		t.Errorf("scan of a snapshot that never was: %v; want ErrInvalid", err)
	}

	// The stage in flight during the vacuum commits and reads right; a
	// stage abandoned goes once the clock is past its lifetime, and then
	// the table's folders hold only what its snapshots name.
	s5, err := p.Commit(ctx, ordersID, []catalogadapter.Receipt{inFlight}, catalogadapter.CommitOptions{WriterID: "b", Epoch: 2})
	if err != nil {
		t.Fatalf("commit of the stage in flight during the vacuum: %v", err)
	}
	r5 := row{ID: 5, Amount: 5, Region: "eu"}
	if got, want := versionRows(t, p, db, s5.Version), rowStrings(r1b, r2, r3, r4, r5); !slices.Equal(got, want) {
		t.Errorf("after committing the stage: %q, want %q", got, want)
	}
	stage(t, p, row{ID: 6, Region: "abandoned"})
	later := time.Now().Add(catalogadapter.StageLifetime + time.Hour)
	if _, err := p.Vacuum(ctx, ordersID, catalogadapter.VacuumOptions{Retain: -1, Now: func() time.Time { return later }}); err != nil {
		t.Fatal(err)
	}
	if got, live := l.StoredFiles(t, ordersID), l.LiveFiles(t, ordersID); !slices.Equal(got, live) {
		t.Errorf("stored data files %v, want the live ones %v", got, live)
	}
	if got, want := versionRows(t, p, db, -1), rowStrings(r1b, r2, r3, r4, r5); !slices.Equal(got, want) {
		t.Errorf("after the second vacuum: %q, want %q", got, want)
	}
}

// TestVacuumRewritesManifests: a table of many one-commit manifests gets
// them merged by a vacuum, in a snapshot that changes no row and no
// writer's last epoch; the next vacuum finds nothing to merge.
func TestVacuumRewritesManifests(t *testing.T) {
	ctx := context.Background()
	l := icebergtest.Local(t)
	p := lakeProvider(t, l)
	createOrders(t, p)
	var rows []row
	for e := int64(1); e <= ManifestRewriteMinSmall+2; e++ {
		r := row{ID: e, Amount: float64(e), Region: "eu"}
		rows = append(rows, r)
		commitEpoch(t, p, "a", e, nil, r)
	}
	manifests := func() int {
		tbl := l.Table(t, ordersID)
		fsys, err := tbl.FS(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := tbl.CurrentSnapshot().Manifests(fsys)
		if err != nil {
			t.Fatal(err)
		}
		return len(ms)
	}
	if n := manifests(); n < ManifestRewriteMinSmall {
		t.Fatalf("%d manifests after %d commits; the test needs at least %d", n, len(rows), ManifestRewriteMinSmall)
	}
	out, err := p.Vacuum(ctx, ordersID, catalogadapter.VacuumOptions{Retain: -1})
	if err != nil {
		t.Fatal(err)
	}
	if out.ManifestsRewritten < ManifestRewriteMinSmall || out.Version == -1 {
		t.Fatalf("vacuum: %+v; want the manifests rewritten in a new snapshot", out)
	}
	if n := manifests(); n != 1 {
		t.Errorf("%d manifests after the rewrite, want 1", n)
	}
	if got, want := icebergtest.Rows(t, l.Table(t, ordersID)), rowStrings(rows...); !slices.Equal(got, want) {
		t.Errorf("rows after the rewrite: %q, want %q", got, want)
	}
	if e, _, _ := p.LastEpoch(ctx, ordersID, "a"); e != int64(len(rows)) {
		t.Errorf("last epoch %d after the rewrite, want %d", e, len(rows))
	}
	again, err := p.Vacuum(ctx, ordersID, catalogadapter.VacuumOptions{Retain: -1})
	if err != nil || again.ManifestsRewritten != 0 || again.Version != -1 {
		t.Errorf("second vacuum: %+v %v; want nothing rewritten", again, err)
	}
}

// TestVacuumOrphans: files under the table's folders that no snapshot
// names go once they are older than the stage lifetime, by the stage time
// in their name or, without one, by their modification time; a fresh
// stage survives a vacuum with no retention and then commits and reads
// right; metadata files the log dropped go too (previous-versions-max).
func TestVacuumOrphans(t *testing.T) {
	ctx := context.Background()
	l := icebergtest.Local(t)
	p := lakeProvider(t, l)
	if err := p.CreateTable(ctx, ordersID, catalogadapter.TableDef{Schema: ordersSchema,
		Properties: map[string]string{table.MetadataPreviousVersionsMaxKey: "1"}}); err != nil {
		t.Fatal(err)
	}
	r1, r2, r3 := row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 2, Region: "us"}, row{ID: 3, Amount: 3, Region: "eu"}
	commitEpoch(t, p, "a", 1, nil, r1)
	commitEpoch(t, p, "a", 2, nil, r2)
	loc, err := icetable.LocalPath(l.Table(t, ordersID).Location())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	old := now.Add(-2 * catalogadapter.StageLifetime)
	put := func(rel string, mtime time.Time) string {
		p := filepath.Join(loc, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil { // a crash leaves 0-byte files too
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	crashed := put("data/lakesql-0d9e8f1a-1b2c-4d5e-8f90-a1b2c3d4e5f6/part-0.parquet", old) // unstamped, old
	stampedOld := put("data/lakesql-"+stagename.New(old)+"/part-0.parquet", now)            // old by its name
	stampedNew := put("data/lakesql-"+stagename.New(now)+"/part-0.parquet", old)            // new by its name
	staged := stage(t, p, r3)                                                               // a stage in flight

	out, err := p.Vacuum(ctx, ordersID, catalogadapter.VacuumOptions{Retain: 0, AllowShortRetention: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	var orphans []string
	for _, f := range out.Files {
		if f.Reason == "orphan" && strings.HasSuffix(f.Path, ".parquet") {
			orphans = append(orphans, f.Path)
		}
	}
	sort.Strings(orphans)
	wantOrphans := []string{crashed, stampedOld}
	sort.Strings(wantOrphans)
	if diff := cmp.Diff(wantOrphans, orphans); diff != "" {
		t.Errorf("orphan data files deleted (-want +got):\n%s", diff)
	}
	for _, p := range []string{crashed, stampedOld} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("orphan %s is still there: %v", p, err)
		}
	}
	if _, err := os.Stat(stampedNew); err != nil {
		t.Errorf("a file staged now by its name was deleted: %v", err)
	}
	if out.SnapshotsExpired != 1 {
		t.Errorf("%d snapshots expired, want 1 (all but the current)", out.SnapshotsExpired)
	}
	res, err := p.Commit(ctx, ordersID, []catalogadapter.Receipt{staged}, catalogadapter.CommitOptions{WriterID: "a", Epoch: 3})
	if err != nil || res.Skipped {
		t.Fatalf("commit of the stage that was in flight during the vacuum: %+v %v", res, err)
	}
	if got, want := icebergtest.Rows(t, l.Table(t, ordersID)), rowStrings(r1, r2, r3); !slices.Equal(got, want) {
		t.Fatalf("rows after committing the stage: %q, want %q", got, want)
	}

	// A stage never committed goes once the clock is past its lifetime,
	// listed first by a dry run that deletes nothing.
	abandoned := stage(t, p, row{ID: 9, Region: "gone"})
	later := now.Add(catalogadapter.StageLifetime + time.Hour)
	opts := catalogadapter.VacuumOptions{Retain: 0, AllowShortRetention: true, DryRun: true, Now: func() time.Time { return later }}
	before := l.StoredFiles(t, ordersID)
	dry, err := p.Vacuum(ctx, ordersID, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.StoredFiles(t, ordersID); !slices.Equal(got, before) {
		t.Fatalf("dry run deleted files: %v, was %v", got, before)
	}
	opts.DryRun = false
	out, err = p.Vacuum(ctx, ordersID, opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(dry.Files, out.Files); diff != "" {
		t.Errorf("the vacuum deleted other files than its dry run listed (-dry +real):\n%s", diff)
	}
	if got, live := l.StoredFiles(t, ordersID), l.LiveFiles(t, ordersID); !slices.Equal(got, live) {
		t.Errorf("stored data files %v, want only the live ones %v (the abandoned stage %v goes)", got, live, abandoned)
	}
	if got, want := icebergtest.Rows(t, l.Table(t, ordersID)), rowStrings(r1, r2, r3); !slices.Equal(got, want) {
		t.Fatalf("rows after the vacuum: %q, want %q", got, want)
	}
	metas, _ := filepath.Glob(filepath.Join(loc, "metadata", "*.metadata.json"))
	if len(metas) != 2 {
		t.Errorf("metadata files %v; want the current one and one previous (previous-versions-max 1)", metas)
	}
	if e, _, _ := p.LastEpoch(ctx, ordersID, "a"); e != 3 {
		t.Errorf("last epoch of a: %d, want 3", e)
	}
}

// TestVacuumRetention: a retention below the table's is refused without
// AllowShortRetention, before anything changes; below 0 takes the
// table's own (history.expire.max-snapshot-age-ms, 7 days when unset);
// MinSnapshots keeps the newest snapshots whatever their age.
func TestVacuumRetention(t *testing.T) {
	ctx := context.Background()
	l := icebergtest.Local(t)
	p := lakeProvider(t, l)
	createOrders(t, p)
	for e := int64(1); e <= 5; e++ {
		commitEpoch(t, p, "a", e, nil, row{ID: e})
	}
	if _, err := p.Vacuum(ctx, ordersID, catalogadapter.VacuumOptions{Retain: time.Hour}); !errors.Is(err, catalogadapter.ErrRetention) {
		t.Errorf("vacuum retaining 1h of a table that keeps 7 days: %v; want ErrRetention", err)
	}
	far := time.Now().Add(30 * 24 * time.Hour)
	if _, err := p.Vacuum(ctx, ordersID, catalogadapter.VacuumOptions{Retain: time.Hour, Now: func() time.Time { return far }}); !errors.Is(err, catalogadapter.ErrRetention) {
		t.Errorf("vacuum retaining 1h: %v; want ErrRetention", err)
	}
	if n := len(l.Snapshots(t, ordersID)); n != 5 {
		t.Fatalf("a refused vacuum left %d snapshots, want 5", n)
	}
	out, err := p.Vacuum(ctx, ordersID, catalogadapter.VacuumOptions{Retain: -1})
	if err != nil || out.Retain != catalogadapter.DefaultRetention || out.SnapshotsExpired != 0 {
		t.Errorf("vacuum with the table's retention: %+v %v; want 7 days, nothing expired", out, err)
	}
	out, err = p.Vacuum(ctx, ordersID, catalogadapter.VacuumOptions{Retain: -1, MinSnapshots: 3, Now: func() time.Time { return far }})
	if err != nil || out.SnapshotsExpired != 2 {
		t.Errorf("vacuum 30 days on keeping 3 snapshots: %+v %v; want 2 expired", out, err)
	}
	if n := len(l.Snapshots(t, ordersID)); n != 3 {
		t.Errorf("%d snapshots kept, want 3", n)
	}

	short := catalogadapter.TableIdent{Namespace: []string{"db"}, Name: "short"}
	if err := p.CreateTable(ctx, short, catalogadapter.TableDef{Schema: ordersSchema,
		Properties: map[string]string{table.MaxSnapshotAgeMsKey: "3600000", table.MinSnapshotsToKeepKey: "2"}}); err != nil {
		t.Fatal(err)
	}
	for e := int64(1); e <= 3; e++ {
		if _, err := p.Commit(ctx, short, []catalogadapter.Receipt{}, catalogadapter.CommitOptions{WriterID: "a", Epoch: e}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Vacuum(ctx, short, catalogadapter.VacuumOptions{Retain: 30 * time.Minute}); !errors.Is(err, catalogadapter.ErrRetention) {
		t.Errorf("vacuum retaining 30m of a table that keeps 1h: %v; want ErrRetention", err)
	}
	out, err = p.Vacuum(ctx, short, catalogadapter.VacuumOptions{Retain: -1, Now: func() time.Time { return far }})
	if err != nil || out.Retain != time.Hour || out.SnapshotsExpired != 1 {
		t.Errorf("vacuum with the table's 1h and 2 snapshots: %+v %v; want 1 expired", out, err)
	}
	if e, ok, err := p.LastEpoch(ctx, short, "a"); err != nil || !ok || e != 3 {
		t.Errorf("last epoch %d %v %v, want 3", e, ok, err)
	}
}
