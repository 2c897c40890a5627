package sqlsink

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/deltalake"
	"github.com/lakesql/lakesql/catalogadapter/providertest"
	"github.com/lakesql/lakesql/internal/clocktest"
	"github.com/lakesql/lakesql/internal/s3test"
	"github.com/lakesql/lakesql/tableformat/delta"
	"github.com/lakesql/lakesql/tableformat/objectstore"
)

// Storage faults under a running sink, on local disk and on versitygw (a
// real S3 server): the server killed in the middle of a commit loop
// (TestStorageOutageMidCommitLoop), a storage call failing in the middle
// of staging or committing an epoch (TestStorageFaultWhileStaging), and a
// log entry put whose outcome the writer cannot see
// (TestCommitOutcomeUnknown). Each checks what a client relies on: a
// failed epoch is invisible, replaying it lands its rows exactly once, and
// every version in the log is whole.

const sfWriter = "sf-writer"

// sfRows is epoch e's upstream: 1 to 3 rows, over as many regions (so a
// table partitioned by region stages one file per row).
func sfRows(e int64) []row {
	var rows []row
	for i := int64(0); i <= e%3; i++ {
		id := e*100 + i
		rows = append(rows, row{ID: id, Amount: float64(id) / 4, Region: []string{"eu", "us", "ap"}[(e+i)%3]})
	}
	return rows
}

// sfIDs is the ids of epochs 1..n, sorted: what version n must hold.
func sfIDs(n int64) []int64 {
	ids := []int64{}
	for e := int64(1); e <= n; e++ {
		for _, r := range sfRows(e) {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// ---------------------------------------------------------------------------
// Fault injection below the Delta log: WrapStorage puts an sfStore around
// every table's storage.

var (
	sfErrInjected = errors.New("injected storage fault")
	// sfErrLostResponse is what a put whose request reached the store but
	// whose answer did not looks like to the writer.
	sfErrLostResponse = errors.New("i/o timeout (injected: the put landed, its response was lost)")
)

type sfFaults struct {
	mu sync.Mutex
	// The nth through (nth+count-1)th calls of method, counted from arm,
	// fail before reaching the store.
	method     string
	nth, count int
	seen       int
	// lostPut: the next put of a commit log entry reaches the store, and
	// then reports sfErrLostResponse. failReadBack: so does the first read
	// of that entry after it (the writer's read-back).
	lostPut, failReadBack bool
	readBack              string
	// injected counts the faults injected since arm.
	injected int
	// hook runs before a call reaches the store; the returned func, if
	// any, runs after it returned.
	hook func(method, key string) (after func())
	// stagingDir is the underlying storage's staging directory.
	stagingDir string
}

func (f *sfFaults) arm(method string, nth, count int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.method, f.nth, f.count, f.seen, f.injected = method, nth, count, 0, 0
}

func (f *sfFaults) armLostPut(failReadBack bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lostPut, f.failReadBack, f.readBack, f.injected = true, failReadBack, "", 0
}

func (f *sfFaults) disarm() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.method, f.lostPut, f.failReadBack, f.readBack = "", false, false, ""
}

func (f *sfFaults) setHook(h func(method, key string) func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hook = h
}

func (f *sfFaults) injectedCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected
}

// before decides the fate of a call before it reaches the store.
func (f *sfFaults) before(method, key string) (after func(), err error) {
	f.mu.Lock()
	hook := f.hook
	if method == f.method {
		f.seen++
		if f.seen >= f.nth && f.seen < f.nth+f.count {
			f.injected++
			err = sfErrInjected
		}
	}
	if method == "Get" && key != "" && key == f.readBack {
		f.readBack = ""
		f.injected++
		err = sfErrInjected
	}
	f.mu.Unlock()
	if hook != nil {
		after = hook(method, key)
	}
	return after, err
}

// losePut tells whether this successful put's answer is to be lost.
func (f *sfFaults) losePut(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.lostPut || !isCommitKey(key) {
		return false
	}
	f.lostPut = false
	f.injected++
	if f.failReadBack {
		f.readBack = key
	}
	return true
}

type sfStore struct {
	delta.Storage
	f *sfFaults
}

func (s *sfStore) call(method, key string, do func() error) error {
	after, err := s.f.before(method, key)
	if after != nil {
		defer after()
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, key, err)
	}
	return do()
}

func (s *sfStore) Get(ctx context.Context, key string) (data []byte, err error) {
	err = s.call("Get", key, func() (err error) { data, err = s.Storage.Get(ctx, key); return err })
	return data, err
}

func (s *sfStore) List(ctx context.Context, prefix, startAfter string) (objs []delta.ObjectInfo, err error) {
	err = s.call("List", prefix, func() (err error) { objs, err = s.Storage.List(ctx, prefix, startAfter); return err })
	return objs, err
}

func (s *sfStore) Stat(ctx context.Context, key string) (info delta.ObjectInfo, err error) {
	err = s.call("Stat", key, func() (err error) { info, err = s.Storage.Stat(ctx, key); return err })
	return info, err
}

func (s *sfStore) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	return s.call("PutIfAbsent", key, func() error {
		err := s.Storage.PutIfAbsent(ctx, key, data)
		if err == nil && s.f.losePut(key) {
			return fmt.Errorf("put %s: %w", key, sfErrLostResponse)
		}
		return err
	})
}

func (s *sfStore) Put(ctx context.Context, key string, data []byte) error {
	return s.call("Put", key, func() error { return s.Storage.Put(ctx, key, data) })
}

func (s *sfStore) Delete(ctx context.Context, key string) error {
	return s.call("Delete", key, func() error { return s.Storage.Delete(ctx, key) })
}

func (s *sfStore) PutFile(ctx context.Context, key, path string) error {
	return s.call("PutFile", key, func() error { return s.Storage.PutFile(ctx, key, path) })
}

// ---------------------------------------------------------------------------
// A table on local disk or on versitygw, a provider whose storage faults
// the test controls, and a fault-free reader.

type sfEnv struct {
	t        *testing.T
	srv      *s3test.Server // nil on local disk
	id       catalogadapter.TableIdent
	faults   *sfFaults
	clock    *clocktest.Clock
	provider *deltalake.Provider
	reader   delta.Storage // the table's storage, without faults
	db       *sql.DB       // reads the table back
}

const (
	sfLocal = "local"
	sfS3    = "versitygw"
)

// newSFEnv sets up a table location on backend. tune adjusts the object
// storage options of the faulty provider (retries, breaker).
func newSFEnv(t *testing.T, backend string, tune func(*sfEnv, *objectstore.Options)) *sfEnv {
	t.Helper()
	e := &sfEnv{t: t, faults: &sfFaults{}, clock: clocktest.New(time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))}
	var so objectstore.Options
	switch backend {
	case sfLocal:
		e.id = catalogadapter.TableIdent{Name: filepath.Join(t.TempDir(), "orders")}
		store, err := delta.NewLocalStorage(e.id.Name)
		if err != nil {
			t.Fatal(err)
		}
		e.reader = store
	case sfS3:
		e.srv = s3test.Start(t)
		e.id = catalogadapter.TableIdent{Name: e.srv.URL("db/orders")}
		var err error
		if so, err = objectstore.FromProperties(e.srv.Options()); err != nil {
			t.Fatal(err)
		}
		ro := so
		ro.CacheDir = t.TempDir()
		store, err := objectstore.Open(context.Background(), e.id.Name, ro)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		e.reader = store
		so.CacheDir = t.TempDir()
		if tune != nil {
			tune(e, &so)
		}
	default:
		t.Fatalf("unknown backend %q", backend)
	}
	db := providertest.OpenDuckDB(t)
	e.provider = deltalake.New(db, deltalake.Options{
		ObjectStorage: so,
		WrapStorage: func(s delta.Storage) delta.Storage {
			e.faults.mu.Lock()
			e.faults.stagingDir = s.StagingDir()
			e.faults.mu.Unlock()
			return &sfStore{Storage: s, f: e.faults}
		},
	})
	t.Cleanup(func() { e.provider.Close() })
	var err error
	if e.db, err = sql.Open("duckdb", ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.db.Close() })
	if err := delta.PrepareDuckDB(context.Background(), e.db); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *sfEnv) open(checkpointInterval int, partitioned bool) *Sink {
	e.t.Helper()
	cfg := Config{
		Name: "sf", Provider: e.provider, Table: e.id, Schema: orderSchema,
		WriterID: sfWriter, TempDir: e.t.TempDir(), StateDir: e.t.TempDir(), MemoryLimit: "256MB",
		CheckpointInterval: checkpointInterval,
		DisableAutoCompact: true, // faults are injected by request count
	}
	if partitioned {
		cfg.PartitionColumns = []string{"region"}
	}
	s, err := New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := s.Open(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { s.Close() })
	return s
}

// run runs epoch ep through s: begin, write its rows, precommit and
// commit, with hooks before the last two. It returns the step that failed.
func (e *sfEnv) run(s *Sink, ep int64, beforePre, beforeCommit func()) (CommitResult, string, error) {
	ctx := context.Background()
	if err := s.BeginEpoch(ctx, ep); err != nil {
		return CommitResult{}, "begin", err
	}
	if err := s.Write(ctx, batch(e.t, sfRows(ep)...)); err != nil {
		return CommitResult{}, "write", err
	}
	if beforePre != nil {
		beforePre()
	}
	if err := s.PreCommit(ctx, ep); err != nil {
		return CommitResult{}, "precommit", err
	}
	if beforeCommit != nil {
		beforeCommit()
	}
	res, err := s.CommitEpoch(ctx, ep)
	if err != nil {
		return res, "commit", err
	}
	return res, "", nil
}

// mustRun runs an epoch that must land as version ep.
func (e *sfEnv) mustRun(s *Sink, ep int64) {
	e.t.Helper()
	res, step, err := e.run(s, ep, nil, nil)
	if err != nil {
		e.t.Fatalf("epoch %d: %s: %v", ep, step, err)
	}
	if res.Skipped || res.Version != ep || res.Rows != int64(len(sfRows(ep))) {
		e.t.Fatalf("epoch %d: %+v, want version %d with %d rows", ep, res, ep, len(sfRows(ep)))
	}
}

// latest reads the table's newest snapshot from the log, without faults.
func (e *sfEnv) latest() *delta.Snapshot {
	e.t.Helper()
	snap, err := delta.NewTable(e.reader).Latest(context.Background())
	if err != nil {
		e.t.Fatalf("read the table: %v", err)
	}
	return snap
}

// ids reads the ids of a snapshot, sorted.
func (e *sfEnv) ids(snap *delta.Snapshot) []int64 {
	e.t.Helper()
	ctx := context.Background()
	q, err := snap.ScanSQL(ctx, e.db)
	if err != nil {
		e.t.Fatalf("version %d: scan: %v", snap.Version, err)
	}
	rs, err := e.db.QueryContext(ctx, "SELECT id FROM ("+q+") ORDER BY id")
	if err != nil {
		e.t.Fatalf("version %d: read: %v", snap.Version, err)
	}
	defer rs.Close()
	ids := []int64{}
	for rs.Next() {
		var id int64
		if err := rs.Scan(&id); err != nil {
			e.t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rs.Err(); err != nil {
		e.t.Fatal(err)
	}
	return ids
}

// expectTable checks that the latest version is n, records epoch n, and
// holds the rows of epochs 1..n exactly once.
func (e *sfEnv) expectTable(n int64, when string) {
	e.t.Helper()
	snap := e.latest()
	if snap.Version != n {
		e.t.Fatalf("%s: table at version %d, want %d", when, snap.Version, n)
	}
	if v, ok := snap.TxnVersion(sfWriter); n > 0 && (!ok || v != n) {
		e.t.Fatalf("%s: txn of %s = %d (%v), want %d", when, sfWriter, v, ok, n)
	}
	if d := cmp.Diff(sfIDs(n), e.ids(snap)); d != "" {
		e.t.Fatalf("%s: ids (-want +got):\n%s", when, d)
	}
}

// dataObjects lists the data files of the table location, committed or
// not, as keys relative to the table.
func (e *sfEnv) dataObjects() []string {
	e.t.Helper()
	keys := []string{}
	if e.srv == nil {
		root := e.id.Name
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			if rel = filepath.ToSlash(rel); !strings.HasPrefix(rel, "_delta_log/") {
				keys = append(keys, rel)
			}
			return nil
		})
		return keys
	}
	objs, err := e.reader.List(context.Background(), "", "")
	if err != nil {
		e.t.Fatal(err)
	}
	for _, o := range objs {
		if !strings.HasPrefix(o.Key, "_delta_log/") {
			keys = append(keys, o.Key)
		}
	}
	return keys
}

// orphans lists the data objects no version of the log adds.
func (e *sfEnv) orphans() []string {
	e.t.Helper()
	known := map[string]bool{}
	for _, le := range e.readLog() {
		for _, a := range le.adds {
			known[fileKey(e.t, a.Path)] = true
		}
	}
	var out []string
	for _, k := range e.dataObjects() {
		if !known[k] {
			out = append(out, k)
		}
	}
	return out
}

// stagedLeftovers lists Parquet files left in the object store's local
// staging folder (DuckDB's output, moved to the read cache once uploaded).
func (e *sfEnv) stagedLeftovers() []string {
	e.faults.mu.Lock()
	dir := e.faults.stagingDir
	e.faults.mu.Unlock()
	if e.srv == nil || dir == "" {
		return nil
	}
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// readLog reads every commit entry through the fault-free storage
// (readDeltaLog).
func (e *sfEnv) readLog() []logEntry {
	e.t.Helper()
	return readDeltaLog(e.t, e.reader)
}

// verify checks the whole table after n epochs: versions 0..n, version v
// recording epoch v once, every file any version adds present with its
// size, every version holding exactly the rows of epochs 1..v. It returns
// the orphaned data objects (staged, never committed, not cleaned up).
func (e *sfEnv) verify(n int64) []string {
	e.t.Helper()
	ctx := context.Background()
	log := e.readLog()
	if got := int64(len(log)) - 1; got != n {
		e.t.Errorf("the log ends at version %d, want %d (one version per epoch)", got, n)
	}
	tbl := delta.NewTable(e.reader)
	for _, le := range log {
		want := []delta.Txn{}
		if le.version > 0 {
			want = append(want, delta.Txn{AppID: sfWriter, Version: le.version})
		}
		got := []delta.Txn{}
		for _, x := range le.txns {
			got = append(got, delta.Txn{AppID: x.AppID, Version: x.Version})
		}
		if d := cmp.Diff(want, got); d != "" {
			e.t.Errorf("version %d: txn actions (-want +got):\n%s", le.version, d)
		}
		for _, a := range le.adds {
			key := fileKey(e.t, a.Path)
			info, err := e.reader.Stat(ctx, key)
			if err != nil {
				e.t.Errorf("version %d adds %s: %v", le.version, key, err)
			} else if info.Size != a.Size {
				e.t.Errorf("version %d adds %s of %d bytes; it has %d", le.version, key, a.Size, info.Size)
			}
		}
		snap, err := tbl.At(ctx, le.version)
		if err != nil {
			e.t.Errorf("version %d is not readable: %v", le.version, err)
			continue
		}
		if d := cmp.Diff(sfIDs(le.version), e.ids(snap)); d != "" {
			e.t.Errorf("version %d ids (-want +got):\n%s", le.version, d)
		}
	}
	e.expectTable(n, "at the end")
	return e.orphans()
}

// ---------------------------------------------------------------------------
// a. versitygw killed in the middle of a commit loop

// TestStorageOutageMidCommitLoop writes epochs 1..N to a table on
// versitygw and kills the server (SIGKILL) five times, at different points
// of an epoch: before staging, between PreCommit and CommitEpoch, during
// the upload of a data file, just before the put of the log entry, and
// concurrently with that put (whose outcome is then left to chance). While
// the server is down, no epoch commits; the sink turns Degraded, naming
// the storage, once the breaker opens, and the breaker then refuses calls
// without trying them. The client retries the epoch as a client would (by
// rolling back and replaying it with the same rows, or, once, by retrying
// CommitEpoch on the staged files). The server restarts on the same
// directory; after the breaker's cooldown (an injected clock: no timing is
// asserted) the next try succeeds and the sink is healthy again. At the
// end, the log holds versions 0..N, each whole and recording its epoch,
// and the rows of every epoch exactly once.
func TestStorageOutageMidCommitLoop(t *testing.T) {
	const n = 24
	const cooldown = time.Second
	e := newSFEnv(t, sfS3, func(e *sfEnv, o *objectstore.Options) {
		o.Retry = objectstore.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, MaxTime: 10 * time.Second}
		// The breaker's clock is the test's.
		o.Breaker = objectstore.BreakerPolicy{Threshold: 3, Cooldown: cooldown, MaxCooldown: 4 * cooldown, Now: e.clock.Now}
	})
	srvKill := e.srv.Kill
	s := e.open(5, false)
	ctx := context.Background()

	// killOnce returns a storage hook that kills the server at the first
	// call of method on a key matching match; concurrent runs the kill
	// alongside the call instead of before it.
	killOnce := func(method string, match func(string) bool, concurrent bool) func(string, string) func() {
		var once sync.Once
		return func(m, key string) func() {
			if m != method || !match(key) {
				return nil
			}
			var after func()
			once.Do(func() {
				if !concurrent {
					srvKill()
					return
				}
				done := make(chan struct{})
				go func() { srvKill(); close(done) }()
				after = func() { <-done }
			})
			return after
		}
	}
	anyKey := func(string) bool { return true }
	type plan struct {
		beforePre, beforeCommit func()
		hook                    func(string, string) func()
		retryCommit             bool // the client retries CommitEpoch on the staged files instead of replaying
	}
	plans := map[int64]plan{
		4:  {beforePre: srvKill},
		9:  {beforeCommit: srvKill, retryCommit: true},
		13: {hook: killOnce("PutFile", anyKey, false)},
		18: {hook: killOnce("PutIfAbsent", isCommitKey, false)},
		22: {hook: killOnce("PutIfAbsent", isCommitKey, true)},
	}

	var (
		outages, downAttempts, refused int
		unknown                        = map[int64]bool{} // epochs whose commit reported an error
		skipped                        []int64
	)
	// accept checks a successful commit of epoch ep.
	accept := func(ep int64, res CommitResult) {
		t.Helper()
		switch {
		case res.Skipped && !unknown[ep]:
			t.Fatalf("epoch %d skipped, but no earlier commit of it can have landed: %+v", ep, res)
		case res.Skipped:
			skipped = append(skipped, ep)
		case res.Version != ep || res.Rows != int64(len(sfRows(ep))):
			t.Fatalf("epoch %d: %+v, want version %d with %d rows", ep, res, ep, len(sfRows(ep)))
		}
		if h := s.Health(); h.Status != Healthy {
			t.Fatalf("epoch %d committed, sink %s: %s", ep, h.Status, h.Reason)
		}
	}
	// retry rolls the failed epoch back and replays it.
	retry := func(ep int64) (CommitResult, string, error) {
		if err := s.RollbackEpoch(ctx, ep); err != nil {
			t.Fatalf("roll back epoch %d: %v", ep, err)
		}
		return e.run(s, ep, nil, nil)
	}

	for ep := int64(1); ep <= n; ep++ {
		p := plans[ep]
		e.faults.setHook(p.hook)
		res, step, err := e.run(s, ep, p.beforePre, p.beforeCommit)
		e.faults.setHook(nil)
		if err == nil {
			accept(ep, res)
			continue
		}
		if e.srv.PID() != 0 {
			t.Fatalf("epoch %d failed at %s with the server up: %v", ep, step, err)
		}
		if step != "precommit" && step != "commit" {
			t.Fatalf("epoch %d failed at %s: %v", ep, step, err)
		}
		outages++
		t.Logf("epoch %d: server killed; %s failed: %v", ep, step, err)
		if step == "commit" {
			unknown[ep] = true
		}

		// again tries the epoch once more, the way this plan's client
		// does: it rolls back and replays the epoch, or (retryCommit) it
		// retries the commit of the epoch it staged.
		again := func() (CommitResult, error) {
			if p.retryCommit && step == "commit" {
				return s.CommitEpoch(ctx, ep)
			}
			var res CommitResult
			res, step, err = retry(ep)
			return res, err
		}

		// Down. Every try fails; within a few the breaker opens and the
		// sink says so.
		h := s.Health()
		for try := 0; h.Status != Degraded; try++ {
			if try == 10 {
				t.Fatalf("epoch %d: 10 failed tries with the server down, sink still %s", ep, h.Status)
			}
			res, err := again()
			if err == nil {
				t.Fatalf("epoch %d committed with the server down: %+v", ep, res)
			}
			downAttempts++
			if step == "commit" {
				unknown[ep] = true
			}
			h = s.Health()
		}
		if !strings.Contains(h.Reason, "storage") {
			t.Errorf("degraded sink's reason %q does not name the storage", h.Reason)
		}
		if st := s.State(); st != StateRunning {
			t.Fatalf("the outage moved the sink to %s", st)
		}
		// Open: tries are refused by the breaker, and still nothing lands.
		for range 2 {
			res, err := again()
			if err == nil {
				t.Fatalf("epoch %d committed with the server down: %+v", ep, res)
			}
			if !errors.Is(err, objectstore.ErrCircuitOpen) {
				t.Errorf("epoch %d with the breaker open: %v, want ErrCircuitOpen", ep, err)
			}
			if step == "commit" {
				unknown[ep] = true
			}
			refused++
		}
		if h := s.Health(); h.Status != Degraded {
			t.Errorf("sink %s while the breaker is open", h.Status)
		}

		e.srv.Restart(t)
		// Back, but the breaker holds until its cooldown has passed.
		if h := s.Health(); h.Status != Degraded {
			t.Errorf("sink %s before the breaker's cooldown", h.Status)
		}
		e.clock.Advance(4 * cooldown)
		// (With retryCommit, the files staged before the kill are still
		// on the server: committing them is enough.)
		res, err = again()
		if err != nil {
			t.Fatalf("epoch %d after the restart: %s: %v", ep, step, err)
		}
		accept(ep, res)
	}
	if outages != len(plans) {
		// The concurrent kill may come after the put it races with, in
		// which case the next epoch finds the server down: same count.
		t.Errorf("%d outages seen, want %d", outages, len(plans))
	}
	if e.srv.PID() == 0 {
		t.Fatal("the server is down at the end")
	}
	orphans := e.verify(n)
	if h := s.Health(); h.Status != Healthy {
		t.Errorf("sink %s at the end: %s", h.Status, h.Reason)
	}
	t.Logf("%d epochs, %d outages, %d failed tries while down, %d refused by the open breaker, replays skipped: %v, %d orphaned staged objects (discards that failed while the server was down): %v",
		n, outages, downAttempts, refused, skipped, len(orphans), orphans)
}

// ---------------------------------------------------------------------------
// b. a storage call fails in the middle of staging or committing an epoch

// TestStorageFaultWhileStaging makes one storage call of epoch 5 fail, on
// a table partitioned by region (epoch 5 stages three files), on local
// disk and on versitygw. Where the fault fails the epoch, nothing is
// visible (the table stays at version 4 with epochs 1..4), the files the
// epoch uploaded are deleted (at once when staging fails, by the rollback
// when the commit does), and the rolled back epoch replays with its rows
// exactly once. Some faults must not fail the epoch: a put of the log
// entry that did not land is tried again once the entry is read back and
// found missing, and a failed checkpoint does not undo the commit it
// follows (the next one is written).
func TestStorageFaultWhileStaging(t *testing.T) {
	// Epoch 5 lands as version 5, which is due for a checkpoint (interval
	// 5); the checkpoint cases go on to the next one, at 10.
	const faultEpoch = 5
	cases := []struct {
		name       string
		method     string
		nth, count int
		armAt      string // "precommit" or "commit": armed just before that step
		fails      string // the step the fault fails, "" if the epoch commits
	}{
		{"first data file upload", "PutFile", 1, 1, "precommit", "precommit"},
		{"second data file upload", "PutFile", 2, 1, "precommit", "precommit"},
		{"third data file upload", "PutFile", 3, 1, "precommit", "precommit"},
		{"staged file check", "Stat", 2, 1, "commit", "commit"},
		{"log read at commit", "Get", 1, 1, "commit", "commit"},
		{"log entry put not landed, once", "PutIfAbsent", 1, 1, "commit", ""},
		{"log entry put never lands", "PutIfAbsent", 1, 1 << 20, "commit", "commit"},
		{"checkpoint put", "Put", 1, 1, "commit", ""},
		{"_last_checkpoint put", "Put", 2, 1, "commit", ""},
	}
	for _, backend := range []string{sfLocal, sfS3} {
		t.Run(backend, func(t *testing.T) {
			for _, c := range cases {
				t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
					ctx := context.Background()
					last := int64(faultEpoch + 1)
					if c.method == "Put" {
						last = 10
					}
					e := newSFEnv(t, backend, nil)
					s := e.open(5, true)
					for ep := int64(1); ep < faultEpoch; ep++ {
						e.mustRun(s, ep)
					}
					arm := func() { e.faults.arm(c.method, c.nth, c.count) }
					var beforePre, beforeCommit func()
					if c.armAt == "precommit" {
						beforePre = arm
					} else {
						beforeCommit = arm
					}
					res, step, err := e.run(s, faultEpoch, beforePre, beforeCommit)
					injected := e.faults.injectedCount()
					e.faults.disarm()
					if injected == 0 {
						t.Fatalf("the fault was never injected (no %s call #%d); the epoch: %+v, %v", c.method, c.nth, res, err)
					}
					if c.fails == "" {
						if err != nil {
							t.Fatalf("epoch %d: %s: %v; want the fault absorbed", faultEpoch, step, err)
						}
						if res.Skipped || res.Version != faultEpoch {
							t.Fatalf("epoch %d: %+v", faultEpoch, res)
						}
						e.expectTable(faultEpoch, "after the absorbed fault")
					} else {
						if err == nil {
							t.Fatalf("epoch %d committed despite the fault: %+v", faultEpoch, res)
						}
						if step != c.fails || !errors.Is(err, sfErrInjected) {
							t.Fatalf("epoch %d failed at %s with %v; want %s to fail with the injected fault", faultEpoch, step, err, c.fails)
						}
						if c.method == "PutIfAbsent" && injected < 2 {
							t.Errorf("the log entry put was tried %d time(s): a put that did not land is tried again", injected)
						}
						// Nothing visible.
						e.expectTable(faultEpoch-1, "after the failed epoch")
						if h := s.Health(); h.Status != Healthy {
							t.Errorf("one failed call made the sink %s: %s", h.Status, h.Reason)
						}
						if step == "precommit" {
							// A failed staging deletes what it uploaded.
							if o := e.orphans(); len(o) > 0 {
								t.Errorf("failed staging left uploaded files: %v", o)
							}
							if l := e.stagedLeftovers(); len(l) > 0 {
								t.Errorf("failed staging left local files: %v", l)
							}
						} else if o := e.orphans(); len(o) != len(sfRows(faultEpoch)) {
							// The staged files wait for the rollback.
							t.Errorf("staged files before the rollback: %v, want %d", o, len(sfRows(faultEpoch)))
						}
						if err := s.RollbackEpoch(ctx, faultEpoch); err != nil {
							t.Fatal(err)
						}
						if o := e.orphans(); len(o) > 0 {
							t.Errorf("the rollback left staged files: %v", o)
						}
						e.expectTable(faultEpoch-1, "after the rollback")
						// The client replays the epoch with the same rows.
						e.mustRun(s, faultEpoch)
					}
					for ep := int64(faultEpoch + 1); ep <= last; ep++ {
						e.mustRun(s, ep)
					}
					if o := e.verify(last); len(o) > 0 {
						t.Errorf("orphaned staged files: %v", o)
					}
					if c.method == "Put" {
						e.checkCheckpoint(faultEpoch, c.nth == 1, last)
					}
				})
			}
		})
	}
}

// checkCheckpoint checks the checkpoints after a failed checkpoint put at
// version v: the checkpoint of v is missing (its put failed) or present
// (the _last_checkpoint put failed), and the next one, at last, was
// written and named in _last_checkpoint.
func (e *sfEnv) checkCheckpoint(v int64, missing bool, last int64) {
	e.t.Helper()
	ctx := context.Background()
	_, err := e.reader.Stat(ctx, fmt.Sprintf("_delta_log/%020d.checkpoint.parquet", v))
	if missing != errors.Is(err, delta.ErrNotFound) {
		e.t.Errorf("checkpoint %d: %v (want missing: %v)", v, err, missing)
	}
	if _, err := e.reader.Stat(ctx, fmt.Sprintf("_delta_log/%020d.checkpoint.parquet", last)); err != nil {
		e.t.Errorf("checkpoint %d: %v", last, err)
	}
	data, err := e.reader.Get(ctx, "_delta_log/_last_checkpoint")
	if err != nil {
		e.t.Fatalf("_last_checkpoint: %v", err)
	}
	var lc struct{ Version int64 }
	if err := json.Unmarshal(data, &lc); err != nil || lc.Version != last {
		e.t.Errorf("_last_checkpoint %s (%v), want version %d", data, err, last)
	}
}

// ---------------------------------------------------------------------------
// c. the outcome of the commit is unknown to the writer

// TestCommitOutcomeUnknown: the put of epoch 3's log entry reaches the
// store, and its answer is lost (a timeout after the entry landed).
//
// When the entry can be read back, the commit recognises it as its own by
// commitInfo.txnId and CommitEpoch succeeds, as version 3, not skipped:
// the stronger of the two behaviours the brief allows, and the one that
// holds. When the read-back fails too, the outcome is really unknown:
// CommitEpoch fails with delta.ErrCommitUnknown while the epoch is in fact
// visible. The client then either retries CommitEpoch or rolls back and
// replays the epoch; either way the commit is skipped (the txn record shows
// the epoch landed), the rows are there exactly once, and the files of the
// landed commit survive the discards that follow (the rollback's, and the
// skipped commit's).
func TestCommitOutcomeUnknown(t *testing.T) {
	const ep = 3
	variants := []struct {
		name         string
		failReadBack bool
		retryCommit  bool // the client retries CommitEpoch instead of replaying
	}{
		{"read back", false, false},
		{"read back fails, replay", true, false},
		{"read back fails, retry commit", true, true},
	}
	for _, backend := range []string{sfLocal, sfS3} {
		t.Run(backend, func(t *testing.T) {
			for _, v := range variants {
				t.Run(strings.ReplaceAll(v.name, " ", "_"), func(t *testing.T) {
					ctx := context.Background()
					e := newSFEnv(t, backend, nil)
					s := e.open(0, true)
					for i := int64(1); i < ep; i++ {
						e.mustRun(s, i)
					}
					res, step, err := e.run(s, ep, nil, func() { e.faults.armLostPut(v.failReadBack) })
					injected := e.faults.injectedCount()
					e.faults.disarm()
					want := 1
					if v.failReadBack {
						want = 2
					}
					if injected != want {
						t.Fatalf("%d faults injected, want %d; the epoch: %+v, %s, %v", injected, want, res, step, err)
					}
					// The entry landed whatever the writer was told.
					e.expectTable(ep, "after the put landed")

					if !v.failReadBack {
						if err != nil {
							t.Fatalf("CommitEpoch: %v; want the landed entry recognised as ours", err)
						}
						if res.Skipped || res.Version != ep || res.Rows != int64(len(sfRows(ep))) {
							t.Fatalf("CommitEpoch: %+v, want version %d written", res, ep)
						}
						if last, ok := s.LastCommittedEpoch(); !ok || last != ep {
							t.Errorf("the sink's last committed epoch: %d %v", last, ok)
						}
					} else {
						if err == nil || step != "commit" {
							t.Fatalf("epoch %d: %+v, %s, %v; want CommitEpoch to fail", ep, res, step, err)
						}
						if !errors.Is(err, delta.ErrCommitUnknown) {
							t.Errorf("CommitEpoch: %v; want delta.ErrCommitUnknown", err)
						}
						if last, _ := s.LastCommittedEpoch(); last >= ep {
							t.Errorf("the sink counts epoch %d committed after an unknown outcome", last)
						}
						if h := s.Health(); h.Status != Healthy {
							t.Errorf("sink %s after an unknown commit: %s", h.Status, h.Reason)
						}
						if v.retryCommit {
							res, err = s.CommitEpoch(ctx, ep)
							step = "commit"
						} else {
							if err := s.RollbackEpoch(ctx, ep); err != nil {
								t.Fatal(err)
							}
							// The rollback discards the staged files, which are live.
							e.expectTable(ep, "after the rollback")
							res, step, err = e.run(s, ep, nil, nil)
						}
						if err != nil {
							t.Fatalf("retrying epoch %d: %s: %v", ep, step, err)
						}
						if !res.Skipped || res.Version != ep {
							t.Fatalf("retrying epoch %d: %+v, want it skipped at version %d", ep, res, ep)
						}
						if last, ok := s.LastCommittedEpoch(); !ok || last != ep {
							t.Errorf("the sink's last committed epoch: %d %v", last, ok)
						}
						e.expectTable(ep, "after the retry")
					}
					e.mustRun(s, ep+1)
					if o := e.verify(ep + 1); len(o) > 0 {
						t.Errorf("orphaned staged files: %v", o)
					}
				})
			}
		})
	}
}
