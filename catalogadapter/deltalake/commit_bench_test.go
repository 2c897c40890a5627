package deltalake

import (
	"context"
	"fmt"
	"testing"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/tableformat/objectstore"
)

// BenchmarkSmallCommits is an autocommit single-row INSERT as the sink does
// it: StageSQL from the sink's own DuckDB connection, then Commit with the
// writer's epoch. The table has a history of 25 commits, checkpointed every
// 10, so every snapshot read goes through a checkpoint. "cached" is the
// provider as shipped, "uncached" replays the log on every read, as before
// the snapshot cache: compare the two from one run. "s3" is "cached" on
// the package's versitygw. Every commit adds a
// file, so the cost per commit grows with b.N: compare runs of one
// -benchtime (e.g. 300x). The storage calls per commit go alongside:
// reads/commit (Get, List, Stat) and writes/commit (every put).
func BenchmarkSmallCommits(b *testing.B) {
	b.Run("cached", func(b *testing.B) { benchSmallCommits(b, false, false) })
	b.Run("uncached", func(b *testing.B) { benchSmallCommits(b, true, false) })
	b.Run("s3", func(b *testing.B) { benchSmallCommits(b, false, true) })
}

func benchSmallCommits(b *testing.B, noCache, s3 bool) {
	ctx := context.Background()
	db := openDB(b)
	var ops storageOps
	opts := Options{CheckpointInterval: 10, WrapStorage: ops.wrap}
	if s3 {
		so, err := objectstore.FromProperties(lake.Options())
		if err != nil {
			b.Fatal(err)
		}
		so.CacheDir = b.TempDir()
		opts.ObjectStorage = so
	}
	p := New(db, opts)
	defer p.Close()
	p.noCache = noCache
	var id catalogadapter.TableIdent
	if s3 {
		id = s3Table(b)
		if err := p.CreateTable(ctx, id, catalogadapter.TableDef{Schema: ordersSchema()}); err != nil {
			b.Fatal(err)
		}
	} else {
		id = newTable(b, p, catalogadapter.TableDef{})
	}
	buf := openDB(b) // the sink's buffer is a DuckDB of its own
	conn, err := buf.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	epoch := int64(0)
	commit := func() {
		epoch++
		query := fmt.Sprintf("SELECT %d::BIGINT AS id, 0.5::DOUBLE AS amount, 'x' AS name, TIMESTAMPTZ '2025-01-01 00:00:00+00' AS ts", epoch)
		r, err := p.StageSQL(ctx, id, conn, catalogadapter.Source{Query: query})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{WriterID: "bench", Epoch: epoch}); err != nil {
			b.Fatal(err)
		}
	}
	for range 25 {
		commit()
	}
	ops.take()
	b.ResetTimer()
	for b.Loop() {
		commit()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/commit")
	n := ops.take()
	b.ReportMetric(float64(n["Get"]+n["List"]+n["Stat"])/float64(b.N), "reads/commit")
	b.ReportMetric(float64(n["PutIfAbsent"]+n["Put"]+n["PutFile"])/float64(b.N), "writes/commit")
}
