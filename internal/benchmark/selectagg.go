package benchmark

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/deltalake"
	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/sqlsink"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// selectAggQuery is the query of workload 7, on both sides.
const selectAggQuery = "SELECT region, count(*), sum(amount) FROM %s GROUP BY region"

// SelectAgg is workload 7: a GROUP BY with count and sum over n committed
// rows, through the wire, against DuckDB running the same query over the
// same Parquet files directly. The figure is rows aggregated per second.
func SelectAgg() Workload {
	return Workload{
		Name: "select-agg", Unit: "rows/s", Target: AtLeast(0.8),
		Quick: Size{N: 1_000_000, Runs: 3}, Full: Size{N: 10_000_000, Runs: 3},
		Describe: func(n int) string {
			return fmt.Sprintf("GROUP BY region with count(*), sum(amount) over %s committed rows, over the wire", formatCount(n))
		},
		Reference: "DuckDB running " + fmt.Sprintf(selectAggQuery, "read_parquet(the table's files)") + " directly",
		// Setup runs a COUNT(*) on both sides instead: a warm-up pair
		// would cost as much as a run.
		NoWarmUp: true,
		Setup:    setupSelectAgg,
	}
}

func setupSelectAgg(ctx context.Context, env Env, n int) (Sides, error) {
	dataDir := filepath.Join(env.Dir, "data")
	dir := filepath.Join(dataDir, "lake", "agg")
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	fmt.Fprintf(env.Log, "select-agg: loading %s rows\n", formatCount(n))
	if err := loadTable(ctx, dir, filepath.Join(env.Dir, "spill"), n); err != nil {
		return nil, fmt.Errorf("load the table: %w", err)
	}
	snap, err := openLatest(ctx, dir)
	if err != nil {
		return nil, err
	}
	files := make([]string, 0, len(snap.Files()))
	for _, a := range snap.Files() {
		files = append(files, sqlquote.String(filepath.Join(dir, a.Path)))
	}
	refQuery := fmt.Sprintf(selectAggQuery, "read_parquet(["+strings.Join(files, ", ")+"])")

	lake, err := startLakesql(ctx, dataDir)
	if err != nil {
		return nil, err
	}
	refDB, ref, err := openDuckDB(ctx, filepath.Join(env.Dir, "ref-spill"))
	if err != nil {
		lake.Close()
		return nil, err
	}
	closeAll := func() error { return errors.Join(lake.Close(), ref.Close(), refDB.Close()) }
	if err := lake.exec(ctx, "CREATE SINK agg INTO DELTA 'lake/agg'"); err != nil {
		closeAll()
		return nil, err
	}
	// Warm both sides up (open the sink, read the footers once).
	for _, q := range []struct {
		conn  *sql.Conn
		query string
	}{{lake.conn, "SELECT COUNT(*) FROM agg"}, {ref, "SELECT COUNT(*) FROM read_parquet([" + strings.Join(files, ", ") + "])"}} {
		var got int64
		if err := q.conn.QueryRowContext(ctx, q.query).Scan(&got); err != nil || got != int64(n) {
			closeAll()
			return nil, fmt.Errorf("%s: %d rows (%v), want %d", q.query, got, err, n)
		}
	}
	return sidesFuncs{
		lakesql: func(ctx context.Context) (Sample, error) {
			return timeAggregate(ctx, lake.conn, fmt.Sprintf(selectAggQuery, "agg"), n)
		},
		reference: func(ctx context.Context) (Sample, error) { return timeAggregate(ctx, ref, refQuery, n) },
		close:     closeAll,
	}, nil
}

// timeAggregate runs the query, reads every group, checks that the
// counts add up to n, and returns rows aggregated per second.
func timeAggregate(ctx context.Context, conn *sql.Conn, query string, n int) (Sample, error) {
	start := time.Now()
	rows, err := conn.QueryContext(ctx, query)
	if err != nil {
		return Sample{}, fmt.Errorf("%s: %w", query, err)
	}
	var total int64
	groups := 0
	for rows.Next() {
		var region string
		var count int64
		var sum float64
		if err := rows.Scan(&region, &count, &sum); err != nil {
			rows.Close()
			return Sample{}, err
		}
		total += count
		groups++
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return Sample{}, err
	}
	d := time.Since(start)
	if total != int64(n) || groups != min(n, len(regions)) {
		return Sample{}, fmt.Errorf("%d groups counting %d rows, want %d groups counting %d", groups, total, min(n, len(regions)), n)
	}
	return Sample{Value: float64(n) / d.Seconds()}, nil
}

// loadTable writes n rows as one epoch into a new Delta table at dir.
func loadTable(ctx context.Context, dir, spill string, n int) error {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer db.Close()
	s, err := sqlsink.New(sqlsink.Config{
		Name: "bench", Provider: deltalake.New(db, deltalake.Options{}),
		Table: catalogadapter.TableIdent{Name: dir}, Schema: rowSchema, TempDir: spill,
	})
	if err != nil {
		return err
	}
	recs := makeBatches(0, 1, n, 0)
	defer releaseBatches(recs)
	_, err = writeEpoch(ctx, s, 1, recs)
	return err
}

// openLatest reads the latest snapshot of the Delta table at dir.
func openLatest(ctx context.Context, dir string) (*delta.Snapshot, error) {
	store, err := delta.NewLocalStorage(dir)
	if err != nil {
		return nil, err
	}
	snap, err := delta.NewTable(store).Latest(ctx)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	return snap, nil
}
