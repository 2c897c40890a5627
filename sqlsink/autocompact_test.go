package sqlsink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/icebergtest"
)

// Auto-compaction on each lake: single-row commits keep the number of live
// files bounded (TestAutoCompactBoundsFiles), a compaction in flight holds
// up no commit (TestAutoCompactNeverDelaysCommits), a failing one degrades
// the sink until one succeeds (TestAutoCompactFailureDegradesThenHeals),
// Close cancels a run in flight (TestAutoCompactCloseInFlight), and a table
// that already holds many small files is compacted when a sink opens
// (TestAutoCompactAtOpen). Runs are waited for with settle, never slept on.

// compactor is the lake's Compactor; the test fails loudly while the
// backend has none (before its branch is merged), never skips.
func (e *env) compactor() catalogadapter.Compactor {
	e.t.Helper()
	c, ok := e.provider.(catalogadapter.Compactor)
	if !ok {
		e.t.Fatalf("the %s provider (%T) implements no catalogadapter.Compactor", e.lake.name, e.provider)
	}
	return c
}

// autoConfig is a sink with auto-compaction on, due after minFiles small files.
func (e *env) autoConfig(name string, minFiles int) Config {
	cfg := e.config(name)
	cfg.DisableAutoCompact, cfg.CompactMinFiles = false, minFiles
	return cfg
}

// liveFiles lists the data (and, on Iceberg, delete) files the table's
// current version references, read from its log or manifests.
func (e *env) liveFiles() []string {
	e.t.Helper()
	if e.lake.name == deltaLake.name {
		_, live := liveFiles(e.t, e.dir)
		out := make([]string, 0, len(live))
		for p := range live {
			out = append(out, p)
		}
		return out
	}
	return icebergtest.Lake{Dir: e.root}.LiveFiles(e.t, e.table)
}

// settle waits for the auto-compaction runs signalled so far.
func settle(t testing.TB, s *Sink) {
	t.Helper()
	s.mu.Lock()
	a := s.auto
	s.mu.Unlock()
	if a == nil {
		t.Fatal("the sink runs no auto-compaction")
	}
	a.settle()
}

func oneRow(e int64) []row {
	return []row{{ID: e, Amount: float64(e) / 2, Region: regions[e%3]}}
}

// gatedCompactor is a lake's provider whose compactions wait at a gate
// before they run the backend's real Compact; a cancelled one returns its
// context's error without compacting.
type gatedCompactor struct {
	catalogadapter.Provider
	inner     catalogadapter.Compactor
	started   chan struct{} // a token per compaction that reached the gate
	gate      chan struct{} // closed: compactions go on
	inFlight  atomic.Bool
	cancelled atomic.Int64
}

// newGated gates the lake's compactions; inner is nil while the backend
// has none, which only a test whose gate never opens gets away with.
func newGated(e *env) *gatedCompactor {
	inner, _ := e.provider.(catalogadapter.Compactor)
	return &gatedCompactor{Provider: e.provider, inner: inner,
		started: make(chan struct{}, 100), gate: make(chan struct{})}
}

func (g *gatedCompactor) Compact(ctx context.Context, id catalogadapter.TableIdent, q catalogadapter.Querier, opts catalogadapter.CompactOptions) (catalogadapter.CompactOutcome, error) {
	g.inFlight.Store(true)
	defer g.inFlight.Store(false)
	g.started <- struct{}{}
	select {
	case <-g.gate:
	case <-ctx.Done():
		g.cancelled.Add(1)
		return catalogadapter.CompactOutcome{}, ctx.Err()
	}
	if g.inner == nil {
		return catalogadapter.CompactOutcome{}, fmt.Errorf("%T implements no catalogadapter.Compactor", g.Provider)
	}
	return g.inner.Compact(ctx, id, q, opts)
}

func TestAutoCompactBoundsFiles(t *testing.T) {
	const minFiles, commits = 4, 40
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			e := newLakeEnv(t, l)
			e.compactor()
			s := e.open(e.autoConfig("orders", minFiles))
			var want []row
			most := 0
			for n := int64(1); n <= commits; n++ {
				e.epoch(s, n, batch(t, oneRow(n)...))
				want = append(want, oneRow(n)...)
				settle(t, s)
				// Below minFiles small files nothing is due; at minFiles they
				// become one file.
				if got := len(e.liveFiles()); got > minFiles {
					t.Fatalf("after %d single-row commits: %d live files, more than %d", n, got, minFiles)
				} else if got > most {
					most = got
				}
			}
			sortRows(want)
			got := e.rows()
			sortRows(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("rows (-want +got):\n%s", diff)
			}
			if h := s.Health(); h.Status != Healthy {
				t.Fatalf("health %+v", h)
			}
			if last := s.LastOptimize(); last.At.IsZero() || last.Err != nil {
				t.Fatalf("last optimize %+v: want a successful run", last)
			}
			if last, ok := s.LastCommittedEpoch(); !ok || last != commits {
				t.Fatalf("last epoch %d %v, want %d", last, ok, commits)
			}
			if l.name == deltaLake.name {
				ops := 0
				for _, le := range readLog(t, e.dir) {
					if le.op == AutoCompactOperation {
						ops++
					}
				}
				if ops < commits/minFiles-1 {
					t.Fatalf("%d %s commits in the log, want about %d", ops, AutoCompactOperation, commits/minFiles)
				}
			}
			t.Logf("%d single-row commits: at most %d live files", commits, most)
		})
	}
}

func TestAutoCompactNeverDelaysCommits(t *testing.T) {
	const minFiles = 3
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			e := newLakeEnv(t, l)
			e.compactor()
			g := newGated(e)
			cfg := e.autoConfig("orders", minFiles)
			cfg.Provider = g
			s := e.open(cfg)
			var want []row
			for n := int64(1); n <= minFiles; n++ {
				e.epoch(s, n, batch(t, oneRow(n)...))
				want = append(want, oneRow(n)...)
			}
			<-g.started // the compaction is due and waits at the gate
			// Every commit below lands while the compaction is in flight:
			// it cannot have finished, since the gate is still closed.
			for n := int64(minFiles + 1); n <= minFiles+20; n++ {
				res := e.epoch(s, n, batch(t, oneRow(n)...))
				if res.Skipped {
					t.Fatalf("epoch %d skipped", n)
				}
				if !g.inFlight.Load() {
					t.Fatalf("epoch %d: the compaction is no longer in flight", n)
				}
				want = append(want, oneRow(n)...)
			}
			if h := s.Health(); h.Status != Healthy {
				t.Fatalf("health while compacting: %+v", h)
			}
			close(g.gate)
			settle(t, s)
			sortRows(want)
			got := e.rows()
			sortRows(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("rows (-want +got):\n%s", diff)
			}
			if got := len(e.liveFiles()); got > minFiles {
				t.Fatalf("%d live files after the compactions, more than %d", got, minFiles)
			}
		})
	}
}

func TestAutoCompactFailureDegradesThenHeals(t *testing.T) {
	const minFiles = 3
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			e := newLakeEnv(t, l)
			e.compactor()
			s := e.open(e.autoConfig("orders", minFiles))
			var want []row
			commit := func(n int64) {
				t.Helper()
				e.epoch(s, n, batch(t, oneRow(n)...))
				want = append(want, oneRow(n)...)
				settle(t, s)
			}
			commit(1)
			commit(2)
			// A live data file goes missing (the tests run as root, for
			// whom a read-only folder is writable): compacting it fails,
			// committing new files does not.
			files := e.parquetFiles()
			if len(files) != 2 {
				t.Fatalf("data files %v, want 2", files)
			}
			hidden := files[0] + ".away"
			if err := os.Rename(files[0], hidden); err != nil {
				t.Fatal(err)
			}
			commit(3)
			h := s.Health()
			if h.Status != Degraded || !strings.HasPrefix(h.Reason, "auto-compaction failed: ") {
				t.Fatalf("health after a failed compaction: %+v", h)
			}
			if last := s.LastOptimize(); last.At.IsZero() || last.Err == nil {
				t.Fatalf("last optimize %+v: want the failure", last)
			}
			t.Logf("degraded: %s", h.Reason)
			commit(4) // still accepted, and the compaction fails again
			if h := s.Health(); h.Status != Degraded {
				t.Fatalf("health after a second failure: %+v", h)
			}
			if err := os.Rename(hidden, files[0]); err != nil {
				t.Fatal(err)
			}
			commit(5) // due still: the files that failed are still small
			if h := s.Health(); h.Status != Healthy {
				t.Fatalf("health after a successful compaction: %+v", h)
			}
			if last := s.LastOptimize(); last.Err != nil {
				t.Fatalf("last optimize %+v: want the success", last)
			}
			sortRows(want)
			got := e.rows()
			sortRows(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("rows (-want +got):\n%s", diff)
			}
			if got := len(e.liveFiles()); got > minFiles {
				t.Fatalf("%d live files after the compaction, more than %d", got, minFiles)
			}
		})
	}
}

func TestAutoCompactCloseInFlight(t *testing.T) {
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			e := newLakeEnv(t, l)
			g := newGated(e)
			cfg := e.autoConfig("orders", 2)
			cfg.Provider = g
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Open(context.Background()); err != nil {
				t.Fatal(err)
			}
			var want []row
			for n := int64(1); n <= 2; n++ {
				e.epoch(s, n, batch(t, oneRow(n)...))
				want = append(want, oneRow(n)...)
			}
			<-g.started
			// The gate never opens: Close returns only because it cancels
			// the run.
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if g.cancelled.Load() != 1 || g.inFlight.Load() {
				t.Fatalf("cancelled %d, in flight %v: Close did not end the run", g.cancelled.Load(), g.inFlight.Load())
			}
			if last := s.LastOptimize(); !last.At.IsZero() {
				t.Fatalf("a cancelled run was recorded: %+v", last)
			}
			sortRows(want)
			got := e.rows()
			sortRows(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("rows (-want +got):\n%s", diff)
			}
			// A sink opened again continues, and compacts.
			e.compactor()
			s2 := e.open(e.autoConfig("orders", 2))
			e.epoch(s2, 3, batch(t, oneRow(3)...))
			settle(t, s2)
			if got := len(e.liveFiles()); got > 2 {
				t.Fatalf("%d live files, more than 2", got)
			}
		})
	}
}

func TestAutoCompactAtOpen(t *testing.T) {
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			e := newLakeEnv(t, l)
			e.compactor()
			if _, ok := e.provider.(catalogadapter.Inspector); !ok {
				t.Fatalf("the %s provider (%T) implements no catalogadapter.Inspector", l.name, e.provider)
			}
			off := e.open(e.config("orders")) // auto-compaction off
			for n := int64(1); n <= 6; n++ {
				e.epoch(off, n, batch(t, oneRow(n)...))
			}
			if err := off.Close(); err != nil {
				t.Fatal(err)
			}
			if got := len(e.liveFiles()); got != 6 {
				t.Fatalf("%d live files before, want 6", got)
			}
			s := e.open(e.autoConfig("orders", 3))
			settle(t, s) // no commit: the table's own small files are due
			if got := len(e.liveFiles()); got != 1 {
				t.Fatalf("%d live files after opening with auto-compaction, want 1", got)
			}
			if got := len(e.rows()); got != 6 {
				t.Fatalf("%d rows, want 6", got)
			}
		})
	}
}

// TestAutoCompactConfig: the default is on with DefaultCompactMinFiles, and
// the bounds are enforced.
func TestAutoCompactConfig(t *testing.T) {
	e := newEnv(t)
	cfg := e.config("orders")
	cfg.DisableAutoCompact = false
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Config(); got.DisableAutoCompact || got.CompactMinFiles != DefaultCompactMinFiles {
		t.Fatalf("defaults: disabled %v, min files %d", got.DisableAutoCompact, got.CompactMinFiles)
	}
	for _, n := range []int{1, -1, MaxCompactMinFiles + 1} {
		cfg.CompactMinFiles = n
		if _, err := New(cfg); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "compact min files") {
			t.Errorf("CompactMinFiles %d: %v", n, err)
		}
	}
	for _, n := range []int{2, MaxCompactMinFiles} {
		cfg.CompactMinFiles = n
		if _, err := New(cfg); err != nil {
			t.Errorf("CompactMinFiles %d: %v", n, err)
		}
	}
	// A provider that cannot compact runs no worker.
	if err := e.open(e.config("orders")).Close(); err != nil { // creates the table
		t.Fatal(err)
	}
	cfg.CompactMinFiles = 0
	cfg.Provider = struct{ catalogadapter.Provider }{e.provider}
	s = openSink(t, cfg)
	if s.auto != nil {
		t.Fatalf("a worker for %T", cfg.Provider)
	}
}
