package wire

// INSERT throughput over the MySQL wire against go-mysql-server's own
// ceiling, and the latency of single-row autocommit INSERTs.
//
//	LAKESQL_BENCH=1 go test -tags duckdb_arrow -run TestWireInsertRatio -v ./planner/wire
//	go test -tags duckdb_arrow -run '^$' -bench WireInsert -benchtime 3x ./planner/wire
//
// Both servers run in this process on loopback TCP and get the same
// workload through go-sql-driver/mysql on one connection: BEGIN, K
// pre-built statements of INSERT INTO bench VALUES (...) with 1000 rows
// each, COMMIT. The rows are (id BIGINT NOT NULL, amount DOUBLE,
// region VARCHAR(16) with 16 values, ts DATETIME(6)).
//
// lakesql writes into an append-mode Delta sink: the rows are buffered in
// DuckDB while the statements run, and COMMIT writes the Parquet files
// and the table version. Its time is the whole epoch, COMMIT included;
// the insert and commit phases are reported apart too.
//
// The reference is a plain go-mysql-server v0.20.0 server whose table,
// with the same column types lakesql shows for the sink, counts the rows
// it is given and drops them: parsing, analysis, value conversion and the
// wire are all it costs, which is the front end's ceiling.

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	gmsserver "github.com/dolthub/go-mysql-server/server"
	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
)

const (
	benchRowsPerStmt = 1000
	// benchStatements is K, the statements per epoch: 150k rows.
	benchStatements = 150
	// benchSink is the sink (and the discarding table) the workload writes.
	benchSink = "bench"
	// benchAutocommit is the number of timed single-row autocommit INSERTs.
	benchAutocommit = 300
)

const createBenchSink = "CREATE SINK " + benchSink + " INTO DELTA 'lake/bench' " +
	"(id BIGINT NOT NULL, amount DOUBLE, region VARCHAR(16), ts DATETIME(6))"

var benchRegions = []string{"eu-west", "eu-north", "eu-central", "eu-south", "us-east", "us-west", "us-central",
	"ca-central", "sa-east", "af-south", "me-south", "ap-south", "ap-east", "ap-northeast", "ap-southeast", "au-east"}

// benchValues is one row's VALUES tuple; id makes every row distinct.
func benchValues(id int64) string {
	ts := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(id) * 1237 * time.Microsecond)
	return fmt.Sprintf("(%d, %.2f, '%s', '%s')", id, float64(id%100_000)/7+0.01,
		benchRegions[id%int64(len(benchRegions))], ts.Format("2006-01-02 15:04:05.000000"))
}

// benchStatementsFrom builds k INSERT statements of benchRowsPerStmt rows,
// ids from first on.
func benchStatementsFrom(first int64, k int) []string {
	out := make([]string, k)
	var sb strings.Builder
	id := first
	for i := range out {
		sb.Reset()
		sb.WriteString("INSERT INTO " + benchSink + " VALUES ")
		for r := 0; r < benchRowsPerStmt; r++ {
			if r > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(benchValues(id))
			id++
		}
		out[i] = sb.String()
	}
	return out
}

// discardDB is the reference's database "lakesql" with one table, bench,
// that drops what is inserted into it.
type discardDB struct{ t *discardTable }

func (d *discardDB) Name() string { return "lakesql" }

func (d *discardDB) GetTableInsensitive(_ *gms.Context, name string) (gms.Table, bool, error) {
	if strings.EqualFold(name, benchSink) {
		return d.t, true, nil
	}
	return nil, false, nil
}

func (d *discardDB) GetTableNames(*gms.Context) ([]string, error) { return []string{benchSink}, nil }

type discardProvider struct{ db *discardDB }

func (p *discardProvider) Database(_ *gms.Context, name string) (gms.Database, error) {
	if strings.EqualFold(name, p.db.Name()) {
		return p.db, nil
	}
	return nil, gms.ErrDatabaseNotFound.New(name)
}

func (p *discardProvider) HasDatabase(_ *gms.Context, name string) bool {
	return strings.EqualFold(name, p.db.Name())
}

func (p *discardProvider) AllDatabases(*gms.Context) []gms.Database { return []gms.Database{p.db} }

// discardTable has the column types lakesql shows for the bench sink;
// it counts inserted rows and keeps none.
type discardTable struct {
	schema gms.Schema
	rows   atomic.Int64
}

var _ gms.InsertableTable = (*discardTable)(nil)

func newDiscardTable() *discardTable {
	col := func(name string, t gms.Type, nullable bool) *gms.Column {
		return &gms.Column{Name: name, Type: t, Nullable: nullable, Source: benchSink, DatabaseSource: "lakesql"}
	}
	return &discardTable{schema: gms.Schema{
		col("id", types.Int64, false),
		col("amount", types.Float64, true),
		col("region", types.LongText, true),
		col("ts", types.DatetimeMaxPrecision, true),
	}}
}

func (t *discardTable) Name() string               { return benchSink }
func (t *discardTable) String() string             { return benchSink }
func (t *discardTable) Schema() gms.Schema         { return t.schema }
func (t *discardTable) Collation() gms.CollationID { return gms.Collation_Default }

type discardPartition struct{}

func (discardPartition) Key() []byte { return []byte("all") }

func (t *discardTable) Partitions(*gms.Context) (gms.PartitionIter, error) {
	return gms.PartitionsToPartitionIter(discardPartition{}), nil
}

func (t *discardTable) PartitionRows(*gms.Context, gms.Partition) (gms.RowIter, error) {
	return gms.RowsToRowIter(), nil
}

func (t *discardTable) Inserter(*gms.Context) gms.RowInserter { return discardInserter{t} }

type discardInserter struct{ t *discardTable }

func (discardInserter) StatementBegin(*gms.Context)              {}
func (discardInserter) DiscardChanges(*gms.Context, error) error { return nil }
func (discardInserter) StatementComplete(*gms.Context) error     { return nil }
func (discardInserter) Close(*gms.Context) error                 { return nil }
func (i discardInserter) Insert(_ *gms.Context, _ gms.Row) error { i.t.rows.Add(1); return nil }

// startDiscardServer runs the reference server on a free loopback port.
func startDiscardServer(tb testing.TB) (addr string, table *discardTable) {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	table = newDiscardTable()
	eng := sqle.NewDefault(&discardProvider{db: &discardDB{t: table}})
	build := func(_ context.Context, c *mysql.Conn, addr string) (gms.Session, error) {
		client := gms.Client{User: c.User, Capabilities: c.Capabilities}
		return gms.NewBaseSessionWithClientServer(addr, client, c.ConnectionID), nil
	}
	srv, err := gmsserver.NewServer(gmsserver.Config{Protocol: "tcp", Address: l.Addr().String(), Listener: l},
		eng, gms.NewContext, build, nil)
	if err != nil {
		l.Close()
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Start() }()
	tb.Cleanup(func() {
		srv.Close()
		<-done
		eng.Close()
	})
	return l.Addr().String(), table
}

// benchServers is the two servers and a client connection to each.
type benchServers struct {
	lake, ref         *sql.Conn
	lakeDB            *sql.DB
	table             *discardTable
	lakeDir           string
	nextID, committed int64
}

func openBench(tb testing.TB) *benchServers {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := New(ctx, Config{Listener: l, DataDir: dir, RootPassword: testPassword})
	if err != nil {
		l.Close()
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	tb.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			tb.Errorf("Shutdown: %v", err)
		}
		<-done
	})
	refAddr, table := startDiscardServer(tb)

	conn := func(dsn string) (*sql.DB, *sql.Conn) {
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { db.Close() })
		c, err := db.Conn(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { c.Close() })
		return db, c
	}
	lakeDB, lake := conn(dsn(srv.Addr().String(), testPassword))
	_, ref := conn(fmt.Sprintf("root:@tcp(%s)/lakesql?timeout=10s", refAddr))
	if _, err := lake.ExecContext(ctx, createBenchSink); err != nil {
		tb.Fatalf("%s: %v", createBenchSink, err)
	}
	return &benchServers{lake: lake, ref: ref, lakeDB: lakeDB, table: table, lakeDir: dir, nextID: 1}
}

// epochTimes is one BEGIN, K INSERTs, COMMIT: the inserts (BEGIN
// included) and the COMMIT.
type epochTimes struct{ insert, commit time.Duration }

func (e epochTimes) total() time.Duration { return e.insert + e.commit }

func runEpoch(ctx context.Context, c *sql.Conn, stmts []string) (epochTimes, error) {
	var et epochTimes
	start := time.Now()
	if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
		return et, fmt.Errorf("BEGIN: %w", err)
	}
	for i, q := range stmts {
		res, err := c.ExecContext(ctx, q)
		if err != nil {
			c.ExecContext(ctx, "ROLLBACK")
			return et, fmt.Errorf("INSERT %d of %d: %w", i+1, len(stmts), err)
		}
		if n, err := res.RowsAffected(); err != nil || n != benchRowsPerStmt {
			c.ExecContext(ctx, "ROLLBACK")
			return et, fmt.Errorf("INSERT %d of %d: %d rows affected (%v), want %d", i+1, len(stmts), n, err, benchRowsPerStmt)
		}
	}
	et.insert = time.Since(start)
	start = time.Now()
	if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
		return et, fmt.Errorf("COMMIT: %w", err)
	}
	et.commit = time.Since(start)
	return et, nil
}

// lakesqlEpoch runs stmts as one epoch into the sink and checks that the
// table then holds exactly the rows written so far.
func (b *benchServers) lakesqlEpoch(ctx context.Context, stmts []string) (epochTimes, error) {
	et, err := runEpoch(ctx, b.lake, stmts)
	if err != nil {
		return et, fmt.Errorf("lakesql: %w", err)
	}
	b.committed += int64(len(stmts) * benchRowsPerStmt)
	return et, b.checkLakesqlRows(ctx)
}

func (b *benchServers) checkLakesqlRows(ctx context.Context) error {
	var n int64
	if err := b.lake.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+benchSink).Scan(&n); err != nil {
		return fmt.Errorf("lakesql: count: %w", err)
	}
	if n != b.committed {
		return fmt.Errorf("lakesql: the sink holds %d rows, want %d", n, b.committed)
	}
	return nil
}

// discardEpoch runs stmts as one transaction on the reference and checks
// that its table was handed every row.
func (b *benchServers) discardEpoch(ctx context.Context, stmts []string) (epochTimes, error) {
	before := b.table.rows.Load()
	et, err := runEpoch(ctx, b.ref, stmts)
	if err != nil {
		return et, fmt.Errorf("discard: %w", err)
	}
	if got, want := b.table.rows.Load()-before, int64(len(stmts)*benchRowsPerStmt); got != want {
		return et, fmt.Errorf("discard: the table was handed %d rows, want %d", got, want)
	}
	return et, nil
}

// statements builds the next k statements, with ids not used before.
func (b *benchServers) statements(k int) []string {
	s := benchStatementsFrom(b.nextID, k)
	b.nextID += int64(k * benchRowsPerStmt)
	return s
}

// autocommitLatencies runs n single-row INSERTs outside a transaction on
// c and returns each one's duration, sorted.
func autocommitLatencies(ctx context.Context, c *sql.Conn, firstID int64, n int) ([]time.Duration, error) {
	stmts := make([]string, n)
	for i := range stmts {
		stmts[i] = "INSERT INTO " + benchSink + " VALUES " + benchValues(firstID+int64(i))
	}
	out := make([]time.Duration, n)
	for i, q := range stmts {
		start := time.Now()
		if _, err := c.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("autocommit INSERT %d: %w", i+1, err)
		}
		out[i] = time.Since(start)
	}
	slices.Sort(out)
	return out, nil
}

// quantile of sorted durations, nearest rank.
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func msf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func envInt(tb testing.TB, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		tb.Fatalf("bad %s %q", name, v)
	}
	return n
}

// TestWireInsertRatio runs the discard reference (B) and lakesql (A)
// alternately, B A B A ..., after one untimed warm-up pair, and prints
// the median rows/s of each, their spread ((max-min)/median), the ratio
// of the medians and the median of the per-pair ratios (target >= 0.8),
// then the p50 and p99 of single-row autocommit INSERTs on each server.
// It never asserts on timing. LAKESQL_BENCH=1 turns it on;
// LAKESQL_BENCH_RUNS sets the runs per side (default 5),
// LAKESQL_BENCH_STATEMENTS the statements per epoch (default 150) and
// LAKESQL_BENCH_AUTOCOMMIT the timed autocommit INSERTs (default 300).
func TestWireInsertRatio(t *testing.T) {
	if os.Getenv("LAKESQL_BENCH") != "1" {
		t.Skip("wire insert ratio benchmark: set LAKESQL_BENCH=1 to run it")
	}
	runs := envInt(t, "LAKESQL_BENCH_RUNS", 5)
	k := envInt(t, "LAKESQL_BENCH_STATEMENTS", benchStatements)
	nAuto := envInt(t, "LAKESQL_BENCH_AUTOCOMMIT", benchAutocommit)
	rows := float64(k * benchRowsPerStmt)
	ctx := context.Background()
	b := openBench(t)

	var lakeRates, refRates, ratios, insertRates []float64
	var commits []time.Duration
	t.Logf("load average before: %s", loadAvg())
	for i := -1; i < runs; i++ { // i == -1: warm-up
		stmts := b.statements(k) // the same statements for both sides
		ref, err := b.discardEpoch(ctx, stmts)
		if err != nil {
			t.Fatal(err)
		}
		lake, err := b.lakesqlEpoch(ctx, stmts)
		if err != nil {
			t.Fatal(err)
		}
		a, r := rows/lake.total().Seconds(), rows/ref.total().Seconds()
		tag := fmt.Sprintf("run %d", i+1)
		if i < 0 {
			tag = "warm-up"
		} else {
			lakeRates, refRates, ratios = append(lakeRates, a), append(refRates, r), append(ratios, a/r)
			insertRates, commits = append(insertRates, rows/lake.insert.Seconds()), append(commits, lake.commit)
		}
		t.Logf("%s: lakesql %.0f rows/s (%s: inserts %s = %.0f rows/s, commit %s) | discard %.0f rows/s (%s) | ratio %.3f",
			tag, a, ms(lake.total()), ms(lake.insert), rows/lake.insert.Seconds(), ms(lake.commit), r, ms(ref.total()), a/r)
	}
	t.Logf("load average after runs: %s", loadAvg())

	// Autocommit latency: a few untimed statements first on each side.
	const warm = 10
	id := b.nextID
	if _, err := autocommitLatencies(ctx, b.ref, id, warm); err != nil {
		t.Fatalf("discard: %v", err)
	}
	if _, err := autocommitLatencies(ctx, b.lake, id, warm); err != nil {
		t.Fatalf("lakesql: %v", err)
	}
	b.committed += warm
	id += warm
	refLat, err := autocommitLatencies(ctx, b.ref, id, nAuto)
	if err != nil {
		t.Fatalf("discard: %v", err)
	}
	lakeLat, err := autocommitLatencies(ctx, b.lake, id, nAuto)
	if err != nil {
		t.Fatalf("lakesql: %v", err)
	}
	b.committed += int64(nAuto)
	if err := b.checkLakesqlRows(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("autocommit: lakesql p50 %.2f ms p99 %.2f ms max %.2f ms | discard p50 %.3f ms p99 %.3f ms (n=%d each)",
		msf(quantile(lakeLat, .5)), msf(quantile(lakeLat, .99)), msf(lakeLat[len(lakeLat)-1]),
		msf(quantile(refLat, .5)), msf(quantile(refLat, .99)), nAuto)
	t.Logf("load average after: %s", loadAvg())

	ma, mb := median(lakeRates), median(refRates)
	slices.Sort(commits)
	t.Logf("wire insert %d x %d rows per epoch, %d runs: lakesql median %.0f rows/s (spread %.1f%%; insert phase %.0f rows/s, commit median %s), discard median %.0f rows/s (spread %.1f%%)",
		k, benchRowsPerStmt, runs, ma, spread(lakeRates), median(insertRates), ms(commits[len(commits)/2]), mb, spread(refRates))
	line := fmt.Sprintf("wire insert: lakesql %.0f rows/s, discard %.0f rows/s, ratio %.3f (paired %.3f; target >= 0.8); autocommit p50 %.2f ms p99 %.2f ms (n=%d; discard p50 %.3f ms p99 %.3f ms)",
		ma, mb, ma/mb, median(ratios), msf(quantile(lakeLat, .5)), msf(quantile(lakeLat, .99)), nAuto,
		msf(quantile(refLat, .5)), msf(quantile(refLat, .99)))
	t.Log(line)
	fmt.Println(line)
}

// BenchmarkWireInsert times one epoch (BEGIN, K 1000-row INSERTs, COMMIT)
// per iteration on each server; statement building is not timed.
func BenchmarkWireInsert(b *testing.B) {
	k := envInt(b, "LAKESQL_BENCH_STATEMENTS", benchStatements)
	ctx := context.Background()
	for _, side := range []string{"lakesql", "discard"} {
		b.Run(side, func(b *testing.B) {
			s := openBench(b)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				stmts := s.statements(k)
				b.StartTimer()
				var err error
				if side == "lakesql" {
					_, err = runEpoch(ctx, s.lake, stmts)
				} else {
					_, err = s.discardEpoch(ctx, stmts)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if side == "lakesql" {
				s.committed = int64(b.N * k * benchRowsPerStmt)
				if err := s.checkLakesqlRows(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*k*benchRowsPerStmt)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// loadAvg is the machine's load average, to tell a quiet run from a busy
// one.
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(data))[:3], " ")
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
