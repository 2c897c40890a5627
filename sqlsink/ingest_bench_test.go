package sqlsink

// Ingest throughput of the sink against plain DuckDB.
//
//	go test -tags duckdb_arrow -run '^$' -bench 'Ingest' -benchtime 3x ./sqlsink/
//	LAKESQL_BENCH=1 go test -tags duckdb_arrow -run TestIngestRatio -v ./sqlsink/
//
// Both sides get the same pre-built Arrow batches (10M rows of id BIGINT,
// amount DOUBLE, region VARCHAR with 16 values, ts TIMESTAMP[us, UTC], in
// batches of 64k rows), so batch generation is never timed.
//
// BenchmarkIngestArrow times the sink end to end on a fresh Delta table:
// New, Open (creates the table, starts the buffer's DuckDB), BeginEpoch,
// one Write per batch, PreCommit, CommitEpoch, Close. Default flush
// thresholds and memory limit.
//
// BenchmarkIngestDuckDBCopy is the reference: a fresh DuckDB with the same
// memory_limit (the sink's default, 1GB) and thread count, the same batches
// registered as one Arrow view through duckdb-go's Arrow interface
// (RegisterView over one RecordReader: zero copy), and
//
//	COPY (SELECT * FROM v) TO 'x.parquet' (FORMAT parquet)
//
// with DuckDB's defaults otherwise (snappy, one file, insertion order kept).
// It times sql.Open, the settings, the registration and the COPY. It writes
// no Delta log, collects no statistics and buffers nothing: it is the
// floor of what writing these rows as Parquet with DuckDB costs.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/deltalake"
	"github.com/lakesql/lakesql/internal/duckarrow"
	"github.com/lakesql/lakesql/internal/sqlquote"
)

const benchRows = 10_000_000

// ingestBatches builds rows rows as 64k-row batches; the caller releases
// them.
func ingestBatches(rows int) []arrow.RecordBatch {
	gen := newRowGen(memory.NewGoAllocator())
	defer gen.release()
	var out []arrow.RecordBatch
	for done := 0; done < rows; {
		n := min(ingestBatchRows, rows-done)
		out = append(out, gen.batch(n))
		done += n
	}
	return out
}

func releaseAll(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// ingestTimes is where a sink run spent its time.
type ingestTimes struct {
	total, open, writes, flushes, precommit, commit time.Duration
	nflush                                          int64
	files                                           int
}

// ingestSink writes recs as one epoch into a new Delta table at dir (which
// must not exist) and reports where the time went.
func ingestSink(ctx context.Context, dir string, recs []arrow.RecordBatch) (ingestTimes, error) {
	var it ingestTimes
	start := time.Now()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return it, err
	}
	defer db.Close()
	s, err := New(Config{
		Name: "bench", Provider: deltalake.New(db, deltalake.Options{}),
		Table:  catalogadapter.TableIdent{Name: dir},
		Schema: ingestSchema, TempDir: filepath.Join(filepath.Dir(dir), "spill"),
	})
	if err != nil {
		return it, err
	}
	if err := s.Open(ctx); err != nil {
		return it, err
	}
	defer s.Close()
	it.open = time.Since(start)
	if err := s.BeginEpoch(ctx, 1); err != nil {
		return it, err
	}
	for _, r := range recs {
		t0, f0 := time.Now(), s.Metrics().Flushes
		if err := s.Write(ctx, r); err != nil {
			return it, err
		}
		d := time.Since(t0)
		if s.Metrics().Flushes != f0 {
			it.flushes += d // this write also staged the buffer
			it.nflush++
		} else {
			it.writes += d
		}
	}
	t0 := time.Now()
	if err := s.PreCommit(ctx, 1); err != nil {
		return it, err
	}
	it.precommit = time.Since(t0)
	t0 = time.Now()
	res, err := s.CommitEpoch(ctx, 1)
	if err != nil {
		return it, err
	}
	it.commit = time.Since(t0)
	if err := s.Close(); err != nil {
		return it, err
	}
	it.total, it.files = time.Since(start), res.Files
	var want int64
	for _, r := range recs {
		want += r.NumRows()
	}
	if res.Rows != want || res.Version != 1 {
		return it, fmt.Errorf("commit result %+v, want version 1 with %d rows", res, want)
	}
	return it, nil
}

// ingestDuckDBCopy is the reference: the same batches, one Arrow view, one
// plain COPY to a Parquet file at path.
func ingestDuckDBCopy(ctx context.Context, path string, recs []arrow.RecordBatch) (time.Duration, error) {
	start := time.Now()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	for _, q := range []string{
		"SET memory_limit = " + sqlquote.String(DefaultMemoryLimit),
		"SET temp_directory = " + sqlquote.String(filepath.Join(filepath.Dir(path), "spill")),
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return 0, err
		}
	}
	rr, err := array.NewRecordReader(ingestSchema, recs)
	if err != nil {
		return 0, err
	}
	defer rr.Release() // the exported stream holds its own reference
	var release func()
	err = conn.Raw(func(dc any) error {
		ar, err := duckarrow.FromConn(dc.(driver.Conn))
		if err != nil {
			return err
		}
		release, err = ar.RegisterView(rr, "v")
		return err
	})
	if err != nil {
		return 0, err
	}
	defer release()
	var n int64
	if err := conn.QueryRowContext(ctx, "COPY (SELECT * FROM v) TO "+sqlquote.String(path)+" (FORMAT parquet)").Scan(&n); err != nil {
		return 0, err
	}
	d := time.Since(start)
	if _, err := conn.ExecContext(ctx, "DROP VIEW v"); err != nil {
		return 0, err
	}
	var want int64
	for _, r := range recs {
		want += r.NumRows()
	}
	if n != want {
		return 0, fmt.Errorf("COPY wrote %d rows, want %d", n, want)
	}
	return d, nil
}

func BenchmarkIngestArrow(b *testing.B) {
	recs := ingestBatches(benchRows)
	defer releaseAll(recs)
	ctx := context.Background()
	root := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := filepath.Join(root, fmt.Sprintf("t%d", i), "orders")
		os.RemoveAll(filepath.Join(root, fmt.Sprintf("t%d", i-1)))
		b.StartTimer()
		if _, err := ingestSink(ctx, dir, recs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkIngestDuckDBCopy(b *testing.B) {
	recs := ingestBatches(benchRows)
	defer releaseAll(recs)
	ctx := context.Background()
	root := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		os.RemoveAll(filepath.Join(root, "x.parquet"))
		b.StartTimer()
		if _, err := ingestDuckDBCopy(ctx, filepath.Join(root, "x.parquet"), recs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// TestIngestRatio runs the sink (A) and the DuckDB reference (B)
// interleaved, A B A B ..., after one untimed warm-up pair, and prints the
// median rows/s of each, their spread ((max-min)/median), the ratio of the
// medians and the median of the per-pair ratios (target >= 0.85; the
// paired ratio is the steadier figure on a shared machine).
// It never asserts on timing. LAKESQL_BENCH=1 turns it on;
// LAKESQL_BENCH_RUNS sets the runs per side (default 3).
func TestIngestRatio(t *testing.T) {
	if os.Getenv("LAKESQL_BENCH") != "1" {
		t.Skip("ingest ratio benchmark: set LAKESQL_BENCH=1 to run it")
	}
	runs := 3
	if v := os.Getenv("LAKESQL_BENCH_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("bad LAKESQL_BENCH_RUNS %q", v)
		}
		runs = n
	}
	recs := ingestBatches(benchRows)
	defer releaseAll(recs)
	ctx := context.Background()
	root := t.TempDir()
	var sinkRates, copyRates, ratios []float64
	t.Logf("load average before: %s", loadAvg())
	for i := -1; i < runs; i++ { // i == -1: warm-up
		dir := filepath.Join(root, fmt.Sprintf("t%d", i+1))
		it, err := ingestSink(ctx, filepath.Join(dir, "orders"), recs)
		if err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(dir)
		d, err := ingestDuckDBCopy(ctx, filepath.Join(root, "x.parquet"), recs)
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(root, "x.parquet"))
		a, b := benchRows/it.total.Seconds(), benchRows/d.Seconds()
		tag := fmt.Sprintf("run %d", i+1)
		if i < 0 {
			tag = "warm-up"
		} else {
			sinkRates, copyRates, ratios = append(sinkRates, a), append(copyRates, b), append(ratios, a/b)
		}
		t.Logf("%s: sink %.2fs (%.0f rows/s: open %s, writes %s, %d in-write flushes %s, precommit %s, commit %s, %d files) | duckdb copy %.2fs (%.0f rows/s)",
			tag, it.total.Seconds(), a, ms(it.open), ms(it.writes), it.nflush, ms(it.flushes), ms(it.precommit), ms(it.commit), it.files, d.Seconds(), b)
	}
	t.Logf("load average after: %s", loadAvg())
	ma, mb := median(sinkRates), median(copyRates)
	line := fmt.Sprintf("ingest %d rows x %d runs: sink median %.0f rows/s (spread %.1f%%), duckdb COPY median %.0f rows/s (spread %.1f%%), ratio %.3f, median of paired ratios %.3f (target >= 0.85)",
		benchRows, runs, ma, spread(sinkRates), mb, spread(copyRates), ma/mb, median(ratios))
	t.Log(line)
	fmt.Println(line)
}

// loadAvg is the machine's load average, to tell a quiet run from a busy
// one.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread is (max - min) / median, in percent.
func spread(xs []float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return 100 * (hi - lo) / median(xs)
}
