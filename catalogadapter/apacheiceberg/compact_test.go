package apacheiceberg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/providertest"
	"github.com/lakesql/lakesql/internal/icebergtest"
	"github.com/lakesql/lakesql/internal/stagename"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// rowSQL is a DuckDB query yielding one row of the orders table.
func rowSQL(r row) string {
	return fmt.Sprintf("SELECT %d::BIGINT AS id, %g::DOUBLE AS amount, '%s' AS region", r.ID, r.Amount, r.Region)
}

// appendRows commits rows as one epoch of writer, staged by DuckDB's COPY.
func appendRows(t testing.TB, p *Provider, db *sql.DB, writer string, epoch int64, rows ...row) {
	t.Helper()
	ctx := context.Background()
	var qs []string
	for _, r := range rows {
		qs = append(qs, rowSQL(r))
	}
	rc, err := p.StageSQL(ctx, ordersID, db, catalogadapter.Source{Query: strings.Join(qs, " UNION ALL ")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Commit(ctx, ordersID, []catalogadapter.Receipt{rc}, catalogadapter.CommitOptions{WriterID: writer, Epoch: epoch}); err != nil {
		t.Fatal(err)
	}
}

// upsertRows commits rows as an upsert on id (a row delta: equality
// deletes on id, then the rows).
func upsertRows(t testing.TB, p *Provider, db *sql.DB, writer string, epoch int64, rows ...row) {
	t.Helper()
	ctx := context.Background()
	var qs []string
	for _, r := range rows {
		qs = append(qs, rowSQL(r))
	}
	q := strings.Join(qs, " UNION ALL ")
	rcs, err := p.StageRowDelta(ctx, ordersID, db, []string{"id"}, "SELECT id FROM ("+q+")", q)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Commit(ctx, ordersID, rcs, catalogadapter.CommitOptions{WriterID: writer, Epoch: epoch}); err != nil {
		t.Fatal(err)
	}
}

// duckRows reads the orders table through our DuckDB scan, sorted.
func duckRows(t testing.TB, p *Provider, db *sql.DB) []string {
	t.Helper()
	q, err := p.ScanSQL(context.Background(), ordersID, db, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := db.Query("SELECT id, amount, region FROM (" + q + ")")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	out := []string{}
	for rs.Next() {
		var r row
		if err := rs.Scan(&r.ID, &r.Amount, &r.Region); err != nil {
			t.Fatal(err)
		}
		out = append(out, r.String())
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// checkRows compares both readers with want.
func checkRows(t testing.TB, p *Provider, db *sql.DB, dir string, want []string) {
	t.Helper()
	if d := cmp.Diff(want, duckRows(t, p, db)); d != "" {
		t.Fatalf("rows by our DuckDB scan (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, icebergRows(t, dir)); d != "" {
		t.Fatalf("rows by iceberg-go's scan (-want +got):\n%s", d)
	}
}

func stats(t testing.TB, p *Provider) catalogadapter.TableStats {
	t.Helper()
	st, err := p.Stats(context.Background(), ordersID, 0)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func lastEpoch(t testing.TB, p *Provider, writer string) int64 {
	t.Helper()
	e, ok, err := p.LastEpoch(context.Background(), ordersID, writer)
	if err != nil || !ok {
		t.Fatalf("last epoch of %s: %d, %v, %v", writer, e, ok, err)
	}
	return e
}

// TestCompactSmallAppends: many one-row appends of two writers become one
// file in one replace snapshot; rows, both readers, and every writer's
// last epoch are unchanged; a second compaction has nothing to do.
func TestCompactSmallAppends(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := openProvider(t, dir)
	db := providertest.OpenDuckDB(t)
	createOrders(t, p)
	var want []row
	for i := range 30 {
		r := row{ID: int64(i), Amount: float64(i) / 2, Region: []string{"eu", "us"}[i%2]}
		want = append(want, r)
		appendRows(t, p, db, []string{"w1", "w2"}[i%2], int64(i/2+1), r)
	}
	before := stats(t, p)
	if before.LiveFiles != 30 || before.SmallFiles != 30 || before.DeleteFiles != 0 || before.VersionsSinceCheckpoint != -1 {
		t.Fatalf("stats before: %+v", before)
	}
	first := snapshots(t, dir, ordersID)[0].SnapshotID
	if before.OldestVersion != first {
		t.Fatalf("oldest version %d, want the first snapshot %d", before.OldestVersion, first)
	}
	out, err := p.Compact(ctx, ordersID, db, catalogadapter.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Committed || out.FilesRemoved != 30 || out.FilesAdded != 1 || out.Rows != 30 || out.Partitions != 1 || out.BytesAdded <= 0 || out.BytesRemoved <= 0 {
		t.Fatalf("outcome %+v", out)
	}
	checkRows(t, p, db, dir, rowStrings(want...))
	after := stats(t, p)
	if after.LiveFiles != 1 || after.Version != out.Version || after.OldestVersion != first {
		t.Fatalf("stats after: %+v (outcome %+v)", after, out)
	}
	snaps := snapshots(t, dir, ordersID)
	last := snaps[len(snaps)-1]
	if last.Summary.Operation != "replace" || last.Summary.Properties[icetable.SummaryWriterID] != "" ||
		last.Summary.Properties[SummaryOperation] != "OPTIMIZE" {
		t.Fatalf("compaction snapshot summary %+v", last.Summary)
	}
	if e1, e2 := lastEpoch(t, p, "w1"), lastEpoch(t, p, "w2"); e1 != 15 || e2 != 15 {
		t.Fatalf("last epochs after compaction: %d, %d; want 15, 15", e1, e2)
	}
	again, err := p.Compact(ctx, ordersID, db, catalogadapter.CompactOptions{})
	if err != nil || again.Committed {
		t.Fatalf("second compaction: %+v, %v", again, err)
	}
	if n := len(snapshots(t, dir, ordersID)); n != len(snaps) {
		t.Fatalf("nothing to do made a snapshot: %d, want %d", n, len(snaps))
	}
	// A replay of an epoch after the compaction is still skipped.
	rc, err := p.StageSQL(ctx, ordersID, db, catalogadapter.Source{Query: rowSQL(row{ID: 99})})
	if err != nil {
		t.Fatal(err)
	}
	co, err := p.Commit(ctx, ordersID, []catalogadapter.Receipt{rc}, catalogadapter.CommitOptions{WriterID: "w1", Epoch: 15})
	if err != nil || !co.Skipped {
		t.Fatalf("replay after compaction: %+v, %v", co, err)
	}
}

// TestCompactFoldsEqualityDeletes: upserts leave equality deletes; the
// compaction applies them and drops every delete file, rows unchanged;
// an upsert after it still replaces an old key (the rewritten rows keep
// a data sequence number below the new delete's).
func TestCompactFoldsEqualityDeletes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := openProvider(t, dir)
	db := providertest.OpenDuckDB(t)
	createOrders(t, p)
	rows := map[int64]row{}
	put := func(rs ...row) {
		for _, r := range rs {
			rows[r.ID] = r
		}
	}
	epoch := int64(0)
	for i := range 10 {
		epoch++
		r := row{ID: int64(i), Amount: 1, Region: "eu"}
		appendRows(t, p, db, "w", epoch, r)
		put(r)
	}
	for i := range 5 {
		epoch++
		// Two old keys updated, one new key.
		rs := []row{{ID: int64(i), Amount: float64(10 + i), Region: "us"}, {ID: int64(i + 5), Amount: 7, Region: "up"}, {ID: int64(100 + i), Amount: 3, Region: "new"}}
		upsertRows(t, p, db, "w", epoch, rs...)
		put(rs...)
	}
	want := func() []string {
		var out []row
		for _, r := range rows {
			out = append(out, r)
		}
		return rowStrings(out...)
	}
	checkRows(t, p, db, dir, want())
	before := stats(t, p)
	if before.DeleteFiles != 5 {
		t.Fatalf("delete files before: %+v", before)
	}
	out, err := p.Compact(ctx, ordersID, db, catalogadapter.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Committed || out.DeleteFilesRemoved != 5 || out.FilesAdded != 1 || out.Rows != int64(len(rows)) {
		t.Fatalf("outcome %+v (rows %d)", out, len(rows))
	}
	checkRows(t, p, db, dir, want())
	if after := stats(t, p); after.DeleteFiles != 0 || after.LiveFiles != 1 {
		t.Fatalf("stats after: %+v", after)
	}
	epoch++
	late := []row{{ID: 0, Amount: 42, Region: "late"}, {ID: 103, Amount: 43, Region: "late"}}
	upsertRows(t, p, db, "w", epoch, late...)
	put(late...)
	checkRows(t, p, db, dir, want())
	if e := lastEpoch(t, p, "w"); e != epoch {
		t.Fatalf("last epoch %d, want %d", e, epoch)
	}
}

// partitionedDef is the orders table partitioned by region (identity) and
// bucket(2, id).
var partitionedDef = catalogadapter.TableDef{Schema: ordersSchema, PartitionSpec: catalogadapter.PartitionSpec{Fields: []catalogadapter.PartitionField{
	{Name: "region", Transform: catalogadapter.Transform{Kind: catalogadapter.Identity}},
	{Name: "id", Transform: catalogadapter.Transform{Kind: catalogadapter.Bucket, Param: 2}},
}}}

// TestCompactPartitioned: compaction works partition by partition, and a
// partition filter keeps the other partitions' files as they are.
func TestCompactPartitioned(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := openProvider(t, dir)
	db := providertest.OpenDuckDB(t)
	if err := p.CreateTable(ctx, ordersID, partitionedDef); err != nil {
		t.Fatal(err)
	}
	var want []row
	for i := range 24 {
		r := row{ID: int64(i), Amount: float64(i), Region: []string{"eu", "us", "ap"}[i%3]}
		want = append(want, r)
		appendRows(t, p, db, "w", int64(i+1), r)
	}
	filesOf := func(region string) []string {
		_, files, err := p.Files(ctx, ordersID)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range files {
			if f.Partition["region"] == region {
				out = append(out, f.Path)
			}
		}
		sort.Strings(out)
		return out
	}
	us := filesOf("us")
	out, err := p.Compact(ctx, ordersID, db, catalogadapter.CompactOptions{Partitions: func(part map[string]any) (bool, error) {
		return part["region"] == "eu", nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	eu := filesOf("eu")
	// eu holds 8 rows in two buckets: one file per bucket.
	if !out.Committed || out.Partitions != 2 || out.FilesRemoved != 8 || out.FilesAdded != 2 || len(eu) != 2 {
		t.Fatalf("outcome %+v, eu files %v", out, eu)
	}
	if d := cmp.Diff(us, filesOf("us")); d != "" {
		t.Fatalf("the filter's excluded partition changed (-before +after):\n%s", d)
	}
	checkRows(t, p, db, dir, rowStrings(want...))
	// A failing filter stops the compaction before anything is written.
	boom := errors.New("boom")
	if _, err := p.Compact(ctx, ordersID, db, catalogadapter.CompactOptions{Partitions: func(map[string]any) (bool, error) { return false, boom }}); !errors.Is(err, boom) {
		t.Fatalf("failing filter: %v", err)
	}
	out, err = p.Compact(ctx, ordersID, db, catalogadapter.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// us and ap hold 16 files in four buckets; one bucket of them holds a
	// single file (bucket hashes are fixed), below MinFiles: it stays.
	if !out.Committed || out.Partitions != 3 || out.FilesRemoved != 15 || out.FilesAdded != 3 || stats(t, p).LiveFiles != 6 {
		t.Fatalf("second outcome %+v, stats %+v", out, stats(t, p))
	}
	checkRows(t, p, db, dir, rowStrings(want...))
}

// TestCompactMinFiles: a partition with fewer small files than MinFiles
// stays, unless a file in it has deletes.
func TestCompactMinFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := openProvider(t, dir)
	db := providertest.OpenDuckDB(t)
	createOrders(t, p)
	for i := range 3 {
		appendRows(t, p, db, "w", int64(i+1), row{ID: int64(i), Region: "eu"})
	}
	n := len(snapshots(t, dir, ordersID))
	out, err := p.Compact(ctx, ordersID, db, catalogadapter.CompactOptions{MinFiles: 4})
	if err != nil || out.Committed || len(snapshots(t, dir, ordersID)) != n {
		t.Fatalf("below MinFiles: %+v, %v", out, err)
	}
	// Small is relative to the target: with a tiny target no file is small.
	out, err = p.Compact(ctx, ordersID, db, catalogadapter.CompactOptions{TargetFileSize: 100})
	if err != nil || out.Committed {
		t.Fatalf("nothing small: %+v, %v", out, err)
	}
	upsertRows(t, p, db, "w", 4, row{ID: 1, Amount: 5, Region: "us"})
	out, err = p.Compact(ctx, ordersID, db, catalogadapter.CompactOptions{MinFiles: 40})
	if err != nil || !out.Committed || out.DeleteFilesRemoved != 1 {
		t.Fatalf("a file with deletes: %+v, %v", out, err)
	}
	checkRows(t, p, db, dir, rowStrings(row{ID: 0, Region: "eu"}, row{ID: 1, Amount: 5, Region: "us"}, row{ID: 2, Region: "eu"}))
}

// TestCompactRacingAppend: an append that lands between the plan and the
// commit does not fail the compaction, which commits on the new head;
// the appended file stays.
func TestCompactRacingAppend(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p, other := openProvider(t, dir), openProvider(t, dir)
	db := providertest.OpenDuckDB(t)
	createOrders(t, p)
	var want []row
	for i := range 5 {
		r := row{ID: int64(i), Region: "eu"}
		want = append(want, r)
		appendRows(t, p, db, "w", int64(i+1), r)
	}
	racer := row{ID: 50, Region: "race"}
	p.beforeCompactCommit = func(attempt int) {
		if attempt == 0 {
			appendRows(t, other, db, "other", 1, racer)
		}
	}
	out, err := p.Compact(ctx, ordersID, db, catalogadapter.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Committed || out.FilesRemoved != 5 {
		t.Fatalf("outcome %+v", out)
	}
	checkRows(t, p, db, dir, rowStrings(append(want, racer)...))
	if st := stats(t, p); st.LiveFiles != 2 {
		t.Fatalf("live files %d, want the compacted one and the racing append", st.LiveFiles)
	}
	if e := lastEpoch(t, p, "other"); e != 1 {
		t.Fatalf("racer's epoch %d", e)
	}
}

// TestCompactRacingUpsert: an upsert whose equality deletes land between
// the plan and the commit deletes the old rows from the compacted files
// too: the compaction commits, and no deleted row comes back.
func TestCompactRacingUpsert(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p, other := openProvider(t, dir), openProvider(t, dir)
	db := providertest.OpenDuckDB(t)
	createOrders(t, p)
	for i := range 5 {
		appendRows(t, p, db, "w", int64(i+1), row{ID: int64(i), Region: "eu"})
	}
	p.beforeCompactCommit = func(attempt int) {
		if attempt == 0 {
			upsertRows(t, other, db, "other", 1, row{ID: 2, Amount: 9, Region: "new"})
		}
	}
	out, err := p.Compact(ctx, ordersID, db, catalogadapter.CompactOptions{})
	if err != nil || !out.Committed {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	checkRows(t, p, db, dir, rowStrings(row{ID: 0, Region: "eu"}, row{ID: 1, Region: "eu"}, row{ID: 2, Amount: 9, Region: "new"},
		row{ID: 3, Region: "eu"}, row{ID: 4, Region: "eu"}))
	// The racing delete still applies to the rewritten rows, so it stays;
	// the next compaction folds it in.
	if st := stats(t, p); st.DeleteFiles != 1 {
		t.Fatalf("stats %+v", st)
	}
	p.beforeCompactCommit = nil
	out, err = p.Compact(ctx, ordersID, db, catalogadapter.CompactOptions{})
	if err != nil || !out.Committed || out.DeleteFilesRemoved != 1 || stats(t, p).DeleteFiles != 0 {
		t.Fatalf("second outcome %+v, %v", out, err)
	}
	checkRows(t, p, db, dir, rowStrings(row{ID: 0, Region: "eu"}, row{ID: 1, Region: "eu"}, row{ID: 2, Amount: 9, Region: "new"},
		row{ID: 3, Region: "eu"}, row{ID: 4, Region: "eu"}))
}

// TestCompactRacingRemoval: a copy-on-write commit that removes a file the
// compaction is rewriting makes it plan again, and the result keeps the
// racing change; when every plan loses, it gives up with ErrConflict and
// leaves no staged file behind.
func TestCompactRacingRemoval(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p, other := openProvider(t, dir), openProvider(t, dir)
	db := providertest.OpenDuckDB(t)
	createOrders(t, p)
	for i := range 4 {
		appendRows(t, p, db, "w", int64(i+1), row{ID: int64(i), Region: "eu"})
	}
	epoch := int64(0)
	// rewriteOne replaces the file holding id with one holding the row
	// updated, as a copy-on-write merge does.
	rewriteOne := func(id int64, r row) {
		_, files, err := other.Files(ctx, ordersID)
		if err != nil {
			t.Fatal(err)
		}
		var victim string
		for _, f := range files {
			if f.Min["id"] == id && f.Max["id"] == id {
				victim = f.Path
			}
		}
		if victim == "" {
			t.Fatalf("no file of id %d alone in %+v", id, files)
		}
		rc, err := other.StageSQL(ctx, ordersID, db, catalogadapter.Source{Query: rowSQL(r)})
		if err != nil {
			t.Fatal(err)
		}
		epoch++
		if _, err := other.Commit(ctx, ordersID, []catalogadapter.Receipt{rc}, catalogadapter.CommitOptions{WriterID: "other", Epoch: epoch, Removes: []string{victim}}); err != nil {
			t.Fatal(err)
		}
	}
	p.beforeCompactCommit = func(attempt int) {
		if epoch == 0 {
			rewriteOne(1, row{ID: 1, Amount: 5, Region: "cow"})
		}
	}
	out, err := p.Compact(ctx, ordersID, db, catalogadapter.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Committed || out.Retries != 1 || out.FilesRemoved != 4 {
		t.Fatalf("outcome %+v", out)
	}
	want := rowStrings(row{ID: 0, Region: "eu"}, row{ID: 1, Amount: 5, Region: "cow"}, row{ID: 2, Region: "eu"}, row{ID: 3, Region: "eu"})
	checkRows(t, p, db, dir, want)

	// Every plan loses: give up, nothing staged is left.
	for i := range 3 {
		appendRows(t, p, db, "w", int64(10+i), row{ID: int64(10 + i), Region: "eu"})
	}
	want = append(want, rowStrings(row{ID: 10, Region: "eu"}, row{ID: 11, Region: "eu"}, row{ID: 12, Region: "eu"})...)
	sort.Strings(want)
	next := int64(10)
	p.beforeCompactCommit = func(int) {
		rewriteOne(next, row{ID: next, Region: "eu"})
		next++
	}
	_, err = p.Compact(ctx, ordersID, db, catalogadapter.CompactOptions{MaxRetries: 2})
	if !errors.Is(err, catalogadapter.ErrConflict) {
		t.Fatalf("every plan lost: %v, want ErrConflict", err)
	}
	checkRows(t, p, db, dir, want)
	live := map[string]bool{}
	for _, f := range (icebergtest.Lake{Dir: dir}).LiveFiles(t, ordersID) {
		live[strings.TrimPrefix(f, "file://")] = true
	}
	for _, f := range parquetFiles(t, dir) {
		if !live[f] && strings.Contains(f, "lakesql-") && !removedBefore(t, dir, f) {
			t.Errorf("staged file %s left behind", f)
		}
	}
}

// removedBefore tells whether a snapshot of the table once referenced f
// (a file a commit removed, which stays for time travel).
func removedBefore(t testing.TB, dir, f string) bool {
	t.Helper()
	tbl := freshTable(t, dir, ordersID)
	fsys, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range tbl.Metadata().Snapshots() {
		ms, err := s.Manifests(fsys)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			es, err := m.FetchEntries(fsys, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				if strings.TrimPrefix(e.DataFile().FilePath(), "file://") == f {
					return true
				}
			}
		}
	}
	return false
}

// TestStageExpired: staged paths carry their stage time, and Commit
// refuses files staged longer ago than StageLifetime.
func TestStageExpired(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	p := openProviderAt(t, dir, &now)
	db := providertest.OpenDuckDB(t)
	createOrders(t, p)
	old, err := p.StageSQL(ctx, ordersID, db, catalogadapter.Source{Query: rowSQL(row{ID: 1})})
	if err != nil {
		t.Fatal(err)
	}
	staged, _, err := decodeReceipts([]catalogadapter.Receipt{old})
	if err != nil {
		t.Fatal(err)
	}
	if at, ok := stagename.Stamp(staged[0].Path); !ok || !at.Equal(now) {
		t.Fatalf("staged path %s: stamp %v, %v; want %v", staged[0].Path, at, ok, now)
	}
	now = now.Add(catalogadapter.StageLifetime - time.Minute)
	fresh, err := p.StageSQL(ctx, ordersID, db, catalogadapter.Source{Query: rowSQL(row{ID: 2})})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	_, err = p.Commit(ctx, ordersID, []catalogadapter.Receipt{fresh, old}, catalogadapter.CommitOptions{WriterID: "w", Epoch: 1})
	if !errors.Is(err, catalogadapter.ErrStageExpired) {
		t.Fatalf("expired stage: %v, want ErrStageExpired", err)
	}
	if n := len(snapshots(t, dir, ordersID)); n != 0 {
		t.Fatalf("an expired stage made %d snapshots", n)
	}
	if _, err := p.Commit(ctx, ordersID, []catalogadapter.Receipt{fresh}, catalogadapter.CommitOptions{WriterID: "w", Epoch: 1}); err != nil {
		t.Fatal(err)
	}
	checkRows(t, p, db, dir, rowStrings(row{ID: 2}))
}

// TestStageExpiredUnstamped: files iceberg-go's own writer names carry no
// stamp (WriteBatch, the small-epoch path); their receipt's stage time
// bounds them as a stamp would.
func TestStageExpiredUnstamped(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	p := openProviderAt(t, dir, &now)
	db := providertest.OpenDuckDB(t)
	createOrders(t, p)
	old, err := p.StageSmall(ctx, ordersID, batch(t, row{ID: 1}))
	if err != nil {
		t.Fatal(err)
	}
	staged, _, err := decodeReceipts([]catalogadapter.Receipt{old})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := stagename.Stamp(staged[0].Path); ok {
		t.Fatalf("iceberg-go's writer named %s with a stamp: the test needs an unstamped path", staged[0].Path)
	}
	now = now.Add(catalogadapter.StageLifetime + time.Minute)
	_, err = p.Commit(ctx, ordersID, []catalogadapter.Receipt{old}, catalogadapter.CommitOptions{WriterID: "w", Epoch: 1})
	if !errors.Is(err, catalogadapter.ErrStageExpired) {
		t.Fatalf("expired unstamped stage: %v, want ErrStageExpired", err)
	}
	fresh, err := p.StageSmall(ctx, ordersID, batch(t, row{ID: 2}))
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(catalogadapter.StageLifetime - time.Minute)
	if _, err := p.Commit(ctx, ordersID, []catalogadapter.Receipt{fresh}, catalogadapter.CommitOptions{WriterID: "w", Epoch: 1}); err != nil {
		t.Fatal(err)
	}
	checkRows(t, p, db, dir, rowStrings(row{ID: 2}))
}

// TestCompactDayPartitions: a table partitioned by day(ts) compacts each
// day's files into one, rows (timestamps included) unchanged.
func TestCompactDayPartitions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := openProvider(t, dir)
	db := providertest.OpenDuckDB(t)
	schema := arrow.NewSchema(append(ordersSchema.Fields(), arrow.Field{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true}), nil)
	def := catalogadapter.TableDef{Schema: schema, PartitionSpec: catalogadapter.PartitionSpec{Fields: []catalogadapter.PartitionField{
		{Name: "ts", Transform: catalogadapter.Transform{Kind: catalogadapter.Day}},
	}}}
	if err := p.CreateTable(ctx, ordersID, def); err != nil {
		t.Fatal(err)
	}
	var want []row
	for i := range 12 {
		r := row{ID: int64(i), Amount: float64(i), Region: "eu"}
		want = append(want, r)
		q := fmt.Sprintf("%s, TIMESTAMP '2030-01-0%d 10:00:00' + INTERVAL %d MINUTE AS ts", rowSQL(r), 1+i%3, i)
		rc, err := p.StageSQL(ctx, ordersID, db, catalogadapter.Source{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Commit(ctx, ordersID, []catalogadapter.Receipt{rc}, catalogadapter.CommitOptions{WriterID: "w", Epoch: int64(i + 1)}); err != nil {
			t.Fatal(err)
		}
	}
	timestamps := func() []string {
		q, err := p.ScanSQL(ctx, ordersID, db, -1, nil)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := db.Query("SELECT id || '@' || strftime(ts, '%Y-%m-%d %H:%M') FROM (" + q + ") ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		var out []string
		for rs.Next() {
			var s string
			if err := rs.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		return out
	}
	before := timestamps()
	out, err := p.Compact(ctx, ordersID, db, catalogadapter.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Committed || out.Partitions != 3 || out.FilesRemoved != 12 || out.FilesAdded != 3 {
		t.Fatalf("outcome %+v", out)
	}
	checkRows(t, p, db, dir, rowStrings(want...))
	if d := cmp.Diff(before, timestamps()); d != "" {
		t.Fatalf("timestamps changed (-before +after):\n%s", d)
	}
}

// TestCompactTwoThousandFiles: 2,000 one-row files, committed 50 to a
// snapshot (2,000 one-file commits take most of an hour here, as every
// commit rewrites the table metadata that lists every snapshot), compact
// into one file with the same rows; the log reports how long the
// compaction took, for the record (no assertion on time).
func TestCompactTwoThousandFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("staging 2,000 files takes a minute")
	}
	ctx := context.Background()
	dir := t.TempDir()
	p := openProvider(t, dir)
	db := providertest.OpenDuckDB(t)
	createOrders(t, p)
	const n, perCommit = 2000, 50
	start := time.Now()
	want := make([]row, n)
	var rcs []catalogadapter.Receipt
	for i := range n {
		want[i] = row{ID: int64(i), Amount: float64(i), Region: "eu"}
		rc, err := p.StageSQL(ctx, ordersID, db, catalogadapter.Source{Query: rowSQL(want[i])})
		if err != nil {
			t.Fatal(err)
		}
		if rcs = append(rcs, rc); len(rcs) == perCommit {
			if _, err := p.Commit(ctx, ordersID, rcs, catalogadapter.CommitOptions{WriterID: "w", Epoch: int64(i / perCommit)}); err != nil {
				t.Fatal(err)
			}
			rcs = nil
		}
	}
	appended := time.Since(start)
	if st := stats(t, p); st.LiveFiles != n {
		t.Fatalf("live files before: %d", st.LiveFiles)
	}
	start = time.Now()
	out, err := p.Compact(ctx, ordersID, db, catalogadapter.CompactOptions{})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files staged and committed in %s; compaction of %d files into %d in %s", n, appended, out.FilesRemoved, out.FilesAdded, took)
	if !out.Committed || out.FilesRemoved != n || out.FilesAdded != 1 || stats(t, p).LiveFiles != 1 {
		t.Fatalf("outcome %+v", out)
	}
	checkRows(t, p, db, dir, rowStrings(want...))
	if e := lastEpoch(t, p, "w"); e != n/perCommit-1 {
		t.Fatalf("last epoch %d", e)
	}
}

// TestCompactPositionDeletes: position deletes (iceberg-go's merge-on-read
// DELETE) are folded in like equality deletes; one that lands between the
// plan and the commit, naming a file being rewritten, makes the
// compaction plan again, and the deleted row stays deleted.
func TestCompactPositionDeletes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := openProvider(t, dir)
	db := providertest.OpenDuckDB(t)
	def := catalogadapter.TableDef{Schema: ordersSchema, Properties: map[string]string{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}}
	if err := p.CreateTable(ctx, ordersID, def); err != nil {
		t.Fatal(err)
	}
	rows := map[int64]row{}
	for i := range 4 { // two rows a file: a DELETE of one writes a position delete
		a, b := row{ID: int64(2 * i), Region: "eu"}, row{ID: int64(2*i + 1), Region: "us"}
		appendRows(t, p, db, "w", int64(i+1), a, b)
		rows[a.ID], rows[b.ID] = a, b
	}
	deleteID := func(id int64) {
		tx := freshTable(t, dir, ordersID).NewTransaction()
		if err := tx.Delete(ctx, ice.EqualTo(ice.Reference("id"), id), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		delete(rows, id)
	}
	want := func() []string {
		var out []row
		for _, r := range rows {
			out = append(out, r)
		}
		return rowStrings(out...)
	}
	deleteID(3)
	if st := stats(t, p); st.DeleteFiles != 1 {
		t.Fatalf("stats after a merge-on-read DELETE: %+v", st)
	}
	checkRows(t, p, db, dir, want())
	p.beforeCompactCommit = func(attempt int) {
		if _, ok := rows[4]; ok {
			deleteID(4)
		}
	}
	out, err := p.Compact(ctx, ordersID, db, catalogadapter.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Committed || out.Retries != 1 || out.DeleteFilesRemoved != 2 || out.Rows != 6 {
		t.Fatalf("outcome %+v", out)
	}
	checkRows(t, p, db, dir, want())
	if st := stats(t, p); st.DeleteFiles != 0 || st.LiveFiles != 1 {
		t.Fatalf("stats after: %+v", st)
	}
}
