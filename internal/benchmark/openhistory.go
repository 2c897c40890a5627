package benchmark

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/lakesql/lakesql/tableformat/delta"
)

const (
	// historyLiveFiles is the live files of the history tables, whatever
	// their length: each commit adds one file and removes the one added
	// historyLiveFiles commits before, as a steady writer that compacts
	// would, so that only the history's length differs.
	historyLiveFiles = 100
	// historyShort is the reference table's length.
	historyShort = 100
	// historyCheckpoint is the checkpoint interval: the default lakesql
	// creates tables with.
	historyCheckpoint = 10
	// opensPerRun is the opens one run times; the figure is their mean.
	opensPerRun = 20
)

// OpenLongHistory is workload 5: open the latest snapshot of a Delta table
// with n versions, against opening one with 100; both keep 100 live files
// and a checkpoint every 10 commits. A cost: the ratio should stay ≤ 2,
// which it does only when opening reads the last checkpoint and what
// follows it, not the history.
func OpenLongHistory() Workload {
	return Workload{
		Name: "open-long-history", Unit: "ms", Target: AtMost(2),
		Quick: Size{N: 1000, Runs: 3}, Full: Size{N: 10_000, Runs: 5},
		Describe: func(n int) string {
			return fmt.Sprintf("open a %s-version table (checkpoint every %d, %d live files), mean of %d opens",
				formatCount(n), historyCheckpoint, historyLiveFiles, opensPerRun)
		},
		Reference: fmt.Sprintf("opening the same kind of table with %d versions", historyShort),
		Setup: func(ctx context.Context, env Env, n int) (Sides, error) {
			long, err := HistoryTable(ctx, filepath.Join(env.Dir, "long"), n, historyLiveFiles)
			if err != nil {
				return nil, fmt.Errorf("build %d-version table: %w", n, err)
			}
			short, err := HistoryTable(ctx, filepath.Join(env.Dir, "short"), historyShort, historyLiveFiles)
			if err != nil {
				return nil, fmt.Errorf("build %d-version table: %w", historyShort, err)
			}
			return sidesFuncs{
				lakesql:   func(ctx context.Context) (Sample, error) { return timeOpens(ctx, long, int64(n)) },
				reference: func(ctx context.Context) (Sample, error) { return timeOpens(ctx, short, historyShort) },
			}, nil
		},
	}
}

// timeOpens opens the table's latest snapshot opensPerRun times, each
// with a new Table (nothing cached), and returns the mean time in ms.
func timeOpens(ctx context.Context, store delta.Storage, version int64) (Sample, error) {
	start := time.Now()
	for range opensPerRun {
		snap, err := delta.NewTable(store).Latest(ctx)
		if err != nil {
			return Sample{}, err
		}
		if snap.Version != version || len(snap.Files()) != min(historyLiveFiles, int(version)) {
			return Sample{}, fmt.Errorf("opened version %d with %d files, want version %d", snap.Version, len(snap.Files()), version)
		}
	}
	return Sample{Value: ms(time.Since(start)) / opensPerRun}, nil
}

// HistoryTable writes a table of `versions` commits at dir, as lakesql
// writes epochs (each commit a txn and one file with statistics), and
// checkpoints it as a writer with the default interval would. With live >
// 0 a commit also removes the file added live commits before, so that the
// table keeps live files whatever its length; with 0 every file stays.
// tableformat/delta's open benchmarks time opening it too.
func HistoryTable(ctx context.Context, dir string, versions, live int) (delta.Storage, error) {
	store, err := delta.NewLocalStorage(dir)
	if err != nil {
		return nil, err
	}
	schema := &delta.StructType{Fields: []*delta.StructField{
		{Name: "id", Type: delta.TypeLong}, {Name: "amount", Type: delta.TypeDouble, Nullable: true},
		{Name: "region", Type: delta.TypeString, Nullable: true}, {Name: "ts", Type: delta.TypeTimestamp, Nullable: true},
	}}
	if _, err := delta.Create(ctx, store, delta.CreateOptions{Schema: schema}); err != nil {
		return nil, err
	}
	table := delta.NewTable(store)
	now := time.Now().UnixMilli()
	for v := int64(1); v <= int64(versions); v++ {
		actions := []delta.Action{
			{CommitInfo: map[string]any{"timestamp": now, "operation": "WRITE"}},
			{Txn: &delta.Txn{AppID: "bench", Version: v}},
			{Add: &delta.Add{
				Path: fmt.Sprintf("part-%08d.parquet", v), Size: 4096, ModificationTime: now, DataChange: true,
				Stats: fmt.Sprintf(`{"numRecords":1000,"minValues":{"id":%d,"amount":0.5,"region":"af","ts":"2026-01-01T00:00:00.000Z"},"maxValues":{"id":%d,"amount":999.5,"region":"us-west","ts":"2026-01-02T00:00:00.000Z"},"nullCount":{"id":0,"amount":0,"region":0,"ts":0}}`, v*1000, v*1000+999),
			}},
		}
		if live > 0 && v > int64(live) {
			del := now
			actions = append(actions, delta.Action{Remove: &delta.Remove{
				Path: fmt.Sprintf("part-%08d.parquet", v-int64(live)), DeletionTimestamp: &del, DataChange: true}})
		}
		data, err := delta.EncodeActions(actions)
		if err != nil {
			return nil, err
		}
		// Setup only: a plain write, without the syncs of a real commit.
		if err := os.WriteFile(store.LocalPath(fmt.Sprintf("_delta_log/%020d.json", v)), data, 0o644); err != nil {
			return nil, err
		}
		if v%historyCheckpoint == 0 {
			if err := table.Checkpoint(ctx, v); err != nil {
				return nil, fmt.Errorf("checkpoint %d: %w", v, err)
			}
		}
	}
	return store, nil
}
