package deltalake

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/clocktest"
)

// BenchmarkCompactSmallFiles compacts 2,000 one-row files (staged one by
// one, committed together) into one; it reports the files before and
// after. Run with -benchtime=1x: each iteration builds its own table.
func BenchmarkCompactSmallFiles(b *testing.B) {
	const n = 2000
	ctx := context.Background()
	db := openDB(b)
	p := New(db, testOptions(clocktest.New(t0)))
	for b.Loop() {
		b.StopTimer()
		id := newTable(b, p, catalogadapter.TableDef{})
		want := idRows(0, n)
		receipts := make([]catalogadapter.Receipt, n)
		for i := range want {
			receipts[i] = writeRows(b, p, id, want[i:i+1])
		}
		if _, err := p.Commit(ctx, id, receipts, catalogadapter.CommitOptions{WriterID: "w", Epoch: 1}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		out, err := p.Compact(ctx, id, db, catalogadapter.CompactOptions{})
		b.StopTimer()
		if err != nil || !out.Committed || out.FilesRemoved != n {
			b.Fatalf("%+v, %v", out, err)
		}
		b.ReportMetric(float64(out.FilesRemoved), "files-before")
		b.ReportMetric(float64(out.FilesAdded), "files-after")
		if d := cmp.Diff(want, scanRows(b, p, db, id, -1, nil)); d != "" {
			b.Fatalf("rows (-want +got):\n%s", d)
		}
		b.StartTimer()
	}
}
