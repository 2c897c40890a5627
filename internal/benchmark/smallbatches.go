package benchmark

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
)

// SmallBatches is the small-transactions workload of pg_ducklake's
// benchmark: n rows in transactions of 10 (BEGIN, one 10-row INSERT,
// COMMIT) over one connection into a fresh append sink per run; the figure
// is rows per second. One connection means no group commit: every
// transaction is a table version of its own. The reference, present on
// every machine, is DuckDB doing the same transactions into a table of a
// fresh database file in this process (its WAL synced at each COMMIT, no
// wire in between). Where mariadbd is installed, the reference's extra
// figures add MariaDB (InnoDB, a synced redo log per commit) over the wire
// as lakesql is, the row store such a client would otherwise use, and
// lakesql's rate over MariaDB's in the same pair.
func SmallBatches() Workload {
	return Workload{
		Name: "small-batches", Unit: "rows/s", Target: AtLeast(0.5),
		Quick: Size{N: 20_000, Runs: 3}, Full: Size{N: 300_000, Runs: 3},
		Describe: func(n int) string {
			return fmt.Sprintf("%s rows in %d-row transactions (BEGIN, one INSERT, COMMIT) over one connection", formatCount(n), smallBatchRows)
		},
		Reference: "DuckDB doing the same transactions into a table of a database file, in process; " +
			"MariaDB (InnoDB, innodb_flush_log_at_trx_commit=1, no binlog) over the wire as mariadb_rows_s, when installed",
		NoWarmUp: true,
		Setup:    setupSmallBatches,
	}
}

func setupSmallBatches(ctx context.Context, env Env, n int) (Sides, error) {
	lake, err := startLakesql(ctx, filepath.Join(env.Dir, "data"))
	if err != nil {
		return nil, err
	}
	maria, note := startMariaDBReference(ctx, env, "mariadb_rows_s")
	var mariaConn []*sql.Conn
	if maria != nil {
		if mariaConn, err = maria.conns(ctx, 1); err != nil {
			return nil, errors.Join(err, maria.Close(), lake.Close())
		}
	}
	lakeRun, refRun := 0, 0
	var lastLakesql float64 // the run before the reference's, for the paired ratio
	return sidesFuncs{
		lakesql: func(ctx context.Context) (Sample, error) {
			lakeRun++
			sink := fmt.Sprintf("sb%d", lakeRun)
			if err := lake.exec(ctx, fmt.Sprintf("CREATE SINK %s INTO DELTA 'lake/%s' %s", sink, sink, rowColumnsSQL)); err != nil {
				return Sample{}, err
			}
			v0, c0, err := sinkStatus(ctx, lake.conn, sink)
			if err != nil {
				return Sample{}, err
			}
			wall, lat, err := smallBatches(ctx, lake.conn, sink, n)
			if err != nil {
				return Sample{}, err
			}
			if err := checkRows(ctx, lake.conn, sink, n); err != nil {
				return Sample{}, err
			}
			v1, c1, err := sinkStatus(ctx, lake.conn, sink)
			if err != nil {
				return Sample{}, err
			}
			if err := lake.exec(ctx, "DROP SINK "+sink); err != nil {
				return Sample{}, err
			}
			tenths := tenthsFigures(lat) // before commitFigures sorts lat
			s := Sample{Value: float64(n) / wall.Seconds(), Extra: commitFigures(lat)}
			maps.Copy(s.Extra, tenths)
			maps.Copy(s.Extra, versionFigures(n/smallBatchRows, v0, c0, v1, c1))
			lastLakesql = s.Value
			return s, nil
		},
		reference: func(ctx context.Context) (Sample, error) {
			refRun++
			s, err := duckDBSmallBatches(ctx, filepath.Join(env.Dir, fmt.Sprintf("duck%d", refRun)), n)
			if err != nil || maria == nil {
				return s, err
			}
			table := fmt.Sprintf("sb%d", refRun)
			c := mariaConn[0]
			if _, err := c.ExecContext(ctx, "CREATE TABLE "+table+" "+mariadbTableSQL); err != nil {
				return Sample{}, fmt.Errorf("MariaDB: CREATE TABLE: %w", err)
			}
			wall, lat, err := smallBatches(ctx, c, table, n)
			if err != nil {
				return Sample{}, fmt.Errorf("MariaDB: %w", err)
			}
			if err := checkRows(ctx, c, table, n); err != nil {
				return Sample{}, fmt.Errorf("MariaDB: %w", err)
			}
			if _, err := c.ExecContext(ctx, "DROP TABLE "+table); err != nil {
				return Sample{}, fmt.Errorf("MariaDB: DROP TABLE: %w", err)
			}
			rate := float64(n) / wall.Seconds()
			f := commitFigures(lat)
			s.Extra["mariadb_rows_s"] = rate
			s.Extra["mariadb_p50_ms"], s.Extra["mariadb_p99_ms"] = f["p50_ms"], f["p99_ms"]
			s.Extra["lakesql_over_mariadb"] = lastLakesql / rate
			return s, nil
		},
		close: func() error {
			var errs []error
			if maria != nil {
				errs = append(errs, closeConns(mariaConn), maria.Close())
			}
			return errors.Join(append(errs, lake.Close())...)
		},
		note: note,
	}, nil
}

// duckDBSmallBatches runs the small-batches load on a DuckDB database
// file made in dir (removed afterwards).
func duckDBSmallBatches(ctx context.Context, dir string, n int) (Sample, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Sample{}, err
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("duckdb", filepath.Join(dir, "bench.duckdb"))
	if err != nil {
		return Sample{}, fmt.Errorf("open DuckDB file: %w", err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return Sample{}, fmt.Errorf("connect to DuckDB: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "CREATE TABLE t "+rowColumnsSQL); err != nil {
		return Sample{}, fmt.Errorf("DuckDB: CREATE TABLE: %w", err)
	}
	wall, lat, err := smallBatches(ctx, conn, "t", n)
	if err != nil {
		return Sample{}, fmt.Errorf("DuckDB: %w", err)
	}
	if err := checkRows(ctx, conn, "t", n); err != nil {
		return Sample{}, fmt.Errorf("DuckDB: %w", err)
	}
	return Sample{Value: float64(n) / wall.Seconds(), Extra: commitFigures(lat)}, nil
}
