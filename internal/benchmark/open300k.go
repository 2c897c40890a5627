package benchmark

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/tableformat/delta"
)

const (
	// bigLogColumns is the width of the table of the open-300k workload.
	bigLogColumns = 100
	// bigLogAddsPerCommit is the add actions of one commit file.
	bigLogAddsPerCommit = 1000
	// bigLogRemoveEvery: each commit after the first removes every
	// bigLogRemoveEvery-th file the commit before it added.
	bigLogRemoveEvery = 10
)

// bigLogReplayQuery is the reference of the open-300k workload: DuckDB
// reads every commit file as JSON objects and counts the distinct add
// paths that no remove names. %s is the commit files' glob.
const bigLogReplayQuery = `WITH a AS (
  SELECT json_extract_string(json, '$.add.path') AS added, json_extract_string(json, '$.remove.path') AS removed
  FROM read_ndjson_objects(%s))
SELECT count(*) FROM (SELECT added FROM a WHERE added IS NOT NULL EXCEPT SELECT removed FROM a WHERE removed IS NOT NULL)`

// Open300k is the open-300k workload (issue 20): open the latest snapshot
// of a Delta table whose log, without a checkpoint, holds n add actions of
// a 100-column partitioned table with statistics, against DuckDB
// replaying the same commit files (read_ndjson_objects, the distinct add
// paths minus the removes). Both are times: ours should be at most the
// reference's.
func Open300k() Workload {
	return Workload{
		Name: "open-300k", Unit: "ms", Target: AtMost(1),
		Quick: Size{N: 3_000, Runs: 3}, Full: Size{N: 300_000, Runs: 5},
		Describe: func(n int) string {
			return fmt.Sprintf("open the latest snapshot of a log of %s add actions (%d-column partitioned table, stats, %d adds a commit, no checkpoint)",
				formatCount(n), bigLogColumns, bigLogAddsPerCommit)
		},
		Reference: "DuckDB: read_ndjson_objects over the commit files, distinct add paths EXCEPT remove paths",
		Setup:     setupOpen300k,
	}
}

func setupOpen300k(ctx context.Context, env Env, n int) (Sides, error) {
	dir := filepath.Join(env.Dir, "big")
	fmt.Fprintf(env.Log, "open-300k: writing a log of %s add actions\n", formatCount(n))
	store, live, logBytes, err := BigLogTable(ctx, dir, n)
	if err != nil {
		return nil, fmt.Errorf("write the log: %w", err)
	}
	fmt.Fprintf(env.Log, "open-300k: %.1f MB of JSON log, %d live files\n", float64(logBytes)/1e6, live)
	db, conn, err := openDuckDB(ctx, filepath.Join(env.Dir, "ref-spill"))
	if err != nil {
		return nil, err
	}
	query := fmt.Sprintf(bigLogReplayQuery, sqlquote.String(filepath.Join(dir, "_delta_log", "*.json")))
	extra := map[string]float64{"log_mb": float64(logBytes) / 1e6}
	return sidesFuncs{
		lakesql: func(ctx context.Context) (Sample, error) {
			start := time.Now()
			snap, err := delta.NewTable(store).Latest(ctx)
			if err != nil {
				return Sample{}, err
			}
			d := time.Since(start)
			if len(snap.Files()) != live {
				return Sample{}, fmt.Errorf("opened %d live files, want %d", len(snap.Files()), live)
			}
			return Sample{Value: ms(d), Extra: extra}, nil
		},
		reference: func(ctx context.Context) (Sample, error) {
			start := time.Now()
			var got int
			if err := conn.QueryRowContext(ctx, query).Scan(&got); err != nil {
				return Sample{}, fmt.Errorf("DuckDB replay: %w", err)
			}
			d := time.Since(start)
			if got != live {
				return Sample{}, fmt.Errorf("DuckDB replay counted %d live files, want %d", got, live)
			}
			return Sample{Value: ms(d)}, nil
		},
		close: func() error { return errors.Join(conn.Close(), db.Close()) },
	}, nil
}

// BigLogTable writes, at dir, a table of bigLogColumns columns partitioned
// by date and region whose log holds n add actions and no checkpoint:
// version 0 creates it, each later commit adds bigLogAddsPerCommit files
// with statistics, as Spark writes them, and removes a tenth of the files
// the commit before it added. It returns the storage, the live files and
// the bytes of the log. No data file is written: opening does not read
// them. tableformat/delta's open benchmarks time opening it too.
func BigLogTable(ctx context.Context, dir string, n int) (store delta.Storage, live int, logBytes int64, err error) {
	local, err := delta.NewLocalStorage(dir)
	if err != nil {
		return nil, 0, 0, err
	}
	types := []delta.PrimitiveType{delta.TypeLong, delta.TypeDouble, delta.TypeString, delta.TypeTimestamp, delta.TypeInteger}
	fields := []*delta.StructField{
		{Name: "event_date", Type: delta.TypeDate, Nullable: true},
		{Name: "region", Type: delta.TypeString, Nullable: true},
	}
	for i := len(fields); i < bigLogColumns; i++ {
		fields = append(fields, &delta.StructField{Name: fmt.Sprintf("c%03d", i), Type: types[i%len(types)], Nullable: true})
	}
	if _, err := delta.Create(ctx, local, delta.CreateOptions{
		Schema: &delta.StructType{Fields: fields}, PartitionColumns: []string{"event_date", "region"},
		// Statistics on the first data columns, as a writer told to
		// index a few columns of a wide table writes them.
		Configuration: map[string]string{"delta.dataSkippingNumIndexedCols": "2"},
	}); err != nil {
		return nil, 0, 0, err
	}
	regions := []string{"af-south", "ap-east", "eu-west", "us-east", "us-west"}
	now := time.Now().UnixMilli()
	var prev []delta.Add
	for v, added := int64(1), 0; added < n; v++ {
		k := min(bigLogAddsPerCommit, n-added)
		actions := make([]delta.Action, 0, 1+k+k/bigLogRemoveEvery)
		actions = append(actions, delta.Action{CommitInfo: map[string]any{
			"timestamp": now, "operation": "WRITE", "operationParameters": map[string]any{"mode": "Append", "partitionBy": `["event_date","region"]`},
			"isBlindAppend": true, "operationMetrics": map[string]any{"numFiles": fmt.Sprint(k), "numOutputRows": fmt.Sprint(k * 1000)},
		}})
		cur := make([]delta.Add, k)
		for i := range cur {
			id := added + i
			date := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, id%365).Format("2006-01-02")
			region := regions[id%len(regions)]
			cur[i] = delta.Add{
				Path:            fmt.Sprintf("event_date=%s/region=%s/part-%05d-%08x-4c3e-9a51-%012x.c000.snappy.parquet", date, region, i, id, int64(id)*7919),
				PartitionValues: map[string]*string{"event_date": &date, "region": &region},
				Size:            int64(40_000 + id%50_000), ModificationTime: now, DataChange: true,
				Stats: fmt.Sprintf(`{"numRecords":%d,"minValues":{"c002":%d,"c003":%d.25},"maxValues":{"c002":%d,"c003":%d.75},"nullCount":{"c002":0,"c003":%d}}`,
					1000+id%7, id*1000, id%100, id*1000+999, id%100+1000, id%3),
			}
			actions = append(actions, delta.Action{Add: &cur[i]})
		}
		for i := 0; i < len(prev); i += bigLogRemoveEvery {
			size := prev[i].Size
			ext := true
			actions = append(actions, delta.Action{Remove: &delta.Remove{
				Path: prev[i].Path, DeletionTimestamp: &now, DataChange: true, ExtendedFileMetadata: &ext,
				PartitionValues: prev[i].PartitionValues, Size: &size,
			}})
		}
		live += k - (len(prev)+bigLogRemoveEvery-1)/bigLogRemoveEvery
		prev, added = cur, added+k
		data, err := delta.EncodeActions(actions)
		if err != nil {
			return nil, 0, 0, err
		}
		// Setup only: a plain write, without the syncs of a real commit.
		if err := os.WriteFile(local.LocalPath(fmt.Sprintf("_delta_log/%020d.json", v)), data, 0o644); err != nil {
			return nil, 0, 0, err
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "_delta_log", "*.json"))
	if err != nil {
		return nil, 0, 0, err
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return nil, 0, 0, err
		}
		logBytes += fi.Size()
	}
	return local, live, logBytes, nil
}
