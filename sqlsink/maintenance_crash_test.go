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

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/deltalake"
	"github.com/lakesql/lakesql/catalogadapter/providertest"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// TestMaintenanceCrash kills, with SIGKILL at random points, a process
// (TestMaintenanceCrashChild) that loops over maintenance on a Delta
// table: it commits an epoch of its own (writer id "kid", which wakes
// auto-compaction in the background, CompactMinFiles 2), then runs
// OPTIMIZE and VACUUM RETAIN 0 HOURS; meanwhile this process upserts
// epochs into the same table (writer id "app"). After each kill the table
// is readable and its rows are exactly the model: app's epochs 1..a
// applied in order plus kid's rows of epochs 1..k, where a and k are the
// epochs the version records, a at least what app was acknowledged and k
// at least what kid reported committed. At the end, with no process
// alive, a VACUUM with its clock moved past StageLifetime leaves no file
// under the table's folders that the latest version does not name: the
// kills left no orphan behind. -maintcrash.kills sets the number of kills
// (30; `make test` stays under a minute).
func TestMaintenanceCrash(t *testing.T) {
	if os.Getenv(crashHelperEnv) == "1" {
		t.Skip("this is a helper process")
	}
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
	dir := filepath.Join(root, mcTable)
	db := providertest.OpenDuckDB(t)
	p := deltalake.New(db, deltalake.Options{})
	t.Cleanup(func() { p.Close() })
	app := openSink(t, Config{
		Name: "app", WriterID: "app", Provider: p, Table: catalogadapter.TableIdent{Name: dir},
		Schema: orderSchema, Mode: ModeUpsert, Key: []string{"id"}, TempDir: t.TempDir(),
		MemoryLimit: "256MB", Threads: 1, CheckpointInterval: 5, DisableAutoCompact: true,
	})
	if res := mcEpoch(ctx, t, app, 1, mcAppRows(1)); res != nil {
		t.Fatal(res)
	}
	var acked atomic.Int64
	acked.Store(1)

	// The app writer upserts until told to stop.
	stop := make(chan struct{})
	var appErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for e := int64(2); ; e++ {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			if appErr = mcEpoch(ctx, t, app, e, mcAppRows(e)); appErr != nil {
				return
			}
			acked.Store(e)
		}
	}()
	stopApp := func() {
		select {
		case <-stop:
		default:
			close(stop)
			wg.Wait()
		}
	}
	defer stopApp()

	env := append(os.Environ(), crashHelperEnv+"=1", crashDirEnv+"="+dir, crashStateEnv+"="+stateDir,
		"TMPDIR="+t.TempDir())
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
		checkMaintCrashTable(t, dir, acked.Load(), kidCommitted, fmt.Sprintf("after kill %d (%v, last line %q)", kills, plan, state))
		if t.Failed() {
			return
		}
	}
	stopApp()
	if appErr != nil {
		t.Fatalf("the app writer failed: %v", appErr)
	}
	final := checkMaintCrashTable(t, dir, acked.Load(), kidCommitted, "with no process running")
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
	checkMaintCrashTable(t, dir, acked.Load(), kidCommitted, "after the final vacuum")
	snap := mcLatest(t, dir)
	live := map[string]bool{}
	for _, f := range snap.Files() {
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
	if len(left) > 0 {
		t.Errorf("%d files under the table that the latest version (%d) does not name, after the final vacuum: %v", len(left), snap.Version, left)
	}
	readDeltaLog(t, mcStorage(t, dir)) // the versions are contiguous
	t.Logf("%d kills in %v, by the last line the process printed: %v; the table: version %d, %d live files, app epoch %d, kid epoch %d; the final vacuum deleted %v",
		kills, time.Since(started).Round(time.Millisecond), where, snap.Version, len(snap.Files()), final.app, final.kid, orphans)
}

var maintCrashKills = flag.Int("maintcrash.kills", 30, "TestMaintenanceCrash: kills of the maintenance process")

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

// mcEpochs are the epochs a version records.
type mcEpochs struct{ app, kid int64 }

// checkMaintCrashTable reads the latest version with the Delta reader and
// checks it against the model of the epochs it records, which must be at
// least the acknowledged ones.
func checkMaintCrashTable(t *testing.T, dir string, appAcked, kidCommitted int64, when string) mcEpochs {
	t.Helper()
	ctx := context.Background()
	snap := mcLatest(t, dir)
	a, _ := snap.TxnVersion("app")
	k, _ := snap.TxnVersion("kid")
	if a < appAcked {
		t.Errorf("%s: version %d records app epoch %d, but epoch %d was acknowledged", when, snap.Version, a, appAcked)
	}
	if k < kidCommitted {
		t.Errorf("%s: version %d records kid epoch %d, but kid reported epoch %d committed", when, snap.Version, k, kidCommitted)
	}
	db := providertest.OpenDuckDB(t)
	if err := delta.PrepareDuckDB(ctx, db); err != nil {
		t.Fatal(err)
	}
	q, err := snap.ScanSQL(ctx, db)
	if err != nil {
		t.Fatalf("%s: version %d: %v", when, snap.Version, err)
	}
	got, err := queryRowStrings(ctx, db, q)
	if err != nil {
		t.Fatalf("%s: version %d is not readable: %v", when, snap.Version, err)
	}
	if want := mcModel(a, k); !slices.Equal(want, got) {
		t.Errorf("%s: version %d (app epoch %d, kid epoch %d) differs from the model (-want +got):\n%s", when, snap.Version, a, k, cmp.Diff(want, got))
	}
	return mcEpochs{a, k}
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
// OPTIMIZE, VACUUM RETAIN 0 HOURS, printing each step before it starts,
// until it is killed.
func TestMaintenanceCrashChild(t *testing.T) {
	if os.Getenv(crashHelperEnv) != "1" || os.Getenv(crashDirEnv) == "" || os.Getenv(crashLakeEnv) != "" {
		t.Skip("helper process of TestMaintenanceCrash")
	}
	dir, stateDir := os.Getenv(crashDirEnv), os.Getenv(crashStateEnv)
	ctx := context.Background()
	db := providertest.OpenDuckDB(t)
	p := deltalake.New(db, deltalake.Options{})
	s, err := New(Config{
		Name: "kid", WriterID: "kid", Provider: p, Table: catalogadapter.TableIdent{Name: dir},
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
		fmt.Printf(crashTag+"optimize %d\n", round)
		if _, err := s.Optimize(ctx, db, CompactOptions{MinFiles: 2}); err != nil && !errors.Is(err, catalogadapter.ErrConflict) {
			crashExit(crashExitSinkError, "optimize: %v", err)
		}
		fmt.Printf(crashTag+"vacuum %d\n", round)
		if _, err := s.Vacuum(ctx, VacuumOptions{Retain: 0, AllowShortRetention: true}); err != nil {
			crashExit(crashExitSinkError, "vacuum: %v", err)
		}
	}
}
