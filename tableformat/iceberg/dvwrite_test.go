package iceberg

import (
	"errors"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

var dvSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// createV3 creates a format-version 3 table of dvSchema.
func createV3(t *testing.T, cat *Catalog, name string) *table.Table {
	t.Helper()
	is, err := SchemaFromArrow(dvSchema)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(t.Context(), table.Identifier{"db", name}, TableDef{Schema: is, FormatVersion: 3})
	if err != nil {
		t.Fatal(err)
	}
	if tbl.Metadata().Version() != 3 {
		t.Fatalf("format version %d, want 3", tbl.Metadata().Version())
	}
	return tbl
}

// deleteKeys deletes the rows of ids through deletion vectors, one commit.
func deleteKeys(t *testing.T, tbl *table.Table, ids string) (*table.Table, DeletionVectors) {
	t.Helper()
	conn := duckConn(t)
	got, err := WriteDeletionVectors(t.Context(), tbl, conn, "SELECT unnest(["+ids+"]::BIGINT[]) AS id", []string{"id"}, DVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Files) == 0 {
		return tbl, got
	}
	out, err := Commit(t.Context(), tbl, Change{Deletes: got.Files, DVBases: got.Bases})
	if err != nil {
		t.Fatal(err)
	}
	return out, got
}

// liveDVs lists the live deletion vectors of tbl's current snapshot.
func liveDVs(t *testing.T, tbl *table.Table) []ice.DataFile {
	t.Helper()
	files, err := LiveDeleteFiles(t.Context(), tbl, tbl.CurrentSnapshot().SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	var out []ice.DataFile
	for _, f := range files {
		if table.IsDeletionVector(f) {
			out = append(out, f)
		}
	}
	return out
}

// TestDeletionVectorsDeleteAndReplace: a delete on a v3 table writes one
// DV per data file, with the v3 entry fields; a second delete on the same
// file replaces its DV (one live DV per file, holding both deletes); both
// iceberg-go's scan and ours read the rows left.
func TestDeletionVectorsDeleteAndReplace(t *testing.T) {
	cat := openTestCatalog(t, t.TempDir())
	tbl := createV3(t, cat, "dv")
	tbl = appendJSON(t, tbl, dvSchema, `[{"id":1,"v":"a"},{"id":2,"v":"b"},{"id":3,"v":"c"}]`, nil)
	tbl = appendJSON(t, tbl, dvSchema, `[{"id":4,"v":"d"},{"id":5,"v":"e"}]`, nil)

	tbl, first := deleteKeys(t, tbl, "2, 5, 99")
	if first.Deleted != 2 || len(first.Files) != 2 {
		t.Fatalf("first delete: %d positions in %d DVs, want 2 in 2", first.Deleted, len(first.Files))
	}
	for _, f := range first.Files {
		if f.ContentType() != ice.EntryContentPosDeletes || f.FileFormat() != ice.PuffinFile ||
			f.ReferencedDataFile() == nil || f.ContentOffset() == nil || f.ContentSizeInBytes() == nil || f.Count() != 1 {
			t.Fatalf("DV entry %s: content %v format %v ref %v offset %v size %v count %d",
				f.FilePath(), f.ContentType(), f.FileFormat(), f.ReferencedDataFile(), f.ContentOffset(), f.ContentSizeInBytes(), f.Count())
		}
		if f.FilePath() != first.Files[0].FilePath() {
			t.Fatalf("the DVs of one delete are in %s and %s, want one Puffin file", f.FilePath(), first.Files[0].FilePath())
		}
	}
	checkBoth(t, tbl, []string{"1|a", "3|c", "4|d"})

	tbl, second := deleteKeys(t, tbl, "1, 2")
	if second.Deleted != 1 || len(second.Files) != 1 {
		t.Fatalf("second delete: %d positions in %d DVs, want 1 in 1 (2 is deleted already)", second.Deleted, len(second.Files))
	}
	ref := *second.Files[0].ReferencedDataFile()
	if base := second.Bases[ref]; base.Path != first.Files[0].FilePath() {
		t.Fatalf("second DV replaces %+v, want the first delete's DV", base)
	}
	checkBoth(t, tbl, []string{"3|c", "4|d"})
	dvs := liveDVs(t, tbl)
	if len(dvs) != 2 {
		t.Fatalf("%d live DVs, want 2 (one per data file)", len(dvs))
	}
	for _, d := range dvs {
		if *d.ReferencedDataFile() == ref && d.Count() != 2 {
			t.Fatalf("replacing DV deletes %d rows, want 2 (the old DV's and the new)", d.Count())
		}
	}

	// Deleting keys already deleted writes nothing.
	if _, again := deleteKeys(t, tbl, "1, 2, 5"); len(again.Files) != 0 {
		t.Fatalf("deleting deleted keys wrote %d DVs", len(again.Files))
	}
}

// TestDeletionVectorConflict: a DV made from a base another commit has
// since replaced is refused with ErrDVChanged, and commits nothing.
func TestDeletionVectorConflict(t *testing.T) {
	cat := openTestCatalog(t, t.TempDir())
	tbl := createV3(t, cat, "dvc")
	tbl = appendJSON(t, tbl, dvSchema, `[{"id":1,"v":"a"},{"id":2,"v":"b"},{"id":3,"v":"c"}]`, nil)
	conn := duckConn(t)
	a, err := WriteDeletionVectors(t.Context(), tbl, conn, "SELECT 1::BIGINT AS id", []string{"id"}, DVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := WriteDeletionVectors(t.Context(), tbl, conn, "SELECT 2::BIGINT AS id", []string{"id"}, DVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	won, err := Commit(t.Context(), tbl, Change{Deletes: a.Files, DVBases: a.Bases})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Commit(t.Context(), won, Change{Deletes: b.Files, DVBases: b.Bases})
	if !errors.Is(err, ErrConflict) || !errors.Is(err, ErrDVChanged) {
		t.Fatalf("commit over a replaced DV: %v, want ErrConflict and ErrDVChanged", err)
	}
	fresh, err := cat.LoadTable(t.Context(), table.Identifier{"db", "dvc"})
	if err != nil {
		t.Fatal(err)
	}
	checkBoth(t, fresh, []string{"2|b", "3|c"})
}

// TestDeletionVectorsRefusedBelowV3: a v2 table gets no DVs.
func TestDeletionVectorsRefusedBelowV3(t *testing.T) {
	cat := openTestCatalog(t, t.TempDir())
	tbl := createTable(t, cat, "v2", dvSchema, nil, nil)
	_, err := WriteDeletionVectors(t.Context(), tbl, duckConn(t), "SELECT 1::BIGINT AS id", []string{"id"}, DVOptions{})
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("DVs on a v2 table: %v, want ErrUnsupported", err)
	}
	if !slices.Contains([]int{2}, tbl.Metadata().Version()) {
		t.Fatalf("version %d", tbl.Metadata().Version())
	}
}
