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

// upsertShare is the table's rows per upserted key: 100k keys in 10M rows.
const upsertShare = 100

// Upsert is workload 6: n/100 upserts whose keys are spread evenly over an
// n-row table (so every file holds some), in one epoch through an
// upsert-mode sqlsink into Delta: copy-on-write rewrites every file. The
// reference is DuckDB doing the rewrite itself over the same files: the
// table's rows anti-joined with the upserts, plus the upserts, COPY to one
// Parquet file. lakesql also collapses the epoch per key, finds the files
// that hold the keys and commits; the reference does none of that.
func Upsert() Workload {
	return Workload{
		Name: "upsert", Unit: "upserts/s", Target: AtLeast(0.7),
		Quick: Size{N: 1_000_000, Runs: 3}, Full: Size{N: 10_000_000, Runs: 5},
		Describe: func(n int) string {
			return fmt.Sprintf("%s upserts spread over a %s-row table, one epoch", formatCount(n/upsertShare), formatCount(n))
		},
		Reference: "DuckDB COPY (SELECT * FROM read_parquet(table files) ANTI JOIN upserts USING (id) UNION ALL SELECT * FROM upserts) TO parquet",
		Setup:     setupUpsert,
	}
}

func setupUpsert(ctx context.Context, env Env, n int) (Sides, error) {
	if n < upsertShare {
		return nil, fmt.Errorf("upsert needs at least %d rows, got %d", upsertShare, n)
	}
	keys := n / upsertShare
	dir := filepath.Join(env.Dir, "orders")
	sinkDB, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, err
	}
	s, err := sqlsink.New(sqlsink.Config{
		Name: "bench", Provider: deltalake.New(sinkDB, deltalake.Options{}),
		Table: catalogadapter.TableIdent{Name: dir}, Schema: rowSchema,
		Mode: sqlsink.ModeUpsert, Key: []string{"id"}, TempDir: filepath.Join(env.Dir, "spill"),
	})
	if err != nil {
		sinkDB.Close()
		return nil, err
	}
	if err := s.Open(ctx); err != nil {
		sinkDB.Close()
		return nil, fmt.Errorf("open sink: %w", err)
	}
	refDB, ref, err := openDuckDB(ctx, filepath.Join(env.Dir, "ref-spill"))
	if err != nil {
		s.Close()
		sinkDB.Close()
		return nil, err
	}
	closeAll := func() error { return errors.Join(s.Close(), sinkDB.Close(), ref.Close(), refDB.Close()) }

	fmt.Fprintf(env.Log, "upsert: loading %s rows\n", formatCount(n))
	recs := makeBatches(0, 1, n, 0)
	_, err = epoch(ctx, s, 1, recs)
	releaseBatches(recs)
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("load the table: %w", err)
	}
	store, err := delta.NewLocalStorage(dir)
	if err != nil {
		closeAll()
		return nil, err
	}
	// Keys 37, 137, 237, ...: one in every upsertShare rows, in every file.
	const first = 37
	version := 1
	return sidesFuncs{
		lakesql: func(ctx context.Context) (Sample, error) {
			recs := makeBatches(first, upsertShare, keys, version+1)
			defer releaseBatches(recs)
			start := time.Now()
			res, err := epoch(ctx, s, int64(version+1), recs)
			if err != nil {
				return Sample{}, err
			}
			d := time.Since(start)
			version++
			if res.Version != int64(version) {
				return Sample{}, fmt.Errorf("commit result %+v, want version %d", res, version)
			}
			return Sample{Value: float64(keys) / d.Seconds()}, nil
		},
		reference: func(ctx context.Context) (Sample, error) {
			snap, err := delta.NewTable(store).Latest(ctx)
			if err != nil {
				return Sample{}, err
			}
			files := make([]string, 0, len(snap.Files()))
			for _, a := range snap.Files() {
				files = append(files, sqlquote.String(filepath.Join(dir, a.Path)))
			}
			recs := makeBatches(first, upsertShare, keys, version+1)
			defer releaseBatches(recs)
			out := filepath.Join(env.Dir, "rewrite.parquet")
			defer os.Remove(out)
			start := time.Now()
			// The Arrow view can be scanned once, and the rewrite reads the
			// upserts twice: they go into a table first, as the sink's
			// buffer holds them.
			drop, err := registerArrow(ref, "upserts_arrow", rowSchema, recs)
			if err != nil {
				return Sample{}, err
			}
			_, err = ref.ExecContext(ctx, "CREATE OR REPLACE TEMP TABLE upserts AS SELECT * FROM upserts_arrow")
			if derr := drop(); err == nil {
				err = derr
			}
			if err != nil {
				return Sample{}, fmt.Errorf("load upserts: %w", err)
			}
			q := fmt.Sprintf("COPY (SELECT * FROM read_parquet([%s]) ANTI JOIN upserts USING (id) UNION ALL SELECT * FROM upserts) TO %s (FORMAT parquet)",
				strings.Join(files, ", "), sqlquote.String(out))
			var rows int64
			if err := ref.QueryRowContext(ctx, q).Scan(&rows); err != nil {
				return Sample{}, fmt.Errorf("rewrite: %w", err)
			}
			d := time.Since(start)
			if _, err := ref.ExecContext(ctx, "DROP TABLE upserts"); err != nil {
				return Sample{}, err
			}
			if rows != int64(n) {
				return Sample{}, fmt.Errorf("the rewrite holds %d rows, want %d", rows, n)
			}
			return Sample{Value: float64(keys) / d.Seconds()}, nil
		},
		close: closeAll,
	}, nil
}
