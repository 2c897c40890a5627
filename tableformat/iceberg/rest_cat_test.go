package iceberg

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// restURIEnv names a running Iceberg REST catalog (http://host:port) whose
// warehouse is on this machine's disk, such as the Apache Iceberg REST test
// fixture `interop/run rest_catalog` starts. With it set, the tests that
// run onCatalogs run against it too.
const restURIEnv = "LAKESQL_ICEBERG_REST_URI"

// restCatalog opens the REST catalog restURIEnv names; the test skips
// when it is unset.
func restCatalog(t *testing.T) *Catalog {
	t.Helper()
	uri := os.Getenv(restURIEnv)
	if uri == "" {
		t.Skipf("%s is not set: no REST catalog to test against", restURIEnv)
	}
	c, err := OpenCatalog(t.Context(), CatalogConfig{DataDir: t.TempDir(), Properties: map[string]string{"type": "rest", "uri": uri}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestRESTConcurrentNamespace: processes that create tables in a new
// namespace at once (sinks created together) all get their namespace,
// though the REST server fails the creates that lose the race (Iceberg's
// REST fixture on its JdbcCatalog answers 500, not 409). The server's
// window is narrow: a hundred rounds of sixteen at once reach it.
func TestRESTConcurrentNamespace(t *testing.T) {
	const n = 16
	cats := make([]*Catalog, n)
	for i := range cats {
		cats[i] = restCatalog(t)
	}
	for round := range 100 {
		ns := table.Identifier{fmt.Sprintf("race_%d_%d", time.Now().UnixNano(), round)}
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { errs[i] = cats[i].EnsureNamespace(t.Context(), ns) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: namespace %v by catalog %d of %d at once: %v", round, ns, i, n, err)
			}
		}
	}
}

// onCatalogs runs f on the default SQLite catalog and, as subtest "rest",
// on the REST catalog restURIEnv names (skipped when it is unset).
func onCatalogs(t *testing.T, f func(t *testing.T, cat *Catalog)) {
	t.Run("sqlite", func(t *testing.T) { f(t, openTestCatalog(t, t.TempDir())) })
	t.Run("rest", func(t *testing.T) { f(t, restCatalog(t)) })
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
