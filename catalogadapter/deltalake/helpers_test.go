package deltalake

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/clocktest"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// t0 is the pinned clock of the tests.
var t0 = time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)

func openDB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := delta.PrepareDuckDB(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return db
}

func testOptions(clock *clocktest.Clock) Options {
	return Options{Now: clock.Now, BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}
}

// ordersSchema is the table of most tests: the four column types the
// sink sends most.
func ordersSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	}, nil)
}

// newTable creates an orders table in a temp dir and returns its ident.
func newTable(t testing.TB, p *Provider, def catalogadapter.TableDef) catalogadapter.TableIdent {
	t.Helper()
	id := catalogadapter.TableIdent{Name: filepath.Join(t.TempDir(), "orders")}
	if def.Schema == nil {
		def.Schema = ordersSchema()
	}
	if err := p.CreateTable(context.Background(), id, def); err != nil {
		t.Fatal(err)
	}
	return id
}

// row is one row of the orders table as the tests read it back.
type row struct {
	ID     int64
	Amount sql.NullFloat64
	Name   sql.NullString
	TS     sql.NullTime
}

func amount(v float64) sql.NullFloat64 { return sql.NullFloat64{Float64: v, Valid: true} }
func name(v string) sql.NullString     { return sql.NullString{String: v, Valid: true} }
func ts(v time.Time) sql.NullTime      { return sql.NullTime{Time: v, Valid: true} }

// record builds an Arrow record of rows with the orders columns plus an
// _op metadata column, from alloc.
func record(t testing.TB, alloc memory.Allocator, rows []row) arrow.RecordBatch {
	t.Helper()
	fields := append(ordersSchema().Fields(), arrow.Field{Name: "_op", Type: arrow.BinaryTypes.String})
	b := array.NewRecordBuilder(alloc, arrow.NewSchema(fields, nil))
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.ID)
		if r.Amount.Valid {
			b.Field(1).(*array.Float64Builder).Append(r.Amount.Float64)
		} else {
			b.Field(1).AppendNull()
		}
		if r.Name.Valid {
			b.Field(2).(*array.StringBuilder).Append(r.Name.String)
		} else {
			b.Field(2).AppendNull()
		}
		if r.TS.Valid {
			b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(r.TS.Time.UnixMicro()))
		} else {
			b.Field(3).AppendNull()
		}
		b.Field(4).(*array.StringBuilder).Append("I")
	}
	return b.NewRecordBatch()
}

// scanRows reads the table at version (restricted to paths unless nil).
func scanRows(t testing.TB, p *Provider, db *sql.DB, id catalogadapter.TableIdent, version int64, paths []string) []row {
	t.Helper()
	ctx := context.Background()
	q, err := p.ScanSQL(ctx, id, db, version, paths)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := db.QueryContext(ctx, "SELECT id, amount, name, ts FROM ("+q+") ORDER BY id")
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	return collectRows(t, rs)
}

// collectRows reads id, amount, name, ts rows, timestamps in UTC, and
// closes rs.
func collectRows(t testing.TB, rs *sql.Rows) []row {
	t.Helper()
	defer rs.Close()
	var out []row
	for rs.Next() {
		var r row
		if err := rs.Scan(&r.ID, &r.Amount, &r.Name, &r.TS); err != nil {
			t.Fatal(err)
		}
		if r.TS.Valid {
			r.TS.Time = r.TS.Time.UTC()
		}
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// writeRows stages rows through WriteBatch.
func writeRows(t testing.TB, p *Provider, id catalogadapter.TableIdent, rows []row) catalogadapter.Receipt {
	t.Helper()
	rec := record(t, memory.DefaultAllocator, rows)
	defer rec.Release()
	r, err := p.WriteBatch(context.Background(), id, rec)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// idRows makes n rows with ids from first on.
func idRows(first int64, n int) []row {
	out := make([]row, n)
	for i := range out {
		id := first + int64(i)
		out[i] = row{ID: id, Amount: amount(float64(id) / 2), Name: name("n" + string(rune('a'+id%26))), TS: ts(t0.Add(time.Duration(id) * time.Second))}
	}
	return out
}
