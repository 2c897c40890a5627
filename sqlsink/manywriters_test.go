package sqlsink

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/deltalake"
	"github.com/lakesql/lakesql/catalogadapter/providertest"
	"github.com/lakesql/lakesql/internal/s3test"
	"github.com/lakesql/lakesql/internal/storageloc"
	"github.com/lakesql/lakesql/tableformat/delta"
	"github.com/lakesql/lakesql/tableformat/objectstore"
)

// The many-writers tests run several writer processes (the test binary
// re-executed, see manywriters_child_test.go) against ONE Delta table, on
// local disk and on a real S3 server (versitygw), and check the log and the
// rows afterwards:
//
//   - TestManyWriters: writers with their own ids append concurrently;
//     every epoch is one version, versions are contiguous, every row lands
//     once, every writer's txn is at its last epoch.
//   - TestManyWritersSameWriter: two processes with the same writer id
//     replay the same epochs; each epoch lands once, one process reports it
//     committed and the other skipped.
//   - TestManyWritersUpsert: two upsert writers change overlapping keys;
//     both commit every epoch (redoing merges that lost), and every version
//     of the table equals the epochs applied in the order the log records
//     them. TestUpsertRaceSameNewKey is its smallest failing case, in one
//     process.
//
// The processes meet at a barrier before their first epoch, and, in some
// scenarios, before committing chosen epochs (mwLockstep), so that those
// commits race for certain. LAKESQL_STRESS=1 runs larger numbers.

var mwStress = os.Getenv("LAKESQL_STRESS") == "1"

// mwStressRetries is deltalake.Options.MaxRetries of the writer processes
// under LAKESQL_STRESS=1: 16 writers exhaust the default 20 (8 do not).
// Elsewhere the processes keep the provider's default.
const mwStressRetries = 100

// mwTarget is where a test's table lives.
type mwTarget struct {
	loc      string              // directory or s3:// location
	so       objectstore.Options // the parent's storage options (zero on local disk)
	childEnv []string            // what a writer process needs to reach the storage
}

// forEachTarget runs body on local disk and on versitygw.
func forEachTarget(t *testing.T, body func(t *testing.T, tg mwTarget)) {
	t.Run("local", func(t *testing.T) {
		body(t, mwTarget{loc: filepath.Join(t.TempDir(), "orders")})
	})
	t.Run("versitygw", func(t *testing.T) {
		srv := s3test.Start(t)
		so, err := objectstore.FromProperties(srv.Options())
		if err != nil {
			t.Fatal(err)
		}
		so.CacheDir = t.TempDir()
		body(t, mwTarget{
			loc:      srv.URL(fmt.Sprintf("%s-%d/orders", t.Name(), time.Now().UnixNano())),
			so:       so,
			childEnv: append(srv.Env(), mwEndpointEnv+"="+srv.Endpoint),
		})
	})
}

// mwTable is the parent's view of the table: a provider of its own to
// create and read it, and its storage to read the log.
type mwTable struct {
	t     *testing.T
	tg    mwTarget
	id    catalogadapter.TableIdent
	db    *sql.DB
	p     *deltalake.Provider
	store delta.Storage
}

// createMWTable creates the table (version 0) before any writer starts.
func createMWTable(t *testing.T, tg mwTarget) *mwTable {
	t.Helper()
	ctx := context.Background()
	db := providertest.OpenDuckDB(t)
	p := deltalake.New(db, deltalake.Options{ObjectStorage: tg.so})
	t.Cleanup(func() { p.Close() })
	m := &mwTable{t: t, tg: tg, id: catalogadapter.TableIdent{Name: tg.loc}, db: db, p: p}
	if err := p.CreateTable(ctx, m.id, catalogadapter.TableDef{Schema: orderSchema}); err != nil {
		t.Fatal(err)
	}
	if storageloc.IsLocation(tg.loc) {
		s, err := objectstore.Open(ctx, tg.loc, tg.so)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		m.store = s
	} else {
		s, err := delta.NewLocalStorage(tg.loc)
		if err != nil {
			t.Fatal(err)
		}
		m.store = s
	}
	return m
}

// log reads the table's Delta log (readDeltaLog).
func (m *mwTable) log() []logEntry {
	m.t.Helper()
	return readDeltaLog(m.t, m.store)
}

// rows reads the latest version's rows, sorted.
func (m *mwTable) rows() []row { return m.rowsAt(-1) }

// rowsAt reads the rows of a version (-1: the latest), sorted.
func (m *mwTable) rowsAt(version int64) []row {
	t := m.t
	t.Helper()
	out := scanRows(t, m.p, m.id, m.db, version)
	sortRows(out)
	return out
}

// latest reads the latest snapshot from the storage, without the provider.
func (m *mwTable) latest() *delta.Snapshot {
	m.t.Helper()
	snap, err := delta.NewTable(m.store).Latest(context.Background())
	if err != nil {
		m.t.Fatal(err)
	}
	return snap
}

// mwChild is one writer process.
type mwChild struct {
	writer  string
	cmd     *exec.Cmd
	out     bytes.Buffer
	errOut  bytes.Buffer
	exitErr error
	epochs  []mwReport // the "epoch" lines, in order
	done    *mwReport
}

func (c *mwChild) describe() string {
	return fmt.Sprintf("writer %s (exit %v)\nstdout:\n%s\nstderr:\n%s", c.writer, c.exitErr, c.out.String(), c.errOut.String())
}

// mwPhase is one run of writer processes.
type mwPhase struct {
	children []*mwChild
	goAt     time.Time
	wall     time.Duration // from the go to the last process's exit
	lastAt   time.Time     // the last commit any process reported
}

// runWriters starts one process per writer id (ids may repeat), waits until
// every one has opened its sink, lets them all go at once, and waits for
// them to finish. A process that fails, or reports an error, fails the test.
func runWriters(t *testing.T, tg mwTarget, scenario string, writers []string, epochs int64, maxRetries int) *mwPhase {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	env := append(os.Environ(), mwChildEnv+"=1", mwTableEnv+"="+tg.loc, mwScenarioEnv+"="+scenario,
		mwEpochsEnv+"="+strconv.FormatInt(epochs, 10), mwDirEnv+"="+dir,
		mwRetriesEnv+"="+strconv.Itoa(maxRetries), mwProcsEnv+"="+strconv.Itoa(len(writers)), "TMPDIR="+dir)
	env = append(env, tg.childEnv...)
	ph := &mwPhase{}
	exited := make(chan *mwChild, len(writers))
	for _, w := range writers {
		c := &mwChild{writer: w}
		c.cmd = exec.CommandContext(ctx, exe, "-test.run=^TestManyWritersChild$", "-test.count=1", "-test.timeout=5m")
		c.cmd.Env = append(env, mwWriterEnv+"="+w)
		c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.errOut
		if err := c.cmd.Start(); err != nil {
			t.Fatalf("start writer %s: %v", w, err)
		}
		ph.children = append(ph.children, c)
		go func() {
			c.exitErr = c.cmd.Wait()
			exited <- c
		}()
	}
	remaining := len(writers)
	collect := func(c *mwChild) {
		remaining--
		if c.exitErr != nil {
			cancel() // the others would wait for a go that never comes
			for remaining > 0 {
				<-exited
				remaining--
			}
			t.Fatalf("a writer process failed:\n%s", c.describe())
		}
	}

	// The barrier: every process has opened its sink.
	for {
		ready, err := filepath.Glob(filepath.Join(dir, "ready-*"))
		if err != nil {
			t.Fatal(err)
		}
		if len(ready) == len(writers) {
			break
		}
		select {
		case c := <-exited:
			collect(c)
			t.Fatalf("writer %s exited before the go:\n%s", c.writer, c.describe())
		case <-ctx.Done():
			t.Fatalf("the writers did not get ready: %v", ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := os.WriteFile(filepath.Join(dir, mwGoFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ph.goAt = time.Now()
	for remaining > 0 {
		collect(<-exited)
	}
	ph.wall = time.Since(ph.goAt)

	for _, c := range ph.children {
		sc := bufio.NewScanner(bytes.NewReader(c.out.Bytes()))
		for sc.Scan() {
			l, ok := strings.CutPrefix(sc.Text(), mwTag)
			if !ok {
				continue // the test framework's own lines
			}
			var r mwReport
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("writer %s: bad report %q: %v", c.writer, l, err)
			}
			switch r.Kind {
			case "epoch":
				c.epochs = append(c.epochs, r)
				if at := time.Unix(0, r.At); at.After(ph.lastAt) {
					ph.lastAt = at
				}
			case "done":
				c.done = &r
			default:
				t.Fatalf("writer %s reported: %s\n%s", c.writer, l, c.describe())
			}
		}
		if c.done == nil || int64(len(c.epochs)) != epochs {
			t.Fatalf("writer %s reported %d epochs of %d, done %v:\n%s", c.writer, len(c.epochs), epochs, c.done != nil, c.describe())
		}
		for i, r := range c.epochs {
			if r.Writer != c.writer || r.Epoch != int64(i+1) {
				t.Fatalf("writer %s: report %d is %+v, want epoch %d", c.writer, i, r, i+1)
			}
		}
	}
	return ph
}

// TestManyWriters: 8 processes (16 under LAKESQL_STRESS=1) with writer ids
// w0..w7 append 50 epochs each (200 under stress) into one table. Blind
// appends never conflict; a lost race is retried inside the provider.
func TestManyWriters(t *testing.T) {
	writers, epochs, maxRetries := 8, int64(50), 0
	if mwStress {
		writers, epochs, maxRetries = 16, 200, mwStressRetries
	}
	forEachTarget(t, func(t *testing.T, tg mwTarget) {
		m := createMWTable(t, tg)
		ids := make([]string, writers)
		for i := range ids {
			ids[i] = fmt.Sprintf("w%d", i)
		}
		ph := runWriters(t, tg, mwAppend, ids, epochs, maxRetries)
		total := int64(writers) * epochs

		// What the writers say: every epoch committed, once, as its own version.
		byVersion := map[int64]mwReport{}
		retries, maxSeen, sinkRetries := 0, 0, int64(0)
		for _, c := range ph.children {
			for _, r := range c.epochs {
				if r.Skipped || r.Rows != 3 {
					t.Errorf("writer %s epoch %d: %+v, want 3 rows committed", r.Writer, r.Epoch, r)
				}
				if r.Version < 1 || r.Version > total {
					t.Errorf("writer %s epoch %d landed as version %d, outside 1..%d", r.Writer, r.Epoch, r.Version, total)
				}
				if prev, dup := byVersion[r.Version]; dup {
					t.Errorf("version %d reported by writer %s epoch %d and writer %s epoch %d",
						r.Version, prev.Writer, prev.Epoch, r.Writer, r.Epoch)
				}
				byVersion[r.Version] = r
				retries += r.Retries
				maxSeen = max(maxSeen, r.Retries)
			}
			sinkRetries += int64(c.done.Retries)
		}
		if sinkRetries != int64(retries) {
			t.Errorf("the sinks count %d retries, their commits reported %d", sinkRetries, retries)
		}

		// What the log says: versions 0..total, each one epoch, the one its writer reported.
		log := m.log()
		if got := int64(len(log)) - 1; got != total {
			t.Fatalf("the log ends at version %d, want %d (one version per epoch)", got, total)
		}
		seen := map[writerEpoch]int64{}
		for _, le := range log[1:] {
			we, ok := le.recorded()
			if !ok {
				t.Errorf("version %d records txns %+v, want one", le.version, le.txns)
				continue
			}
			if prev, dup := seen[we]; dup {
				t.Errorf("%+v is recorded by versions %d and %d", we, prev, le.version)
			}
			seen[we] = le.version
			if r := byVersion[le.version]; r.Writer != we.writer || r.Epoch != we.epoch {
				t.Errorf("version %d records %+v; the writers reported %+v", le.version, we, r)
			}
			if le.op != "WRITE" || len(le.adds) < 1 || len(le.removes) != 0 {
				t.Errorf("version %d: %s with %d adds and %d removes, want a WRITE that only adds", le.version, le.op, len(le.adds), len(le.removes))
			}
		}
		snap := m.latest()
		if snap.Version != total {
			t.Errorf("latest snapshot is version %d, want %d", snap.Version, total)
		}
		for _, w := range ids {
			if v, ok := snap.TxnVersion(w); !ok || v != epochs {
				t.Errorf("txn version of %s is %d (%v), want %d", w, v, ok, epochs)
			}
		}

		// Every row once.
		var want []row
		for _, w := range ids {
			for e := int64(1); e <= epochs; e++ {
				want = append(want, mwRows(mwAppend, w, e)...)
			}
		}
		sortRows(want)
		got := m.rows()
		distinct := map[int64]bool{}
		for _, r := range got {
			distinct[r.ID] = true
		}
		if len(got) != len(want) || len(distinct) != len(want) {
			t.Errorf("the table has %d rows with %d distinct ids, want %d", len(got), len(distinct), len(want))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("rows (-want +got):\n%s", diff)
		}

		span := ph.lastAt.Sub(ph.goAt)
		limit := maxRetries
		if limit == 0 {
			limit = deltalake.DefaultMaxRetries
		}
		t.Logf("%d writers x %d epochs = %d commits in %v wall (%.1f commits/s; last commit after %v, %.1f commits/s); "+
			"lost races retried: %d in all, at most %d in one commit (MaxRetries %d)",
			writers, epochs, total, ph.wall.Round(time.Millisecond), float64(total)/ph.wall.Seconds(),
			span.Round(time.Millisecond), float64(total)/span.Seconds(), retries, maxSeen, limit)
	})
}

// TestManyWritersSameWriter: two processes with the same writer id run the
// same epochs with the same rows, as a writer and its replacement would
// after a failover that left both alive. Each epoch lands once: one process
// reports it committed, the other skipped.
func TestManyWritersSameWriter(t *testing.T) {
	epochs := int64(20)
	if mwStress {
		epochs = 100
	}
	const writer = "w0"
	forEachTarget(t, func(t *testing.T, tg mwTarget) {
		m := createMWTable(t, tg)
		ph := runWriters(t, tg, mwReplay, []string{writer, writer}, epochs, 0)
		a, b := ph.children[0], ph.children[1]
		wins := [2]int{}
		for i := range epochs {
			e := i + 1
			ra, rb := a.epochs[i], b.epochs[i]
			if ra.Skipped == rb.Skipped {
				t.Errorf("epoch %d: process 1 %+v, process 2 %+v; want one committed, one skipped", e, ra, rb)
				continue
			}
			landed, skipped := ra, rb
			wins[0]++
			if ra.Skipped {
				landed, skipped = rb, ra
				wins[0], wins[1] = wins[0]-1, wins[1]+1
			}
			if landed.Version != e || landed.Rows != int64(len(mwRows(mwReplay, writer, e))) {
				t.Errorf("epoch %d committed as %+v, want version %d with its %d rows", e, landed, e, len(mwRows(mwReplay, writer, e)))
			}
			if skipped.Rows != 0 {
				t.Errorf("epoch %d: the skipped run reports %+v", e, skipped)
			}
		}
		log := m.log()
		if got := int64(len(log)) - 1; got != epochs {
			t.Fatalf("the log ends at version %d, want %d (one version per epoch)", got, epochs)
		}
		for _, le := range log[1:] {
			if we, ok := le.recorded(); !ok || we != (writerEpoch{writer, le.version}) {
				t.Errorf("version %d records %+v, want %s epoch %d", le.version, le.txns, writer, le.version)
			}
		}
		if v, ok := m.latest().TxnVersion(writer); !ok || v != epochs {
			t.Errorf("txn version of %s is %d (%v), want %d", writer, v, ok, epochs)
		}
		// Version v holds epochs 1..v, each once.
		var want []row
		for v := int64(1); v <= epochs; v++ {
			want = append(want, mwRows(mwReplay, writer, v)...)
			sortRows(want)
			if diff := cmp.Diff(want, m.rowsAt(v)); diff != "" {
				t.Errorf("rows of version %d (-want +got):\n%s", v, diff)
				break
			}
		}
		if diff := cmp.Diff(want, m.rows()); diff != "" {
			t.Errorf("rows (-want +got):\n%s", diff)
		}
		t.Logf("%d epochs in %v (every second one lined up): process 1 landed %d, process 2 landed %d",
			epochs, ph.wall.Round(time.Millisecond), wins[0], wins[1])
	})
}

// mwDupIDs returns the ids that rows hold more than once, sorted.
func mwDupIDs(rows []row) []int64 {
	n := map[int64]int{}
	var out []int64
	for _, r := range rows {
		if n[r.ID]++; n[r.ID] == 2 {
			out = append(out, r.ID)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// TestManyWritersUpsert: two upsert writers change three quarters of ids
// 0..99 in every epoch, starting from an empty table (both merges of epoch
// 1 read it empty; later epochs run free). Their merges collide all the
// time; every epoch must still commit (the sink redoes a merge whose files
// a winner rewrote), and every version of the table must equal the epochs
// applied in the order the log records them: a serial order.
func TestManyWritersUpsert(t *testing.T) {
	epochs := int64(10)
	if mwStress {
		epochs = 40
	}
	writers := []string{"ua", "ub"}
	forEachTarget(t, func(t *testing.T, tg mwTarget) {
		m := createMWTable(t, tg)
		ph := runWriters(t, tg, mwUpsert, writers, epochs, 0)
		reported := map[writerEpoch]mwReport{}
		for _, c := range ph.children {
			for _, r := range c.epochs {
				if r.Skipped {
					t.Errorf("writer %s epoch %d was skipped: %+v", r.Writer, r.Epoch, r)
				}
				reported[writerEpoch{r.Writer, r.Epoch}] = r
			}
		}
		log := m.log()
		total := int64(len(writers)) * epochs
		if got := int64(len(log)) - 1; got != total {
			t.Fatalf("the log ends at version %d, want %d (one version per epoch)", got, total)
		}
		model := &upsertModel{rows: map[modelKey]row{}}
		last := map[string]int64{}
		var order []string
		badVersion := false
		for _, le := range log[1:] {
			we, ok := le.recorded()
			r, known := reported[we]
			if !ok || !known {
				t.Fatalf("version %d records %+v, which no writer committed", le.version, le.txns)
			}
			if r.Version != le.version {
				t.Errorf("%+v is version %d in the log, the writer reported %d", we, le.version, r.Version)
			}
			if we.epoch != last[we.writer]+1 {
				t.Errorf("version %d records %s epoch %d after its epoch %d", le.version, we.writer, we.epoch, last[we.writer])
			}
			last[we.writer] = we.epoch
			if le.op != "MERGE" {
				t.Errorf("version %d: operation %q, want MERGE", le.version, le.op)
			}
			model.apply([][]row{mwRows(mwUpsert, we.writer, we.epoch)})
			order = append(order, fmt.Sprintf("%s%d", strings.TrimPrefix(we.writer, "u"), we.epoch))
			// Every version is the serial order so far, not just the last.
			if !badVersion {
				at := m.rowsAt(le.version)
				if dups := mwDupIDs(at); len(dups) > 0 {
					t.Errorf("version %d (%s) holds %d ids more than once, e.g. %d: the primary key is not unique",
						le.version, order[len(order)-1], len(dups), dups[0])
				}
				if diff := cmp.Diff(model.sorted(), at); diff != "" {
					t.Errorf("version %d (%s) differs from the epochs %v applied in log order (-want +got):\n%s",
						le.version, order[len(order)-1], order, diff)
					badVersion = true
				}
			}
		}
		got := m.rows()
		if dups := mwDupIDs(got); len(dups) > 0 {
			t.Errorf("the table holds %d ids more than once: %v", len(dups), dups)
		}
		if diff := cmp.Diff(model.sorted(), got); diff != "" {
			t.Errorf("the table vs the epochs applied in log order %v (-want +got):\n%s", order, diff)
		}
		var redos []string
		for _, c := range ph.children {
			redos = append(redos, fmt.Sprintf("%s %d", c.writer, c.done.Conflicts))
		}
		t.Logf("%d epochs in %v; log order %v; merges redone: %s", total, ph.wall.Round(time.Millisecond),
			order, strings.Join(redos, ", "))
	})
}

// TestUpsertRaceSameNewKey is the smallest form of what
// TestManyWritersUpsert runs into: two upsert sinks both merge against a
// table that does not hold key 1 yet, so neither rewrites a file, and both
// insert it. Whichever commits second must not add a second row for key 1:
// it must conflict and redo its merge on the table the first one made.
func TestUpsertRaceSameNewKey(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a := e.open(writerConfig(e, "a", "svc-a", nil, ModeUpsert))
	b := e.open(writerConfig(e, "b", "svc-b", secondProvider(t), ModeUpsert))
	ra := newRun(t, a, 1, []row{{Op: "U", ID: 1, Amount: 1, Region: "a"}})
	rb := newRun(t, b, 1, []row{{Op: "U", ID: 1, Amount: 2, Region: "b"}})
	for _, r := range []*epochRun{ra, rb} { // both merges read version 0
		if err := r.prepare(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []*epochRun{ra, rb} {
		if r.res, r.err = r.sink.CommitEpoch(ctx, 1); r.err != nil {
			t.Fatalf("%s: %v", r.writer(), r.err)
		}
	}
	if ra.res.Version != 1 || rb.res.Version != 2 {
		t.Errorf("versions %d and %d, want 1 and 2", ra.res.Version, rb.res.Version)
	}
	// Serially, b's upsert replaces a's row.
	if diff := cmp.Diff([]row{{ID: 1, Amount: 2, Region: "b"}}, e.rows()); diff != "" {
		t.Errorf("rows after a then b upserted key 1 (-want +got):\n%s", diff)
	}
	if got := b.Metrics().Conflicts; got != 1 {
		t.Errorf("b redid its merge %d times, want 1", got)
	}
}
