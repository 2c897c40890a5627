package deltalake

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/clocktest"
	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// commitEach commits each row as its own epoch of writer: one file each.
func commitEach(t testing.TB, p *Provider, id catalogadapter.TableIdent, rows []row, writer string, firstEpoch int64) {
	t.Helper()
	for i, r := range rows {
		if _, err := p.Commit(context.Background(), id, []catalogadapter.Receipt{writeRows(t, p, id, []row{r})},
			catalogadapter.CommitOptions{WriterID: writer, Epoch: firstEpoch + int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
}

// parquetRows reads the live files of the table's latest version with
// DuckDB's read_parquet alone, not through our scan: partition values from
// the hive folders, and no deletion vectors (none of the tables that call
// it has any left).
func parquetRows(t testing.TB, p *Provider, db *sql.DB, id catalogadapter.TableIdent) []row {
	t.Helper()
	_, snap, err := p.latest(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range snap.Files() {
		if f.DeletionVector != nil {
			t.Fatalf("file %s still has a deletion vector", f.Path)
		}
		rel, err := url.PathUnescape(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, sqlquote.String(filepath.Join(id.Name, rel)))
	}
	if len(paths) == 0 {
		return nil
	}
	hive := len(snap.Metadata.PartitionColumns) > 0
	rs, err := db.Query(fmt.Sprintf("SELECT id, amount, name, ts FROM read_parquet([%s], hive_partitioning = %t) ORDER BY id",
		strings.Join(paths, ", "), hive))
	if err != nil {
		t.Fatal(err)
	}
	return collectRows(t, rs)
}

// logEntry reads the actions of one version of the table's log.
func logEntry(t testing.TB, table string, version int64) []delta.Action {
	t.Helper()
	store, err := delta.NewLocalStorage(table)
	if err != nil {
		t.Fatal(err)
	}
	actions, err := delta.NewTable(store).ReadCommit(context.Background(), version)
	if err != nil {
		t.Fatal(err)
	}
	return actions
}

// unreferenced lists the Parquet files under the table that no version of
// its log ever added: what a failed compaction must not leave behind.
func unreferenced(t testing.TB, table string) []string {
	t.Helper()
	named := map[string]bool{}
	ents, err := os.ReadDir(filepath.Join(table, "_delta_log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		var v int64
		if _, err := fmt.Sscanf(e.Name(), "%020d.json", &v); err != nil || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		for _, a := range logEntry(t, table, v) {
			if a.Add != nil {
				rel, _ := url.PathUnescape(a.Add.Path)
				named[filepath.Join(table, rel)] = true
			}
		}
	}
	var out []string
	filepath.WalkDir(table, func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
		case d.IsDir() && d.Name() == "_delta_log":
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(p, ".parquet") && !named[p]:
			out = append(out, p)
		}
		return nil
	})
	return out
}

// checkCompactEntry checks that version is a compaction: every add and
// remove moves data without changing it, removes carry their metadata, no
// txn, and commitInfo names the operation with Spark's metrics.
func checkCompactEntry(t testing.TB, table string, version int64, op string, out catalogadapter.CompactOutcome) {
	t.Helper()
	var adds, removes int
	for _, a := range logEntry(t, table, version) {
		switch {
		case a.Txn != nil:
			t.Errorf("version %d: a compaction wrote a txn action %+v", version, a.Txn)
		case a.Add != nil:
			adds++
			if a.Add.DataChange || a.Add.Stats == "" || a.Add.DeletionVector != nil {
				t.Errorf("version %d: add %+v", version, a.Add)
			}
		case a.Remove != nil:
			removes++
			r := a.Remove
			if r.DataChange || r.DeletionTimestamp == nil || r.Size == nil || r.ExtendedFileMetadata == nil || !*r.ExtendedFileMetadata {
				t.Errorf("version %d: remove %+v", version, r)
			}
		case a.CommitInfo != nil:
			if a.CommitInfo["operation"] != op {
				t.Errorf("version %d: operation %v, want %s", version, a.CommitInfo["operation"], op)
			}
			m, _ := a.CommitInfo["operationMetrics"].(map[string]any)
			want := map[string]any{
				"numRemovedFiles": fmt.Sprint(out.FilesRemoved), "numAddedFiles": fmt.Sprint(out.FilesAdded),
				"numRemovedBytes": fmt.Sprint(out.BytesRemoved), "numAddedBytes": fmt.Sprint(out.BytesAdded),
			}
			for k, v := range want {
				if m[k] != v {
					t.Errorf("version %d: operationMetrics[%s] = %v, want %v", version, k, m[k], v)
				}
			}
			if ps, _ := a.CommitInfo["operationParameters"].(map[string]any); ps["predicate"] == nil {
				t.Errorf("version %d: operationParameters %v without predicate", version, ps)
			}
		}
	}
	if adds != out.FilesAdded || removes != out.FilesRemoved {
		t.Errorf("version %d: %d adds and %d removes, outcome %+v", version, adds, removes, out)
	}
}

func TestCompactUnpartitioned(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})
	want := idRows(0, 30)
	commitEach(t, p, id, want[:20], "w1", 1)
	commitEach(t, p, id, want[20:], "w2", 7)
	before, err := p.Stats(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	if before.LiveFiles != 30 || before.SmallFiles != 30 || before.Version != 30 || before.VersionsSinceCheckpoint != 0 || before.OldestVersion != 0 {
		t.Errorf("stats before %+v", before)
	}
	epochs := map[string]int64{}
	for _, w := range []string{"w1", "w2"} {
		e, _, err := p.LastEpoch(ctx, id, w)
		if err != nil {
			t.Fatal(err)
		}
		epochs[w] = e
	}

	out, err := p.Compact(ctx, id, db, catalogadapter.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Committed || out.Version != 31 || out.FilesRemoved != 30 || out.FilesAdded != 1 || out.Partitions != 1 ||
		out.Rows != 30 || out.BytesRemoved != before.Bytes || out.Retries != 0 {
		t.Errorf("outcome %+v", out)
	}
	checkCompactEntry(t, id.Name, out.Version, "OPTIMIZE", out)
	if d := cmp.Diff(want, scanRows(t, p, db, id, -1, nil)); d != "" {
		t.Errorf("rows after compaction (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, parquetRows(t, p, db, id)); d != "" {
		t.Errorf("rows of the live Parquet files (-want +got):\n%s", d)
	}
	for w, e := range epochs {
		if got, ok, err := p.LastEpoch(ctx, id, w); err != nil || !ok || got != e {
			t.Errorf("LastEpoch(%s) = %d, %v, %v; want %d", w, got, ok, err, e)
		}
	}
	// History: every older version reads as it was.
	for _, v := range []int64{1, 15, 30} {
		if d := cmp.Diff(want[:v], scanRows(t, p, db, id, v, nil)); d != "" {
			t.Errorf("version %d (-want +got):\n%s", v, d)
		}
	}
	after, err := p.Stats(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	if after.LiveFiles != 1 || after.SmallFiles != 1 || after.Bytes != out.BytesAdded || after.Version != 31 || after.VersionsSinceCheckpoint != 1 {
		t.Errorf("stats after %+v", after)
	}

	// Nothing left to do: no version.
	again, err := p.Compact(ctx, id, db, catalogadapter.CompactOptions{})
	if err != nil || again.Committed || again.Version != 31 {
		t.Errorf("second compaction: %+v, %v", again, err)
	}
	if _, err := os.Stat(filepath.Join(id.Name, "_delta_log", fmt.Sprintf("%020d.json", 32))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a compaction with nothing to do made version 32: %v", err)
	}
	if u := unreferenced(t, id.Name); len(u) != 0 {
		t.Errorf("files no version names: %v", u)
	}
}

// partitionedDef partitions the orders table by name.
func partitionedDef() catalogadapter.TableDef {
	return catalogadapter.TableDef{PartitionSpec: catalogadapter.PartitionSpec{Fields: []catalogadapter.PartitionField{
		{Name: "name", Transform: catalogadapter.Transform{Kind: catalogadapter.Identity}}}}}
}

func TestCompactPartitioned(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, partitionedDef())
	// ids 0..26 fall into partitions na .. nz and na again: each of na, nb
	// and nc gets several files, and nd gets one (fewer than MinFiles).
	var want []row
	for _, r := range idRows(0, 79) {
		if n := r.Name.String; n == "na" || n == "nb" || n == "nc" || (n == "nd" && r.ID < 26) {
			want = append(want, r)
		}
	}
	commitEach(t, p, id, want, "w", 1)
	v0 := int64(len(want))

	// WHERE name = 'nb': only that partition.
	var asked []map[string]any
	out, err := p.Compact(ctx, id, db, catalogadapter.CompactOptions{Predicate: "name = 'nb'",
		Partitions: func(pv map[string]any) (bool, error) {
			asked = append(asked, pv)
			return pv["name"] == "nb", nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Committed || out.Partitions != 1 || out.FilesRemoved != 3 || out.FilesAdded != 1 || out.Version != v0+1 {
		t.Errorf("WHERE outcome %+v", out)
	}
	// The single file of nd is never offered: too few to compact.
	if d := cmp.Diff([]map[string]any{{"name": "na"}, {"name": "nb"}, {"name": "nc"}}, asked); d != "" {
		t.Errorf("partitions offered to the filter (-want +got):\n%s", d)
	}
	checkCompactEntry(t, id.Name, out.Version, "OPTIMIZE", out)
	var predicate any
	for _, a := range logEntry(t, id.Name, out.Version) {
		if a.CommitInfo != nil {
			predicate = a.CommitInfo["operationParameters"].(map[string]any)["predicate"]
		}
	}
	if predicate != `["name = 'nb'"]` {
		t.Errorf("predicate %v", predicate)
	}
	_, files, err := p.Files(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	perPartition := map[any]int{}
	for _, f := range files {
		perPartition[f.Partition["name"]]++
	}
	if d := cmp.Diff(map[any]int{"na": 4, "nb": 1, "nc": 3, "nd": 1}, perPartition); d != "" {
		t.Errorf("files per partition after WHERE (-want +got):\n%s", d)
	}

	// Everything else, as AUTO COMPACT.
	out, err = p.Compact(ctx, id, db, catalogadapter.CompactOptions{Operation: "AUTO COMPACT"})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Committed || out.Partitions != 2 || out.FilesRemoved != 7 || out.FilesAdded != 2 {
		t.Errorf("outcome %+v", out)
	}
	checkCompactEntry(t, id.Name, out.Version, "AUTO COMPACT", out)
	sortByID(want)
	if d := cmp.Diff(want, scanRows(t, p, db, id, -1, nil)); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, parquetRows(t, p, db, id)); d != "" {
		t.Errorf("rows of the live Parquet files (-want +got):\n%s", d)
	}
	if e, ok, err := p.LastEpoch(ctx, id, "w"); err != nil || !ok || e != v0 {
		t.Errorf("LastEpoch = %d, %v, %v; want %d", e, ok, err, v0)
	}
	// MinFiles above what any partition holds: nothing to do.
	commitEach(t, p, id, []row{idRows(100, 1)[0], idRows(126, 1)[0]}, "w", v0+1)
	none, err := p.Compact(ctx, id, db, catalogadapter.CompactOptions{MinFiles: 4})
	if err != nil || none.Committed {
		t.Errorf("MinFiles 4: %+v, %v", none, err)
	}
}

func sortByID(rows []row) { sort.Slice(rows, func(i, j int) bool { return rows[i].ID < rows[j].ID }) }

// TestCompactTargetSize: files of about the target size. With a target
// below the bytes of the small files, they go into several groups.
func TestCompactTargetSize(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})
	want := idRows(0, 12)
	commitEach(t, p, id, want, "w", 1)
	_, files, err := p.Files(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	_, snap, _ := p.latest(ctx, id)
	size := snap.Files()[0].Size
	// Three files' worth per group, every file small.
	out, err := p.Compact(ctx, id, db, catalogadapter.CompactOptions{TargetFileSize: 3 * size, SmallFileSize: 2 * size})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Committed || out.FilesRemoved != len(files) || out.FilesAdded != 4 {
		t.Errorf("outcome %+v", out)
	}
	if d := cmp.Diff(want, scanRows(t, p, db, id, -1, nil)); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
}

// copyTable copies a table folder (a shared golden table) to a temp dir.
func copyTable(t testing.TB, src string) string {
	t.Helper()
	if _, err := os.Stat(src); err != nil {
		t.Skipf("SKIPPING: shared Delta test table %s not found: %v", src, err)
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// scanAll reads every column of the table at version, rows sorted, as
// strings: for tables of other schemas than orders.
func scanAll(t testing.TB, p *Provider, db *sql.DB, id catalogadapter.TableIdent, version int64) []string {
	t.Helper()
	q, err := p.ScanSQL(context.Background(), id, db, version, nil)
	if err != nil {
		t.Fatal(err)
	}
	return textRows(t, db, q)
}

// TestCompactFoldsDeletionVectors compacts Spark's table with a deletion
// vector, after appends of our own: the rewritten files hold no deleted
// row and carry no vector.
func TestCompactFoldsDeletionVectors(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	table := copyTable(t, filepath.Join(sharedDelta(t), "kernel/table-with-dv-small"))
	id := catalogadapter.TableIdent{Name: table}
	spec, err := p.TableSpec(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	// Two appends of the table's own columns, from the table itself.
	for i := range 2 {
		q, err := p.ScanSQL(ctx, id, db, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := p.StageSQL(ctx, id, db, catalogadapter.Source{Query: fmt.Sprintf("SELECT * FROM (%s) LIMIT %d", q, i+1)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{WriterID: "w", Epoch: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	before := scanAll(t, p, db, id, -1)
	_, snap, _ := p.latest(ctx, id)
	var dvs int
	for _, f := range snap.Files() {
		if f.DeletionVector != nil {
			dvs++
		}
	}
	if dvs != 1 || len(snap.Files()) != 3 {
		t.Fatalf("%d files, %d with deletion vectors; want 3 and 1", len(snap.Files()), dvs)
	}
	out, err := p.Compact(ctx, id, db, catalogadapter.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Committed || out.FilesRemoved != 3 || out.FilesAdded != 1 || out.Version != spec.Version+3 {
		t.Errorf("outcome %+v", out)
	}
	checkCompactEntry(t, table, out.Version, "OPTIMIZE", out)
	if d := cmp.Diff(before, scanAll(t, p, db, id, -1)); d != "" {
		t.Errorf("rows (-before +after):\n%s", d)
	}
	// The remove of the file with a vector names the vector, as the protocol
	// reconciles the pair.
	var removedDV bool
	for _, a := range logEntry(t, table, out.Version) {
		if a.Remove != nil && a.Remove.DeletionVector != nil {
			removedDV = true
		}
	}
	if !removedDV {
		t.Error("no remove carries the deletion vector")
	}
	// Independently: the new file's rows, read by DuckDB alone.
	_, snap, _ = p.latest(ctx, id)
	f := snap.Files()[0]
	var n int64
	if err := db.QueryRow("SELECT count(*) FROM read_parquet(" + sqlquote.String(filepath.Join(table, f.Path)) + ")").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != int64(len(before)) || f.DeletionVector != nil {
		t.Errorf("new file: %d rows (want %d), deletion vector %v", n, len(before), f.DeletionVector)
	}
	if e, ok, err := p.LastEpoch(ctx, id, "w"); err != nil || !ok || e != 1 {
		t.Errorf("LastEpoch %d %v %v", e, ok, err)
	}
}

// TestCompactColumnMapping compacts Spark's partitioned table with column
// mapping (name mode) and deletion vectors, after an append of our own:
// rows unchanged, one file per partition, the files under the physical
// column names with the column ids as Parquet field ids, and partition
// values and stats keyed by physical name, as the protocol asks.
func TestCompactColumnMapping(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	dir := t.TempDir()
	untarGolden(t, "dv-with-columnmapping", dir)
	table := filepath.Join(dir, "dv-with-columnmapping", "delta")
	id := catalogadapter.TableIdent{Name: table}
	q, err := p.ScanSQL(ctx, id, db, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.StageSQL(ctx, id, db, catalogadapter.Source{Query: "SELECT part, col1 + 1000 AS col1, col2 FROM (" + q + ") WHERE col1 < 3"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{WriterID: "w", Epoch: 1}); err != nil {
		t.Fatal(err)
	}
	before := scanAll(t, p, db, id, -1)
	_, snap, _ := p.latest(ctx, id)
	// Every file is small: the partitions of two or more are compacted,
	// and those whose file has a deletion vector (OPTIMIZE purges it).
	perPart, withDV := map[string]int{}, map[string]bool{}
	for _, f := range snap.Files() {
		for _, v := range f.PartitionValues {
			perPart[*v]++
			withDV[*v] = withDV[*v] || f.DeletionVector != nil
		}
	}
	compacted, files := map[string]bool{}, 0
	for v, n := range perPart {
		if n >= 2 || withDV[v] {
			compacted[v] = true
			files += n
		}
	}
	out, err := p.Compact(ctx, id, db, catalogadapter.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Committed || out.FilesRemoved != files || out.FilesAdded != len(compacted) || out.Partitions != len(compacted) || len(compacted) < 2 {
		t.Errorf("outcome %+v; files per partition before %v", out, perPart)
	}
	checkCompactEntry(t, table, out.Version, "OPTIMIZE", out)
	if d := cmp.Diff(before, scanAll(t, p, db, id, -1)); d != "" {
		t.Errorf("rows (-before +after):\n%s", d)
	}
	// Independently: the new files, read by DuckDB alone, by field id.
	schema, err := snap.Schema()
	if err != nil {
		t.Fatal(err)
	}
	partPhys, col1, col2 := physicalName(schema.Field("part"), true), schema.Field("col1"), schema.Field("col2")
	var got []string
	for _, a := range logEntry(t, table, out.Version) {
		f := a.Add
		if f == nil {
			continue
		}
		if !strings.Contains(f.Stats, physicalName(col1, true)) {
			t.Errorf("file %+v: stats not by physical name", f)
		}
		pv := f.PartitionValues[partPhys]
		if pv == nil {
			t.Fatalf("file %s has no partition value under %s: %v", f.Path, partPhys, f.PartitionValues)
		}
		rel, _ := url.PathUnescape(f.Path)
		rs, err := db.Query(fmt.Sprintf(`SELECT CAST(c1 AS VARCHAR), c2 FROM read_parquet(%s, schema = MAP {
			2: {name: 'c1', type: 'INTEGER', default_value: NULL}, 3: {name: 'c2', type: 'VARCHAR', default_value: NULL}})`,
			sqlquote.String(filepath.Join(table, rel))))
		if err != nil {
			t.Fatal(err)
		}
		for rs.Next() {
			var c1, c2 sql.NullString
			if err := rs.Scan(&c1, &c2); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%s=%v|%s=%v|%s=%v|", col1.Name, c1, col2.Name, c2, "part", sql.NullString{String: *pv, Valid: true}))
		}
		rs.Close()
	}
	// scanAll orders columns as the table does: part, col1, col2.
	var want []string
	for _, b := range before {
		fs := strings.SplitAfter(b, "|")
		if v := strings.TrimSuffix(strings.TrimPrefix(fs[0], "part={"), " true}|"); compacted[v] {
			want = append(want, fs[1]+fs[2]+fs[0])
		}
	}
	sort.Strings(want)
	sort.Strings(got)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rows read by field id (-want +got):\n%s", d)
	}
}

// TestCompactRaceAppend: an append lands between the compaction's plan and
// its commit. The compaction commits the same actions on the new version;
// the appended row survives.
func TestCompactRaceAppend(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	other := New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})
	want := idRows(0, 6)
	commitEach(t, p, id, want[:5], "w", 1)
	p.beforeCommit = func(attempt int) {
		if attempt == 0 {
			if _, err := other.Commit(ctx, id, []catalogadapter.Receipt{writeRows(t, other, id, want[5:])},
				catalogadapter.CommitOptions{WriterID: "x", Epoch: 9}); err != nil {
				t.Error(err)
			}
		}
	}
	out, err := p.Compact(ctx, id, db, catalogadapter.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Committed || out.Retries != 1 || out.Version != 7 || out.FilesRemoved != 5 {
		t.Errorf("outcome %+v", out)
	}
	if d := cmp.Diff(want, scanRows(t, p, db, id, -1, nil)); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	if e, ok, _ := p.LastEpoch(ctx, id, "x"); !ok || e != 9 {
		t.Errorf("the appender's epoch: %d %v", e, ok)
	}
	_, files, _ := p.Files(ctx, id)
	if len(files) != 2 {
		t.Errorf("%d live files, want the compacted one and the append", len(files))
	}
}

// upsert rewrites the file holding key k with amount a, as sqlsink's
// copy-on-write merge does: read at a version, remove the file, add its
// rows with the change, requiring that no data landed since the read.
// It returns the staged receipt and the commit options, for the caller to
// commit when the test wants.
func upsert(t testing.TB, p *Provider, db *sql.DB, id catalogadapter.TableIdent, k int64, a float64, epoch int64) ([]catalogadapter.Receipt, catalogadapter.CommitOptions) {
	t.Helper()
	ctx := context.Background()
	v, files, err := p.Files(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		lo, _ := f.Min["id"].(float64)
		hi, _ := f.Max["id"].(float64)
		if float64(k) < lo || float64(k) > hi {
			continue
		}
		rows := scanRows(t, p, db, id, v, []string{f.Path})
		for i := range rows {
			if rows[i].ID == k {
				rows[i].Amount = amount(a)
			}
		}
		return []catalogadapter.Receipt{writeRows(t, p, id, rows)}, catalogadapter.CommitOptions{
			WriterID: "merger", Epoch: epoch, Removes: []string{f.Path}, Operation: "MERGE",
			Requires: []catalogadapter.Requirement{catalogadapter.NoNewDataSince(v)}}
	}
	t.Fatalf("no file holds key %d", k)
	return nil, catalogadapter.CommitOptions{}
}

// TestCompactRaceMerge: a merge that rewrote one of the files the
// compaction rewrites lands first. The compaction plans again on the new
// version (never committing its stale rewrite, which would bring the old
// row back) and deletes the files of its first plan.
func TestCompactRaceMerge(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	other := New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})
	want := idRows(0, 5)
	commitEach(t, p, id, want, "w", 1)
	p.beforeCommit = func(attempt int) {
		p.beforeCommit = nil // once
		rs, opts := upsert(t, other, db, id, 2, 99, 1)
		if _, err := other.Commit(ctx, id, rs, opts); err != nil {
			t.Error(err)
		}
	}
	out, err := p.Compact(ctx, id, db, catalogadapter.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Committed || out.Retries != 2 || out.Version != 7 || out.FilesRemoved != 5 || out.FilesAdded != 1 {
		t.Errorf("outcome %+v", out)
	}
	want[2].Amount = amount(99)
	if d := cmp.Diff(want, scanRows(t, p, db, id, -1, nil)); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	if u := unreferenced(t, id.Name); len(u) != 0 {
		t.Errorf("the first plan's files were left: %v", u)
	}
	if e, ok, _ := p.LastEpoch(ctx, id, "merger"); !ok || e != 1 {
		t.Errorf("merger's epoch %d %v", e, ok)
	}
}

// TestCompactGivesUp: a merge rewrites a file of every plan; after
// MaxRetries plans the compaction fails with ErrConflict, leaving no file
// and no version of its own.
func TestCompactGivesUp(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	other := New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})
	want := idRows(0, 4)
	commitEach(t, p, id, want, "w", 1)
	merges := 0
	p.beforeCommit = func(attempt int) {
		merges++
		rs, opts := upsert(t, other, db, id, 1, float64(merges), int64(merges))
		if _, err := other.Commit(ctx, id, rs, opts); err != nil {
			t.Error(err)
		}
	}
	_, err := p.Compact(ctx, id, db, catalogadapter.CompactOptions{MaxRetries: 2})
	if !errors.Is(err, catalogadapter.ErrConflict) || !strings.Contains(err.Error(), "after 3 plans") {
		t.Errorf("got %v, want ErrConflict after 3 plans", err)
	}
	if merges != 3 {
		t.Errorf("%d merges, want one per plan", merges)
	}
	want[1].Amount = amount(3)
	if d := cmp.Diff(want, scanRows(t, p, db, id, -1, nil)); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	if u := unreferenced(t, id.Name); len(u) != 0 {
		t.Errorf("files left behind: %v", u)
	}
	for v := int64(5); v <= 7; v++ {
		for _, a := range logEntry(t, id.Name, v) {
			if a.CommitInfo != nil && a.CommitInfo["operation"] != "MERGE" {
				t.Errorf("version %d is %v, not a merge", v, a.CommitInfo["operation"])
			}
		}
	}
}

// TestCompactRaceMetadata: a winner that changed the table's metadata
// makes the compaction plan again.
func TestCompactRaceMetadata(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})
	want := idRows(0, 3)
	commitEach(t, p, id, want, "w", 1)
	p.beforeCommit = func(int) {
		p.beforeCommit = nil
		_, snap, err := p.latest(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		md := snap.Metadata
		md.Configuration = map[string]string{"delta.targetFileSize": "1000000"}
		if _, err := snap.Commit(ctx, []delta.Action{{MetaData: &md}}, delta.CommitOptions{Operation: "SET TBLPROPERTIES"}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := p.Compact(ctx, id, db, catalogadapter.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Committed || out.Retries != 2 || out.Version != 5 {
		t.Errorf("outcome %+v", out)
	}
	if d := cmp.Diff(want, scanRows(t, p, db, id, -1, nil)); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	if u := unreferenced(t, id.Name); len(u) != 0 {
		t.Errorf("files left behind: %v", u)
	}
}

// TestMergeAfterCompact: a merge read the table, then a compaction
// rewrote the file the merge rewrites. The merge's commit must fail
// (ErrConflict), whether the compaction landed before the merge's commit
// read the log or raced its put; redone on a fresh read it succeeds. No
// row is lost or comes back.
func TestMergeAfterCompact(t *testing.T) {
	for _, race := range []bool{false, true} {
		t.Run(fmt.Sprintf("race=%t", race), func(t *testing.T) {
			ctx := context.Background()
			db := openDB(t)
			p := New(db, testOptions(clocktest.New(t0)))
			compactor := New(db, testOptions(clocktest.New(t0)))
			id := newTable(t, p, catalogadapter.TableDef{})
			want := idRows(0, 4)
			commitEach(t, p, id, want, "w", 1)
			rs, opts := upsert(t, p, db, id, 3, 42, 1)
			compact := func() {
				if out, err := compactor.Compact(ctx, id, db, catalogadapter.CompactOptions{}); err != nil || !out.Committed {
					t.Errorf("compaction: %+v, %v", out, err)
				}
			}
			if race {
				p.beforeCommit = func(attempt int) {
					if attempt == 0 {
						compact()
					}
				}
			} else {
				compact()
			}
			_, err := p.Commit(ctx, id, rs, opts)
			if !errors.Is(err, catalogadapter.ErrConflict) {
				t.Fatalf("merge over a compacted file: %v, want ErrConflict", err)
			}
			if err := p.Discard(ctx, id, rs); err != nil {
				t.Fatal(err)
			}
			p.beforeCommit = nil
			if d := cmp.Diff(want, scanRows(t, p, db, id, -1, nil)); d != "" {
				t.Errorf("rows after the refused merge (-want +got):\n%s", d)
			}
			rs, opts = upsert(t, p, db, id, 3, 42, 1)
			if _, err := p.Commit(ctx, id, rs, opts); err != nil {
				t.Fatal(err)
			}
			want[3].Amount = amount(42)
			if d := cmp.Diff(want, scanRows(t, p, db, id, -1, nil)); d != "" {
				t.Errorf("rows after the merge redone (-want +got):\n%s", d)
			}
		})
	}
}

// TestMergeAfterCompactOtherFiles: a compaction that rewrote only other
// files is no new data: the merge commits.
func TestMergeAfterCompactOtherFiles(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, partitionedDef())
	want := []row{idRows(0, 1)[0], idRows(1, 1)[0], idRows(27, 1)[0], idRows(53, 1)[0]} // na, nb, nb, nb
	commitEach(t, p, id, want, "w", 1)
	rs, opts := upsert(t, p, db, id, 0, 7, 1)
	out, err := p.Compact(ctx, id, db, catalogadapter.CompactOptions{})
	if err != nil || !out.Committed || out.FilesRemoved != 3 {
		t.Fatalf("compaction of nb: %+v, %v", out, err)
	}
	if _, err := p.Commit(ctx, id, rs, opts); err != nil {
		t.Fatalf("merge of na after a compaction of nb: %v", err)
	}
	want[0].Amount = amount(7)
	if d := cmp.Diff(want, scanRows(t, p, db, id, -1, nil)); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
}

// TestCompactStageExpired: a rewrite that took longer than the stage
// lifetime is never committed (a vacuum may have taken its files).
func TestCompactStageExpired(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	clock := clocktest.New(t0)
	p := New(db, testOptions(clock))
	id := newTable(t, p, catalogadapter.TableDef{})
	commitEach(t, p, id, idRows(0, 3), "w", 1)
	p.beforeCommit = func(int) {}
	// The clock jumps while the rewrite runs: the rewrite is staged at the
	// clock's time, checked at commit.
	p.opts.WrapStorage = nil
	tick := p.opts.Now
	calls := 0
	p.opts.Now = func() time.Time {
		calls++
		if calls > 1 {
			return tick().Add(catalogadapter.StageLifetime + time.Minute)
		}
		return tick()
	}
	_, err := p.Compact(ctx, id, db, catalogadapter.CompactOptions{})
	if !errors.Is(err, catalogadapter.ErrStageExpired) {
		t.Errorf("got %v, want ErrStageExpired", err)
	}
	if u := unreferenced(t, id.Name); len(u) != 0 {
		t.Errorf("files left behind: %v", u)
	}
}

// TestStatsCheckpointAndRetention: versions since the checkpoint, the
// oldest readable version once the early log is gone, and the txn
// retention.
func TestStatsCheckpointAndRetention(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{CheckpointInterval: 5,
		Properties: map[string]string{"delta.setTransactionRetentionDuration": "interval 3 days"}})
	commitEach(t, p, id, idRows(0, 7), "w", 1)
	st, err := p.Stats(ctx, id, 1)
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != 7 || st.VersionsSinceCheckpoint != 2 || st.TxnRetention != 72*time.Hour || st.OldestVersion != 0 || st.SmallFiles != 0 {
		t.Errorf("stats %+v", st)
	}
	// Log cleanup took versions 0 to 3: version 5's checkpoint is the oldest start.
	for v := range 4 {
		if err := os.Remove(filepath.Join(id.Name, "_delta_log", fmt.Sprintf("%020d.json", v))); err != nil {
			t.Fatal(err)
		}
	}
	if st, err = p.Stats(ctx, id, 0); err != nil || st.OldestVersion != 5 {
		t.Errorf("after cleanup: %+v, %v", st, err)
	}
}

// sharedDelta finds the shared Delta test tables: the repository's
// ../shared, which for a worktree under a folder of worktrees is one level
// further up. It skips, loudly, when there are none.
func sharedDelta(t testing.TB) string {
	t.Helper()
	for _, d := range []string{"../../../shared/testdata/delta", "../../../../shared/testdata/delta"} {
		if _, err := os.Stat(d); err == nil {
			return d
		}
	}
	t.Skip("SKIPPING: shared Delta test tables not found in the repository's ../shared")
	return ""
}

// untarGolden unpacks a shared golden table into dir.
func untarGolden(t testing.TB, name, dir string) {
	t.Helper()
	archive := filepath.Join(sharedDelta(t), "golden", name+".tar.zst")
	if _, err := os.Stat(archive); err != nil {
		t.Skipf("SKIPPING: shared Delta test table %s not found: %v", archive, err)
	}
	if out, err := exec.Command("tar", "--zstd", "-xf", archive, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("unpack %s: %v\n%s", archive, err, out)
	}
}
