package iceberg

import (
	"errors"
	"os"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// restURIEnv names a running Iceberg REST catalog (http://host:port) whose
// warehouse is on this machine's disk, such as the Apache Iceberg REST test
// fixture `interop/run rest_catalog` starts. With it set, the tests that
// run onCatalogs run against it too.
const restURIEnv = "LAKESQL_ICEBERG_REST_URI"

// onCatalogs runs f on the default SQLite catalog and, as subtest "rest",
// on the REST catalog restURIEnv names (skipped when it is unset).
func onCatalogs(t *testing.T, f func(t *testing.T, cat *Catalog)) {
	t.Run("sqlite", func(t *testing.T) { f(t, openTestCatalog(t, t.TempDir())) })
	t.Run("rest", func(t *testing.T) {
		uri := os.Getenv(restURIEnv)
		if uri == "" {
			t.Skipf("%s is not set: no REST catalog to test against", restURIEnv)
		}
		c, err := OpenCatalog(t.Context(), CatalogConfig{DataDir: t.TempDir(), Properties: map[string]string{"type": "rest", "uri": uri}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		f(t, c)
	})
}

// dropRESTTable drops ident from a REST catalog, whose tables outlive a
// test, and removes its folder: the fixture drops without purging and
// gives a new table of the same name the same location.
func dropRESTTable(t *testing.T, cat *Catalog, ident table.Identifier) {
	t.Helper()
	tbl, err := cat.LoadTable(t.Context(), ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return
	}
	if err != nil {
		t.Fatalf("load %v: %v", ident, err)
	}
	if err := cat.Iceberg().DropTable(t.Context(), ident); err != nil {
		t.Fatalf("drop %v: %v", ident, err)
	}
	root, err := LocalPath(tbl.Location())
	if err != nil {
		t.Fatalf("the REST catalog's table is at %s, not on the local disk: %v", tbl.Location(), err)
	}
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
}
