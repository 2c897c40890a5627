package iceberg

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
)

// TestCopyQuery: DuckDB writes the files of an unpartitioned table, the
// DataFiles carry iceberg-go's statistics, and both readers see the rows;
// a NULL in a NOT NULL column is refused and its files removed; a
// partitioned table is left to iceberg-go's writer.
func TestCopyQuery(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	cat := openTestCatalog(t, dir)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	tbl := createTable(t, cat, "cp", sc, nil, nil)
	conn := duckConn(t)
	sel, err := DuckDBSelect(tbl.Schema(), []string{"id", "s"})
	if err != nil {
		t.Fatal(err)
	}
	files, err := CopyQuery(ctx, tbl, conn, "SELECT "+sel+" FROM (VALUES (1, 'a'), (5, NULL), (3, 'zz')) AS v(id, s)", CopyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Count() != 3 || files[0].NullValueCounts()[2] != 1 {
		t.Fatalf("files %v", files)
	}
	lo, _ := ice.LiteralFromBytes(ice.PrimitiveTypes.Int64, files[0].LowerBoundValues()[1])
	hi, _ := ice.LiteralFromBytes(ice.PrimitiveTypes.Int64, files[0].UpperBoundValues()[1])
	if lo.String() != "1" || hi.String() != "5" {
		t.Fatalf("id bounds %v..%v", lo, hi)
	}
	tbl, err = Commit(ctx, tbl, Change{Adds: files})
	if err != nil {
		t.Fatal(err)
	}
	checkBoth(t, tbl, []string{"1|a", "5|NULL", "3|zz"})

	before := dataFiles(t, dir)
	_, err = CopyQuery(ctx, tbl, conn, "SELECT "+sel+" FROM (VALUES (NULL::BIGINT, 'x')) AS v(id, s)", CopyOptions{})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("NULL id: %v, want ErrInvalid", err)
	}
	if after := dataFiles(t, dir); !slices.Equal(before, after) {
		t.Fatalf("refused write left files: %v", after)
	}

	parted := createTable(t, cat, "cp2", sc, []PartitionField{{Column: "s", Transform: ice.IdentityTransform{}}}, nil)
	if _, err := CopyQuery(ctx, parted, conn, "SELECT "+sel+" FROM (VALUES (1, 'a')) AS v(id, s)", CopyOptions{}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("partitioned table: %v, want ErrUnsupported", err)
	}
}

func dataFiles(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".parquet" {
			out = append(out, p)
		}
		return nil
	})
	return out
}
