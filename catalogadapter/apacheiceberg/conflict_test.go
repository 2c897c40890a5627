package apacheiceberg

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/lakesql/lakesql/catalogadapter"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// stage writes rows as staged files through p and returns the receipt.
func stage(t testing.TB, p *Provider, rows ...row) catalogadapter.Receipt {
	t.Helper()
	r, err := p.WriteBatch(context.Background(), ordersID, batch(t, rows...))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func createOrders(t testing.TB, p *Provider) {
	t.Helper()
	if err := p.CreateTable(context.Background(), ordersID, catalogadapter.TableDef{Schema: ordersSchema}); err != nil {
		t.Fatal(err)
	}
}

// TestLostRaceIsRetried: a commit whose table moved between its load and
// its commit (forced with the beforeCommit hook) is retried on the new
// head and lands; nothing of the winner is lost.
func TestLostRaceIsRetried(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, b := openProvider(t, dir), openProvider(t, dir)
	createOrders(t, a)
	ra, rb := stage(t, a, row{ID: 1, Region: "a"}), stage(t, b, row{ID: 2, Region: "b"})
	a.beforeCommit = func(attempt int) {
		if attempt == 0 {
			if _, err := b.Commit(ctx, ordersID, []catalogadapter.Receipt{rb}, catalogadapter.CommitOptions{WriterID: "b", Epoch: 1}); err != nil {
				t.Error(err)
			}
		}
	}
	out, err := a.Commit(ctx, ordersID, []catalogadapter.Receipt{ra}, catalogadapter.CommitOptions{WriterID: "a", Epoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	if out.Retries != 1 || out.Skipped {
		t.Fatalf("outcome %+v, want one retry", out)
	}
	want := rowStrings(row{ID: 1, Region: "a"}, row{ID: 2, Region: "b"})
	if got := icebergRows(t, dir); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
	// A winner on every attempt exhausts the retries: a typed conflict,
	// and nothing of the loser lands.
	rc := stage(t, a, row{ID: 3})
	a.beforeCommit = func(attempt int) {
		rw := stage(t, b, row{ID: 100 + int64(attempt)})
		if _, err := b.Commit(ctx, ordersID, []catalogadapter.Receipt{rw}, catalogadapter.CommitOptions{Epoch: -1}); err != nil {
			t.Error(err)
		}
	}
	_, err = a.Commit(ctx, ordersID, []catalogadapter.Receipt{rc}, catalogadapter.CommitOptions{WriterID: "a", Epoch: 2, MaxRetries: 2})
	if !errors.Is(err, catalogadapter.ErrConflict) {
		t.Fatalf("exhausted retries: %v, want ErrConflict", err)
	}
	if got := len(icebergRows(t, dir)); got != 5 {
		t.Fatalf("%d rows, want 2 + 3 winners", got)
	}
}

// TestSameWriterEpochOneSnapshot: two writers with the same writer id and
// epoch race; the loser sees the winner's epoch on reload and is
// skipped: one snapshot, not two, and the loser's files are discardable.
func TestSameWriterEpochOneSnapshot(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, b := openProvider(t, dir), openProvider(t, dir)
	createOrders(t, a)
	ra, rb := stage(t, a, row{ID: 1, Region: "a"}), stage(t, b, row{ID: 1, Region: "b"})
	opts := catalogadapter.CommitOptions{WriterID: "w", Epoch: 7}
	var bOut catalogadapter.CommitOutcome
	a.beforeCommit = func(attempt int) {
		if attempt == 0 {
			var err error
			if bOut, err = b.Commit(ctx, ordersID, []catalogadapter.Receipt{rb}, opts); err != nil {
				t.Error(err)
			}
		}
	}
	aOut, err := a.Commit(ctx, ordersID, []catalogadapter.Receipt{ra}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if bOut.Skipped || !aOut.Skipped || aOut.Version != bOut.Version {
		t.Fatalf("a %+v, b %+v: want b landed and a skipped at b's snapshot", aOut, bOut)
	}
	if n := len(snapshots(t, dir, ordersID)); n != 1 {
		t.Fatalf("%d snapshots, want 1", n)
	}
	before := len(parquetFiles(t, dir))
	if err := a.Discard(ctx, ordersID, []catalogadapter.Receipt{ra, rb}); err != nil {
		t.Fatal(err)
	}
	if after := len(parquetFiles(t, dir)); after != before-1 {
		t.Fatalf("discard removed %d files, want only a's staged one (b's is live)", before-after)
	}
	if got := icebergRows(t, dir); fmt.Sprint(got) != fmt.Sprint(rowStrings(row{ID: 1, Region: "b"})) {
		t.Fatalf("rows %q", got)
	}
	// Committing the same epoch again, later, is skipped too.
	rc := stage(t, a, row{ID: 9})
	if out, err := a.Commit(ctx, ordersID, []catalogadapter.Receipt{rc}, opts); err != nil || !out.Skipped {
		t.Fatalf("late replay: %+v %v", out, err)
	}
}

// TestConcurrentGoroutineAppends: writers on separate catalog handles of
// one SQLite file append at once; every commit lands through the retry
// loop, one snapshot each.
func TestConcurrentGoroutineAppends(t *testing.T) {
	const writers, epochs = 4, 5
	dir := t.TempDir()
	createOrders(t, openProvider(t, dir))
	var wg sync.WaitGroup
	errs := make(chan error, writers*epochs)
	for w := 0; w < writers; w++ {
		p := openProvider(t, dir)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for e := int64(1); e <= epochs; e++ {
				r, err := p.WriteBatch(context.Background(), ordersID, batch(t, row{ID: int64(w)*100 + e, Region: fmt.Sprint(w)}))
				if err == nil {
					_, err = p.Commit(context.Background(), ordersID, []catalogadapter.Receipt{r},
						catalogadapter.CommitOptions{WriterID: fmt.Sprintf("w%d", w), Epoch: e})
				}
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := len(icebergRows(t, dir)); got != writers*epochs {
		t.Fatalf("%d rows, want %d", got, writers*epochs)
	}
	if n := len(snapshots(t, dir, ordersID)); n != writers*epochs {
		t.Fatalf("%d snapshots, want %d", n, writers*epochs)
	}
	tbl := freshTable(t, dir, ordersID)
	for w := 0; w < writers; w++ {
		rec, ok, err := icetable.LastEpoch(tbl.Metadata(), fmt.Sprintf("w%d", w))
		if err != nil || !ok || rec.Epoch != epochs {
			t.Fatalf("writer %d: last epoch %+v %v %v", w, rec, ok, err)
		}
	}
}
