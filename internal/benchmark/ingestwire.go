package benchmark

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// wireRowsPerStatement is the rows of one INSERT in the wire workload.
const wireRowsPerStatement = 1000

// IngestWire is workload 3: n rows as INSERT statements of 1000 rows, over
// the MySQL wire through go-sql-driver/mysql, BEGIN ... COMMIT, into an
// append-mode Delta sink; the COMMIT (writing Parquet and the table
// version) is timed with the inserts. The reference gets the same
// statements into go-mysql-server with a table that discards rows.
func IngestWire() Workload {
	return Workload{
		Name: "ingest-wire", Unit: "rows/s", Target: AtLeast(0.8),
		Quick: Size{N: 100_000, Runs: 3}, Full: Size{N: 1_000_000, Runs: 3},
		Describe: func(n int) string {
			return fmt.Sprintf("%s rows as %d-row INSERTs, one transaction", formatCount(n), min(n, wireRowsPerStatement))
		},
		Reference: "the same statements into go-mysql-server with a table that discards rows",
		NoWarmUp:  true,
		Setup:     setupIngestWire,
	}
}

func setupIngestWire(ctx context.Context, env Env, n int) (Sides, error) {
	stmts := insertStatements("bench", n)
	lake, err := startLakesql(ctx, env.Dir)
	if err != nil {
		return nil, err
	}
	ref, err := startDiscard(ctx, "bench")
	if err != nil {
		lake.Close()
		return nil, err
	}
	closeAll := func() error { return errors.Join(lake.Close(), ref.Close()) }
	if err := lake.exec(ctx, "CREATE SINK bench INTO DELTA 'lake/bench' "+rowColumnsSQL); err != nil {
		closeAll()
		return nil, err
	}
	var committed int64
	return sidesFuncs{
		lakesql: func(ctx context.Context) (Sample, error) {
			d, commit, err := transaction(ctx, lake.wireClient, stmts, n)
			if err != nil {
				return Sample{}, err
			}
			committed += int64(n)
			var got int64
			if err := lake.conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM bench").Scan(&got); err != nil {
				return Sample{}, fmt.Errorf("count rows: %w", err)
			}
			if got != committed {
				return Sample{}, fmt.Errorf("the sink holds %d rows, want %d", got, committed)
			}
			return Sample{Value: float64(n) / d.Seconds(), Extra: map[string]float64{"commit_ms": ms(commit)}}, nil
		},
		reference: func(ctx context.Context) (Sample, error) {
			before := ref.table.rows.Load()
			d, _, err := transaction(ctx, ref.wireClient, stmts, n)
			if err != nil {
				return Sample{}, err
			}
			if got := ref.table.rows.Load() - before; got != int64(n) {
				return Sample{}, fmt.Errorf("the discarding table was handed %d rows, want %d", got, n)
			}
			return Sample{Value: float64(n) / d.Seconds()}, nil
		},
		close: closeAll,
	}, nil
}

// transaction runs BEGIN, stmts (insertStatements of rows in all), COMMIT,
// checking each INSERT's rows affected, and returns the whole time and the
// COMMIT's.
func transaction(ctx context.Context, c *wireClient, stmts []string, rows int) (total, commit time.Duration, err error) {
	start := time.Now()
	if err := c.exec(ctx, "BEGIN"); err != nil {
		return 0, 0, err
	}
	for i, q := range stmts {
		res, err := c.conn.ExecContext(ctx, q)
		if err != nil {
			c.conn.ExecContext(ctx, "ROLLBACK")
			return 0, 0, fmt.Errorf("INSERT %d of %d: %w", i+1, len(stmts), err)
		}
		want := int64(min(wireRowsPerStatement, rows-i*wireRowsPerStatement))
		if n, err := res.RowsAffected(); err != nil || n != want {
			c.conn.ExecContext(ctx, "ROLLBACK")
			return 0, 0, fmt.Errorf("INSERT %d of %d: %d rows affected (%v), want %d", i+1, len(stmts), n, err, want)
		}
	}
	t := time.Now()
	if err := c.exec(ctx, "COMMIT"); err != nil {
		return 0, 0, err
	}
	return time.Since(start), time.Since(t), nil
}

// insertStatements builds INSERT INTO table VALUES statements holding n
// rows (ids 0 to n-1) in all, wireRowsPerStatement per statement.
func insertStatements(table string, n int) []string {
	var out []string
	var sb strings.Builder
	for first := 0; first < n; first += wireRowsPerStatement {
		sb.Reset()
		sb.WriteString("INSERT INTO " + table + " VALUES ")
		for id := first; id < min(n, first+wireRowsPerStatement); id++ {
			if id > first {
				sb.WriteByte(',')
			}
			sb.WriteString(valuesTuple(int64(id)))
		}
		out = append(out, sb.String())
	}
	return out
}

// valuesTuple is row id of rowSchema as SQL: the same values makeBatches
// gives it.
func valuesTuple(id int64) string {
	ts := time.UnixMicro(tsBase + id*1000).UTC()
	return fmt.Sprintf("(%d, %g, '%s', '%s')", id, rowAmount(id, 0), regions[id%int64(len(regions))],
		ts.Format("2006-01-02 15:04:05.000000"))
}
