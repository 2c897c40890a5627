package benchmark

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strconv"
)

// concurrentConns is the connections of the concurrent-commits workload.
const concurrentConns = 16

// ConcurrentCommits is the group-commit workload: n single-row autocommit
// INSERTs over 16 connections at once into one fresh append sink (Delta,
// local disk) per run; the figure is acknowledged commits per second over
// all connections. Since COMMITs that meet while a commit of the sink is
// in flight become one table version, 16 connections should reach many
// times the commits of one: the reference is the same n INSERTs over one
// connection of the same server, into a fresh sink of its own, and the
// target is 8 times its rate. Afterwards each sink must hold n rows with n
// distinct ids. The versions written (Table_version's growth) show the
// group sizes. Where mariadbd is installed, the reference's extra figures
// add MariaDB (InnoDB, a synced redo log per commit) under the same
// 16-connection load, and lakesql's rate over MariaDB's in the same pair.
func ConcurrentCommits() Workload {
	return Workload{
		Name: "concurrent-commits", Unit: "commits/s", Target: AtLeast(8),
		Quick: Size{N: 800, Runs: 3}, Full: Size{N: 4000, Runs: 3},
		Describe: func(n int) string {
			return fmt.Sprintf("%s single-row autocommit INSERTs over %d connections into one sink", formatCount(n), concurrentConns)
		},
		Reference: "the same INSERTs over one connection of the same server (fresh sink); " +
			"MariaDB (InnoDB, innodb_flush_log_at_trx_commit=1, no binlog) under the 16-connection load as mariadb_commits_s, when installed",
		NoWarmUp: true,
		Setup:    setupConcurrentCommits,
	}
}

func setupConcurrentCommits(ctx context.Context, env Env, n int) (Sides, error) {
	lake, err := startLakesql(ctx, filepath.Join(env.Dir, "data"))
	if err != nil {
		return nil, err
	}
	conns, err := openConns(ctx, lake.db, concurrentConns)
	if err != nil {
		return nil, errors.Join(err, lake.Close())
	}
	maria, note := startMariaDBReference(ctx, env, "mariadb_commits_s")
	var mariaConns []*sql.Conn
	if maria != nil {
		if mariaConns, err = maria.conns(ctx, concurrentConns); err != nil {
			return nil, errors.Join(err, maria.Close(), closeConns(conns), lake.Close())
		}
	}
	lakeRun, refRun := 0, 0
	var lastLakesql float64 // the run before the reference's, for the paired ratio
	return sidesFuncs{
		lakesql: func(ctx context.Context) (Sample, error) {
			lakeRun++
			s, err := sinkCommits(ctx, lake, conns, fmt.Sprintf("cc%d", lakeRun), n)
			lastLakesql = s.Value
			return s, err
		},
		reference: func(ctx context.Context) (Sample, error) {
			refRun++
			s, err := sinkCommits(ctx, lake, conns[:1], fmt.Sprintf("c1_%d", refRun), n)
			if err != nil || maria == nil {
				return s, err
			}
			table := fmt.Sprintf("cc%d", refRun)
			if _, err := mariaConns[0].ExecContext(ctx, "CREATE TABLE "+table+" "+mariadbTableSQL); err != nil {
				return Sample{}, fmt.Errorf("MariaDB: CREATE TABLE: %w", err)
			}
			wall, lat, err := autocommitInserts(ctx, mariaConns, table, n)
			if err != nil {
				return Sample{}, fmt.Errorf("MariaDB: %w", err)
			}
			if err := checkRows(ctx, mariaConns[0], table, n); err != nil {
				return Sample{}, fmt.Errorf("MariaDB: %w", err)
			}
			if _, err := mariaConns[0].ExecContext(ctx, "DROP TABLE "+table); err != nil {
				return Sample{}, fmt.Errorf("MariaDB: DROP TABLE: %w", err)
			}
			rate := float64(n) / wall.Seconds()
			f := commitFigures(lat)
			s.Extra["mariadb_commits_s"] = rate
			s.Extra["mariadb_p50_ms"], s.Extra["mariadb_p99_ms"] = f["p50_ms"], f["p99_ms"]
			s.Extra["lakesql_over_mariadb"] = lastLakesql / rate
			return s, nil
		},
		close: func() error {
			var errs []error
			if maria != nil {
				errs = append(errs, closeConns(mariaConns), maria.Close())
			}
			return errors.Join(append(errs, closeConns(conns), lake.Close())...)
		},
		note: note,
	}, nil
}

// sinkCommits creates sink, makes n autocommit INSERTs into it over conns,
// checks its rows and drops it. The figure is commits per second; the
// versions it took and the commits per version go alongside.
func sinkCommits(ctx context.Context, lake *lakesqlServer, conns []*sql.Conn, sink string, n int) (Sample, error) {
	if err := lake.exec(ctx, fmt.Sprintf("CREATE SINK %s INTO DELTA 'lake/%s' %s", sink, sink, rowColumnsSQL)); err != nil {
		return Sample{}, err
	}
	v0, c0, err := sinkStatus(ctx, lake.conn, sink)
	if err != nil {
		return Sample{}, err
	}
	wall, lat, err := autocommitInserts(ctx, conns, sink, n)
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
	maps.Copy(s.Extra, versionFigures(n, v0, c0, v1, c1))
	return s, nil
}

// sinkStatus is the sink's Table_version and Commits by SHOW SINK STATUS
// (its fourth and fifth columns): the table's version, -1 when it has
// none yet, which counts the versions auto-compaction writes too, and the
// versions the sink's own commits made since it was opened.
func sinkStatus(ctx context.Context, conn *sql.Conn, sink string) (version, commits int64, err error) {
	rs, err := conn.QueryContext(ctx, "SHOW SINK STATUS "+sink)
	if err != nil {
		return 0, 0, fmt.Errorf("SHOW SINK STATUS %s: %w", sink, err)
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil || len(cols) < 5 || cols[3] != "Table_version" || cols[4] != "Commits" {
		return 0, 0, fmt.Errorf("SHOW SINK STATUS %s: columns %v (%v), want Table_version and Commits fourth and fifth", sink, cols, err)
	}
	if !rs.Next() {
		return 0, 0, fmt.Errorf("SHOW SINK STATUS %s: no row (%v)", sink, rs.Err())
	}
	cells := make([]sql.NullString, len(cols))
	dest := make([]any, len(cols))
	for i := range cells {
		dest[i] = &cells[i]
	}
	if err := rs.Scan(dest...); err != nil {
		return 0, 0, fmt.Errorf("SHOW SINK STATUS %s: %w", sink, err)
	}
	version = -1
	if cells[3].Valid {
		if version, err = strconv.ParseInt(cells[3].String, 10, 64); err != nil {
			return 0, 0, fmt.Errorf("SHOW SINK STATUS %s: Table_version %q: %w", sink, cells[3].String, err)
		}
	}
	if commits, err = strconv.ParseInt(cells[4].String, 10, 64); err != nil {
		return 0, 0, fmt.Errorf("SHOW SINK STATUS %s: Commits %q: %w", sink, cells[4].String, err)
	}
	return version, commits, nil
}

// versionFigures are the extra figures of n commits between two sink
// statuses: the versions the table grew by (auto-compaction's included),
// the versions the sink's commits made, and commits per such version, the
// mean group size.
func versionFigures(n int, v0, c0, v1, c1 int64) map[string]float64 {
	return map[string]float64{
		"versions": float64(v1 - v0), "commit_versions": float64(c1 - c0),
		"commits_per_version": float64(n) / float64(max(c1-c0, 1)),
	}
}
