package iceberg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
)

// TestEscapedPartitionFolder: Java Iceberg and pyiceberg escape partition
// values into folder names (cat=x%2Fy%3Dz%25) and name the file by that
// spelling; the folder on disk is named so too. Both iceberg-go's reads
// (AddFiles reads the footer) and the DuckDB scan, with a position delete
// naming the file as spelled, must find it.
func TestEscapedPartitionFolder(t *testing.T) {
	cat := openTestCatalog(t, t.TempDir())
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	tbl := createTable(t, cat, "esc", sc, nil, map[string]string{"write.delete.mode": "merge-on-read"})
	root, err := localPath(tbl.Location())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "data", "cat=x%2Fy%3Dz%25 a")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "f.parquet")
	conn := duckConn(t)
	if _, err := conn.ExecContext(t.Context(), "COPY (SELECT * FROM (VALUES (1::BIGINT, 'a'), (2, 'b'), (3, 'c')) AS t(id, v)) TO '"+
		strings.ReplaceAll(file, "'", "''")+"' (FORMAT parquet, FIELD_IDS {id: 1, v: 2})"); err != nil {
		t.Fatal(err)
	}
	uri := "file://" + filepath.ToSlash(file)
	tx := tbl.NewTransaction()
	if err := tx.AddFiles(t.Context(), []string{uri}, nil, false); err != nil {
		t.Fatal(err)
	}
	if tbl, err = tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkBoth(t, tbl, []string{"1|a", "2|b", "3|c"})
	if tbl, err = tbl.Delete(t.Context(), ice.EqualTo(ice.Reference("id"), int64(2)), nil); err != nil {
		t.Fatal(err)
	}
	checkBoth(t, tbl, []string{"1|a", "3|c"})
}
