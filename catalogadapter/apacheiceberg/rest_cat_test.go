package apacheiceberg

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/apache/iceberg-go/catalog"

	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// restURIEnv names a running Iceberg REST catalog (http://host:port) whose
// warehouse is on this machine's disk, such as the Apache Iceberg REST test
// fixture the interop suite starts (`interop/run rest_catalog`). With it
// set, the lake tests run once more with the catalog behind REST.
const restURIEnv = "LAKESQL_ICEBERG_REST_URI"

// restLake is a lake whose catalog is the REST server restURIEnv names;
// the test skips when it is unset. The server's tables outlive a test, so
// the orders table is dropped first and its folder removed (the fixture
// drops without purging, and gives a new table the same location).
func restLake(t testing.TB) lake {
	uri := os.Getenv(restURIEnv)
	if uri == "" {
		t.Skipf("%s is not set: no REST catalog to test against", restURIEnv)
	}
	l := lake{name: "rest", dir: t.TempDir(), props: map[string]string{"type": "rest", "uri": uri}}
	cat := l.catalog(t)
	ident, err := identifier(ordersID)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable):
		return l
	case err != nil:
		t.Fatalf("load %v from the REST catalog: %v", ident, err)
	}
	if err := cat.Iceberg().DropTable(ctx, ident); err != nil {
		t.Fatalf("drop %v: %v", ident, err)
	}
	root, err := icetable.LocalPath(tbl.Location())
	if err != nil {
		t.Fatalf("the REST catalog's table is at %s, not on the local disk: %v", tbl.Location(), err)
	}
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestRESTSinkUpsertRowDelta: through a REST catalog, upserts and
// changelog deletes land as one row delta per epoch (the REST server
// commits iceberg-go's requirements and updates), and iceberg-go's scan
// and DuckDB's read agree after each epoch.
func TestRESTSinkUpsertRowDelta(t *testing.T) { sinkUpsertRowDelta(t, restLake(t)) }

// TestManyProcessesAppendREST is TestManyProcessesAppend with the catalog
// behind REST: 4 processes race their commits through the server.
func TestManyProcessesAppendREST(t *testing.T) { manyProcessesAppend(t, restLake(t)) }
