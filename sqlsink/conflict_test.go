package sqlsink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/deltalake"
	"github.com/lakesql/lakesql/catalogadapter/providertest"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// The conflict tests run several sinks against one real Delta table and make
// their commits race: blind appends retry inside the backend, upserts that
// rewrite the same file redo their merge, a replay racing its original is
// skipped, and a commit that fails for another reason fails cleanly.

// epochRun is one epoch of one sink, run by raceCommits.
type epochRun struct {
	sink    *Sink
	epoch   int64
	rows    [][]row // one slice per batch
	batches []arrow.RecordBatch
	res     CommitResult
	err     error
}

func newRun(t *testing.T, s *Sink, epoch int64, rows ...[]row) *epochRun {
	t.Helper()
	r := &epochRun{sink: s, epoch: epoch, rows: rows}
	for _, rs := range rows {
		r.batches = append(r.batches, batch(t, rs...))
	}
	return r
}

func (r *epochRun) writer() string { return r.sink.Config().WriterID }

// prepare runs BeginEpoch, Write and PreCommit without failing the test, so
// it can run on any goroutine.
func (r *epochRun) prepare(ctx context.Context) error {
	if err := r.sink.BeginEpoch(ctx, r.epoch); err != nil {
		return fmt.Errorf("begin epoch %d of %s: %w", r.epoch, r.writer(), err)
	}
	for _, b := range r.batches {
		if err := r.sink.Write(ctx, b); err != nil {
			return fmt.Errorf("write epoch %d of %s: %w", r.epoch, r.writer(), err)
		}
	}
	if err := r.sink.PreCommit(ctx, r.epoch); err != nil {
		return fmt.Errorf("precommit epoch %d of %s: %w", r.epoch, r.writer(), err)
	}
	return nil
}

// run prepares and commits the epoch.
func (r *epochRun) run(ctx context.Context) {
	if r.err = r.prepare(ctx); r.err == nil {
		r.res, r.err = r.sink.CommitEpoch(ctx, r.epoch)
	}
}

// raceCommits runs every epoch on its own goroutine: each prepares its epoch
// (so every merge reads the same table version), then all wait for each
// other, so that every CommitEpoch starts at the same moment.
func raceCommits(ctx context.Context, runs ...*epochRun) {
	var ready, done sync.WaitGroup
	ready.Add(len(runs))
	done.Add(len(runs))
	for _, r := range runs {
		go func() {
			defer done.Done()
			err := r.prepare(ctx)
			ready.Done()
			ready.Wait()
			if err != nil {
				r.err = err
				return
			}
			r.res, r.err = r.sink.CommitEpoch(ctx, r.epoch)
		}()
	}
	done.Wait()
}

// readLog reads the Delta log of the table at dir (readDeltaLog).
func readLog(t *testing.T, dir string) []logEntry {
	t.Helper()
	store, err := delta.NewLocalStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	return readDeltaLog(t, store)
}

func diskPath(t *testing.T, dir, p string) string {
	t.Helper()
	rel := fileKey(t, p)
	if filepath.IsAbs(rel) {
		return filepath.Clean(rel)
	}
	return filepath.Join(dir, filepath.FromSlash(rel))
}

// liveFiles lists the data files of the table's latest snapshot, on disk.
func liveFiles(t *testing.T, dir string) (int64, map[string]bool) {
	t.Helper()
	store, err := delta.NewLocalStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := delta.NewTable(store).Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	live := map[string]bool{}
	for _, f := range snap.Files() {
		live[diskPath(t, dir, f.Path)] = true
	}
	return snap.Version, live
}

// checkNoOrphans fails when a Parquet file in the table folder is not live
// in the latest snapshot, or, with tombstonesAllowed, was never added by any
// commit (files that copy-on-write replaced stay on disk until a vacuum).
func checkNoOrphans(t *testing.T, e *env, tombstonesAllowed bool) {
	t.Helper()
	_, live := liveFiles(t, e.dir)
	known := map[string]bool{}
	for _, le := range readLog(t, e.dir) {
		for _, a := range le.adds {
			known[diskPath(t, e.dir, a.Path)] = true
		}
	}
	for _, p := range e.parquetFiles() {
		switch {
		case live[p]:
		case tombstonesAllowed && known[p]:
		case known[p]:
			t.Errorf("%s is on disk but not live in the latest snapshot", p)
		default:
			t.Errorf("orphan staged file %s: on disk, never committed, never discarded", p)
		}
	}
}

// secondProvider is a Delta provider over its own DuckDB handle, as another
// process would have.
func secondProvider(t *testing.T) *deltalake.Provider {
	t.Helper()
	db := providertest.OpenDuckDB(t)
	return deltalake.New(db, deltalake.Options{})
}

func writerConfig(e *env, name, writerID string, p catalogadapter.Provider, mode Mode) Config {
	cfg := e.config(name)
	cfg.WriterID = writerID
	if p != nil {
		cfg.Provider = p
	}
	if mode == ModeUpsert {
		cfg.Mode, cfg.Key = ModeUpsert, []string{"id"}
	}
	return cfg
}

func lastEpoch(t *testing.T, e *env, writer string) (int64, bool) {
	t.Helper()
	n, ok, err := e.delta().LastEpoch(context.Background(), e.table, writer)
	if err != nil {
		t.Fatal(err)
	}
	return n, ok
}

// appendRows are the rows of a blind-append epoch: ids unique per writer and epoch.
func appendRows(base, epoch int64, region string) []row {
	out := make([]row, 3)
	for i := range out {
		out[i] = row{ID: base + epoch*10 + int64(i), Amount: float64(epoch), Region: region}
	}
	return out
}

// TestConcurrentBlindAppends: two sinks with their own writer ids append to
// one table from two goroutines, first free-running, then lined up by a
// barrier until the backend has had to retry a lost race. Every row lands
// once, every epoch is one version, versions are contiguous.
func TestConcurrentBlindAppends(t *testing.T) {
	for _, shared := range []bool{true, false} {
		name := "separate providers"
		if shared {
			name = "shared provider"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			var p2 catalogadapter.Provider = e.provider
			if !shared {
				p2 = secondProvider(t)
			}
			a := e.open(writerConfig(e, "a", "svc-a", nil, ModeAppend))
			b := e.open(writerConfig(e, "b", "svc-b", p2, ModeAppend))
			bases := map[*Sink]int64{a: 0, b: 1_000_000}
			regionOf := map[*Sink]string{a: "a", b: "b"}

			var all []*epochRun
			// Free-running: each goroutine commits its epochs as fast as it can.
			const free = 10
			perSink := map[*Sink][]*epochRun{}
			for _, s := range []*Sink{a, b} {
				for n := int64(1); n <= free; n++ {
					r := newRun(t, s, n, appendRows(bases[s], n, regionOf[s]))
					perSink[s] = append(perSink[s], r)
					all = append(all, r)
				}
			}
			var wg sync.WaitGroup
			for _, s := range []*Sink{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for _, r := range perSink[s] {
						if r.run(ctx); r.err != nil {
							return
						}
					}
				}()
			}
			wg.Wait()
			for _, r := range all {
				if r.err != nil {
					t.Fatal(r.err)
				}
			}
			// Lined up: both commit at the same moment, until a race was lost.
			retries := func() int {
				n := 0
				for _, r := range all {
					n += r.res.Retries
				}
				return n
			}
			next := int64(free + 1)
			for ; next <= free+30 && (retries() == 0 || next <= free+3); next++ {
				ra := newRun(t, a, next, appendRows(bases[a], next, "a"))
				rb := newRun(t, b, next, appendRows(bases[b], next, "b"))
				raceCommits(ctx, ra, rb)
				for _, r := range []*epochRun{ra, rb} {
					if r.err != nil {
						t.Fatal(r.err)
					}
				}
				all = append(all, ra, rb)
			}
			last := next - 1
			if retries() == 0 {
				t.Fatalf("no commit retried a lost race in %d epochs, %d of them lined up by a barrier", 2*last, 2*(last-free))
			}

			// Every epoch is its own version, and the log says so.
			log := readLog(t, e.dir)
			if got, want := int64(len(log)-1), int64(len(all)); got != want {
				t.Fatalf("the table is at version %d, want %d (one per epoch)", got, want)
			}
			byVersion := map[int64]*epochRun{}
			var wantRows []row
			for _, r := range all {
				if r.res.Skipped || r.res.Rows != int64(len(r.rows[0])) || r.res.Files < 1 {
					t.Errorf("epoch %d of %s: %+v, want %d rows committed", r.epoch, r.writer(), r.res, len(r.rows[0]))
				}
				if prev, dup := byVersion[r.res.Version]; dup {
					t.Fatalf("epoch %d of %s and epoch %d of %s both report version %d",
						r.epoch, r.writer(), prev.epoch, prev.writer(), r.res.Version)
				}
				byVersion[r.res.Version] = r
				wantRows = append(wantRows, r.rows[0]...)
			}
			for _, le := range log[1:] {
				r := byVersion[le.version]
				got, ok := le.recorded()
				if r == nil || !ok || got != (writerEpoch{r.writer(), r.epoch}) {
					t.Errorf("version %d records %+v; the sinks say it is %+v", le.version, le.txns, r)
				}
			}
			// Every row once.
			sortRows(wantRows)
			if diff := cmp.Diff(wantRows, e.rows()); diff != "" {
				t.Fatalf("rows (-want +got):\n%s", diff)
			}
			// Each writer's epochs are recorded, in the table and in the sink.
			for _, s := range []*Sink{a, b} {
				if n, ok := lastEpoch(t, e, s.Config().WriterID); !ok || n != last {
					t.Errorf("LastEpoch(%s) = %d %v, want %d", s.Config().WriterID, n, ok, last)
				}
				if n, ok := s.LastCommittedEpoch(); !ok || n != last {
					t.Errorf("%s: LastCommittedEpoch = %d %v, want %d", s.Config().WriterID, n, ok, last)
				}
				var sum int64
				for _, r := range all {
					if r.sink == s {
						sum += int64(r.res.Retries)
					}
				}
				m := s.Metrics()
				if m.Commits != last || m.EpochsCommitted != last || m.Retries != sum || m.RowsWritten != 3*last {
					t.Errorf("%s: metrics %+v, want %d commits with %d retries", s.Config().WriterID, m, last, sum)
				}
			}
			checkNoOrphans(t, e, false)
			t.Logf("%d epochs, %d retries of lost races", len(all), retries())
		})
	}
}

// upsertRows are two writers' changes to overlapping keys in round n: both
// replace ids 3..5; a replaces 0..5 and deletes 7 in even rounds, b
// replaces 3..8 and deletes 1 in odd rounds; each inserts a key of its own.
// Which one wins the overlap depends on the order the epochs commit in.
func upsertRows(writer string, n int64) []row {
	var out []row
	lo, hi, del, fresh := int64(0), int64(5), int64(7), 100+n
	tag := 0.25
	if writer == "b" {
		lo, hi, del, fresh, tag = 3, 8, 1, 200+n, 0.75
	}
	for id := lo; id <= hi; id++ {
		out = append(out, row{Op: "U", ID: id, Amount: float64(n) + tag, Region: writer})
	}
	if (writer == "a") == (n%2 == 0) {
		out = append(out, row{Op: "D", ID: del})
	}
	return append(out, row{Op: "I", ID: fresh, Amount: float64(n) + tag, Region: writer})
}

// TestConcurrentUpsertConflict: two upsert sinks change the same keys in
// the same rounds. Both merge against the same version, so the second to
// commit finds its rewritten file gone and must redo its merge. The table
// must equal the epochs applied in the order the log records them.
func TestConcurrentUpsertConflict(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a := e.open(writerConfig(e, "a", "svc-a", nil, ModeUpsert))
	b := e.open(writerConfig(e, "b", "svc-b", secondProvider(t), ModeUpsert))
	names := map[*Sink]string{a: "a", b: "b"}

	epochs := map[writerEpoch][][]row{}
	seed := make([]row, 10)
	for i := range seed {
		seed[i] = row{Op: "I", ID: int64(i), Amount: float64(i), Region: "seed"}
	}
	first := newRun(t, a, 1, seed)
	if first.run(ctx); first.err != nil {
		t.Fatal(first.err)
	}
	epochs[writerEpoch{"svc-a", 1}] = first.rows

	const rounds = 6
	model := &upsertModel{rows: map[modelKey]row{}}
	model.apply(first.rows)
	applied := 1 // log versions 1..applied are in the model
	for n := int64(2); n < 2+rounds; n++ {
		before := map[*Sink]int64{a: a.Metrics().Conflicts, b: b.Metrics().Conflicts}
		ra := newRun(t, a, n, upsertRows("a", n))
		rb := newRun(t, b, n, upsertRows("b", n))
		raceCommits(ctx, ra, rb)
		for _, r := range []*epochRun{ra, rb} {
			if r.err != nil {
				t.Fatalf("round %d: %v", n, r.err)
			}
			if r.res.Skipped {
				t.Fatalf("round %d: epoch of %s skipped: %+v", n, r.writer(), r.res)
			}
			epochs[writerEpoch{r.writer(), n}] = r.rows
		}
		winner, loser := ra, rb
		if rb.res.Version < ra.res.Version {
			winner, loser = rb, ra
		}
		if winner.res.Version != int64(applied+1) || loser.res.Version != int64(applied+2) {
			t.Fatalf("round %d: versions %d and %d, want %d and %d", n, winner.res.Version, loser.res.Version, applied+1, applied+2)
		}
		// Both merges rewrote the file holding ids 3..5, read at the same
		// version: the loser, and only it, redid its merge, once.
		if got := loser.sink.Metrics().Conflicts - before[loser.sink]; got != 1 {
			t.Errorf("round %d: %s committed second but redid its merge %d times, want 1", n, names[loser.sink], got)
		}
		if got := winner.sink.Metrics().Conflicts - before[winner.sink]; got != 0 {
			t.Errorf("round %d: %s committed first but redid its merge %d times", n, names[winner.sink], got)
		}

		// Replay the model in the log's order.
		log := readLog(t, e.dir)
		if len(log) != applied+3 {
			t.Fatalf("round %d: the log has %d versions, want %d", n, len(log), applied+3)
		}
		for _, le := range log[applied+1:] {
			we, ok := le.recorded()
			rows, known := epochs[we]
			if !ok || !known {
				t.Fatalf("version %d records %+v, which no sink committed", le.version, le.txns)
			}
			if le.op != "MERGE" {
				t.Errorf("version %d: operation %q, want MERGE", le.version, le.op)
			}
			model.apply(rows)
		}
		applied += 2
		got := e.rows()
		if diff := cmp.Diff(model.sorted(), got); diff != "" {
			t.Fatalf("round %d: table vs the epochs applied in commit order (-want +got):\n%s", n, diff)
		}
		seen := map[int64]bool{}
		for _, r := range got {
			if seen[r.ID] {
				t.Fatalf("round %d: id %d appears twice", n, r.ID)
			}
			seen[r.ID] = true
		}
	}
	if total := a.Metrics().Conflicts + b.Metrics().Conflicts; total != rounds {
		t.Errorf("%d merge redos in %d contended rounds, want one a round", total, rounds)
	}
	for _, s := range []*Sink{a, b} {
		if n, ok := lastEpoch(t, e, s.Config().WriterID); !ok || n != 1+rounds {
			t.Errorf("LastEpoch(%s) = %d %v, want %d", s.Config().WriterID, n, ok, 1+rounds)
		}
	}
	// The loser's first staging was discarded: every file on disk is live or
	// was replaced by a commit.
	checkNoOrphans(t, e, true)
	t.Logf("merge redos: a %d, b %d", a.Metrics().Conflicts, b.Metrics().Conflicts)
}

// TestRaceSameWriterEpoch: two sinks with the same writer id commit the same
// epoch with the same rows, as a replay racing the original does. Exactly
// one version is made, the other run is skipped and its staged files are
// deleted.
func TestRaceSameWriterEpoch(t *testing.T) {
	for _, mode := range []Mode{ModeAppend, ModeUpsert} {
		for _, timing := range []string{"together", "after"} {
			t.Run(string(mode)+"/"+timing, func(t *testing.T) {
				e := newEnv(t)
				ctx := context.Background()
				a := e.open(writerConfig(e, "a", "svc-a", nil, mode))
				b := e.open(writerConfig(e, "b", "svc-a", secondProvider(t), mode))
				model := &upsertModel{rows: map[modelKey]row{}}
				if mode == ModeUpsert {
					seed := newRun(t, a, 1, []row{{Op: "I", ID: 0}, {Op: "I", ID: 1}, {Op: "I", ID: 2}, {Op: "I", ID: 9}})
					if seed.run(ctx); seed.err != nil {
						t.Fatal(seed.err)
					}
					model.apply(seed.rows)
				}
				epochs := []int64{7, 8, 9, 10}
				if timing == "after" {
					epochs = epochs[:1]
				}
				for _, n := range epochs {
					version, _ := liveFiles(t, e.dir)
					rows := []row{{ID: n * 10, Amount: float64(n), Region: "x"}, {ID: n*10 + 1, Amount: float64(n)}}
					if mode == ModeUpsert {
						rows = []row{{Op: "U", ID: 0, Amount: float64(n)}, {Op: "U", ID: 1, Amount: float64(n)},
							{Op: "D", ID: 9 + n - 7}, {Op: "I", ID: n * 10, Amount: float64(n)}}
					}
					ra, rb := newRun(t, a, n, rows), newRun(t, b, n, rows)
					before := map[*Sink]Metrics{a: a.Metrics(), b: b.Metrics()}
					if timing == "together" {
						raceCommits(ctx, ra, rb)
					} else {
						// b prepared before a landed, and commits after.
						for _, r := range []*epochRun{ra, rb} {
							if r.err = r.prepare(ctx); r.err != nil {
								t.Fatal(r.err)
							}
						}
						ra.res, ra.err = a.CommitEpoch(ctx, n)
						if ra.err == nil {
							rb.res, rb.err = b.CommitEpoch(ctx, n)
						}
					}
					for _, r := range []*epochRun{ra, rb} {
						if r.err != nil {
							t.Fatalf("epoch %d: %v", n, r.err)
						}
					}
					landed, skipped := ra, rb
					if ra.res.Skipped {
						landed, skipped = rb, ra
					}
					if landed.res.Skipped || !skipped.res.Skipped {
						t.Fatalf("epoch %d: results %+v and %+v, want exactly one skipped", n, ra.res, rb.res)
					}
					if landed.res.Version != version+1 || skipped.res.Version != landed.res.Version {
						t.Errorf("epoch %d: landed as %d, skipped at %d; the table was at %d", n, landed.res.Version, skipped.res.Version, version)
					}
					if skipped.res.Rows != 0 || skipped.res.Files != 0 {
						t.Errorf("epoch %d: the skipped run reports %+v", n, skipped.res)
					}
					log := readLog(t, e.dir)
					if got := int64(len(log) - 1); got != version+1 {
						t.Fatalf("epoch %d made %d versions, want 1", n, got-version)
					}
					if we, ok := log[len(log)-1].recorded(); !ok || we != (writerEpoch{"svc-a", n}) {
						t.Errorf("version %d records %+v, want svc-a epoch %d", version+1, log[len(log)-1].txns, n)
					}
					ml, ms := landed.sink.Metrics(), skipped.sink.Metrics()
					if ml.Commits != before[landed.sink].Commits+1 || ml.EpochsSkipped != before[landed.sink].EpochsSkipped {
						t.Errorf("epoch %d: metrics of the sink that landed: %+v", n, ml)
					}
					if ms.Commits != before[skipped.sink].Commits || ms.EpochsSkipped != before[skipped.sink].EpochsSkipped+1 {
						t.Errorf("epoch %d: metrics of the skipped sink: %+v", n, ms)
					}
					// A replay that lost to its original is skipped as such, not
					// treated as a conflict whose merge must be redone.
					if ms.Conflicts != before[skipped.sink].Conflicts || ml.Conflicts != before[landed.sink].Conflicts {
						t.Errorf("epoch %d: merge redos %d and %d, want none", n, ml.Conflicts, ms.Conflicts)
					}
					for _, s := range []*Sink{a, b} {
						if last, ok := s.LastCommittedEpoch(); !ok || last != n {
							t.Errorf("epoch %d: a sink's LastCommittedEpoch is %d %v", n, last, ok)
						}
						if st := s.State(); st != StateRunning {
							t.Errorf("epoch %d: a sink is %v", n, st)
						}
					}
					model.apply([][]row{rows})
					if diff := cmp.Diff(model.sorted(), e.rows()); diff != "" {
						t.Fatalf("epoch %d: rows (-want +got):\n%s", n, diff)
					}
					checkNoOrphans(t, e, mode == ModeUpsert)
				}
				if n, ok := lastEpoch(t, e, "svc-a"); !ok || n != epochs[len(epochs)-1] {
					t.Errorf("LastEpoch = %d %v, want %d", n, ok, epochs[len(epochs)-1])
				}
			})
		}
	}
}

// hookProvider is the Delta provider with test hooks around its commits
// and staging: a competing writer that always wins, a context cancelled
// at an awkward moment.
type hookProvider struct {
	*deltalake.Provider
	mu          sync.Mutex
	before      func() error // before every commit attempt
	errs        []error      // what before returned
	afterCommit func()       // after every commit, landed or not
	beforeStage func() error // before every staging run; an error fails it
	afterStage  func()       // after every staging run
}

func (p *hookProvider) Commit(ctx context.Context, id catalogadapter.TableIdent, receipts []catalogadapter.Receipt, opts catalogadapter.CommitOptions) (catalogadapter.CommitOutcome, error) {
	p.mu.Lock()
	if p.before != nil {
		if err := p.before(); err != nil {
			p.errs = append(p.errs, err)
		}
	}
	p.mu.Unlock()
	out, err := p.Provider.Commit(ctx, id, receipts, opts)
	if p.afterCommit != nil {
		p.afterCommit()
	}
	return out, err
}

func (p *hookProvider) StageSQL(ctx context.Context, id catalogadapter.TableIdent, q catalogadapter.Querier, src catalogadapter.Source) (catalogadapter.Receipt, error) {
	if p.beforeStage != nil {
		if err := p.beforeStage(); err != nil {
			return catalogadapter.Receipt{}, err
		}
	}
	r, err := p.Provider.StageSQL(ctx, id, q, src)
	if p.afterStage != nil {
		p.afterStage()
	}
	return r, err
}

// StageSmall runs the staging hooks too: a small epoch stages through it
// rather than StageSQL.
func (p *hookProvider) StageSmall(ctx context.Context, id catalogadapter.TableIdent, rec arrow.RecordBatch) (catalogadapter.Receipt, error) {
	if p.beforeStage != nil {
		if err := p.beforeStage(); err != nil {
			return catalogadapter.Receipt{}, err
		}
	}
	r, err := p.Provider.StageSmall(ctx, id, rec)
	if p.afterStage != nil {
		p.afterStage()
	}
	return r, err
}

// TestCommitConflictFailsClearly: a commit that cannot succeed returns an
// error naming the epoch and the table, makes nothing visible, and leaves
// the sink usable: the epoch rolls back, staged files go, and the epoch
// commits when tried again.
func TestCommitConflictFailsClearly(t *testing.T) {
	const epoch = 7
	type failCase struct {
		mode Mode
		// setup returns the provider for the sink (nil: the env's).
		setup func(t *testing.T, e *env) catalogadapter.Provider
		// breakCommit runs between PreCommit and CommitEpoch; it returns the
		// context to commit with and a function that undoes the damage.
		breakCommit func(t *testing.T, e *env, s *Sink) (context.Context, func())
		// check checks the error beyond naming the epoch and table.
		check func(t *testing.T, s *Sink, err error)
	}
	var interfere *hookProvider
	var interfered [][]row
	cases := map[string]failCase{
		"read-only table": {
			breakCommit: func(t *testing.T, e *env, s *Sink) (context.Context, func()) {
				logDir := filepath.Join(e.dir, "_delta_log")
				restore := func() {
					os.Chmod(logDir, 0o755)
					os.Chmod(e.dir, 0o755)
				}
				t.Cleanup(restore) // so that TempDir can be removed
				for _, d := range []string{logDir, e.dir} {
					if err := os.Chmod(d, 0o555); err != nil {
						t.Fatal(err)
					}
				}
				probe := filepath.Join(logDir, ".probe")
				if err := os.WriteFile(probe, nil, 0o644); err == nil {
					os.Remove(probe)
					restore()
					s.RollbackEpoch(context.Background(), epoch)
					t.Skip("chmod does not stop writes here (running as root?): cannot make the table read-only")
				}
				return context.Background(), restore
			},
			check: func(t *testing.T, s *Sink, err error) {
				if !errors.Is(err, os.ErrPermission) {
					t.Errorf("error does not wrap the permission error: %v", err)
				}
			},
		},
		"staged file lost": {
			breakCommit: func(t *testing.T, e *env, s *Sink) (context.Context, func()) {
				_, live := liveFiles(t, e.dir)
				lost := 0
				for _, p := range e.parquetFiles() {
					if !live[p] {
						if err := os.Remove(p); err != nil {
							t.Fatal(err)
						}
						lost++
					}
				}
				if lost == 0 {
					t.Fatal("PreCommit staged no file")
				}
				return context.Background(), func() {}
			},
			check: func(t *testing.T, s *Sink, err error) {
				if !errors.Is(err, catalogadapter.ErrInvalid) || !strings.Contains(err.Error(), "missing") {
					t.Errorf("error does not say a staged file is missing: %v", err)
				}
			},
		},
		"cancelled context": {
			breakCommit: func(t *testing.T, e *env, s *Sink) (context.Context, func()) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx, func() {}
			},
			check: func(t *testing.T, s *Sink, err error) {
				if !errors.Is(err, context.Canceled) {
					t.Errorf("error does not wrap context.Canceled: %v", err)
				}
			},
		},
		"upsert file rewritten on every redo": {
			mode: ModeUpsert,
			setup: func(t *testing.T, e *env) catalogadapter.Provider {
				// Another writer rewrites the file holding id 0 just before
				// each of our commit attempts.
				other := e.open(writerConfig(e, "other", "svc-b", nil, ModeUpsert))
				interfere = &hookProvider{Provider: e.delta()}
				n := int64(0)
				interfere.before = func() error {
					n++
					rows := []row{{Op: "U", ID: 0, Amount: 1000 + float64(n), Region: "other"}}
					r := newRun(t, other, n, rows)
					if r.run(context.Background()); r.err != nil {
						return r.err
					}
					interfered = append(interfered, rows)
					return nil
				}
				return interfere
			},
			breakCommit: func(t *testing.T, e *env, s *Sink) (context.Context, func()) {
				return context.Background(), func() {
					interfere.mu.Lock()
					interfere.before = nil
					interfere.mu.Unlock()
				}
			},
			check: func(t *testing.T, s *Sink, err error) {
				if !errors.Is(err, catalogadapter.ErrConflict) {
					t.Errorf("error does not wrap ErrConflict: %v", err)
				}
				if got := s.Metrics().Conflicts; got != maxMergeRedos {
					t.Errorf("%d merge redos, want %d", got, maxMergeRedos)
				}
				if interfere.errs != nil {
					t.Fatalf("the interfering writer failed: %v", interfere.errs)
				}
				if len(interfered) != maxMergeRedos+1 {
					t.Errorf("%d competing commits, want one before each of %d attempts", len(interfered), maxMergeRedos+1)
				}
			},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			interfere, interfered = nil, nil
			e := newEnv(t)
			ctx := context.Background()
			mode := c.mode
			if mode == "" {
				mode = ModeAppend
			}
			var p catalogadapter.Provider
			cfg := writerConfig(e, "a", "svc-a", nil, mode)
			s := e.open(cfg) // creates the table with the env's provider
			if c.setup != nil {
				if p = c.setup(t, e); p != nil {
					s.Close()
					cfg.Provider = p
					s = e.open(cfg)
				}
			}
			model := &upsertModel{rows: map[modelKey]row{}}
			seed := []row{{Op: "I", ID: 0, Amount: 1}, {Op: "I", ID: 1, Amount: 1}}
			if mode == ModeAppend {
				seed = []row{{ID: 0, Amount: 1}, {ID: 1, Amount: 1}}
			}
			var restore func()
			if interfere != nil {
				b := interfere.before
				interfere.before = nil // the seed commits in peace
				restore = func() { interfere.before = b }
			}
			e.epoch(s, 1, batch(t, seed...))
			model.apply([][]row{seed})
			if restore != nil {
				restore()
			}

			rows := []row{{ID: 70, Amount: epoch}, {ID: 71, Amount: epoch}}
			if mode == ModeUpsert {
				rows = []row{{Op: "U", ID: 0, Amount: epoch}, {Op: "U", ID: 70, Amount: epoch}}
			}
			r := newRun(t, s, epoch, rows)
			if err := r.prepare(ctx); err != nil {
				t.Fatal(err)
			}
			commitCtx, undo := c.breakCommit(t, e, s)
			res, err := s.CommitEpoch(commitCtx, epoch)
			undo()
			if err == nil {
				t.Fatalf("commit succeeded: %+v", res)
			}
			t.Logf("error: %v", err)
			if !strings.Contains(err.Error(), fmt.Sprintf("epoch %d", epoch)) || !strings.Contains(err.Error(), e.dir) {
				t.Errorf("error does not name epoch %d and table %s: %v", epoch, e.dir, err)
			}
			c.check(t, s, err)

			// Nothing of the epoch is visible.
			for _, rs := range interfered {
				model.apply([][]row{rs})
			}
			if diff := cmp.Diff(model.sorted(), e.rows()); diff != "" {
				t.Errorf("rows after the failed commit (-want +got):\n%s", diff)
			}
			if n, ok := lastEpoch(t, e, "svc-a"); !ok || n != 1 {
				t.Errorf("LastEpoch = %d %v after the failed commit, want 1", n, ok)
			}
			if n, ok := s.LastCommittedEpoch(); !ok || n != 1 {
				t.Errorf("LastCommittedEpoch = %d %v after the failed commit, want 1", n, ok)
			}
			if h := s.Health(); s.State() != StateRunning || h.Status == Unhealthy {
				t.Errorf("the sink is %v, %+v after a failed commit; it should stay usable", s.State(), h)
			}

			// Roll back: the staged files go.
			if err := s.RollbackEpoch(ctx, epoch); err != nil {
				t.Fatalf("rollback after the failed commit: %v", err)
			}
			checkNoOrphans(t, e, mode == ModeUpsert)

			// The same epoch commits when tried again.
			again := newRun(t, s, epoch, rows)
			if again.run(ctx); again.err != nil {
				t.Fatalf("epoch %d again: %v", epoch, again.err)
			}
			if again.res.Skipped || again.res.Rows == 0 {
				t.Fatalf("epoch %d again: %+v", epoch, again.res)
			}
			model.apply([][]row{rows})
			if diff := cmp.Diff(model.sorted(), e.rows()); diff != "" {
				t.Errorf("rows after the retried epoch (-want +got):\n%s", diff)
			}
			if n, ok := lastEpoch(t, e, "svc-a"); !ok || n != epoch {
				t.Errorf("LastEpoch = %d %v, want %d", n, ok, epoch)
			}
			checkNoOrphans(t, e, mode == ModeUpsert)
		})
	}
}

// TestRaceCancelAfterCommitLanded: the caller's context is cancelled in the
// moment after the commit landed (a deadline racing the commit). The epoch
// is in the table, so CommitEpoch must report it committed and the sink
// must stay usable; reporting a failure would make the caller roll back or
// retry an epoch that is already visible.
func TestRaceCancelAfterCommitLanded(t *testing.T) {
	for _, mode := range []Mode{ModeAppend, ModeUpsert} {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnv(t)
			hook := &hookProvider{Provider: e.delta()}
			s := e.open(writerConfig(e, "a", "svc-a", hook, mode))
			rows1 := []row{{Op: "I", ID: 1, Amount: 1}}
			e.epoch(s, 1, batch(t, rows1...))

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			hook.afterCommit = cancel
			rows2 := []row{{Op: "I", ID: 2, Amount: 2}}
			r := newRun(t, s, 2, rows2)
			r.run(ctx)
			hook.afterCommit = nil
			if n, ok := lastEpoch(t, e, "svc-a"); !ok || n != 2 {
				t.Fatalf("LastEpoch = %d %v: the commit did not land, the test does not test anything", n, ok)
			}
			if r.err != nil {
				t.Errorf("epoch 2 landed as version %d but CommitEpoch failed: %v", r.res.Version, r.err)
			}
			if r.res.Skipped || r.res.Version != 2 {
				t.Errorf("epoch 2: %+v, want version 2", r.res)
			}
			if n, ok := s.LastCommittedEpoch(); !ok || n != 2 {
				t.Errorf("LastCommittedEpoch = %d %v, want 2", n, ok)
			}
			if st, h := s.State(), s.Health(); st != StateRunning || h.Status == Unhealthy {
				t.Errorf("the sink is %v, %+v after its epoch landed", st, h)
			}
			// The next epoch commits, and holds only its own rows.
			rows3 := []row{{Op: "I", ID: 3, Amount: 3}}
			next := newRun(t, s, 3, rows3)
			if next.run(context.Background()); next.err != nil {
				t.Fatalf("epoch 3 after the cancelled one: %v", next.err)
			}
			want := []row{{ID: 1, Amount: 1}, {ID: 2, Amount: 2}, {ID: 3, Amount: 3}}
			if diff := cmp.Diff(want, e.rows()); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRaceCancelAfterStaging: the caller's context is cancelled just after
// an append epoch's rows were staged, before the buffer was cleared. If
// PreCommit fails, the caller may call it again; either way every row must
// land once. The rows are given as int32 ids, which are not the table's
// type, so they wait in DuckDB's buffer table (not as Arrow).
func TestRaceCancelAfterStaging(t *testing.T) {
	e := newEnv(t)
	hook := &hookProvider{Provider: e.delta()}
	s := e.open(writerConfig(e, "a", "svc-a", hook, ModeAppend))
	rec := int32Batch(t, 1, 2)

	ctx := context.Background()
	if err := s.BeginEpoch(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, rec); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hook.afterStage = cancel
	err := s.PreCommit(cctx, 1)
	hook.afterStage = nil
	if err != nil {
		t.Logf("PreCommit with the context cancelled after staging: %v; calling it again", err)
		if err := s.PreCommit(ctx, 1); err != nil {
			t.Fatalf("PreCommit again: %v", err)
		}
	}
	res, err := s.CommitEpoch(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]row{{ID: 1}, {ID: 2}}, e.rows()); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if res.Rows != 2 {
		t.Errorf("CommitEpoch reports %d rows, want 2", res.Rows)
	}
}

// int32Batch is a batch of ids alone, typed int32: not the table's type,
// so its rows go through DuckDB's buffer table rather than wait as Arrow.
func int32Batch(t testing.TB, ids ...int32) arrow.RecordBatch {
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Int32Builder).AppendValues(ids, nil)
	rec := b.NewRecordBatch()
	t.Cleanup(rec.Release)
	return rec
}
