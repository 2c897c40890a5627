package benchmark

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// CommitLatency is workload 4: n single-row autocommit INSERTs over the
// wire, each one a Delta commit, into a fresh sink per run. The figure is
// commits per second; p50 and p99 go alongside. The reference is the
// floor of a durable commit on this disk: one small Parquet file written
// and fsynced, plus one put-if-absent JSON log entry (temp file, fsync,
// link, directory fsync: tableformat/delta's LocalStorage), directly,
// without lakesql. Alongside the reference, the same commits with the
// Parquet file written by DuckDB (an Arrow view of the row, COPY with
// RETURN_STATS) show the floor of an engine that writes through DuckDB, as
// lakesql does: duckdb_commits_s in the reference's extra figures.
func CommitLatency() Workload {
	return Workload{
		Name: "commit-latency", Unit: "commits/s", Target: AtLeast(0.5),
		Quick: Size{N: 200, Runs: 3}, Full: Size{N: 2000, Runs: 3},
		Describe: func(n int) string {
			return fmt.Sprintf("%s single-row autocommit INSERTs over the wire", formatCount(n))
		},
		Reference: "writing one 1-row Parquet file (fsync) plus one put-if-absent JSON log entry (fsync) per commit, directly",
		NoWarmUp:  true,
		Setup:     setupCommitLatency,
	}
}

func setupCommitLatency(ctx context.Context, env Env, n int) (Sides, error) {
	lake, err := startLakesql(ctx, filepath.Join(env.Dir, "data"))
	if err != nil {
		return nil, err
	}
	duckDB, duck, err := openDuckDB(ctx, filepath.Join(env.Dir, "duckdb-tmp"))
	if err != nil {
		lake.Close()
		return nil, err
	}
	lakeRun, refRun := 0, 0
	return sidesFuncs{
		lakesql: func(ctx context.Context) (Sample, error) {
			lakeRun++
			sink := fmt.Sprintf("c%d", lakeRun)
			if err := lake.exec(ctx, fmt.Sprintf("CREATE SINK %s INTO DELTA 'lake/%s' %s", sink, sink, rowColumnsSQL)); err != nil {
				return Sample{}, err
			}
			lat := make([]time.Duration, n)
			for i := range n {
				q := "INSERT INTO " + sink + " VALUES " + valuesTuple(int64(i))
				start := time.Now()
				if _, err := lake.conn.ExecContext(ctx, q); err != nil {
					return Sample{}, fmt.Errorf("autocommit INSERT %d: %w", i+1, err)
				}
				lat[i] = time.Since(start)
			}
			var got int64
			if err := lake.conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+sink).Scan(&got); err != nil {
				return Sample{}, fmt.Errorf("count rows: %w", err)
			}
			if got != int64(n) {
				return Sample{}, fmt.Errorf("sink %s holds %d rows, want %d", sink, got, n)
			}
			if err := lake.exec(ctx, "DROP SINK "+sink); err != nil {
				return Sample{}, err
			}
			return latencySample(lat), nil
		},
		reference: func(ctx context.Context) (Sample, error) {
			refRun++
			dir := filepath.Join(env.Dir, fmt.Sprintf("direct%d", refRun))
			defer os.RemoveAll(dir)
			lat, err := directCommits(ctx, dir, n, directCommit)
			if err != nil {
				return Sample{}, err
			}
			s := latencySample(lat)
			dir = filepath.Join(env.Dir, fmt.Sprintf("duckdb%d", refRun))
			defer os.RemoveAll(dir)
			lat, err = directCommits(ctx, dir, n, func(ctx context.Context, store *delta.LocalStorage, dir string, id int64) error {
				return duckDBCommit(ctx, duck, store, dir, id)
			})
			if err != nil {
				return Sample{}, err
			}
			s.Extra["duckdb_commits_s"] = latencySample(lat).Value
			return s, nil
		},
		close: func() error { return errors.Join(duck.Close(), duckDB.Close(), lake.Close()) },
	}, nil
}

// latencySample is commits per second over the runs' total, with the p50
// and p99 of the single commits.
func latencySample(lat []time.Duration) Sample {
	var total time.Duration
	for _, d := range lat {
		total += d
	}
	return Sample{Value: float64(len(lat)) / total.Seconds(), Extra: map[string]float64{
		"p50_ms": ms(quantile(lat, .50)), "p99_ms": ms(quantile(lat, .99)),
	}}
}

// directCommits makes n commits with commit into dir and times each.
func directCommits(ctx context.Context, dir string, n int,
	commit func(ctx context.Context, store *delta.LocalStorage, dir string, id int64) error) ([]time.Duration, error) {
	store, err := delta.NewLocalStorage(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
		return nil, err
	}
	lat := make([]time.Duration, n)
	for i := range n {
		start := time.Now()
		if err := commit(ctx, store, dir, int64(i)); err != nil {
			return nil, fmt.Errorf("commit %d: %w", i+1, err)
		}
		lat[i] = time.Since(start)
	}
	return lat, nil
}

// directCommit writes row id as one Parquet file, synced, and a log entry
// adding it, with a txn and commitInfo as lakesql writes them.
func directCommit(ctx context.Context, store *delta.LocalStorage, dir string, id int64) error {
	recs := makeBatches(id, 1, 1, 0)
	defer releaseBatches(recs)
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(rowSchema, &buf,
		parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy)), pqarrow.DefaultWriterProps())
	if err != nil {
		return err
	}
	if err := fw.Write(recs[0]); err != nil {
		return err
	}
	if err := fw.Close(); err != nil {
		return err
	}
	name := fmt.Sprintf("part-%08d.parquet", id)
	if err := writeSynced(filepath.Join(dir, name), buf.Bytes()); err != nil {
		return err
	}
	return putAddEntry(ctx, store, name, int64(buf.Len()), id)
}

// duckDBCommit is directCommit with the Parquet file written by DuckDB
// from an Arrow view of the row, with its statistics returned, then synced.
func duckDBCommit(ctx context.Context, conn *sql.Conn, store *delta.LocalStorage, dir string, id int64) error {
	recs := makeBatches(id, 1, 1, 0)
	defer releaseBatches(recs)
	drop, err := registerArrow(conn, "commit_row", rowSchema, recs)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("part-%08d.parquet", id)
	path := filepath.Join(dir, name)
	var (
		file                string
		count, size, footer uint64
		stats               any
	)
	err = conn.QueryRowContext(ctx, "COPY (SELECT * FROM commit_row) TO "+sqlquote.String(path)+
		" (FORMAT parquet, RETURN_STATS, COMPRESSION snappy)").Scan(&file, &count, &size, &footer, &stats, new(any))
	if derr := drop(); err == nil {
		err = derr
	}
	if err != nil {
		return fmt.Errorf("DuckDB COPY: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	serr := f.Sync()
	if err := errors.Join(serr, f.Close()); err != nil {
		return err
	}
	return putAddEntry(ctx, store, name, int64(size), id)
}

// putAddEntry commits version id adding the file name, with a txn and
// commitInfo as lakesql writes them.
func putAddEntry(ctx context.Context, store *delta.LocalStorage, name string, size, id int64) error {
	now := time.Now().UnixMilli()
	entry, err := delta.EncodeActions([]delta.Action{
		{CommitInfo: map[string]any{"timestamp": now, "operation": "WRITE", "engineInfo": "bench"}},
		{Txn: &delta.Txn{AppID: "bench", Version: id + 1, LastUpdated: &now}},
		{Add: &delta.Add{Path: name, Size: size, ModificationTime: now, DataChange: true,
			Stats: fmt.Sprintf(`{"numRecords":1,"minValues":{"id":%d},"maxValues":{"id":%d},"nullCount":{"id":0}}`, id, id)}},
	})
	if err != nil {
		return err
	}
	return store.PutIfAbsent(ctx, fmt.Sprintf("_delta_log/%020d.json", id), entry)
}

// writeSynced creates path with data and fsyncs it.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
