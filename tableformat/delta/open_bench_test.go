package delta

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// historyTable builds a table of `versions` commits, checkpointed every 10,
// written as lakesql writes epochs: each commit adds one file (with stats)
// and a txn. With live > 0 a commit also removes the file added live
// versions earlier, so the table keeps `live` files whatever its length.
// The table lives in b.TempDir, so it goes when the benchmark ends.
func historyTable(b *testing.B, versions, live int) *Table {
	ctx := context.Background()
	store, err := NewLocalStorage(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	schema := &StructType{Fields: []*StructField{
		{Name: "id", Type: TypeLong}, {Name: "amount", Type: TypeDouble, Nullable: true},
		{Name: "region", Type: TypeString, Nullable: true}, {Name: "ts", Type: TypeTimestamp, Nullable: true},
	}}
	if _, err := Create(ctx, store, CreateOptions{Schema: schema, PartitionColumns: []string{"region"}}); err != nil {
		b.Fatal(err)
	}
	table := NewTable(store)
	now := time.Now().UnixMilli()
	region := "eu"
	for v := int64(1); v <= int64(versions); v++ {
		actions := []Action{
			{CommitInfo: map[string]any{"timestamp": now, "operation": "WRITE"}},
			{Txn: &Txn{AppID: "svc-a", Version: v}},
			{Add: &Add{
				Path: fmt.Sprintf("region=eu/part-%08d.parquet", v), PartitionValues: map[string]*string{"region": &region},
				Size: 4096, ModificationTime: now, DataChange: true,
				Stats: fmt.Sprintf(`{"numRecords":1000,"minValues":{"id":%d,"amount":0.5,"ts":"2024-01-01T00:00:00.000Z"},"maxValues":{"id":%d,"amount":99.5,"ts":"2024-01-02T00:00:00.000Z"},"nullCount":{"id":0,"amount":3,"ts":0}}`, v*1000, v*1000+999),
			}},
		}
		if live > 0 && v > int64(live) {
			del := now
			actions = append(actions, Action{Remove: &Remove{Path: fmt.Sprintf("region=eu/part-%08d.parquet", v-int64(live)), DeletionTimestamp: &del, DataChange: true}})
		}
		data, err := EncodeActions(actions)
		if err != nil {
			b.Fatal(err)
		}
		// Setup only: a plain write, without the fsyncs of a real commit.
		if err := os.WriteFile(store.LocalPath(commitKey(v)), data, 0o644); err != nil {
			b.Fatal(err)
		}
		if v%10 == 0 {
			if err := table.Checkpoint(ctx, v); err != nil {
				b.Fatal(err)
			}
		}
	}
	return table
}

// benchmarkOpen builds the table once and times opening it in a
// sub-benchmark: a benchmark function with sub-benchmarks runs once, so the
// table is built once, and b.TempDir removes it when all runs are done.
func benchmarkOpen(b *testing.B, versions, live int) {
	table := historyTable(b, versions, live)
	ctx := context.Background()
	b.Run("latest", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			snap, err := NewTable(table.Storage()).Latest(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if snap.Version != int64(versions) {
				b.Fatalf("version %d", snap.Version)
			}
		}
	})
}

// Every commit adds a file: the state grows with the history.
func BenchmarkOpenAppend100(b *testing.B)   { benchmarkOpen(b, 100, 0) }
func BenchmarkOpenAppend10000(b *testing.B) { benchmarkOpen(b, 10000, 0) }

// Commits replace files: 100 live files whatever the history's length, so
// the ratio shows what the history alone costs.
func BenchmarkOpenSteady100(b *testing.B)   { benchmarkOpen(b, 100, 100) }
func BenchmarkOpenSteady10000(b *testing.B) { benchmarkOpen(b, 10000, 100) }
