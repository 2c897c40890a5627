package sqlsink

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/providertest"
	"github.com/lakesql/lakesql/internal/icebergtest"
	"github.com/lakesql/lakesql/tableformat/delta"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// TestMaintenanceCrash kills, with SIGKILL at random points, a process
// (TestMaintenanceCrashChild) that loops over maintenance on a table of
// each lake: it commits an epoch of its own (writer id "kid", which wakes
// auto-compaction in the background, CompactMinFiles 2), then runs
// VACUUM RETAIN 0 HOURS and OPTIMIZE; meanwhile (on Iceberg, between its
// runs: see icebergMaintCrash) this process upserts epochs into the same
// table (writer id "app"). After each kill the table
// is readable and its rows are exactly the model: app's epochs 1..a
// applied in order plus kid's rows of epochs 1..k, where a and k are the
// epochs the version records, a at least what app was acknowledged and k
// at least what kid reported committed. At the end, with no process
// alive, a VACUUM with its clock moved past StageLifetime leaves no file
// under the table's data folders that the latest version does not name:
// the kills left no orphan behind. -maintcrash.kills sets the number of
// kills per lake (30; `make test` stays under two minutes).
func TestMaintenanceCrash(t *testing.T) {
	if os.Getenv(crashHelperEnv) == "1" {
		t.Skip("this is a helper process")
	}
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) { testMaintenanceCrash(t, l) })
	}
}

func testMaintenanceCrash(t *testing.T, l lake) {
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -crash.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x6d61696e74))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	root, stateDir := t.TempDir(), t.TempDir()
	db := providertest.OpenDuckDB(t)
	p, id := l.open(t, db, root, mcTable)
	app := openSink(t, Config{
		Name: "app", WriterID: "app", Provider: p, Table: id,
		Schema: orderSchema, Mode: ModeUpsert, Key: []string{"id"}, TempDir: t.TempDir(),
		MemoryLimit: "256MB", Threads: 1, CheckpointInterval: 5, DisableAutoCompact: true,
	})
	if res := mcEpoch(ctx, t, app, 1, mcAppRows(1)); res != nil {
		t.Fatal(res)
	}
	var acked atomic.Int64
	acked.Store(1)

	// The app writer upserts until told to stop; without a pace, it
	// upserts a few epochs between the maintenance process's runs.
	stop := make(chan struct{})
	var appErr error
	var wg sync.WaitGroup
	between := func() {
		for range 3 {
			e := acked.Load() + 1
			if appErr = mcEpoch(ctx, t, app, e, mcAppRows(e)); appErr != nil {
				return
			}
			acked.Store(e)
		}
	}
	if l.maintCrash.appPace == 0 {
		close(stop)
	} else {
		wg.Go(func() { concurrentApp(ctx, t, app, l.maintCrash.appPace, stop, &acked, &appErr) })
	}
	stopApp := func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	}
	defer stopApp()

	env := append(os.Environ(), crashHelperEnv+"=1", crashDirEnv+"="+root, crashStateEnv+"="+stateDir,
		maintCrashLakeEnv+"="+l.name, "TMPDIR="+t.TempDir())
	kills, kidCommitted := 0, int64(0)
	where := map[string]int{}
	started := time.Now()
	for run := 1; kills < *maintCrashKills; run++ {
		plan := crashPlan{
			trigger: []string{"start", "recovered", "epoch", "optimize", "optimize", "vacuum", "vacuum"}[rng.IntN(7)],
			nth:     1 + rng.IntN(3),
			delay:   time.Duration(rng.Int64N(int64(40 * time.Millisecond))),
		}
		if plan.trigger == "start" || plan.trigger == "recovered" {
			plan.nth = 1
			plan.delay = time.Duration(rng.Int64N(int64(400 * time.Millisecond)))
		}
		r := runCrashProcess(t, exe, "TestMaintenanceCrashChild", env, plan, time.Minute)
		state := "starting"
		for _, l := range r.lines() {
			if strings.HasPrefix(l, "FATAL") {
				t.Fatalf("run %d: the maintenance process saw an anomaly: %s\n%s", run, l, r.describe())
			}
			f := strings.Fields(strings.TrimPrefix(l, crashTag))
			if !strings.HasPrefix(l, crashTag) || len(f) != 2 {
				continue
			}
			v, _ := strconv.ParseInt(f[1], 10, 64)
			if f[0] == "committed" {
				kidCommitted = max(kidCommitted, v)
			}
			state = f[0]
		}
		if r.hardKilled || !r.killed {
			t.Fatalf("run %d (%v) was not killed by the plan:\n%s", run, plan, r.describe())
		}
		kills++
		where[state]++
		if appErr != nil {
			t.Fatalf("the app writer failed: %v", appErr)
		}
		// The table as it is now, the app writer still running.
		checkMaintCrashTable(t, l, root, id, acked.Load(), kidCommitted, fmt.Sprintf("after kill %d (%v, last line %q)", kills, plan, state))
		if t.Failed() {
			return
		}
		if l.maintCrash.appPace == 0 {
			if between(); appErr != nil {
				t.Fatalf("the app writer failed: %v", appErr)
			}
		}
	}
	stopApp()
	if appErr != nil {
		t.Fatalf("the app writer failed: %v", appErr)
	}
	final := checkMaintCrashTable(t, l, root, id, acked.Load(), kidCommitted, "with no process running")
	if final.app != acked.Load() {
		t.Errorf("the table records app epoch %d, the last acknowledged is %d", final.app, acked.Load())
	}

	// No process alive: a VACUUM whose clock is past every stage's
	// lifetime may delete every file no version within retention names,
	// and must leave no other.
	later := time.Now().Add(catalogadapter.StageLifetime + time.Hour)
	out, err := app.Vacuum(ctx, VacuumOptions{Retain: 0, AllowShortRetention: true, Now: func() time.Time { return later }})
	if err != nil {
		t.Fatalf("final vacuum: %v", err)
	}
	orphans := map[string]int{}
	for _, f := range out.Files {
		orphans[f.Reason]++
	}
	head := checkMaintCrashTable(t, l, root, id, acked.Load(), kidCommitted, "after the final vacuum")
	if left := l.maintCrash.unnamed(t, root, id); len(left) > 0 {
		t.Errorf("%d files under the table that the latest version (%d) does not name, after the final vacuum: %v", len(left), head.version, left)
	}
	if l.maintCrash.end != nil {
		l.maintCrash.end(t, root, id)
	}
	t.Logf("%d kills in %v, by the last line the process printed: %v; the table: version %d, %d rows, app epoch %d, kid epoch %d; the final vacuum deleted %v",
		kills, time.Since(started).Round(time.Millisecond), where, head.version, len(head.rows), final.app, final.kid, orphans)
}

// maintCrashChecks are what TestMaintenanceCrash reads of a lake's table
// with the format's own reader: head is the latest version, its epochs
// and rows; unnamed lists the files under the table's data folders that
// the latest version does not name; end (nil: none) checks the table's
// log once no process is alive.
type maintCrashChecks struct {
	// appPace is the app writer's pause between epochs; 0: it does not
	// run beside the maintenance process, and upserts between its runs.
	appPace time.Duration
	head    func(t *testing.T, root string, id catalogadapter.TableIdent) mcHead
	unnamed func(t *testing.T, root string, id catalogadapter.TableIdent) []string
	end     func(t *testing.T, root string, id catalogadapter.TableIdent)
}

// mcHead is the latest version of the table: its version (or snapshot
// id), the epochs it records and its rows, read from one snapshot.
type mcHead struct {
	version  int64
	app, kid int64
	rows     []string
}

var deltaMaintCrash = maintCrashChecks{
	appPace: 5 * time.Millisecond,
	head: func(t *testing.T, _ string, id catalogadapter.TableIdent) mcHead {
		ctx := context.Background()
		snap := mcLatest(t, id.Name)
		a, _ := snap.TxnVersion("app")
		k, _ := snap.TxnVersion("kid")
		db := providertest.OpenDuckDB(t)
		if err := delta.PrepareDuckDB(ctx, db); err != nil {
			t.Fatal(err)
		}
		q, err := snap.ScanSQL(ctx, db)
		if err != nil {
			t.Fatalf("version %d: %v", snap.Version, err)
		}
		rows, err := queryRowStrings(ctx, db, q)
		if err != nil {
			t.Fatalf("version %d is not readable: %v", snap.Version, err)
		}
		return mcHead{version: snap.Version, app: a, kid: k, rows: rows}
	},
	unnamed: func(t *testing.T, _ string, id catalogadapter.TableIdent) []string {
		dir := id.Name
		live := map[string]bool{}
		for _, f := range mcLatest(t, dir).Files() {
			p, err := url.PathUnescape(f.Path)
			if err != nil {
				t.Fatal(err)
			}
			live[filepath.Join(dir, filepath.FromSlash(p))] = true
		}
		var left []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			switch {
			case err != nil:
				t.Error(err)
			case d.IsDir() && d.Name() == "_delta_log":
				return filepath.SkipDir
			case !d.IsDir() && !live[p]:
				left = append(left, strings.TrimPrefix(p, dir+"/"))
			}
			return nil
		})
		return left
	},
	end: func(t *testing.T, _ string, id catalogadapter.TableIdent) {
		readDeltaLog(t, mcStorage(t, id.Name)) // the versions are contiguous
	},
}

// An Iceberg rewrite's every commit attempt rebuilds its manifests from
// all of the head's, so a writer committing more often than that takes
// wins every race (README, Limitations) and OPTIMIZE gives up after its
// attempts: the app writer upserts between the maintenance process's
// runs instead of beside them (the concurrency test races them).
var icebergMaintCrash = maintCrashChecks{
	head: func(t *testing.T, root string, id catalogadapter.TableIdent) mcHead {
		tbl := freshTable(t, root, id)
		var h mcHead
		if snap := tbl.CurrentSnapshot(); snap != nil {
			h.version = snap.SnapshotID
		}
		for w, e := range map[string]*int64{"app": &h.app, "kid": &h.kid} {
			rec, ok, err := icetable.LastEpoch(tbl.Metadata(), w)
			if err != nil {
				t.Fatalf("epoch record of %s: %v", w, err)
			}
			if ok {
				*e = rec.Epoch
			}
		}
		h.rows = icebergtest.Rows(t, tbl)
		return h
	},
	unnamed: func(t *testing.T, root string, id catalogadapter.TableIdent) []string {
		ctx := context.Background()
		tbl := freshTable(t, root, id)
		live := map[string]bool{}
		tasks, err := tbl.Scan().PlanFiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			for _, f := range append([]ice.DataFile{task.File}, slices.Concat(task.DeleteFiles, task.EqualityDeleteFiles, task.DeletionVectorFiles)...) {
				p, err := icetable.LocalPath(f.FilePath())
				if err != nil {
					t.Fatal(err)
				}
				live[p] = true
			}
		}
		loc, err := icetable.LocalPath(tbl.Location())
		if err != nil {
			t.Fatal(err)
		}
		var left []string
		filepath.WalkDir(filepath.Join(loc, "data"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !live[p] {
				left = append(left, strings.TrimPrefix(p, loc+"/"))
			}
			return nil
		})
		return left
	},
}

// concurrentApp upserts app's epochs after the acknowledged one, pace
// apart, until stop closes or one fails.
func concurrentApp(ctx context.Context, t *testing.T, app *Sink, pace time.Duration, stop chan struct{}, acked *atomic.Int64, appErr *error) {
	for e := acked.Load() + 1; ; e++ {
		select {
		case <-stop:
			return
		case <-time.After(pace):
		}
		if *appErr = mcEpoch(ctx, t, app, e, mcAppRows(e)); *appErr != nil {
			return
		}
		acked.Store(e)
	}
}

var maintCrashKills = flag.Int("maintcrash.kills", 30, "TestMaintenanceCrash: kills of the maintenance process, per lake")

// maintCrashLakeEnv names the lake to TestMaintenanceCrashChild.
const maintCrashLakeEnv = "LAKESQL_MAINTCRASH_LAKE"

// mcTable is the table's directory name under the test's root.
const mcTable = "maint_crash"

// mcAppRows is app's epoch e: upserts of keys 0..49 (four a time, so
// files are rewritten) and one new key per epoch.
func mcAppRows(e int64) []row {
	var out []row
	for i := int64(0); i < 4; i++ {
		out = append(out, row{Op: "U", ID: (e*7 + i*13) % 50, Amount: float64(e*100 + i), Region: "app"})
	}
	return append(out, row{Op: "U", ID: 1000 + e, Amount: float64(e), Region: "app"})
}

// mcKidRows is kid's epoch e: two new rows.
func mcKidRows(e int64) []row {
	return []row{{ID: 1_000_000 + 10*e, Amount: float64(e), Region: "kid"}, {ID: 1_000_000 + 10*e + 1, Amount: float64(e) + .5, Region: "kid"}}
}

// mcModel is the table after app's epochs 1..a and kid's 1..k.
func mcModel(a, k int64) []string {
	m := map[int64]row{}
	for e := int64(1); e <= a; e++ {
		for _, r := range mcAppRows(e) {
			r.Op = ""
			m[r.ID] = r
		}
	}
	for e := int64(1); e <= k; e++ {
		for _, r := range mcKidRows(e) {
			m[r.ID] = r
		}
	}
	out := []string{}
	for _, r := range m {
		out = append(out, r.String())
	}
	sort.Strings(out)
	return out
}

// mcEpoch commits epoch e of rows through s.
// (batch only registers a cleanup with t, which any goroutine may do.)
func mcEpoch(ctx context.Context, t testing.TB, s *Sink, e int64, rows []row) error {
	if err := s.BeginEpoch(ctx, e); err != nil {
		return err
	}
	if err := s.Write(ctx, batch(t, rows...)); err != nil {
		return err
	}
	if err := s.PreCommit(ctx, e); err != nil {
		return err
	}
	res, err := s.CommitEpoch(ctx, e)
	if err == nil && res.Skipped {
		err = fmt.Errorf("epoch %d was skipped", e)
	}
	return err
}

func mcStorage(t *testing.T, dir string) *delta.LocalStorage {
	t.Helper()
	store, err := delta.NewLocalStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	return store
}

func mcLatest(t *testing.T, dir string) *delta.Snapshot {
	t.Helper()
	snap, err := delta.NewTable(mcStorage(t, dir)).Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// checkMaintCrashTable reads the latest version with the format's reader
// and checks it against the model of the epochs it records, which must be
// at least the acknowledged ones.
func checkMaintCrashTable(t *testing.T, l lake, root string, id catalogadapter.TableIdent, appAcked, kidCommitted int64, when string) mcHead {
	t.Helper()
	h := l.maintCrash.head(t, root, id)
	if h.app < appAcked {
		t.Errorf("%s: version %d records app epoch %d, but epoch %d was acknowledged", when, h.version, h.app, appAcked)
	}
	if h.kid < kidCommitted {
		t.Errorf("%s: version %d records kid epoch %d, but kid reported epoch %d committed", when, h.version, h.kid, kidCommitted)
	}
	if want := mcModel(h.app, h.kid); !slices.Equal(want, h.rows) {
		t.Errorf("%s: version %d (app epoch %d, kid epoch %d) differs from the model (-want +got):\n%s", when, h.version, h.app, h.kid, cmp.Diff(want, h.rows))
	}
	return h
}

// queryRowStrings reads id, amount, region of query, as sorted strings.
func queryRowStrings(ctx context.Context, db *sql.DB, query string) ([]string, error) {
	rs, err := db.QueryContext(ctx, "SELECT id, amount, region FROM ("+query+")")
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := []string{}
	for rs.Next() {
		var r row
		if err := rs.Scan(&r.ID, &r.Amount, &r.Region); err != nil {
			return nil, err
		}
		out = append(out, r.String())
	}
	sort.Strings(out)
	return out, rs.Err()
}

// TestMaintenanceCrashChild is the maintenance process of
// TestMaintenanceCrash; it does nothing in an ordinary test run. It
// recovers its writer's last epoch, replays it (which must be skipped),
// then loops: an epoch of its own (auto-compaction wakes after it),
// VACUUM RETAIN 0 HOURS, OPTIMIZE, printing each step before it starts,
// until it is killed.
func TestMaintenanceCrashChild(t *testing.T) {
	l, ok := lakeNamed(os.Getenv(maintCrashLakeEnv))
	if os.Getenv(crashHelperEnv) != "1" || os.Getenv(crashDirEnv) == "" || !ok {
		t.Skip("helper process of TestMaintenanceCrash")
	}
	root, stateDir := os.Getenv(crashDirEnv), os.Getenv(crashStateEnv)
	ctx := context.Background()
	db := providertest.OpenDuckDB(t)
	p, id := l.open(t, db, root, mcTable)
	s, err := New(Config{
		Name: "kid", WriterID: "kid", Provider: p, Table: id,
		Schema: orderSchema, TempDir: t.TempDir(), MemoryLimit: "256MB", Threads: 1,
		CheckpointInterval: 5, StateDir: stateDir, CompactMinFiles: 2,
	})
	if err != nil {
		crashExit(crashExitSetup, "new sink: %v", err)
	}
	if err := s.Open(ctx); err != nil {
		crashExit(crashExitSinkError, "open: %v", err)
	}
	last, _ := s.LastCommittedEpoch()
	fmt.Printf(crashTag+"recovered %d\n", last)
	if last > 0 {
		if err := mcEpoch(ctx, t, s, last, mcKidRows(last)); err == nil || !strings.Contains(err.Error(), "skipped") {
			crashExit(crashExitNotSkipped, "the replay of epoch %d was not skipped: %v", last, err)
		}
	}
	for round := int64(1); ; round++ {
		e := last + round
		fmt.Printf(crashTag+"epoch %d\n", e)
		if err := mcEpoch(ctx, t, s, e, mcKidRows(e)); err != nil {
			crashExit(crashExitSinkError, "epoch %d: %v", e, err)
		}
		fmt.Printf(crashTag+"committed %d\n", e)
		// VACUUM first: on Iceberg it also rewrites the manifests the app
		// writer's commits pile up, which OPTIMIZE's commit reads whole.
		fmt.Printf(crashTag+"vacuum %d\n", round)
		if _, err := s.Vacuum(ctx, VacuumOptions{Retain: 0, AllowShortRetention: true}); err != nil {
			crashExit(crashExitSinkError, "vacuum: %v", err)
		}
		fmt.Printf(crashTag+"optimize %d\n", round)
		if _, err := s.Optimize(ctx, db, CompactOptions{MinFiles: 2}); err != nil && !errors.Is(err, catalogadapter.ErrConflict) {
			crashExit(crashExitSinkError, "optimize: %v", err)
		}
	}
}
