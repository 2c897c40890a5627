package deltalake

import (
	"context"
	"fmt"
	"testing"

	"github.com/lakesql/lakesql/catalogadapter"
)

// BenchmarkSmallCommits is an autocommit single-row INSERT as the sink does
// it: StageSQL from the sink's own DuckDB connection, then Commit with the
// writer's epoch. The table has a history of 25 commits, checkpointed every
// 10, so every snapshot read goes through a checkpoint. "cached" is the
// provider as shipped, "uncached" replays the log on every read, as before
// the snapshot cache: compare the two from one run. Every commit adds a
// file, so the cost per commit grows with b.N: compare runs of one
// -benchtime (e.g. 300x).
func BenchmarkSmallCommits(b *testing.B) {
	b.Run("cached", func(b *testing.B) { benchSmallCommits(b, false) })
	b.Run("uncached", func(b *testing.B) { benchSmallCommits(b, true) })
}

func benchSmallCommits(b *testing.B, noCache bool) {
	ctx := context.Background()
	db := openDB(b)
	p := New(db, Options{CheckpointInterval: 10})
	p.noCache = noCache
	id := newTable(b, p, catalogadapter.TableDef{})
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
	b.ResetTimer()
	for b.Loop() {
		commit()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/commit")
}
