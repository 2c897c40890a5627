package iceberg

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
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

// TestWriteQueryStringPartitions: the partition values of files written
// from a DuckDB query (identity and truncate of a string) are the rows'
// values after the query's Arrow batches are gone and DuckDB has reused
// their memory, in the DataFiles, their staged encoding and the committed
// manifests; a scan pruned by partition finds the rows.
func TestWriteQueryStringPartitions(t *testing.T) {
	ctx := t.Context()
	cat := openTestCatalog(t, t.TempDir())
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "region", Type: arrow.BinaryTypes.String},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	tbl := createTable(t, cat, "wq", sc, []PartitionField{
		{Column: "region", Transform: ice.IdentityTransform{}},
		{Column: "s", Transform: ice.TruncateTransform{Width: 2}},
	}, nil)
	conn := duckConn(t)
	sel, err := DuckDBSelect(tbl.Schema(), []string{"id", "region", "s"})
	if err != nil {
		t.Fatal(err)
	}
	files, err := WriteQuery(ctx, tbl, conn,
		"SELECT "+sel+" FROM (VALUES (1, 'eu', 'abc'), (2, 'us', 'xyz'), (3, 'eu', NULL)) AS v(id, region, s)", 0)
	if err != nil {
		t.Fatal(err)
	}
	// Give DuckDB's allocator a reason to reuse the freed batches.
	if _, err := conn.ExecContext(ctx, "SELECT string_agg(repeat('#', 64), '') FROM range(10000)"); err != nil {
		t.Fatal(err)
	}
	want := []string{"eu|<nil>", "eu|ab", "us|xy"}
	if got := partitionValues(files); !slices.Equal(got, want) {
		t.Fatalf("partition values %q, want %q", got, want)
	}
	var staged []ice.DataFile
	for _, f := range files {
		s, err := Stage(tbl.Metadata(), f)
		if err != nil {
			t.Fatal(err)
		}
		df, err := s.File(tbl.Metadata())
		if err != nil {
			t.Fatal(err)
		}
		staged = append(staged, df)
	}
	if got := partitionValues(staged); !slices.Equal(got, want) {
		t.Fatalf("staged partition values %q, want %q", got, want)
	}
	tbl, err = Commit(ctx, tbl, Change{Adds: staged})
	if err != nil {
		t.Fatal(err)
	}
	checkBoth(t, tbl, []string{"1|eu|abc", "2|us|xyz", "3|eu|NULL"})
	tasks, err := tbl.Scan(table.WithRowFilter(ice.EqualTo(ice.Reference("region"), "eu"))).PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 2 {
		t.Fatalf("scan WHERE region = 'eu' plans %d files, want 2", len(tasks))
	}
}

// partitionValues renders the files' partitions (region|s), sorted.
func partitionValues(files []ice.DataFile) []string {
	var out []string
	for _, f := range files {
		p := f.Partition()
		out = append(out, fmt.Sprintf("%v|%v", p[1000], p[1001]))
	}
	slices.Sort(out)
	return out
}
