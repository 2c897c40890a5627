package apacheiceberg

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"
	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/icebergtest"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

var ordersID = catalogadapter.TableIdent{Namespace: []string{"db"}, Name: "orders"}

// ordersSchema is the sink's schema as an Iceberg table stores it.
var ordersSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// openProvider opens the default SQLite catalog of dir and a provider on it.
func openProvider(t testing.TB, dir string) *Provider {
	t.Helper()
	cat, err := icetable.OpenCatalog(context.Background(), icetable.CatalogConfig{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	return New(cat, Options{BaseBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond})
}

// openProviderAt is a provider on a fresh catalog in dir whose clock reads
// *now, for tests that move it.
func openProviderAt(t testing.TB, dir string, now *time.Time) *Provider {
	t.Helper()
	cat, err := icetable.OpenCatalog(context.Background(), icetable.CatalogConfig{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	return New(cat, Options{Now: func() time.Time { return *now }})
}

// row is one test row.
type row struct {
	ID     int64
	Amount float64
	Region string
}

func (r row) String() string { return fmt.Sprintf("%d|%g|%s", r.ID, r.Amount, r.Region) }

// batch builds an Arrow batch of the orders table.
func batch(t testing.TB, rows ...row) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, ordersSchema)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.ID)
		b.Field(1).(*array.Float64Builder).Append(r.Amount)
		b.Field(2).(*array.StringBuilder).Append(r.Region)
	}
	rec := b.NewRecordBatch()
	t.Cleanup(rec.Release)
	return rec
}

// lakeProvider opens a catalog handle of its own on l and a provider on
// it with the production defaults (retries, backoff).
func lakeProvider(t testing.TB, l icebergtest.Lake) *Provider {
	return New(l.Catalog(t), Options{})
}

// freshTable loads the table through a catalog handle of its own: the
// independent reader sees only what reached the catalog.
func freshTable(t testing.TB, dir string, id catalogadapter.TableIdent) *table.Table {
	return icebergtest.Lake{Dir: dir}.Table(t, id)
}

// icebergRows reads the orders table with iceberg-go's own scan from a
// fresh catalog handle, sorted.
func icebergRows(t testing.TB, dir string) []string {
	return icebergtest.Lake{Dir: dir}.Rows(t, ordersID)
}

func rowStrings(rows ...row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.String()
	}
	sort.Strings(out)
	return out
}

// snapshots lists the main branch's snapshots, oldest first.
func snapshots(t testing.TB, dir string, id catalogadapter.TableIdent) []table.Snapshot {
	return icebergtest.Lake{Dir: dir}.Snapshots(t, id)
}

// parquetFiles lists every Parquet file under the warehouse, committed or not.
func parquetFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(filepath.Join(dir, "iceberg", "warehouse"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}
