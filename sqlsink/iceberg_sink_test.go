package sqlsink

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/apacheiceberg"
	"github.com/lakesql/lakesql/internal/icebergtest"
	"github.com/lakesql/lakesql/internal/s3test"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// TestSinkAppendRollbackReplayRestart drives the epoch sink over an
// Iceberg table, with the warehouse on the local disk and on a real S3
// server (versitygw), the catalog on SQLite: create on open, one snapshot
// per epoch with the epoch record in its summary, data files under the
// table's location; a rollback that leaves nothing (no snapshot, no file,
// on S3 no cached copy either); a replay skipped, an explicit epoch, and a
// restarted sink, with an empty cache, that recovers its last epoch from
// the snapshot ancestry. iceberg-go's scan on a fresh catalog handle and
// DuckDB's read exactly what was committed, and every file left under the
// table's location is a live one.
func TestSinkAppendRollbackReplayRestart(t *testing.T) {
	t.Run("local", func(t *testing.T) { testSinkAppendRollbackReplayRestart(t, icebergtest.Local(t)) })
	t.Run("s3", func(t *testing.T) { testSinkAppendRollbackReplayRestart(t, icebergtest.S3(t, s3test.Start(t))) })
	t.Run("rest", func(t *testing.T) { testSinkAppendRollbackReplayRestart(t, icebergtest.REST(t, ordersID)) })
}

func testSinkAppendRollbackReplayRestart(t *testing.T, l icebergtest.Lake) {
	ctx := context.Background()
	cat := l.Catalog(t)
	p := apacheiceberg.New(cat, apacheiceberg.Options{})
	cfg := sinkConfig(t, p, "orders")
	cfg.StateDir = t.TempDir()
	s := openSink(t, cfg)

	res := epoch(t, s, 1, batch(t, row{ID: 1, Amount: 1.5, Region: "eu"}), batch(t, row{ID: 2, Amount: 2.5, Region: "us"}))
	if res.Skipped || res.Rows != 2 {
		t.Fatalf("epoch 1: %+v", res)
	}
	snaps := l.Snapshots(t, ordersID)
	if len(snaps) != 1 {
		t.Fatalf("%d snapshots after one epoch", len(snaps))
	}
	if props := snaps[0].Summary.Properties; props[icetable.SummaryWriterID] != "lakesql-orders" || props[icetable.SummaryEpoch] != "1" || snaps[0].SnapshotID != res.Version {
		t.Fatalf("snapshot summary %v, version %d", props, res.Version)
	}
	files := l.StoredFiles(t, ordersID)
	if len(files) == 0 || !slices.Equal(files, l.LiveFiles(t, ordersID)) {
		t.Fatalf("files %v, live files %v", files, l.LiveFiles(t, ordersID))
	}
	if wh := l.Props["warehouse"]; wh != "" {
		if loc := l.Table(t, ordersID).Location(); !strings.HasPrefix(loc, wh+"/") {
			t.Fatalf("table at %s, not in the warehouse %s", loc, wh)
		}
	}

	// Rollback: the staged files are deleted, no snapshot.
	precommit(t, s, 2, batch(t, row{ID: 99, Region: "gone"}))
	staged := l.StoredFiles(t, ordersID)
	if len(staged) == len(files) {
		t.Fatal("PreCommit staged no file")
	}
	// Files uploaded to S3 stay in the read cache until the commit.
	var cached []string
	if l.Srv != nil {
		for _, f := range staged {
			if !slices.Contains(files, f) {
				cached = append(cached, icetable.CachePath(cat.CacheDir(), f))
			}
		}
	}
	for _, c := range cached {
		if _, err := os.Stat(c); err != nil {
			t.Errorf("staged file is not in the cache: %v", err)
		}
	}
	if err := s.RollbackEpoch(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if got := l.StoredFiles(t, ordersID); !slices.Equal(got, files) {
		t.Fatalf("rollback left files: %v", got)
	}
	for _, c := range cached {
		if _, err := os.Stat(c); !os.IsNotExist(err) {
			t.Errorf("the cached copy %s of a discarded file is still there: %v", c, err)
		}
	}
	if n := len(l.Snapshots(t, ordersID)); n != 1 {
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
	cat2, err := icetable.OpenCatalog(ctx, icetable.CatalogConfig{DataDir: l.Dir, CacheDir: t.TempDir(), Properties: l.Props})
	if err != nil {
		t.Fatal(err)
	}
	defer cat2.Close()
	p2 := apacheiceberg.New(cat2, apacheiceberg.Options{})
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
	if got := l.Rows(t, ordersID); !slices.Equal(got, want) {
		t.Fatalf("iceberg-go reads %q, want %q", got, want)
	}
	if got := duckRows(t, p2); !slices.Equal(got, want) {
		t.Fatalf("ScanSQL reads %q, want %q", got, want)
	}
	if n := len(l.Snapshots(t, ordersID)); n != 3 {
		t.Fatalf("%d snapshots, want 3 (epochs 1, 2, 42)", n)
	}
	if got, live := l.StoredFiles(t, ordersID), l.LiveFiles(t, ordersID); !slices.Equal(got, live) {
		t.Fatalf("files %v, live files %v", got, live)
	}
}

// TestSinkUpsertRowDelta: upserts and changelog deletes land as one row
// delta per epoch (equality deletes plus rows, no file rewritten), and
// both readers agree.
func TestSinkUpsertRowDelta(t *testing.T) { sinkUpsertRowDelta(t, icebergtest.Local(t)) }

// sinkUpsertRowDelta runs TestSinkUpsertRowDelta's epochs on lake l and
// returns the provider and the rows the table then holds: epoch 2 is one
// row delta that rewrites none of epoch 1's files, and a later epoch that
// re-inserts a deleted key is not hidden by the old delete.
func sinkUpsertRowDelta(t *testing.T, l icebergtest.Lake) (*apacheiceberg.Provider, []string) {
	p := lakeProvider(t, l)
	cfg := sinkConfig(t, p, "orders")
	cfg.Mode, cfg.Key = ModeUpsert, []string{"id"}
	s := openSink(t, cfg)
	epoch(t, s, 1, batch(t, row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 2, Region: "eu"}, row{ID: 3, Amount: 3, Region: "us"}))
	files := l.StoredFiles(t, ordersID)
	epoch(t, s, 2, batch(t,
		row{Op: "U", ID: 2, Amount: 20, Region: "eu"},
		row{Op: "D", ID: 3},
		row{Op: "I", ID: 4, Amount: 4, Region: "us"},
		row{Op: "U", ID: 4, Amount: 40, Region: "us"}))
	want := rowStrings(row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 20, Region: "eu"}, row{ID: 4, Amount: 40, Region: "us"})
	if got := l.Rows(t, ordersID); !slices.Equal(got, want) {
		t.Fatalf("iceberg-go reads %q, want %q", got, want)
	}
	if got := duckRows(t, p); !slices.Equal(got, want) {
		t.Fatalf("ScanSQL reads %q, want %q", got, want)
	}
	snaps := l.Snapshots(t, ordersID)
	if len(snaps) != 2 {
		t.Fatalf("%d snapshots, want 2", len(snaps))
	}
	if last := snaps[1].Summary; last.Properties["added-delete-files"] == "" || last.Properties["deleted-data-files"] != "" {
		t.Fatalf("epoch 2 is not a row delta: %v %v", last.Operation, last.Properties)
	}
	now := l.StoredFiles(t, ordersID)
	for _, f := range files {
		if !slices.Contains(now, f) {
			t.Fatalf("file %s of epoch 1 was rewritten", f)
		}
	}
	epoch(t, s, 3, batch(t, row{ID: 3, Amount: 33, Region: "eu"}))
	want = rowStrings(row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 20, Region: "eu"}, row{ID: 3, Amount: 33, Region: "eu"}, row{ID: 4, Amount: 40, Region: "us"})
	if got := duckRows(t, p); !slices.Equal(got, want) {
		t.Fatalf("ScanSQL reads %q, want %q", got, want)
	}
	if got := l.Rows(t, ordersID); !slices.Equal(got, want) {
		t.Fatalf("iceberg-go reads %q, want %q", got, want)
	}
	return p, want
}

// openCopyOnWriteTable creates the orders table partitioned by region, a
// column outside the key, which cannot take equality deletes on id: upserts
// into it rewrite files.
func openCopyOnWriteTable(t *testing.T, dir string) *apacheiceberg.Provider {
	t.Helper()
	p := openProvider(t, dir)
	err := p.CreateTable(context.Background(), ordersID, catalogadapter.TableDef{Schema: orderSchema, PartitionSpec: catalogadapter.PartitionSpec{
		Fields: []catalogadapter.PartitionField{{Name: "region", Transform: catalogadapter.Transform{Kind: catalogadapter.Identity}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSinkUpsertCopyOnWrite: a table partitioned by a column outside the
// key cannot take equality deletes; the sink falls back to rewriting the
// files that hold the keys, removes and adds in one snapshot.
func TestSinkUpsertCopyOnWrite(t *testing.T) {
	dir := t.TempDir()
	p := openCopyOnWriteTable(t, dir)
	cfg := sinkConfig(t, p, "orders")
	cfg.Mode, cfg.Key = ModeUpsert, []string{"id"}
	s := openSink(t, cfg)
	epoch(t, s, 1, batch(t, row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 2, Region: "us"}))
	// Key 1 moves from eu to us: an equality delete in us would miss it.
	epoch(t, s, 2, batch(t, row{Op: "U", ID: 1, Amount: 10, Region: "us"}, row{Op: "D", ID: 2}))
	want := rowStrings(row{ID: 1, Amount: 10, Region: "us"})
	if got := icebergRows(t, dir); !slices.Equal(got, want) {
		t.Fatalf("iceberg-go reads %q, want %q", got, want)
	}
	if got := duckRows(t, p); !slices.Equal(got, want) {
		t.Fatalf("ScanSQL reads %q, want %q", got, want)
	}
	snaps := snapshots(t, dir, ordersID)
	last := snaps[len(snaps)-1].Summary
	if last.Properties["deleted-data-files"] == "" || last.Properties["added-delete-files"] != "" {
		t.Fatalf("epoch 2 is not copy-on-write: %v %v", last.Operation, last.Properties)
	}
}

// TestAttachPartitionedTable attaches a sink to a table created with
// transforms, reads the spec back, and writes through it.
func TestAttachPartitionedTable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := openProvider(t, dir)
	spec := catalogadapter.PartitionSpec{Fields: []catalogadapter.PartitionField{
		{Name: "id", Transform: catalogadapter.Transform{Kind: catalogadapter.Bucket, Param: 16}},
		{Name: "region", Transform: catalogadapter.Transform{Kind: catalogadapter.Truncate, Param: 1}},
	}}
	if err := p.CreateTable(ctx, ordersID, catalogadapter.TableDef{Schema: orderSchema, PartitionSpec: spec}); err != nil {
		t.Fatal(err)
	}
	ts, err := p.TableSpec(ctx, ordersID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts.PartitionSpec.Fields) != 2 || ts.PartitionSpec.Fields[0].Transform.String() != "bucket(16)" ||
		ts.PartitionSpec.Fields[1].Name != "region" || ts.PartitionSpec.Fields[1].Transform.String() != "truncate(1)" || ts.Version != -1 {
		t.Fatalf("table spec: %+v", ts)
	}
	if err := p.CreateTable(ctx, ordersID, catalogadapter.TableDef{Schema: orderSchema}); !errors.Is(err, catalogadapter.ErrTableExists) {
		t.Fatalf("second create: %v", err)
	}
	cfg := sinkConfig(t, p, "orders")
	cfg.Schema = nil
	s := openSink(t, cfg)
	if !s.Schema().Equal(orderSchema) {
		t.Fatalf("attached schema %s", s.Schema())
	}
	epoch(t, s, 1, batch(t, row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 2, Region: "us"}, row{ID: 3, Amount: 3, Region: "eu"}))
	tbl := freshTable(t, dir, ordersID)
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if len(task.File.Partition()) != 2 {
			t.Fatalf("file %s partition %v", task.File.FilePath(), task.File.Partition())
		}
	}
	want := rowStrings(row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 2, Region: "us"}, row{ID: 3, Amount: 3, Region: "eu"})
	if got := icebergRows(t, dir); !slices.Equal(got, want) {
		t.Fatalf("iceberg-go reads %q, want %q", got, want)
	}
	// A missing table is ErrNoTable, and attaching to one fails.
	missing := catalogadapter.TableIdent{Namespace: []string{"db"}, Name: "missing"}
	if _, err := p.TableSpec(ctx, missing); !errors.Is(err, catalogadapter.ErrNoTable) {
		t.Fatalf("missing table: %v", err)
	}
}

// TestCopyOnWriteNewKeyRace: two writers upsert the same key, new to the
// table, by copy-on-write. The second to commit merged before the first
// committed, so its merge saw no row of that key: its commit conflicts
// (data added since the snapshot it read), it merges again and rewrites
// the first writer's row. The key is in the table once, from either table
// state, including the empty one the race starts from.
func TestCopyOnWriteNewKeyRace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := openCopyOnWriteTable(t, dir)
	open := func(writer string) *Sink {
		cfg := sinkConfig(t, p, "orders")
		cfg.Mode, cfg.Key, cfg.WriterID = ModeUpsert, []string{"id"}, writer
		return openSink(t, cfg)
	}
	first, second := open("w1"), open("w2")
	for round, key := range []int64{5, 6} {
		e := int64(round + 1)
		// second merges (reading the table) and stages, but first commits.
		precommit(t, second, e, batch(t, row{Op: "U", ID: key, Amount: 2, Region: "us"}))
		epoch(t, first, e, batch(t, row{Op: "U", ID: key, Amount: 1, Region: "eu"}))
		res, err := second.CommitEpoch(ctx, e)
		if err != nil {
			t.Fatalf("round %d: %v", round+1, err)
		}
		if res.Skipped {
			t.Fatalf("round %d: second writer's epoch skipped", round+1)
		}
	}
	want := rowStrings(row{ID: 5, Amount: 2, Region: "us"}, row{ID: 6, Amount: 2, Region: "us"})
	if got := icebergRows(t, dir); !slices.Equal(got, want) {
		t.Fatalf("iceberg-go reads %q, want %q (each key once, the last writer's)", got, want)
	}
	if m := second.Metrics(); m.Conflicts != 2 {
		t.Errorf("second writer redid %d merges, want 2", m.Conflicts)
	}
}

// TestStringPartitionValues: files the sink stages into a table
// partitioned by a string column (from DuckDB's Arrow batches) carry the
// rows' values in the committed manifests, so a scan pruned by partition
// finds the rows.
func TestStringPartitionValues(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := openCopyOnWriteTable(t, dir)
	s := openSink(t, sinkConfig(t, p, "orders"))
	epoch(t, s, 1, batch(t, row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 2, Region: "us"}))
	tbl := freshTable(t, dir, ordersID)
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		for _, v := range task.File.Partition() {
			if v != "eu" && v != "us" {
				t.Errorf("data file %s has partition value %q", task.File.FilePath(), v)
			}
		}
	}
	got := icebergtest.Rows(t, tbl, table.WithRowFilter(ice.EqualTo(ice.Reference("region"), "eu")))
	if want := rowStrings(row{ID: 1, Amount: 1, Region: "eu"}); !slices.Equal(got, want) {
		t.Errorf("iceberg-go scan WHERE region = 'eu' reads %q, want %q", got, want)
	}
}

// TestRowDeltaOnStringPartition: an upsert keyed (id, region) on a table
// partitioned by region goes as a row delta; its equality deletes, scoped
// to partition "eu", reach the data files of that partition.
func TestRowDeltaOnStringPartition(t *testing.T) {
	dir := t.TempDir()
	p := openCopyOnWriteTable(t, dir)
	cfg := sinkConfig(t, p, "orders")
	cfg.Mode, cfg.Key = ModeUpsert, []string{"id", "region"}
	s := openSink(t, cfg)
	epoch(t, s, 1, batch(t, row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 2, Region: "eu"}))
	epoch(t, s, 2, batch(t, row{Op: "D", ID: 2, Region: "eu"}, row{Op: "U", ID: 1, Amount: 10, Region: "eu"}))
	want := rowStrings(row{ID: 1, Amount: 10, Region: "eu"})
	if got := duckRows(t, p); !slices.Equal(got, want) {
		t.Errorf("ScanSQL reads %q, want %q", got, want)
	}
	if got := icebergRows(t, dir); !slices.Equal(got, want) {
		t.Errorf("iceberg-go reads %q, want %q", got, want)
	}
	snaps := snapshots(t, dir, ordersID)
	if last := snaps[len(snaps)-1].Summary; last.Properties["added-equality-delete-files"] == "" {
		t.Errorf("epoch 2 is not a row delta: %v", last.Properties)
	}
}

// TestCopyOnWriteConcurrentDeleteFiles: a copy-on-write merge reads file
// F; before it commits, another writer deletes a row of F with an
// equality delete only (F stays live). The merge's commit conflicts,
// since its rewrite of F would bring the deleted row back; it merges
// again on the new table.
func TestCopyOnWriteConcurrentDeleteFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := openCopyOnWriteTable(t, dir)
	cfgA := sinkConfig(t, p, "orders")
	cfgA.Mode, cfgA.Key, cfgA.WriterID = ModeUpsert, []string{"id"}, "cow"
	a := openSink(t, cfgA)
	epoch(t, a, 1, batch(t, row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 2, Region: "eu"}))

	// A merges (reads F) and stages.
	precommit(t, a, 2, batch(t, row{Op: "U", ID: 1, Amount: 10, Region: "eu"}))
	// B's key includes the partition column: it deletes id 2 by an
	// equality delete, without touching F.
	cfgB := sinkConfig(t, p, "orders")
	cfgB.Mode, cfgB.Key, cfgB.WriterID = ModeUpsert, []string{"id", "region"}, "mor"
	b := openSink(t, cfgB)
	epoch(t, b, 1, batch(t, row{Op: "D", ID: 2, Region: "eu"}))
	snaps := snapshots(t, dir, ordersID)
	if last := snaps[len(snaps)-1].Summary; last.Properties["added-delete-files"] == "" || last.Properties["deleted-data-files"] != "" {
		t.Fatalf("B's delete is not a delete file only: %v", last.Properties)
	}

	if _, err := a.CommitEpoch(ctx, 2); err != nil {
		t.Fatal(err)
	}
	want := rowStrings(row{ID: 1, Amount: 10, Region: "eu"})
	if got := duckRows(t, p); !slices.Equal(got, want) {
		t.Errorf("ScanSQL reads %q, want %q (id 2 was deleted)", got, want)
	}
	if got := icebergRows(t, dir); !slices.Equal(got, want) {
		t.Errorf("iceberg-go reads %q, want %q (id 2 was deleted)", got, want)
	}
	if m := a.Metrics(); m.Conflicts != 1 {
		t.Errorf("A redid %d merges, want 1", m.Conflicts)
	}
}

// TestUpsertAfterSpecEvolution: a table written unpartitioned, then given
// a spec on the key (identity(id)) by another engine. Equality deletes of
// the new spec would not reach the files of the old one, so the upsert
// rewrites them instead, and replaces and deletes the old rows.
func TestUpsertAfterSpecEvolution(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := openProvider(t, dir)
	cfg := sinkConfig(t, p, "orders")
	cfg.Mode, cfg.Key = ModeUpsert, []string{"id"}
	s := openSink(t, cfg)
	epoch(t, s, 1, batch(t, row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 2, Region: "us"}))
	s.Close()

	tx := freshTable(t, dir, ordersID).NewTransaction()
	if err := tx.UpdateSpec(true).AddIdentity("id").Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	p2 := openProvider(t, dir)
	cfg2 := sinkConfig(t, p2, "orders")
	cfg2.Mode, cfg2.Key = ModeUpsert, []string{"id"}
	cfg2.Schema = nil
	s2 := openSink(t, cfg2)
	epoch(t, s2, 2, batch(t, row{Op: "U", ID: 1, Amount: 10, Region: "eu"}, row{Op: "D", ID: 2}))
	want := rowStrings(row{ID: 1, Amount: 10, Region: "eu"})
	if got := duckRows(t, p2); !slices.Equal(got, want) {
		t.Errorf("ScanSQL reads %q, want %q", got, want)
	}
	if got := icebergRows(t, dir); !slices.Equal(got, want) {
		t.Errorf("iceberg-go reads %q, want %q", got, want)
	}
	snaps := snapshots(t, dir, ordersID)
	if last := snaps[len(snaps)-1].Summary; last.Properties["deleted-data-files"] == "" || last.Properties["added-delete-files"] != "" {
		t.Errorf("epoch 2 is not copy-on-write: %v", last.Properties)
	}
}

// TestSameWriterIDTwoTables: two sinks of one service share a writer id
// and a state directory but write two tables. Opening the second while the
// first has an epoch staged must leave the first's staged files alone: its
// commit then lands with every row readable.
func TestSameWriterIDTwoTables(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := openProvider(t, dir)
	state := t.TempDir()

	cfgA := sinkConfig(t, p, "orders")
	cfgA.WriterID, cfgA.StateDir = "svc-a", state
	a := openSink(t, cfgA)
	precommit(t, a, 1, batch(t, row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 2, Region: "us"}))

	cfgB := sinkConfig(t, p, "events")
	cfgB.Table = catalogadapter.TableIdent{Namespace: []string{"db"}, Name: "events"}
	cfgB.WriterID, cfgB.StateDir = "svc-a", state
	openSink(t, cfgB)

	if _, err := a.CommitEpoch(ctx, 1); err != nil {
		t.Fatalf("commit of orders epoch 1: %v", err)
	}
	want := rowStrings(row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 2, Region: "us"})
	if got := duckRows(t, p); !slices.Equal(got, want) {
		t.Fatalf("orders after epoch 1 committed: %q, want %q", got, want)
	}
}
