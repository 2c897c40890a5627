package sqlsink

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/apacheiceberg"
	"github.com/lakesql/lakesql/catalogadapter/providertest"
	"github.com/lakesql/lakesql/internal/icebergtest"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// The Iceberg tests' fixtures: the orders table of a lake's catalog, the
// sink on it, and the readers that check what reached the catalog.

// ordersID is the orders table of an Iceberg lake.
var ordersID = icebergTableIdent("orders")

// icebergTableIdent is table name in an Iceberg lake (icebergLake.open).
func icebergTableIdent(name string) catalogadapter.TableIdent {
	return catalogadapter.TableIdent{Namespace: []string{"db"}, Name: name}
}

// openProvider opens the default SQLite catalog of dir and a provider on
// it with short backoffs: the tests race writers on purpose.
func openProvider(t testing.TB, dir string) *apacheiceberg.Provider {
	t.Helper()
	cat, err := icetable.OpenCatalog(context.Background(), icetable.CatalogConfig{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	return apacheiceberg.New(cat, apacheiceberg.Options{BaseBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond})
}

// lakeProvider opens a catalog handle of its own on l and a provider on
// it with the production defaults (retries, backoff).
func lakeProvider(t testing.TB, l icebergtest.Lake) *apacheiceberg.Provider {
	return apacheiceberg.New(l.Catalog(t), apacheiceberg.Options{})
}

// createOrders creates the orders table through p.
func createOrders(t testing.TB, p *apacheiceberg.Provider) {
	t.Helper()
	if err := p.CreateTable(context.Background(), ordersID, catalogadapter.TableDef{Schema: orderSchema}); err != nil {
		t.Fatal(err)
	}
}

func sinkConfig(t testing.TB, p catalogadapter.Provider, name string) Config {
	return Config{
		Name: name, Provider: p, Table: ordersID, Schema: orderSchema,
		TempDir: t.TempDir(), MemoryLimit: "256MB", Threads: 2,
		DisableAutoCompact: true, // see env.config
	}
}

// freshTable loads table id of the SQLite catalog of dir through a
// catalog handle of its own: the independent reader sees only what
// reached the catalog.
func freshTable(t testing.TB, dir string, id catalogadapter.TableIdent) *table.Table {
	return icebergtest.Lake{Dir: dir}.Table(t, id)
}

// icebergRows reads the orders table with iceberg-go's own scan from a
// fresh catalog handle, sorted.
func icebergRows(t testing.TB, dir string) []string {
	return icebergtest.Lake{Dir: dir}.Rows(t, ordersID)
}

// snapshots lists the main branch's snapshots, oldest first.
func snapshots(t testing.TB, dir string, id catalogadapter.TableIdent) []table.Snapshot {
	return icebergtest.Lake{Dir: dir}.Snapshots(t, id)
}

// duckRows reads the orders table through the provider's ScanSQL.
func duckRows(t testing.TB, p *apacheiceberg.Provider) []string {
	t.Helper()
	return rowStrings(scanRows(t, p, ordersID, providertest.OpenDuckDB(t), -1)...)
}

func rowStrings(rows ...row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.String()
	}
	sort.Strings(out)
	return out
}
