package sqlsink

import (
	"context"
	"slices"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/lakesql/lakesql/catalogadapter"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// Reading an Iceberg lake's tables the way another engine would: with
// iceberg-go's own scan, through a catalog handle of the test's own, which
// sees only what reached the catalog.

// icebergTableIdent is table name in the Iceberg lake (icebergLake.open).
func icebergTableIdent(name string) catalogadapter.TableIdent {
	return catalogadapter.TableIdent{Namespace: []string{"db"}, Name: name}
}

// icebergTable loads id from the SQLite catalog of root through a fresh handle.
func icebergTable(t testing.TB, root string, id catalogadapter.TableIdent) *table.Table {
	t.Helper()
	cat, err := icetable.OpenCatalog(context.Background(), icetable.CatalogConfig{DataDir: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	tbl, err := cat.LoadTable(context.Background(), append(slices.Clone(id.Namespace), id.Name))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// icebergSnapshots lists tbl's main-branch snapshots, oldest first.
func icebergSnapshots(tbl *table.Table) []table.Snapshot {
	head := tbl.Metadata().SnapshotByName(table.MainBranch)
	if head == nil {
		return nil
	}
	anc := table.AncestorsOf(head.SnapshotID, tbl.Metadata().SnapshotByID)
	slices.Reverse(anc)
	return anc
}

// tableRows reads tbl with iceberg-go's own scan, sorted.
func tableRows(t testing.TB, tbl *table.Table, opts ...table.ScanOption) []string {
	t.Helper()
	at, err := tbl.Scan(append(opts, table.WithSelectedFields("id", "amount", "region"))...).ToArrowTable(context.Background())
	if err != nil {
		t.Fatalf("scan %s: %v", tbl.Identifier(), err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 4096)
	defer tr.Release()
	out := []string{}
	for tr.Next() {
		rec := tr.RecordBatch()
		ids := rec.Column(0).(*array.Int64)
		amounts := rec.Column(1).(*array.Float64)
		regions := rec.Column(2).(*array.String)
		for i := 0; i < int(rec.NumRows()); i++ {
			out = append(out, row{ID: ids.Value(i), Amount: amounts.Value(i), Region: regions.Value(i)}.String())
		}
	}
	sort.Strings(out)
	return out
}
