package planner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	icego "github.com/apache/iceberg-go/table"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/internal/icebergtest"
	"github.com/lakesql/lakesql/sinkddl"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// icebergTableOf loads a table of the data directory's default catalog
// through a catalog handle of its own: an independent reader sees only
// what reached the catalog.
func icebergTableOf(t *testing.T, dir, name string) *icego.Table {
	t.Helper()
	cat, err := icetable.OpenCatalog(context.Background(), icetable.CatalogConfig{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	tbl, err := cat.LoadTable(context.Background(), strings.Split(name, "."))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// icebergRowsOf reads a table with iceberg-go's own scan, each row as
// its values joined by '|', sorted.
func icebergRowsOf(t *testing.T, dir, name string) []string {
	t.Helper()
	at, err := icebergTableOf(t, dir, name).Scan().ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 1024)
	defer tr.Release()
	out := []string{}
	for tr.Next() {
		rec := tr.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			vals := make([]string, rec.NumCols())
			for c := range vals {
				vals[c] = rec.Column(c).ValueStr(i)
			}
			out = append(out, strings.Join(vals, "|"))
		}
	}
	sort.Strings(out)
	return out
}

// icebergSnapshots lists the main branch's snapshots, oldest first.
func icebergSnapshots(t *testing.T, dir, name string) []icego.Snapshot {
	t.Helper()
	return icebergtest.Snapshots(icebergTableOf(t, dir, name))
}

// warehouseFiles counts the Parquet files under the default warehouse,
// committed or not.
func warehouseFiles(t *testing.T, dir string) int {
	t.Helper()
	return parquetUnder(filepath.Join(dir, "iceberg", "warehouse"))
}

func parquetUnder(root string) int {
	n := 0
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			n++
		}
		return nil
	})
	return n
}

func (te *testEngine) code(s *Session, q string) int {
	te.t.Helper()
	_, err := te.e.Exec(context.Background(), s, q)
	if err == nil {
		te.t.Fatalf("%s: succeeded, want an error", q)
	}
	return int(MySQLError(err).Num)
}

// TestIcebergTransactionsAndEpochs: an Iceberg sink made by CREATE SINK
// gets one snapshot per autocommit INSERT and per transaction, nothing on
// ROLLBACK (no snapshot, no file left), its epoch in each snapshot's
// summary, and a replayed explicit epoch changes nothing. iceberg-go reads
// back what SELECT shows, on both routes.
func TestIcebergTransactionsAndEpochs(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, "CREATE SINK events INTO ICEBERG 'analytics.events' (id BIGINT NOT NULL, v VARCHAR(8), n TINYINT, m SMALLINT)")
	if snaps := icebergSnapshots(t, te.dir, "analytics.events"); len(snaps) != 0 {
		t.Fatalf("a new table has %d snapshots", len(snaps))
	}
	te.exec(s, "INSERT INTO events VALUES (1, 'one', -128, 32767), (2, 'two', NULL, NULL)")
	te.exec(s, "BEGIN")
	te.exec(s, "INSERT INTO events VALUES (3, 'three', 3, 3)")
	te.exec(s, "INSERT INTO events SELECT id + 10, v, n, m FROM events")
	te.exec(s, "COMMIT")
	snaps := icebergSnapshots(t, te.dir, "analytics.events")
	if len(snaps) != 2 {
		t.Fatalf("an autocommit INSERT and a transaction made %d snapshots, want 2", len(snaps))
	}
	for i, want := range []string{"1", "2"} {
		p := snaps[i].Summary.Properties
		if p[icetable.SummaryWriterID] != "lakesql-events" || p[icetable.SummaryEpoch] != want {
			t.Errorf("snapshot %d summary %v, want epoch %s of lakesql-events", i, p, want)
		}
	}

	files := warehouseFiles(t, te.dir)
	te.exec(s, "BEGIN")
	te.exec(s, "INSERT INTO events VALUES (99, 'gone', 0, 0)")
	te.exec(s, "ROLLBACK")
	if n := len(icebergSnapshots(t, te.dir, "analytics.events")); n != 2 {
		t.Errorf("ROLLBACK made a snapshot (%d)", n)
	}
	if n := warehouseFiles(t, te.dir); n != files {
		t.Errorf("ROLLBACK left files: %d, was %d", n, files)
	}

	// The declared types' ranges hold though the table stores int.
	if code := te.code(s, "INSERT INTO events VALUES (4, 'x', 128, 0)"); code != 1264 {
		t.Errorf("TINYINT 128: error %d, want 1264", code)
	}
	if code := te.code(s, "INSERT INTO events VALUES (4, 'x', 0, -32769)"); code != 1264 {
		t.Errorf("SMALLINT -32769: error %d, want 1264", code)
	}
	if code := te.code(s, "INSERT INTO events VALUES (4, 'too long!', 0, 0)"); code != 1406 {
		t.Errorf("VARCHAR(8) overflow: error %d, want 1406", code)
	}

	te.exec(s, "SET lakesql_epoch = 42")
	te.exec(s, "BEGIN")
	te.exec(s, "INSERT INTO events VALUES (42, 'answer', 42, 42)")
	te.exec(s, "COMMIT")
	te.exec(s, "SET lakesql_epoch = 42")
	te.exec(s, "BEGIN")
	te.exec(s, "INSERT INTO events VALUES (43, 'dup', 0, 0)")
	res := te.exec(s, "COMMIT")
	if len(res.Warnings) != 1 || res.Warnings[0].Code != WarnEpochReplayed {
		t.Errorf("replayed COMMIT warnings = %+v", res.Warnings)
	}
	snaps = icebergSnapshots(t, te.dir, "analytics.events")
	if len(snaps) != 3 || snaps[2].Summary.Properties[icetable.SummaryEpoch] != "42" {
		t.Fatalf("after epoch 42 and its replay: %d snapshots", len(snaps))
	}

	want := []string{"11|one|-128|32767", "12|two|(null)|(null)", "1|one|-128|32767", "2|two|(null)|(null)",
		"3|three|3|3", "42|answer|42|42"}
	if got := icebergRowsOf(t, te.dir, "analytics.events"); !cmp.Equal(got, want) {
		t.Errorf("iceberg-go reads %q, want %q", got, want)
	}
	// The DuckDB route and go-mysql-server's (SUM is not routed).
	if got := te.rows(s, "SELECT id, v, n, m FROM events WHERE id < 3 ORDER BY id"); !cmp.Equal(got,
		[][]any{{int64(1), "one", int8(-128), int16(32767)}, {int64(2), "two", nil, nil}}) {
		t.Errorf("DuckDB route: %v", got)
	}
	if got := te.rows(s, "SELECT count(*), SUM(id) FROM events"); fmt.Sprint(got) != "[[6 71]]" {
		t.Errorf("go-mysql-server route: %v", got)
	}

	// SHOW SINK STATUS: the table version of an Iceberg sink is its
	// current snapshot id.
	st := te.rows(s, "SHOW SINK STATUS events")
	if len(st) != 1 || st[0][1] != "healthy" || fmt.Sprint(st[0][2]) != "42" || st[0][3] != snaps[2].SnapshotID {
		t.Errorf("SHOW SINK STATUS = %v, want epoch 42 and snapshot %d", st, snaps[2].SnapshotID)
	}
	if got := te.rows(s, "SHOW SINKS"); !cmp.Equal(got, [][]any{{"events", "ICEBERG", "analytics.events", "append"}}) {
		t.Errorf("SHOW SINKS = %v", got)
	}
}

// TestIcebergUpsertDeleteUpdate: changelog rows, DELETE and UPDATE on an
// upsert sink land as one snapshot each, read back by iceberg-go; a format
// version 1 table, which has no delete files, takes them by rewriting.
func TestIcebergUpsertDeleteUpdate(t *testing.T) {
	for _, version := range []string{"1", "2"} {
		t.Run("v"+version, func(t *testing.T) {
			te := openTestEngine(t, t.TempDir())
			s := te.session()
			te.exec(s, "CREATE SINK orders INTO ICEBERG 'shop.orders' (id BIGINT NOT NULL, amount DOUBLE, region VARCHAR(16), PRIMARY KEY (id)) "+
				"WITH (mode = 'upsert', format_version = "+version+")")
			if v := icebergTableOf(t, te.dir, "shop.orders").Metadata().Version(); fmt.Sprint(v) != version {
				t.Fatalf("format version %d, want %s", v, version)
			}
			te.exec(s, "INSERT INTO orders VALUES (1, 1, 'eu'), (2, 2, 'eu'), (3, 3, 'us'), (1, 10, 'eu')")
			te.exec(s, "INSERT INTO orders (_op, id, amount, region) VALUES ('D', 2, NULL, NULL), ('U', 3, 30, 'us'), ('I', 4, 4, 'us')")
			te.exec(s, "DELETE FROM orders WHERE region = 'eu'")
			te.exec(s, "UPDATE orders SET amount = amount + 1 WHERE id = 4")
			want := []string{"3|30|us", "4|5|us"}
			if got := icebergRowsOf(t, te.dir, "shop.orders"); !cmp.Equal(got, want) {
				t.Errorf("iceberg-go reads %q, want %q", got, want)
			}
			if got := te.rows(s, "SELECT id, amount, region FROM orders ORDER BY id"); !cmp.Equal(got,
				[][]any{{int64(3), 30.0, "us"}, {int64(4), 5.0, "us"}}) {
				t.Errorf("SELECT: %v", got)
			}
			if n := len(icebergSnapshots(t, te.dir, "shop.orders")); n != 4 {
				t.Errorf("%d snapshots, want 4 (insert, changelog, DELETE, UPDATE)", n)
			}
			if code := te.code(s, "UPDATE orders SET id = 5 WHERE id = 4"); code != 1235 {
				t.Errorf("UPDATE of the key: error %d, want 1235", code)
			}
		})
	}
}

// TestIcebergPartitionTransforms: PARTITION BY transforms make the table's
// partition spec, every data file carries its partition values, and a
// sink whose PARTITION BY differs from an existing table's is refused.
func TestIcebergPartitionTransforms(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, "CREATE SINK ev INTO ICEBERG 'db.ev' (id BIGINT NOT NULL, ts TIMESTAMP, region VARCHAR(8)) "+
		"PARTITION BY (day(ts), bucket(4, id), truncate(2, region))")
	te.exec(s, "INSERT INTO ev VALUES (1, '2024-01-01 10:00:00', 'europe'), (2, '2024-01-02 11:00:00', 'usa'), (3, NULL, NULL)")
	tbl := icebergTableOf(t, te.dir, "db.ev")
	var spec []string
	ps := tbl.Spec()
	for _, f := range ps.Fields() {
		spec = append(spec, f.Name+" "+f.Transform.String())
	}
	if want := []string{"ts_day day", "id_bucket_4 bucket[4]", "region_trunc_2 truncate[2]"}; !cmp.Equal(spec, want) {
		t.Fatalf("partition spec %q, want %q", spec, want)
	}
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) < 2 {
		t.Errorf("%d data files for rows of different partitions", len(tasks))
	}
	for _, task := range tasks {
		if len(task.File.Partition()) != 3 {
			t.Errorf("file %s: partition %v", task.File.FilePath(), task.File.Partition())
		}
	}
	if got := te.rows(s, "SELECT id, region FROM ev ORDER BY id"); fmt.Sprint(got) != "[[1 europe] [2 usa] [3 <nil>]]" {
		t.Errorf("SELECT: %v", got)
	}
	te.exec(s, "DROP SINK ev")
	err = te.fails(s, "CREATE SINK ev2 INTO ICEBERG 'db.ev' (id BIGINT NOT NULL, ts TIMESTAMP, region VARCHAR(8)) PARTITION BY (month(ts))",
		"the table is PARTITION BY (day(`ts`), bucket(4, `id`), truncate(2, `region`)), the sink says PARTITION BY (month(`ts`))")
	if code := MySQLError(err).Num; code != 1210 {
		t.Errorf("other partitioning: error %d, want 1210", code)
	}
	// The same partitioning, or none declared, attaches.
	te.exec(s, "CREATE SINK ev3 INTO ICEBERG 'db.ev' (id BIGINT NOT NULL, ts TIMESTAMP, region VARCHAR(8)) PARTITION BY (day(ts), bucket(4, id), truncate(2, region))")
	te.exec(s, "DROP SINK ev3")
	te.exec(s, "CREATE SINK ev4 INTO ICEBERG 'db.ev'")
	te.exec(s, "INSERT INTO ev4 VALUES (4, '2024-03-01 00:00:00', 'asia')")
	if got := te.rows(s, "SELECT count(*) FROM ev4"); fmt.Sprint(got) != "[[4]]" {
		t.Errorf("attached: %v", got)
	}
	// Delta partitions by value only.
	if code := te.code(s, "CREATE SINK d INTO DELTA 'lake/d' (ts DATE) PARTITION BY (day(ts))"); code != 1235 {
		t.Errorf("Delta with a transform: error %d, want 1235", code)
	}
}

// TestIcebergAttachDropRestart: DROP SINK leaves the table, a sink
// without columns attaches to it (or fails 1146 without one), and a
// reopened engine finds the sink, its rows and its last epoch again.
func TestIcebergAttachDropRestart(t *testing.T) {
	dir := t.TempDir()
	te := openTestEngine(t, dir)
	s := te.session()
	te.exec(s, "CREATE SINK a INTO ICEBERG 'db.a' (id INT NOT NULL COMMENT 'the key', small TINYINT UNSIGNED, PRIMARY KEY (id)) WITH (mode = 'upsert')")
	te.exec(s, "INSERT INTO a VALUES (1, 255), (2, 0)")
	if doc := icebergTableOf(t, dir, "db.a").Schema().Field(0).Doc; doc != "the key" {
		t.Errorf("column comment: doc %q", doc)
	}
	te.exec(s, "DROP SINK a")
	if got := icebergRowsOf(t, dir, "db.a"); !cmp.Equal(got, []string{"1|255", "2|0"}) {
		t.Fatalf("after DROP SINK the table holds %q", got)
	}
	if code := te.code(s, "CREATE SINK nothing INTO ICEBERG 'db.missing'"); code != 1146 {
		t.Errorf("attach to a missing table: error %d, want 1146", code)
	}
	te.exec(s, "CREATE SINK b INTO ICEBERG 'db.a' WITH (writer_id = 'lakesql-a')")
	// The attached sink has no declared types: SMALLINT-wide values go in.
	te.exec(s, "SET lakesql_epoch = 7")
	te.exec(s, "INSERT INTO b VALUES (2, 300)")
	te.exec(s, "CREATE SINK c INTO ICEBERG 'db.c' (id BIGINT NOT NULL) PARTITION BY (bucket(2, id))")
	te.exec(s, "INSERT INTO c VALUES (1)")
	if err := te.e.Close(); err != nil {
		t.Fatal(err)
	}

	te2 := openTestEngine(t, dir)
	s2 := te2.session()
	if got := te2.rows(s2, "SHOW CREATE SINK c"); !cmp.Equal(got, [][]any{{"c",
		"CREATE SINK `c` INTO ICEBERG 'db.c' (`id` BIGINT NOT NULL) PARTITION BY (bucket(2, `id`))"}}) {
		t.Errorf("SHOW CREATE SINK after restart: %v", got)
	}
	if got := te2.rows(s2, "SELECT id, small FROM b ORDER BY id, small"); fmt.Sprint(got) != "[[1 255] [2 0] [2 300]]" {
		t.Errorf("b after restart: %v", got)
	}
	// Epoch 7 is recorded in the table: its replay is skipped, the next
	// autocommit epoch is 8.
	te2.exec(s2, "SET lakesql_epoch = 7")
	te2.exec(s2, "INSERT INTO b VALUES (3, 3)")
	te2.exec(s2, "INSERT INTO b VALUES (4, 4)")
	st := te2.rows(s2, "SHOW SINK STATUS b")
	if fmt.Sprint(st[0][2]) != "8" {
		t.Errorf("last epoch after restart and replay: %v", st)
	}
	te2.exec(s2, "INSERT INTO c VALUES (2)")
	if got := icebergRowsOf(t, dir, "db.c"); !cmp.Equal(got, []string{"1", "2"}) {
		t.Errorf("c after restart: %q", got)
	}
	if got := icebergRowsOf(t, dir, "db.a"); !cmp.Equal(got, []string{"1|255", "2|0", "2|300", "4|4"}) {
		t.Errorf("a after restart: %q", got)
	}

	// A table dropped underneath: the sink fails on use with 1146, and
	// after a restart too; DROP SINK forgets it.
	cat, err := icetable.OpenCatalog(context.Background(), icetable.CatalogConfig{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Iceberg().DropTable(context.Background(), icego.Identifier{"db", "c"}); err != nil {
		t.Fatal(err)
	}
	cat.Close()
	if code := te2.code(s2, "SELECT * FROM c"); code != 1146 {
		t.Errorf("SELECT from a dropped table: error %d, want 1146", code)
	}
	te2.e.Close()
	te3 := openTestEngine(t, dir)
	s3 := te3.session()
	if code := te3.code(s3, "INSERT INTO c VALUES (3)"); code != 1146 {
		t.Errorf("INSERT into a dropped table after restart: error %d, want 1146", code)
	}
	te3.exec(s3, "DROP SINK c")
}

// TestIcebergOptions: the Iceberg options, the Delta-only ones refused,
// catalog.* passed to the catalog, secrets masked in SHOW CREATE SINK and
// in errors but kept in the owner-only registry, and the allowed roots
// confining a local warehouse.
func TestIcebergOptions(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "data")
	te := openTestEngine(t, dir)
	s := te.session()
	for q, code := range map[string]int{
		"CREATE SINK x INTO ICEBERG 'db.x' (id INT) WITH (checkpoint_interval = 5)":        1210,
		"CREATE SINK x INTO ICEBERG 'db.x' (id INT) WITH (format_version = 4)":             1210,
		"CREATE SINK x INTO DELTA 'lake/x' (id INT) WITH (format_version = 2)":             1210,
		"CREATE SINK x INTO DELTA 'lake/x' (id INT) WITH (catalog.type = 'rest')":          1210,
		"CREATE SINK x INTO ICEBERG 'db.x' (id INT) WITH (catalog.warehouse = '../out')":   1210,
		"CREATE SINK x INTO ICEBERG 'db.x' (id INT) WITH (catalog.warehouse = 'file:///')": 1210,
		"CREATE SINK x INTO ICEBERG 'db.x' (id INT) WITH (catalog.type = 'nosuchcatalog')": 1210,
		"CREATE SINK x INTO ICEBERG 'db.' (id INT)":                                        1210,
		"CREATE SINK x INTO ICEBERG 'db.x' (id INT) PARTITION BY (day(id))":                1210,
	} {
		if got := te.code(s, q); got != code {
			t.Errorf("%s: error %d, want %d", q, got, code)
		}
	}
	// A password in a catalog uri never shows in the error.
	err := te.fails(s, "CREATE SINK x INTO ICEBERG 'db.x' (id INT) WITH (catalog.uri = 'postgres://u:hunter22@127.0.0.1:1/db', catalog.sql.driver = 'postgres')", "")
	if strings.Contains(err.Error(), "hunter22") || MySQLError(err).Num != 1210 {
		t.Errorf("unreachable catalog: %d %v", MySQLError(err).Num, err)
	}
	if got := te.rows(s, "SHOW SINKS"); len(got) != 0 {
		t.Fatalf("refused definitions left sinks: %v", got)
	}

	// A catalog of its own: another SQLite file and warehouse, both under
	// the data directory; a token among its properties.
	te.exec(s, "CREATE SINK own INTO ICEBERG 'db.x' (id INT) WITH (catalog.uri = 'file:other/catalog.db', "+
		"catalog.warehouse = 'other/wh', catalog.token = 'sekrit-token', catalog.`s3.access-key-id` = 'AKIA1', writer_id = 'w')")
	te.exec(s, "INSERT INTO own VALUES (1)")
	// The same name in the default catalog is another table.
	te.exec(s, "CREATE SINK def INTO ICEBERG 'db.x' (id INT)")
	if code := te.code(s, "CREATE SINK def2 INTO ICEBERG 'db.x'"); code != 1210 {
		t.Errorf("a second sink on one table: error %d, want 1210", code)
	}
	if got := te.rows(s, "SELECT count(*) FROM def"); fmt.Sprint(got) != "[[0]]" {
		t.Errorf("default catalog's db.x: %v", got)
	}
	if got := te.rows(s, "SELECT id FROM own"); fmt.Sprint(got) != "[[1]]" {
		t.Errorf("own catalog's db.x: %v", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "other", "catalog.db")); err != nil {
		t.Errorf("the own catalog's file: %v", err)
	}
	if parquetUnder(filepath.Join(dir, "other", "wh")) != 1 || parquetUnder(filepath.Join(dir, "iceberg")) != 0 {
		t.Errorf("the own warehouse holds %d files, the default one %d; want 1 and 0",
			parquetUnder(filepath.Join(dir, "other", "wh")), parquetUnder(filepath.Join(dir, "iceberg")))
	}
	shown := te.rows(s, "SHOW CREATE SINK own")[0][1].(string)
	want := "CREATE SINK `own` INTO ICEBERG 'db.x' (`id` INT) WITH (catalog.uri = 'file:other/catalog.db', catalog.warehouse = 'other/wh', " +
		"catalog.token = '[REDACTED]', catalog.s3.access-key-id = '[REDACTED]', writer_id = 'w')"
	if shown != want {
		t.Errorf("SHOW CREATE SINK:\n got %s\nwant %s", shown, want)
	}
	reg := filepath.Join(dir, registryFile)
	b, err := os.ReadFile(reg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "sekrit-token") {
		t.Errorf("the registry lost the token, which reopening the catalog needs")
	}
	if fi, err := os.Stat(reg); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("registry mode %v %v, want 0600", fi.Mode(), err)
	}

	// After a restart the own catalog opens again from the registry.
	te.e.Close()
	te2 := openTestEngine(t, dir)
	s2 := te2.session()
	te2.exec(s2, "INSERT INTO own VALUES (2)")
	if got := te2.rows(s2, "SELECT id FROM own ORDER BY id"); fmt.Sprint(got) != "[[1] [2]]" {
		t.Errorf("own after restart: %v", got)
	}
	if got := te2.rows(s2, "SHOW CREATE SINK own")[0][1]; got != want {
		t.Errorf("SHOW CREATE SINK after restart: %v", got)
	}
}

// TestDashedOptionKeys: Iceberg spells its properties with dashes
// (s3.access-key-id); such keys are written bare or in backquotes, and
// SHOW CREATE SINK renders them so that they read back the same.
func TestDashedOptionKeys(t *testing.T) {
	st, err := sinkddl.Parse("CREATE SINK s INTO ICEBERG 'a.b' WITH (catalog.s3.access-key-id = 'x', catalog.`rest.sigv4-enabled` = 'true', " +
		"catalog.`odd key` = 1, catalog.client-2 = 'y')")
	if err != nil {
		t.Fatal(err)
	}
	cs := st.(*sinkddl.CreateSink)
	var keys []string
	for _, o := range cs.Options {
		keys = append(keys, o.Key)
	}
	if want := []string{"catalog.s3.access-key-id", "catalog.rest.sigv4-enabled", "catalog.odd key", "catalog.client-2"}; !cmp.Equal(keys, want) {
		t.Errorf("keys %q, want %q", keys, want)
	}
	text := cs.String()
	if !strings.Contains(text, "catalog.s3.access-key-id = 'x'") || !strings.Contains(text, "catalog.`odd key` = 1") {
		t.Errorf("rendered %s", text)
	}
	again, err := sinkddl.Parse(text)
	if err != nil || !cmp.Equal(again, st) {
		t.Errorf("%s reads back as %+v, %v", text, again, err)
	}
	for _, bad := range []string{
		"CREATE SINK s INTO ICEBERG 'a.b' WITH (catalog.s3.access- key = 'x')",
		"CREATE SINK s INTO ICEBERG 'a.b' WITH (catalog.s3.access -key = 'x')",
		"CREATE SINK s INTO ICEBERG 'a.b' WITH (catalog.`` = 'x')",
	} {
		if _, err := sinkddl.Parse(bad); err == nil {
			t.Errorf("%s: parsed", bad)
		}
	}
}
