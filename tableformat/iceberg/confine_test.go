package iceberg

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"
)

// cfParquet writes a Parquet file of one BIGINT id column with DuckDB.
func cfParquet(t *testing.T, path string, id int) {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("COPY (SELECT ?::BIGINT AS id) TO '"+path+"' (FORMAT parquet, FIELD_IDS {id: 1})", id); err != nil {
		t.Fatal(err)
	}
}

// cfAddFiles commits files by path, as a forged or foreign manifest would
// name them.
func cfAddFiles(t *testing.T, tbl *table.Table, paths ...string) *table.Table {
	t.Helper()
	txn := tbl.NewTransaction()
	if err := txn.AddFiles(context.Background(), paths, nil, false); err != nil {
		t.Fatal(err)
	}
	out, err := txn.Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestScanConfinesFiles: a manifest naming a data file outside the
// table's location and the allowed roots, directly or through a symlink
// inside the table, fails the scan with ErrPathOutsideTable; an allowed
// root admits it.
func TestScanConfinesFiles(t *testing.T) {
	cat := openTestCatalog(t, t.TempDir())
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	outside := t.TempDir()
	out := filepath.Join(outside, "x.parquet")
	cfParquet(t, out, 666)

	tbl := createTable(t, cat, "direct", sc, nil, map[string]string{"schema.name-mapping.default": `[{"field-id":1,"names":["id"]}]`})
	tbl = appendJSON(t, tbl, sc, `[{"id": 1}]`, nil)
	tbl = cfAddFiles(t, tbl, out)
	if _, _, err := ScanSQL(t.Context(), tbl, ScanOptions{SnapshotID: -1}); !errors.Is(err, ErrPathOutsideTable) {
		t.Fatalf("outside file: %v, want ErrPathOutsideTable", err)
	}
	q, _, err := ScanSQL(t.Context(), tbl, ScanOptions{SnapshotID: -1, AllowedRoots: []string{outside}})
	if err != nil {
		t.Fatalf("outside file under an allowed root: %v", err)
	}
	if got := duckRows(t, q); !slices.Equal(got, []string{"1", "666"}) {
		t.Fatalf("rows %q", got)
	}
	// A sibling whose name starts like the allowed root is not under it.
	if _, _, err := ScanSQL(t.Context(), tbl, ScanOptions{SnapshotID: -1, AllowedRoots: []string{outside[:len(outside)-1]}}); !errors.Is(err, ErrPathOutsideTable) {
		t.Fatalf("root a prefix of the folder's name: %v, want ErrPathOutsideTable", err)
	}

	linked := createTable(t, cat, "linked", sc, nil, map[string]string{"schema.name-mapping.default": `[{"field-id":1,"names":["id"]}]`})
	loc, err := localPath(linked.Location())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(loc, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(loc, "link.parquet")
	if err := os.Symlink(out, link); err != nil {
		t.Fatal(err)
	}
	linked = cfAddFiles(t, linked, link)
	if _, _, err := ScanSQL(t.Context(), linked, ScanOptions{SnapshotID: -1}); !errors.Is(err, ErrPathOutsideTable) {
		t.Fatalf("symlink to an outside file: %v, want ErrPathOutsideTable", err)
	}
}

func TestConfineFilesURLs(t *testing.T) {
	for _, c := range []struct {
		uri string
		ok  bool
	}{
		{"s3://lake/ns/t/data/x.parquet", true},
		{"s3://lake/shared/x.parquet", true},
		{"s3://lake/ns/tt/x.parquet", false},
		{"s3://lake/ns/t/../u/x.parquet", false},
		{"s3://other/ns/t/x.parquet", false},
		{"file:///etc/passwd", false},
		{"file://host/data/x.parquet", false},
	} {
		err := confineFiles("s3://lake/ns/t", []string{"s3://lake/shared", "/data"}, []string{c.uri})
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrPathOutsideTable)) {
			t.Errorf("%s: %v, want ok %v", c.uri, err, c.ok)
		}
	}
}
