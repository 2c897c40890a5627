package iceberg

import (
	"errors"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

func createTable(t *testing.T, cat *Catalog, name string, sc *arrow.Schema, parts []PartitionField, props map[string]string) *table.Table {
	t.Helper()
	is, err := SchemaFromArrow(sc)
	if err != nil {
		t.Fatal(err)
	}
	ident := table.Identifier{"db", name}
	if cat.Type() == "rest" {
		dropRESTTable(t, cat, ident)
	}
	tbl, err := cat.CreateTable(t.Context(), ident, TableDef{Schema: is, Partition: parts, Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func appendJSON(t *testing.T, tbl *table.Table, sc *arrow.Schema, js string, summary map[string]string) *table.Table {
	t.Helper()
	files, err := WriteFiles(t.Context(), tbl, sc, one(records(t, sc, js)), 0)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Commit(t.Context(), tbl, Change{Adds: files, Summary: summary})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkBoth reads tbl with iceberg-go's scan and with DuckDB over the
// planned files, and wants both to give want.
func checkBoth(t *testing.T, tbl *table.Table, want []string) {
	t.Helper()
	slices.Sort(want)
	if got := icebergRows(t, tbl); !slices.Equal(got, want) {
		t.Fatalf("iceberg-go scan: %q, want %q", got, want)
	}
	q, _, err := ScanSQL(t.Context(), tbl, ScanOptions{SnapshotID: -1})
	if err != nil {
		t.Fatal(err)
	}
	if got := duckRows(t, q); !slices.Equal(got, want) {
		t.Fatalf("DuckDB scan: %q, want %q\n%s", got, want, q)
	}
}

// TestPinnedCommitConflicts: two handles built on the same head; the
// second commit must fail with ErrConflict and change nothing.
func TestPinnedCommitConflicts(t *testing.T) { onCatalogs(t, testPinnedCommitConflicts) }

func testPinnedCommitConflicts(t *testing.T, cat *Catalog) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	tbl := createTable(t, cat, "c", sc, nil, nil)
	a, err := WriteFiles(t.Context(), tbl, sc, one(records(t, sc, `[{"id": 1}]`)), 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := WriteFiles(t.Context(), tbl, sc, one(records(t, sc, `[{"id": 2}]`)), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Commit(t.Context(), tbl, Change{Adds: a}); err != nil {
		t.Fatal(err)
	}
	_, err = Commit(t.Context(), tbl, Change{Adds: b})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("stale commit: %v, want ErrConflict", err)
	}
	fresh, err := cat.LoadTable(t.Context(), table.Identifier{"db", "c"})
	if err != nil {
		t.Fatal(err)
	}
	checkBoth(t, fresh, []string{"1"})
	// Removing a file another writer removed is a conflict too.
	if _, err := Commit(t.Context(), fresh, Change{Removes: []string{"file:///nowhere.parquet"}}); !errors.Is(err, ErrConflict) {
		t.Fatalf("remove of a missing file: %v, want ErrConflict", err)
	}
}

// TestEqualityDeleteUpsert: an upsert as one row delta (equality deletes
// on the key plus the new rows) replaces old rows, keeps the new ones
// (same sequence number: not deleted), and reads the same through
// iceberg-go and DuckDB; a later append of a deleted key is visible.
func TestEqualityDeleteUpsert(t *testing.T) { onCatalogs(t, testEqualityDeleteUpsert) }

func testEqualityDeleteUpsert(t *testing.T, cat *Catalog) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	tbl := createTable(t, cat, "u", sc, nil, nil)
	tbl = appendJSON(t, tbl, sc, `[{"id": 1, "v": "a"}, {"id": 2, "v": "b"}, {"id": 3, "v": "c"}]`, nil)

	cols, ids, err := EqualityColumns(t.Context(), tbl, []string{"id"})
	if err != nil || !slices.Equal(cols, []string{"id"}) {
		t.Fatalf("equality columns: %v %v", cols, err)
	}
	keySc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	dels, err := WriteEqualityDeletes(t.Context(), tbl, ids, one(records(t, keySc, `[{"id": 2}, {"id": 3}, {"id": 9}]`)))
	if err != nil {
		t.Fatal(err)
	}
	adds, err := WriteFiles(t.Context(), tbl, sc, one(records(t, sc, `[{"id": 2, "v": "B"}]`)), 0)
	if err != nil {
		t.Fatal(err)
	}
	// Delete files survive JSON like data files.
	for i, d := range dels {
		s, err := Stage(tbl.Metadata(), d)
		if err != nil || s.Content != ContentEqDeletes {
			t.Fatalf("stage delete: %+v %v", s, err)
		}
		if dels[i], err = s.File(tbl.Metadata()); err != nil {
			t.Fatal(err)
		}
	}
	tbl, err = Commit(t.Context(), tbl, Change{Adds: adds, Deletes: dels})
	if err != nil {
		t.Fatal(err)
	}
	checkBoth(t, tbl, []string{"1|a", "2|B"})
	tbl = appendJSON(t, tbl, sc, `[{"id": 3, "v": "again"}]`, nil)
	checkBoth(t, tbl, []string{"1|a", "2|B", "3|again"})
}

// TestPositionDeletesFromIcebergGo: a merge-on-read delete written by
// iceberg-go itself (position deletes) is applied by the DuckDB scan.
func TestPositionDeletesFromIcebergGo(t *testing.T) { onCatalogs(t, testPositionDeletesFromIcebergGo) }

func testPositionDeletesFromIcebergGo(t *testing.T, cat *Catalog) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	tbl := createTable(t, cat, "p", sc, nil, map[string]string{"write.delete.mode": "merge-on-read"})
	tbl = appendJSON(t, tbl, sc, `[{"id": 1}, {"id": 2}, {"id": 3}, {"id": 4}]`, nil)
	tbl, err := tbl.Delete(t.Context(), ice.EqualTo(ice.Reference("id"), int64(2)), nil)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) == 0 || len(tasks[0].DeleteFiles) == 0 {
		t.Fatalf("iceberg-go wrote no position deletes; tasks %+v", tasks)
	}
	checkBoth(t, tbl, []string{"1", "3", "4"})
}

// TestPartitionTransforms creates a table partitioned by every transform,
// writes rows, and checks the partition values iceberg-go computed and
// that both readers see the rows; then upserts by equality deletes,
// which are partition-scoped here.
func TestPartitionTransforms(t *testing.T) { onCatalogs(t, testPartitionTransforms) }

func testPartitionTransforms(t *testing.T, cat *Catalog) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "region", Type: arrow.BinaryTypes.String},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "local", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "m", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	}, nil)
	parts := []PartitionField{
		{Column: "region", Transform: ice.IdentityTransform{}},
		{Column: "id", Transform: ice.BucketTransform{NumBuckets: 16}},
		{Column: "s", Transform: ice.TruncateTransform{Width: 2}},
		{Column: "ts", Transform: ice.DayTransform{}},
		{Column: "local", Transform: ice.HourTransform{}},
		{Column: "d", Transform: ice.YearTransform{}},
		{Column: "m", Transform: ice.MonthTransform{}},
	}
	tbl := createTable(t, cat, "parts", sc, parts, nil)
	got, err := SpecFields(tbl.Schema(), tbl.Spec())
	if err != nil || len(got) != len(parts) {
		t.Fatalf("spec fields: %v %v", got, err)
	}
	for i, p := range parts {
		if got[i].Column != p.Column || !got[i].Transform.Equals(p.Transform) {
			t.Fatalf("spec field %d: %+v, want %+v", i, got[i], p)
		}
	}
	tbl = appendJSON(t, tbl, sc, `[
		{"id": 1, "region": "eu", "s": "abcdef", "ts": "2024-03-05T10:30:00Z", "d": "2024-03-05", "local": "2021-01-01T00:00:00", "m": "2024-01-31"},
		{"id": 2, "region": "us", "s": null, "ts": null, "d": null, "local": null, "m": null},
		{"id": 3, "region": "eu", "s": "abzzz", "ts": "2024-03-06T23:00:00Z", "d": "2023-12-31", "local": "1999-12-31T23:59:59", "m": "2024-02-01"}]`, nil)
	tasks, err := tbl.Scan().PlanFiles(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 3 {
		t.Fatalf("%d data files, want one per partition (3)", len(tasks))
	}
	for _, task := range tasks {
		if len(task.File.Partition()) != len(parts) {
			t.Fatalf("file %s has partition %v", task.File.FilePath(), task.File.Partition())
		}
	}
	want := []string{
		"1|eu|abcdef|2024-03-05 10:30:00 +0000 UTC|2024-03-05 00:00:00 +0000 UTC|2021-01-01 00:00:00 +0000 UTC|2024-01-31 00:00:00 +0000 UTC",
		"2|us|NULL|NULL|NULL|NULL|NULL",
		"3|eu|abzzz|2024-03-06 23:00:00 +0000 UTC|2023-12-31 00:00:00 +0000 UTC|1999-12-31 23:59:59 +0000 UTC|2024-02-01 00:00:00 +0000 UTC",
	}
	q, _, err := ScanSQL(t.Context(), tbl, ScanOptions{SnapshotID: -1})
	if err != nil {
		t.Fatal(err)
	}
	if rows := duckRows(t, q); !slices.Equal(rows, want) {
		t.Fatalf("DuckDB scan: %q, want %q", rows, want)
	}
	if n := len(icebergRows(t, tbl)); n != 3 {
		t.Fatalf("iceberg-go scan: %d rows", n)
	}
	// Equality deletes cannot serve a key that leaves out partition columns.
	if _, _, err := EqualityColumns(t.Context(), tbl, []string{"id"}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("key without partition columns: %v, want ErrUnsupported", err)
	}
}

// TestPartitionedEqualityDeletes: with the partition column in the key,
// equality deletes are written per partition and scoped to it.
func TestPartitionedEqualityDeletes(t *testing.T) { onCatalogs(t, testPartitionedEqualityDeletes) }

func testPartitionedEqualityDeletes(t *testing.T, cat *Catalog) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "region", Type: arrow.BinaryTypes.String},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	tbl := createTable(t, cat, "pe", sc, []PartitionField{{Column: "region", Transform: ice.IdentityTransform{}}}, nil)
	tbl = appendJSON(t, tbl, sc, `[{"region": "eu", "id": 1, "v": 1}, {"region": "us", "id": 1, "v": 2}, {"region": "eu", "id": 2, "v": 3}]`, nil)
	cols, ids, err := EqualityColumns(t.Context(), tbl, []string{"id", "region"})
	if err != nil || !slices.Equal(cols, []string{"region", "id"}) {
		t.Fatalf("equality columns %v: %v", cols, err)
	}
	keySc := arrow.NewSchema([]arrow.Field{{Name: "region", Type: arrow.BinaryTypes.String}, {Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	dels, err := WriteEqualityDeletes(t.Context(), tbl, ids, one(records(t, keySc, `[{"region": "eu", "id": 1}]`)))
	if err != nil {
		t.Fatal(err)
	}
	adds, err := WriteFiles(t.Context(), tbl, sc, one(records(t, sc, `[{"region": "eu", "id": 1, "v": 10}]`)), 0)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err = Commit(t.Context(), tbl, Change{Adds: adds, Deletes: dels})
	if err != nil {
		t.Fatal(err)
	}
	checkBoth(t, tbl, []string{"eu|1|10", "us|1|2", "eu|2|3"})
}

// TestEqualityColumnsAfterSpecEvolution: once a table written
// unpartitioned gets a partition spec, equality deletes (partitioned by
// the new spec) would not reach its old files: refused while they are
// live. Going back to an unpartitioned spec makes deletes global again.
func TestEqualityColumnsAfterSpecEvolution(t *testing.T) {
	onCatalogs(t, testEqualityColumnsAfterSpecEvolution)
}

func testEqualityColumnsAfterSpecEvolution(t *testing.T, cat *Catalog) {
	ctx := t.Context()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	tbl := createTable(t, cat, "ev", sc, nil, nil)
	tbl = appendJSON(t, tbl, sc, `[{"id": 1, "v": "a"}]`, nil)
	evolve := func(update func(*table.UpdateSpec) *table.UpdateSpec) {
		t.Helper()
		tx := tbl.NewTransaction()
		if err := update(tx.UpdateSpec(true)).Commit(); err != nil {
			t.Fatal(err)
		}
		var err error
		if tbl, err = tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	evolve(func(u *table.UpdateSpec) *table.UpdateSpec { return u.AddIdentity("id") })
	if _, _, err := EqualityColumns(ctx, tbl, []string{"id"}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("live files of the old spec: %v, want ErrUnsupported", err)
	}
	evolve(func(u *table.UpdateSpec) *table.UpdateSpec { return u.RemoveField("id") })
	if _, _, err := EqualityColumns(ctx, tbl, []string{"id"}); err != nil {
		t.Fatalf("unpartitioned again: %v", err)
	}
}
