package iceberg

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "small", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
}, nil)

// TestStageCommitScan stages files, carries them through JSON as a
// restarted process would, commits them with the epoch record, and reads
// them back three ways: iceberg-go's scan on a fresh catalog handle,
// DuckDB over the planned files, and the epoch walk.
func TestStageCommitScan(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	cat := openTestCatalog(t, dir)
	is, err := SchemaFromArrow(testSchema)
	if err != nil {
		t.Fatal(err)
	}
	ident := table.Identifier{"db", "t"}
	tbl, err := cat.CreateTable(ctx, ident, TableDef{Schema: is})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateTable(ctx, ident, TableDef{Schema: is}); !errors.Is(err, ErrTableExists) {
		t.Fatalf("second create: %v, want ErrTableExists", err)
	}
	if _, ok, err := LastEpoch(tbl.Metadata(), "w"); ok || err != nil {
		t.Fatalf("empty table has an epoch: %v %v", ok, err)
	}
	// The table stores small as int: a sink declares the stored schema.
	stored, err := StoredArrowSchema(testSchema)
	if err != nil {
		t.Fatal(err)
	}
	if got := stored.Field(2).Type; !arrow.TypeEqual(got, arrow.PrimitiveTypes.Int32) {
		t.Fatalf("small is stored as %s, want int32", got)
	}
	rec := records(t, stored, `[{"id": 1, "name": "a", "small": 7}, {"id": 2, "name": null, "small": null}]`)
	files, err := WriteFiles(ctx, tbl, stored, one(rec), 0)
	if err != nil {
		t.Fatal(err)
	}
	if tbl2, _ := cat.LoadTable(ctx, ident); tbl2.CurrentSnapshot() != nil {
		t.Fatal("staging made a snapshot")
	}
	var staged []StagedFile
	for _, f := range files {
		s, err := Stage(tbl.Metadata(), f)
		if err != nil {
			t.Fatal(err)
		}
		staged = append(staged, s)
	}
	raw, err := json.Marshal(staged)
	if err != nil {
		t.Fatal(err)
	}
	var back []StagedFile
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	tbl, err = cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	var adds []ice.DataFile
	for _, s := range back {
		df, err := s.File(tbl.Metadata())
		if err != nil {
			t.Fatal(err)
		}
		adds = append(adds, df)
	}
	tbl, err = Commit(ctx, tbl, Change{Adds: adds, Summary: EpochSummary("w", 7, "c1")})
	if err != nil {
		t.Fatal(err)
	}
	rec7, ok, err := LastEpoch(tbl.Metadata(), "w")
	if err != nil || !ok || rec7.Epoch != 7 || rec7.CommitID != "c1" {
		t.Fatalf("last epoch: %+v %v %v", rec7, ok, err)
	}

	fresh := openTestCatalog(t, dir)
	ft, err := fresh.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1|a|7", "2|NULL|NULL"}
	if got := icebergRows(t, ft); !slices.Equal(got, want) {
		t.Fatalf("iceberg-go scan: %q, want %q", got, want)
	}
	q, snap, err := ScanSQL(ctx, ft, ScanOptions{SnapshotID: -1})
	if err != nil {
		t.Fatal(err)
	}
	if snap != ft.CurrentSnapshot().SnapshotID {
		t.Fatalf("scan read snapshot %d, current is %d", snap, ft.CurrentSnapshot().SnapshotID)
	}
	if got := duckRows(t, q); !slices.Equal(got, want) {
		t.Fatalf("DuckDB scan: %q, want %q", got, want)
	}
}
