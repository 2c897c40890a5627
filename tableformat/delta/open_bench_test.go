package delta_test

import (
	"testing"

	"github.com/lakesql/lakesql/internal/benchmark"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// benchmarkOpen builds the table of `lakesql bench`'s open-long-history
// workload once (benchmark.HistoryTable, in b.TempDir) and times opening
// its latest snapshot in a sub-benchmark: a benchmark function with
// sub-benchmarks runs once, so the table is built once. (An external test
// package: internal/benchmark imports this one.)
func benchmarkOpen(b *testing.B, versions, live int) {
	store, err := benchmark.HistoryTable(b.Context(), b.TempDir(), versions, live)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("latest", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			snap, err := delta.NewTable(store).Latest(b.Context())
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

// BenchmarkOpenBigLog opens the log of `lakesql bench`'s open-300k
// workload (benchmark.BigLogTable) at a tenth of its size: many add
// actions, no checkpoint, so JSON decoding and reconciliation dominate.
func BenchmarkOpenBigLog(b *testing.B) {
	store, live, _, err := benchmark.BigLogTable(b.Context(), b.TempDir(), 30_000)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("latest", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			snap, err := delta.NewTable(store).Latest(b.Context())
			if err != nil {
				b.Fatal(err)
			}
			if len(snap.Files()) != live {
				b.Fatalf("%d files, want %d", len(snap.Files()), live)
			}
		}
	})
}
