package sqlsink

// Reading a snapshot back: DuckDB over the planned files (ScanSQL, what
// SELECT uses) against iceberg-go's own Arrow scan, on a table with
// equality deletes from upsert epochs.
//
//	LAKESQL_BENCH=1 go test -tags duckdb_arrow -run TestScanRatio -v ./sqlsink/

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesql/lakesql/internal/icebergtest"
)

// TestScanRatio measures; it asserts only that both readers agree.
func TestScanRatio(t *testing.T) {
	if os.Getenv("LAKESQL_BENCH") != "1" {
		t.Skip("set LAKESQL_BENCH=1 to measure scans")
	}
	const rows, upserts, perUpsert = 2_000_000, 20, 10_000
	ctx := context.Background()
	dir := t.TempDir()
	p := openProvider(t, dir)
	cfg := sinkConfig(t, p, "orders")
	cfg.Mode, cfg.Key, cfg.MemoryLimit = ModeUpsert, []string{"id"}, "1GB"
	s := openSink(t, cfg)
	mk := func(from, n int, amount float64) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, orderSchema)
		defer b.Release()
		for i := from; i < from+n; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.Float64Builder).Append(amount)
			b.Field(2).(*array.StringBuilder).Append("r")
		}
		return b.NewRecordBatch()
	}
	epoch(t, s, 1, mk(0, rows, 1))
	for e := 0; e < upserts; e++ {
		epoch(t, s, int64(e+2), mk(e*perUpsert*5, perUpsert, 2))
	}
	wantSum := float64(rows) + float64(upserts*perUpsert)

	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	duck := func() (time.Duration, int64, float64) {
		start := time.Now()
		q, err := p.ScanSQL(ctx, ordersID, db, -1, nil)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		var sum float64
		if err := db.QueryRow("SELECT count(*), sum(amount) FROM (SELECT * FROM ("+q+"))").Scan(&n, &sum); err != nil {
			t.Fatal(err)
		}
		return time.Since(start), n, sum
	}
	cat := icebergtest.Lake{Dir: dir}.Catalog(t)
	ice := func() (time.Duration, int64, float64) {
		start := time.Now()
		tbl, err := cat.LoadTable(ctx, icebergtest.Ident(ordersID))
		if err != nil {
			t.Fatal(err)
		}
		_, it, err := tbl.Scan().ToArrowRecords(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		var sum float64
		for rec, err := range it {
			if err != nil {
				t.Fatal(err)
			}
			n += rec.NumRows()
			for _, v := range rec.Column(1).(*array.Float64).Float64Values() {
				sum += v
			}
			rec.Release()
		}
		return time.Since(start), n, sum
	}
	var dBest, iBest time.Duration
	for i := 0; i < 2; i++ {
		d, n, sum := duck()
		if n != rows || sum != wantSum {
			t.Fatalf("DuckDB scan: %d rows, sum %g; want %d, %g", n, sum, rows, wantSum)
		}
		if dBest == 0 || d < dBest {
			dBest = d
		}
		d, n, sum = ice()
		if n != rows || sum != wantSum {
			t.Fatalf("iceberg-go scan: %d rows, sum %g; want %d, %g", n, sum, rows, wantSum)
		}
		if iBest == 0 || d < iBest {
			iBest = d
		}
	}
	t.Logf("%d rows, %d equality-delete epochs of %d keys", rows, upserts, perUpsert)
	t.Logf("DuckDB over planned files (ScanSQL): %v", dBest.Round(time.Millisecond))
	t.Logf("iceberg-go ToArrowRecords:           %v", iBest.Round(time.Millisecond))
	t.Logf("iceberg-go / DuckDB: %.1fx", iBest.Seconds()/dBest.Seconds())
}
