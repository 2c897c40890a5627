package apacheiceberg

import (
	"context"
	"database/sql"
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
	"github.com/lakesql/lakesql/sqlsink"
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

// row is one test row; Op is "" for a plain insert.
type row struct {
	Op     string
	ID     int64
	Amount float64
	Region string
}

func (r row) String() string { return fmt.Sprintf("%d|%g|%s", r.ID, r.Amount, r.Region) }

// batch builds an Arrow batch, with an _op column when any row has one.
func batch(t testing.TB, rows ...row) arrow.RecordBatch {
	t.Helper()
	withOp := false
	for _, r := range rows {
		withOp = withOp || r.Op != ""
	}
	fields := ordersSchema.Fields()
	if withOp {
		fields = append([]arrow.Field{{Name: sqlsink.OpColumn, Type: arrow.BinaryTypes.String}}, fields...)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	i := 0
	if withOp {
		i = 1
	}
	for _, r := range rows {
		if withOp {
			b.Field(0).(*array.StringBuilder).Append(r.Op)
		}
		b.Field(i).(*array.Int64Builder).Append(r.ID)
		b.Field(i + 1).(*array.Float64Builder).Append(r.Amount)
		b.Field(i + 2).(*array.StringBuilder).Append(r.Region)
	}
	rec := b.NewRecordBatch()
	t.Cleanup(rec.Release)
	return rec
}

func sinkConfig(t testing.TB, p *Provider, name string) sqlsink.Config {
	return sqlsink.Config{
		Name: name, Provider: p, Table: ordersID, Schema: ordersSchema,
		TempDir: t.TempDir(), MemoryLimit: "256MB", Threads: 2,
	}
}

func openSink(t testing.TB, cfg sqlsink.Config) *sqlsink.Sink {
	t.Helper()
	s, err := sqlsink.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func epoch(t testing.TB, s *sqlsink.Sink, n int64, batches ...arrow.RecordBatch) sqlsink.CommitResult {
	t.Helper()
	precommit(t, s, n, batches...)
	res, err := s.CommitEpoch(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// precommit runs epoch n up to its PreCommit: its files are staged,
// invisible, and the commit is the test's to make (or not).
func precommit(t testing.TB, s *sqlsink.Sink, n int64, batches ...arrow.RecordBatch) {
	t.Helper()
	ctx := context.Background()
	if err := s.BeginEpoch(ctx, n); err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if err := s.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PreCommit(ctx, n); err != nil {
		t.Fatal(err)
	}
}

// freshTable loads the table through a catalog handle of its own: the
// independent reader sees only what reached the catalog.
func freshTable(t testing.TB, dir string, id catalogadapter.TableIdent) *table.Table {
	return lake{dir: dir}.table(t, id)
}

// icebergRows reads the orders table with iceberg-go's own scan from a
// fresh catalog handle, sorted.
func icebergRows(t testing.TB, dir string) []string {
	return lake{dir: dir}.rows(t, ordersID)
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

// duckRows reads the orders table through the provider's ScanSQL.
func duckRows(t testing.TB, p *Provider) []string {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q, err := p.ScanSQL(context.Background(), ordersID, db, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := db.Query("SELECT id, amount, region FROM (" + q + ")")
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var r row
		var amount sql.NullFloat64
		var region sql.NullString
		if err := rs.Scan(&r.ID, &amount, &region); err != nil {
			t.Fatal(err)
		}
		r.Amount, r.Region = amount.Float64, region.String
		out = append(out, r.String())
	}
	sort.Strings(out)
	return out
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
	return lake{dir: dir}.snapshots(t, id)
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
