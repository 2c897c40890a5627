package providertest

import (
	"context"
	"sync"
	"testing"

	"github.com/lakesql/lakesql/catalogadapter"
)

// compactChecks are the promises of catalogadapter.Compactor; Run adds
// them for a backend that implements it.
var compactChecks = []struct {
	name string
	run  func(t *testing.T, s *suite, c catalogadapter.Compactor)
}{
	{"CompactKeepsRowsAndEpochs", compactKeepsRowsAndEpochs},
	{"CompactWithConcurrentAppends", compactWithConcurrentAppends},
}

// runCompactChecks runs compactChecks on tables of newTable, when its
// provider is a Compactor (probed on the first table).
func runCompactChecks(t *testing.T, newTable NewTable, opts Options) {
	for i, c := range compactChecks {
		var skip bool
		t.Run(c.name, func(t *testing.T) {
			p, id := newTable(t, catalogadapter.TableDef{Schema: Schema()})
			cp, ok := p.(catalogadapter.Compactor)
			if !ok {
				if i > 0 {
					t.Fatalf("%T was a Compactor for the first check and is not now", p)
				}
				skip = true
				t.Skipf("%T is no catalogadapter.Compactor: the compaction checks do not apply", p)
			}
			c.run(t, &suite{p: p, id: id, opts: opts, db: OpenDuckDB(t)}, cp)
		})
		if skip {
			return // not a Compactor: nothing to check
		}
	}
}

// epochs reads LastEpoch of each writer.
func (s *suite) epochs(t *testing.T, writers ...string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, w := range writers {
		e, ok, err := s.p.LastEpoch(context.Background(), s.id, w)
		if err != nil {
			t.Fatalf("LastEpoch(%q): %v", w, err)
		}
		if ok {
			out[w] = e
		}
	}
	return out
}

// compactKeepsRowsAndEpochs: compacting many small files keeps every row
// and every writer's last epoch, makes one new version with fewer files,
// and a second compaction finds nothing to do.
func compactKeepsRowsAndEpochs(t *testing.T, s *suite, c catalogadapter.Compactor) {
	ctx := context.Background()
	for i := int64(0); i < 6; i++ {
		writer := "a"
		if i%2 == 1 {
			writer = "b"
		}
		s.commit(t, []catalogadapter.Receipt{s.stage(t, 10*i, 10*i+2)}, catalogadapter.CommitOptions{WriterID: writer, Epoch: 10 + i})
	}
	before := s.files(t)
	epochs := s.epochs(t, "a", "b")
	v := s.version(t)
	out, err := c.Compact(ctx, s.id, s.db, catalogadapter.CompactOptions{})
	if err != nil {
		t.Fatalf("Compact: %v", err)
	}
	if !out.Committed || out.Version == v || out.FilesRemoved < 2 || out.FilesAdded >= out.FilesRemoved || out.Rows != 12 {
		t.Errorf("compaction of %d small files: %+v", len(before), out)
	}
	if got := s.version(t); got != out.Version {
		t.Errorf("version %d after the compaction, it reported %d", got, out.Version)
	}
	var ranges [][2]int64
	for i := int64(0); i < 6; i++ {
		ranges = append(ranges, [2]int64{10 * i, 10*i + 2})
	}
	s.wantIDs(t, ranges...)
	if after := s.files(t); len(after) != len(before)-out.FilesRemoved+out.FilesAdded || len(after) >= len(before) {
		t.Errorf("%d files after the compaction, %d before; outcome %+v", len(after), len(before), out)
	}
	if got := s.epochs(t, "a", "b"); got["a"] != epochs["a"] || got["b"] != epochs["b"] || len(got) != 2 {
		t.Errorf("last epochs %v after the compaction, %v before", got, epochs)
	}
	// A replay of a recorded epoch is still skipped.
	if r := s.commit(t, []catalogadapter.Receipt{s.stage(t, 100, 101)}, catalogadapter.CommitOptions{WriterID: "b", Epoch: 15}); !r.Skipped {
		t.Errorf("replay of b's epoch 15 after the compaction: %+v, want skipped", r)
	}
	again, err := c.Compact(ctx, s.id, s.db, catalogadapter.CompactOptions{})
	if err != nil || again.Committed || s.version(t) != out.Version {
		t.Errorf("second compaction: %+v, %v; version %d, want %d", again, err, s.version(t), out.Version)
	}
	s.wantIDs(t, ranges...)
}

// compactWithConcurrentAppends: appends committed while a compaction runs
// all land, and the compaction does not fail because of them.
func compactWithConcurrentAppends(t *testing.T, s *suite, c catalogadapter.Compactor) {
	ctx := context.Background()
	for i := int64(0); i < 5; i++ {
		s.commit(t, []catalogadapter.Receipt{s.stage(t, i, i+1)}, catalogadapter.CommitOptions{WriterID: "a", Epoch: i})
	}
	var wg sync.WaitGroup
	var out catalogadapter.CompactOutcome
	var cerr error
	wg.Go(func() { out, cerr = c.Compact(ctx, s.id, s.db, catalogadapter.CompactOptions{}) })
	appendErrs := make([]error, 5)
	wg.Go(func() {
		for i := int64(0); i < 5; i++ {
			r, err := s.p.StageSQL(ctx, s.id, s.db, rowsSource(100+i, 101+i))
			if err == nil {
				_, err = s.p.Commit(ctx, s.id, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{WriterID: "b", Epoch: i})
			}
			appendErrs[i] = err
		}
	})
	wg.Wait()
	if cerr != nil {
		t.Errorf("compaction beside appends: %v", cerr)
	} else if !out.Committed {
		t.Errorf("compaction beside appends committed nothing: %+v", out)
	}
	for i, err := range appendErrs {
		if err != nil {
			t.Errorf("append %d beside the compaction: %v", i, err)
		}
	}
	s.wantIDs(t, [2]int64{0, 5}, [2]int64{100, 105})
	if got := s.epochs(t, "a", "b"); got["a"] != 4 || got["b"] != 4 {
		t.Errorf("last epochs %v, want a and b at 4", got)
	}
}
