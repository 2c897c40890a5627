package iceberg

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// TestSQLCatalogByProperties opens the SQL catalog on a SQLite file named
// by properties, and checks that an unreachable Postgres catalog fails
// without showing its password.
func TestSQLCatalogByProperties(t *testing.T) {
	dir := t.TempDir()
	props := map[string]string{
		"type":       "sql",
		"uri":        SQLiteDSN(filepath.Join(dir, "other.db")),
		"sql.driver": "sqlite",
		"warehouse":  "file://" + filepath.ToSlash(filepath.Join(dir, "wh")),
	}
	cat, err := OpenCatalog(t.Context(), CatalogConfig{Name: "mine", Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	is, _ := SchemaFromArrow(testSchema)
	tbl, err := cat.CreateTable(t.Context(), table.Identifier{"ns", "t"}, TableDef{Schema: is})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tbl.Location(), props["warehouse"]) || tbl.Metadata().Version() != DefaultFormatVersion {
		t.Fatalf("table at %s, format %d", tbl.Location(), tbl.Metadata().Version())
	}

	_, err = OpenCatalog(t.Context(), CatalogConfig{Properties: map[string]string{
		"type": "sql", "uri": "postgres://lake:pw-very-secret@127.0.0.1:1/cat?sslmode=disable",
	}})
	if err == nil || strings.Contains(err.Error(), "pw-very-secret") {
		t.Fatalf("unreachable Postgres: %v", err)
	}
}
