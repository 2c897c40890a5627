package benchmark

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/deltalake"
	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/sqlsink"
)

// IngestArrow is workload 1 (and 2 when partitioned): n rows as one epoch
// through sqlsink into a new Delta table, against DuckDB writing the same
// Arrow batches to Parquet with COPY. Both sides get the same pre-built
// batches, so building them is never timed, and both time everything from
// opening DuckDB on: the sink also opens and creates the table, collects
// statistics and writes the log, which the reference does not.
func IngestArrow(partitioned bool) Workload {
	w := Workload{
		Name: "ingest-arrow", Unit: "rows/s", Target: AtLeast(0.85),
		Quick: Size{N: 1_000_000, Runs: 3}, Full: Size{N: 10_000_000, Runs: 5},
		Describe:  func(n int) string { return formatCount(n) + " rows, one epoch" },
		Reference: "DuckDB COPY (SELECT * FROM arrow_view) TO 'x.parquet' (FORMAT parquet)",
	}
	if partitioned {
		w.Name = "ingest-arrow-partitioned"
		w.Describe = func(n int) string { return formatCount(n) + " rows, one epoch, PARTITION BY region (16 values)" }
		w.Reference = "DuckDB COPY (SELECT * FROM arrow_view) TO 'dir' (FORMAT parquet, PARTITION_BY (region))"
	}
	w.Setup = func(ctx context.Context, env Env, n int) (Sides, error) {
		recs := makeBatches(0, 1, n, 0)
		run := 0
		return sidesFuncs{
			lakesql: func(ctx context.Context) (Sample, error) {
				run++
				dir := filepath.Join(env.Dir, fmt.Sprintf("t%d", run))
				defer os.RemoveAll(dir)
				var parts []string
				if partitioned {
					parts = []string{"region"}
				}
				d, err := ingestSink(ctx, filepath.Join(dir, "orders"), filepath.Join(dir, "spill"), parts, recs)
				if err != nil {
					return Sample{}, err
				}
				return Sample{Value: float64(n) / d.Seconds()}, nil
			},
			reference: func(ctx context.Context) (Sample, error) {
				out := filepath.Join(env.Dir, "copy")
				defer os.RemoveAll(out)
				d, err := ingestDuckDBCopy(ctx, out, partitioned, recs)
				if err != nil {
					return Sample{}, err
				}
				return Sample{Value: float64(n) / d.Seconds()}, nil
			},
			close: func() error { releaseBatches(recs); return nil },
		}, nil
	}
	return w
}

// ingestSink writes recs as epoch 1 of a new Delta table at dir, with the
// sink's defaults, and returns how long it took from opening DuckDB to
// closing the sink.
func ingestSink(ctx context.Context, dir, spill string, partitionBy []string, recs []arrow.RecordBatch) (time.Duration, error) {
	start := time.Now()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	s, err := sqlsink.New(sqlsink.Config{
		Name: "bench", Provider: deltalake.New(db, deltalake.Options{}),
		Table:  catalogadapter.TableIdent{Name: dir},
		Schema: rowSchema, PartitionColumns: partitionBy, TempDir: spill,
	})
	if err != nil {
		return 0, err
	}
	res, err := writeEpoch(ctx, s, 1, recs)
	if err != nil {
		return 0, err
	}
	d := time.Since(start)
	if want := countRows(recs); res.Rows != want || res.Version != 1 {
		return 0, fmt.Errorf("commit result %+v, want version 1 with %d rows", res, want)
	}
	return d, nil
}

// writeEpoch opens s, writes recs as epoch e and closes s.
func writeEpoch(ctx context.Context, s *sqlsink.Sink, e int64, recs []arrow.RecordBatch) (sqlsink.CommitResult, error) {
	if err := s.Open(ctx); err != nil {
		return sqlsink.CommitResult{}, fmt.Errorf("open sink: %w", err)
	}
	res, err := epoch(ctx, s, e, recs)
	if cerr := s.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close sink: %w", cerr)
	}
	return res, err
}

// epoch writes recs as epoch e of an open sink, rolling back on failure.
func epoch(ctx context.Context, s *sqlsink.Sink, e int64, recs []arrow.RecordBatch) (sqlsink.CommitResult, error) {
	fail := func(step string, err error) (sqlsink.CommitResult, error) {
		s.RollbackEpoch(context.WithoutCancel(ctx), e)
		return sqlsink.CommitResult{}, fmt.Errorf("epoch %d: %s: %w", e, step, err)
	}
	if err := s.BeginEpoch(ctx, e); err != nil {
		return sqlsink.CommitResult{}, fmt.Errorf("epoch %d: begin: %w", e, err)
	}
	for _, r := range recs {
		if err := s.Write(ctx, r); err != nil {
			return fail("write", err)
		}
	}
	if err := s.PreCommit(ctx, e); err != nil {
		return fail("precommit", err)
	}
	res, err := s.CommitEpoch(ctx, e)
	if err != nil {
		return res, fmt.Errorf("epoch %d: commit: %w", e, err)
	}
	return res, nil
}

// ingestDuckDBCopy is the reference: a fresh DuckDB with the sink's memory
// limit, the batches as one Arrow view, one COPY to Parquet at out (a file,
// or a directory of region=... folders when partitioned).
func ingestDuckDBCopy(ctx context.Context, out string, partitioned bool, recs []arrow.RecordBatch) (time.Duration, error) {
	start := time.Now()
	db, conn, err := openDuckDB(ctx, out+"-spill")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	defer conn.Close()
	defer os.RemoveAll(out + "-spill")
	drop, err := registerArrow(conn, "v", rowSchema, recs)
	if err != nil {
		return 0, err
	}
	opts := "FORMAT parquet"
	if partitioned {
		opts += ", PARTITION_BY (region)"
	}
	var n int64
	q := "COPY (SELECT * FROM v) TO " + sqlquote.String(out) + " (" + opts + ")"
	if err := conn.QueryRowContext(ctx, q).Scan(&n); err != nil {
		drop()
		return 0, fmt.Errorf("%s: %w", q, err)
	}
	d := time.Since(start)
	if err := drop(); err != nil {
		return 0, err
	}
	if want := countRows(recs); n != want {
		return 0, fmt.Errorf("COPY wrote %d rows, want %d", n, want)
	}
	return d, nil
}
