package benchmark

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/sqlsink"
)

// smallFilesQuery is the query of the small-files workload, on every side.
const smallFilesQuery = "SELECT count(*), sum(v) FROM %s"

// SmallFiles is the small-files workload: n single-row autocommit INSERTs
// over the wire into a sink with auto-compaction on (the default), then
// SELECT count(*), sum(v) over the wire, once the background compaction
// has caught up. The reference is the same rows in one file: a sink
// loaded by one INSERT of all n rows, queried over the same wire, so that
// the ratio is the cost of the layout alone (DuckDB reading that file
// directly, without the wire, is in the reference's extra figures,
// duckdb_ms). The same n commits into a sink with auto_compact = false
// give the figure without auto-compaction: no_auto_ms, and its paired
// ratio to the reference, no_auto_ratio.
func SmallFiles() Workload {
	return Workload{
		Name: "small-files", Unit: "ms", Target: AtMost(1.5),
		Quick: Size{N: 1_000, Runs: 5}, Full: Size{N: 10_000, Runs: 5},
		Describe: func(n int) string {
			return fmt.Sprintf("SELECT count(*), sum(v) after %s single-row commits with auto-compaction, over the wire", formatCount(n))
		},
		Reference: "the same rows in one file (one INSERT), queried over the same wire",
		Setup:     setupSmallFiles,
	}
}

func setupSmallFiles(ctx context.Context, env Env, n int) (Sides, error) {
	dataDir := filepath.Join(env.Dir, "data")
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
	fail := func(err error) (Sides, error) {
		closeAll()
		return nil, err
	}
	const cols = "(id BIGINT NOT NULL, v BIGINT)"
	if err := lake.exec(ctx,
		"CREATE SINK sf_auto INTO DELTA 'lake/sf_auto' "+cols,
		"CREATE SINK sf_plain INTO DELTA 'lake/sf_plain' "+cols+" WITH (auto_compact = false)",
		"CREATE SINK sf_one INTO DELTA 'lake/sf_one' "+cols+" WITH (auto_compact = false)",
	); err != nil {
		return fail(err)
	}
	for _, sink := range []string{"sf_auto", "sf_plain"} {
		fmt.Fprintf(env.Log, "small-files: %s single-row commits into %s\n", formatCount(n), sink)
		for i := range n {
			if err := lake.exec(ctx, fmt.Sprintf("INSERT INTO %s VALUES (%d, %d)", sink, i, i%1000)); err != nil {
				return fail(err)
			}
		}
	}
	// Every row in one transaction: one commit, one file.
	if err := insertValues(ctx, lake, "sf_one", n); err != nil {
		return fail(err)
	}
	autoFiles, err := awaitCompaction(ctx, filepath.Join(dataDir, "lake", "sf_auto"), env)
	if err != nil {
		return fail(err)
	}
	plain, err := openLatest(ctx, filepath.Join(dataDir, "lake", "sf_plain"))
	if err != nil {
		return fail(err)
	}
	one, err := openLatest(ctx, filepath.Join(dataDir, "lake", "sf_one"))
	if err != nil {
		return fail(err)
	}
	if len(one.Files()) != 1 {
		return fail(fmt.Errorf("the one-file sink holds %d files", len(one.Files())))
	}
	oneFile := sqlquote.String(filepath.Join(dataDir, "lake", "sf_one", one.Files()[0].Path))
	wantSum := int64(0)
	for i := range n {
		wantSum += int64(i % 1000)
	}
	count := func(conn *sql.Conn, from string) (time.Duration, error) {
		start := time.Now()
		// SUM of integers is a DOUBLE over the wire (README, SELECT), a
		// HUGEINT in DuckDB; below 2^53 both are exact as a float64.
		var c int64
		var s float64
		q := fmt.Sprintf(smallFilesQuery, from)
		if err := conn.QueryRowContext(ctx, q).Scan(&c, &s); err != nil {
			return 0, fmt.Errorf("%s: %w", q, err)
		}
		d := time.Since(start)
		if c != int64(n) || s != float64(wantSum) {
			return 0, fmt.Errorf("%s: count %d, sum %g; want %d and %d", q, c, s, n, wantSum)
		}
		return d, nil
	}
	var lastNoAuto time.Duration
	return sidesFuncs{
		lakesql: func(ctx context.Context) (Sample, error) {
			d, err := count(lake.conn, "sf_auto")
			if err != nil {
				return Sample{}, err
			}
			if lastNoAuto, err = count(lake.conn, "sf_plain"); err != nil {
				return Sample{}, err
			}
			return Sample{Value: ms(d), Extra: map[string]float64{
				"no_auto_ms": ms(lastNoAuto), "live_files": float64(autoFiles), "no_auto_live_files": float64(len(plain.Files())),
			}}, nil
		},
		reference: func(ctx context.Context) (Sample, error) {
			d, err := count(lake.conn, "sf_one")
			if err != nil {
				return Sample{}, err
			}
			direct, err := count(ref, "read_parquet("+oneFile+")")
			if err != nil {
				return Sample{}, err
			}
			s := Sample{Value: ms(d), Extra: map[string]float64{"duckdb_ms": ms(direct)}}
			if lastNoAuto > 0 {
				s.Extra["no_auto_ratio"] = float64(lastNoAuto) / float64(d)
			}
			return s, nil
		},
		close: closeAll,
	}, nil
}

// insertValues inserts rows (i, i % 1000) for i in 0..n-1 into sink in
// one transaction of 1,000-row INSERTs: one commit.
func insertValues(ctx context.Context, lake *lakesqlServer, sink string, n int) error {
	stmts := []string{"BEGIN"}
	for lo := 0; lo < n; lo += 1000 {
		q := "INSERT INTO " + sink + " VALUES "
		for i := lo; i < min(n, lo+1000); i++ {
			if i > lo {
				q += ", "
			}
			q += fmt.Sprintf("(%d, %d)", i, i%1000)
		}
		stmts = append(stmts, q)
	}
	return lake.exec(ctx, append(stmts, "COMMIT")...)
}

// awaitCompaction waits until the background compaction of the Delta
// table at dir has caught up: fewer live files than the auto-compaction
// threshold (a run leaves its output and at most threshold-1 small files
// after it). It returns the live files then; after two minutes it gives
// up waiting and returns what there is, which the figure then shows.
func awaitCompaction(ctx context.Context, dir string, env Env) (int, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		snap, err := openLatest(ctx, dir)
		if err != nil {
			return 0, err
		}
		files := len(snap.Files())
		if files < sqlsink.DefaultCompactMinFiles || time.Now().After(deadline) {
			if files >= sqlsink.DefaultCompactMinFiles {
				fmt.Fprintf(env.Log, "small-files: auto-compaction left %d live files after two minutes\n", files)
			}
			return files, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
