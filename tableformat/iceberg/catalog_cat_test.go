package iceberg

import (
	"errors"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"

	"github.com/lakesql/lakesql/internal/pgtest"
)

// TestPostgresCatalogConcurrentFirstUse: processes that open a fresh
// PostgreSQL SQL catalog at the same time (four lakesql servers started
// together) all open it, though each runs iceberg-go's CREATE TABLE IF NOT
// EXISTS for the catalog's tables, which PostgreSQL does not make safe
// against a concurrent twin; and when they all create the same table (and
// its namespace) at once, one creates it and the others find it there
// (ErrTableExists), as a sink that then attaches to it needs.
func TestPostgresCatalogConcurrentFirstUse(t *testing.T) {
	pg := pgtest.Start(t)
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	is, err := SchemaFromArrow(sc)
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	for round := range 3 {
		props := map[string]string{"type": "sql", "uri": pg.NewDatabase(t), "sql.driver": "postgres",
			"warehouse": warehouseURI(t.TempDir())}
		cats := make([]*Catalog, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				cats[i], errs[i] = OpenCatalog(t.Context(), CatalogConfig{Properties: props})
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: catalog %d of %d opened at once: %v", round, i, n, err)
			}
			t.Cleanup(func() { cats[i].Close() })
		}
		ident := table.Identifier{"ns", "t"}
		for i := range n {
			wg.Go(func() {
				_, errs[i] = cats[i].CreateTable(t.Context(), ident, TableDef{Schema: is})
			})
		}
		wg.Wait()
		created := 0
		for i, err := range errs {
			switch {
			case err == nil:
				created++
			case !errors.Is(err, ErrTableExists):
				t.Fatalf("round %d: create %v by catalog %d: %v, want nil or ErrTableExists", round, ident, i, err)
			}
		}
		if created != 1 {
			t.Fatalf("round %d: %d of %d concurrent creates succeeded, want 1", round, created, n)
		}
	}
}
