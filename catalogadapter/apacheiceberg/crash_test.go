package apacheiceberg

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/sqlsink"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// TestCrashIceberg is sqlsink's TestCrashRecovery on Iceberg: it
// re-executes the test binary as a writer process (TestCrashIcebergHelper)
// that commits numbered epochs through sqlsink into an Iceberg table of the
// default SQLite catalog, kills it with SIGKILL at chosen moments (start-up
// and recovery, mid-replay, writing, PreCommit, CommitEpoch, right after a
// commit), restarts it, and finally reads every snapshot back with
// iceberg-go's own scan from a fresh catalog handle: snapshot k holds
// exactly the serial result of epochs 1..k, every row once. A first phase
// appends, a second upserts with overlapping keys and deletes into a
// second table of the same catalog.

var (
	icCrashKills        = flag.Int("crash.iceberg.kills", 30, "TestCrashIceberg: kills of the append writer")
	icCrashEpochs       = flag.Int("crash.iceberg.epochs", 40, "TestCrashIceberg: epochs the append writer commits")
	icCrashUpsertKills  = flag.Int("crash.iceberg.upsert.kills", 30, "TestCrashIceberg: kills of the upsert writer (0: no upsert phase)")
	icCrashUpsertEpochs = flag.Int("crash.iceberg.upsert.epochs", 35, "TestCrashIceberg: epochs the upsert writer commits")
	icCrashSeed         = flag.Uint64("crash.iceberg.seed", 0, "TestCrashIceberg: random seed (0: from the clock)")
)

// Environment of the helper process.
const (
	icHelperEnv = "LAKESQL_ICECRASH_HELPER" // "1" runs TestCrashIcebergHelper
	icDirEnv    = "LAKESQL_ICECRASH_DIR"    // the catalog's data directory
	icStateEnv  = "LAKESQL_ICECRASH_STATE"  // the sink's state directory (staging journal)
	icModeEnv   = "LAKESQL_ICECRASH_MODE"   // append or upsert
	icEpochsEnv = "LAKESQL_ICECRASH_N"      // the last epoch to write
	icFlushEnv  = "LAKESQL_ICECRASH_FLUSH"  // FlushRows (0: the default)
	icPaceEnv   = "LAKESQL_ICECRASH_PACE"   // upstream gaps, "seed:microseconds"
	icReplay    = 2                         // epochs replayed before the recovered one
	icTag       = "@icecrash "              // marks the helper's progress lines
)

// Exit codes of the helper when it sees something wrong (0: done).
const (
	icExitSetup      = 2
	icExitNotSkipped = 3 // a replayed epoch was written again
	icExitSkipped    = 4 // a new epoch was reported as skipped
	icExitRecord     = 5 // a new epoch is not the sink's last committed one
	icExitRows       = 6 // a new epoch committed another number of rows
	icExitSinkError  = 7
)

func icTable(mode string) catalogadapter.TableIdent {
	return catalogadapter.TableIdent{Namespace: []string{"db"}, Name: "crash_" + mode}
}

func icWriterID(mode string) string { return "crash-writer-" + mode }

// icRows is the deterministic upstream: the rows epoch e carries.
// Append: new ids e*1000+i. Upsert: ids from 0..29, so epochs overlap; a
// few rows delete, some epochs upsert a key twice (the last arrival wins)
// or upsert then delete it.
func icRows(mode string, e int64) []row {
	var rows []row
	if mode == "append" {
		for i := int64(0); i <= e%7+1; i++ {
			id := e*1000 + i
			rows = append(rows, row{ID: id, Amount: float64(id) / 10, Region: []string{"eu", "us", "ap"}[e%3]})
		}
		return rows
	}
	seen := map[int64]bool{}
	for i := int64(0); i <= e%5+2; i++ {
		id := (e*7 + i*11) % 30
		if seen[id] {
			continue
		}
		seen[id] = true
		r := row{Op: "U", ID: id, Amount: float64(e*100 + i), Region: []string{"eu", "us", "ap"}[(e+i)%3]}
		if (e+i)%4 == 0 {
			r = row{Op: "D", ID: id}
		}
		rows = append(rows, r)
	}
	if e%3 == 0 {
		rows = append(rows, row{Op: "U", ID: rows[0].ID, Amount: float64(e*100) + 0.5, Region: "re"})
	}
	if e%4 == 1 && len(rows) > 1 {
		rows = append(rows, row{Op: "D", ID: rows[1].ID})
	}
	return rows
}

// icBatches cuts epoch e's rows into the batches the writer sends: one,
// two, or two plus an empty one.
func icBatches(t testing.TB, mode string, e int64) []arrow.RecordBatch {
	rows := icRows(mode, e)
	if e%3 != 0 {
		return []arrow.RecordBatch{batch(t, rows...)}
	}
	h := len(rows) / 2
	out := []arrow.RecordBatch{batch(t, rows[:h]...), batch(t, rows[h:]...)}
	if e%2 == 0 {
		out = append(out, batch(t))
	}
	return out
}

// icModel is the serial result: the table after epochs 1..k, applied one
// after the other with no crash, as a map from id to row.
type icModel map[int64]row

func (m icModel) apply(mode string, e int64) {
	for _, r := range icRows(mode, e) {
		if mode == "append" || r.Op != "D" {
			r.Op = ""
			m[r.ID] = r
		} else {
			delete(m, r.ID)
		}
	}
}

func (m icModel) sorted() []string {
	out := []string{}
	for _, r := range m {
		out = append(out, r.String())
	}
	sort.Strings(out)
	return out
}

// icCommitRows is how many rows a commit of epoch e adds: all of them in
// append mode, the keys whose last arrival upserts in upsert mode.
func icCommitRows(mode string, e int64) int64 {
	if mode == "append" {
		return int64(len(icRows(mode, e)))
	}
	last := map[int64]string{}
	for _, r := range icRows(mode, e) {
		last[r.ID] = r.Op
	}
	n := int64(0)
	for _, op := range last {
		if op != "D" {
			n++
		}
	}
	return n
}

func icExit(code int, format string, args ...any) {
	fmt.Printf("FATAL "+format+"\n", args...)
	os.Exit(code)
}

// TestCrashIcebergHelper is the writer process of TestCrashIceberg; it
// does nothing in an ordinary test run.
func TestCrashIcebergHelper(t *testing.T) {
	if os.Getenv(icHelperEnv) != "1" {
		t.Skip("helper process of TestCrashIceberg")
	}
	dir, stateDir, mode := os.Getenv(icDirEnv), os.Getenv(icStateEnv), os.Getenv(icModeEnv)
	n, err1 := strconv.ParseInt(os.Getenv(icEpochsEnv), 10, 64)
	flush, err2 := strconv.ParseInt(os.Getenv(icFlushEnv), 10, 64)
	var paceSeed uint64
	var pace int64
	_, err3 := fmt.Sscanf(os.Getenv(icPaceEnv), "%d:%d", &paceSeed, &pace)
	if dir == "" || stateDir == "" || (mode != "append" && mode != "upsert") || err1 != nil || err2 != nil || err3 != nil {
		icExit(icExitSetup, "bad helper environment: dir %q, state %q, mode %q, %v, %v, %v", dir, stateDir, mode, err1, err2, err3)
	}
	// The upstream delivers a new epoch's batches with gaps of up to pace;
	// replays come as fast as the writer reads.
	rng := rand.New(rand.NewPCG(paceSeed, 1))
	gap := func() {
		if pace > 0 {
			time.Sleep(time.Duration(rng.Int64N(pace+1)) * time.Microsecond)
		}
	}
	p := openProvider(t, dir)
	cfg := sqlsink.Config{
		Name: "crash-" + mode, Provider: p, Table: icTable(mode), Schema: ordersSchema,
		WriterID: icWriterID(mode), FlushRows: flush,
		TempDir: t.TempDir(), MemoryLimit: "256MB", Threads: 2,
		// The staging journal lets a restarted run delete what a killed one staged.
		StateDir: stateDir,
	}
	if mode == "upsert" {
		cfg.Mode, cfg.Key = sqlsink.ModeUpsert, []string{"id"}
	}
	s, err := sqlsink.New(cfg)
	if err != nil {
		icExit(icExitSetup, "new sink: %v", err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.Open(ctx); err != nil {
		icExit(icExitSinkError, "open: %v", err)
	}
	last, ok := s.LastCommittedEpoch()
	if !ok {
		last = 0
	}
	fmt.Printf(icTag+"recovered %d\n", last)
	// Resume at last+1, re-sending the epochs before it: the one in flight
	// when the previous run died may have landed unreported.
	for ep := max(last-icReplay, 1); ep <= n; ep++ {
		replay := ep <= last
		fmt.Printf(icTag+"begin %d\n", ep)
		if err := s.BeginEpoch(ctx, ep); err != nil {
			icExit(icExitSinkError, "begin %d: %v", ep, err)
		}
		for _, b := range icBatches(t, mode, ep) {
			if !replay {
				gap()
			}
			if err := s.Write(ctx, b); err != nil {
				icExit(icExitSinkError, "write %d: %v", ep, err)
			}
		}
		if !replay {
			gap()
			fmt.Printf(icTag+"precommit %d\n", ep)
		}
		if err := s.PreCommit(ctx, ep); err != nil {
			icExit(icExitSinkError, "precommit %d: %v", ep, err)
		}
		if !replay {
			fmt.Printf(icTag+"precommitted %d\n", ep)
		}
		res, err := s.CommitEpoch(ctx, ep)
		if err != nil {
			icExit(icExitSinkError, "commit %d: %v", ep, err)
		}
		switch got, _ := s.LastCommittedEpoch(); {
		case replay && !res.Skipped:
			icExit(icExitNotSkipped, "replayed epoch %d was not skipped: %+v", ep, res)
		case replay:
			fmt.Printf(icTag+"skipped %d\n", ep)
		case res.Skipped:
			icExit(icExitSkipped, "new epoch %d was skipped: %+v", ep, res)
		case got != ep:
			icExit(icExitRecord, "after committing epoch %d the sink's last committed epoch is %d", ep, got)
		case res.Rows != icCommitRows(mode, ep):
			icExit(icExitRows, "epoch %d committed %d rows, want %d: %+v", ep, res.Rows, icCommitRows(mode, ep), res)
		default:
			fmt.Printf(icTag+"committed %d\n", ep)
		}
	}
	fmt.Printf(icTag+"done %d\n", n)
}

// icPlan says when a helper run is killed: delay after the nth progress
// line of kind trigger ("start": the process start; "recovered"; "begin",
// "precommit", "precommitted", "committed": of a new epoch; "skipped": a
// replay). nth < 0 leaves the run to finish.
type icPlan struct {
	trigger string
	nth     int
	delay   time.Duration
}

func (p icPlan) String() string {
	if p.nth < 0 {
		return "no kill"
	}
	return fmt.Sprintf("%s #%d +%v", p.trigger, p.nth, p.delay)
}

// icRun is one helper process.
type icRun struct {
	out        bytes.Buffer
	errOut     bytes.Buffer
	killed     bool // by SIGKILL
	hardKilled bool // by the hard limit, not the plan
	exitErr    error
	startup    time.Duration   // start to the recovered line (0: not reached)
	commits    []time.Duration // precommitted to committed lines
}

func (r *icRun) lines() []string {
	return strings.Split(strings.TrimRight(r.out.String(), "\n"), "\n")
}

func (r *icRun) describe() string {
	return fmt.Sprintf("exit %v\nstdout:\n%s\nstderr:\n%s", r.exitErr, r.out.String(), r.errOut.String())
}

// runIcebergCrashHelper starts the helper and kills it as plan says; past
// hardLimit it is killed anyway.
func runIcebergCrashHelper(t *testing.T, exe string, env []string, plan icPlan, hardLimit time.Duration) *icRun {
	t.Helper()
	r := &icRun{}
	cmd := exec.Command(exe, "-test.run=^TestCrashIcebergHelper$", "-test.count=1", "-test.timeout=5m")
	cmd.Env = env
	cmd.Stderr = &r.errOut
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start helper: %v", err)
	}
	started := time.Now()
	fire := make(chan struct{}, 1)
	if plan.nth >= 0 && plan.trigger == "start" {
		fire <- struct{}{}
	}
	done := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		recovered, count := int64(-1), 0
		var precommitted time.Time
		for sc.Scan() {
			l := sc.Text()
			r.out.WriteString(l + "\n")
			f := strings.Fields(strings.TrimPrefix(l, icTag))
			if !strings.HasPrefix(l, icTag) || len(f) != 2 {
				continue
			}
			v, _ := strconv.ParseInt(f[1], 10, 64)
			switch f[0] {
			case "recovered":
				recovered = v
				r.startup = time.Since(started)
			case "precommitted":
				precommitted = time.Now()
			case "committed":
				r.commits = append(r.commits, time.Since(precommitted))
			}
			newEpoch := f[0] != "begin" || v > recovered
			if plan.nth >= 0 && f[0] == plan.trigger && newEpoch {
				if count++; count == plan.nth {
					fire <- struct{}{}
				}
			}
		}
		io.Copy(io.Discard, stdout)
		done <- cmd.Wait() // r.out is complete when done fires
	}()
	hard := time.NewTimer(hardLimit)
	defer hard.Stop()
	var kill <-chan time.Time
	for exited := false; !exited; {
		select {
		case r.exitErr = <-done:
			exited = true
		case <-fire:
			if plan.delay <= 0 {
				cmd.Process.Signal(syscall.SIGKILL)
			} else {
				kill = time.After(plan.delay)
			}
		case <-kill:
			cmd.Process.Signal(syscall.SIGKILL)
			kill = nil
		case <-hard.C:
			cmd.Process.Signal(syscall.SIGKILL)
			r.hardKilled = true
		}
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		r.killed = true
	}
	return r
}

// icPhase is what one phase (one mode) of the crash test saw.
type icPhase struct {
	mode                       string
	n                          int64
	runs, kills, finishedEarly int
	landedUnreported           int
	stagingKills               int // kills that may have cut a staging short
	where, triggers            map[string]int
	elapsed                    time.Duration
}

func TestCrashIceberg(t *testing.T) {
	if os.Getenv(icHelperEnv) == "1" {
		t.Skip("this is the helper process")
	}
	seed := *icCrashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -crash.iceberg.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x696365))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, stateDir := t.TempDir(), t.TempDir()
	// The helper's temp dirs (DuckDB spill, t.TempDir) outlive a SIGKILL:
	// keep them under ours.
	baseEnv := append(os.Environ(), icHelperEnv+"=1", icDirEnv+"="+dir, icStateEnv+"="+stateDir, "TMPDIR="+t.TempDir())
	start := time.Now()
	phases := []struct {
		mode         string
		kills, epoch int
	}{{"append", *icCrashKills, *icCrashEpochs}, {"upsert", *icCrashUpsertKills, *icCrashUpsertEpochs}}
	var results []icPhase
	for _, ph := range phases {
		if ph.kills <= 0 && ph.mode == "upsert" {
			continue
		}
		res := runIcebergCrashPhase(t, rng, exe, baseEnv, dir, ph.mode, int64(ph.epoch), ph.kills)
		results = append(results, res)
		if t.Failed() {
			return
		}
		verifyIcebergCrashTable(t, dir, res)
		checkIcebergCrashJournal(t, stateDir, ph.mode)
	}
	checkIcebergCrashCatalog(t, dir, results)
	total := 0
	for _, r := range results {
		total += r.kills
	}
	t.Logf("%d kills in all, %v", total, time.Since(start).Round(time.Millisecond))
}

// runIcebergCrashPhase kills the writer of mode kills times, then lets it
// finish, checking after every run that what it recovered is what the
// runs before reported.
func runIcebergCrashPhase(t *testing.T, rng *rand.Rand, exe string, baseEnv []string, dir, mode string, n int64, kills int) icPhase {
	ph := icPhase{mode: mode, n: n, where: map[string]int{}, triggers: map[string]int{}}
	env := append(slices.Clone(baseEnv), icModeEnv+"="+mode, icEpochsEnv+"="+strconv.FormatInt(n, 10))
	// What the runs printed bounds what a restart may recover: every epoch
	// reported committed is durable (lo); an epoch reported precommitted
	// but not committed may or may not have landed (hi).
	var lo, hi int64
	check := func(r *icRun) string {
		state := "start-up (open, recovery)"
		for _, l := range r.lines() {
			if strings.HasPrefix(l, "FATAL") {
				t.Fatalf("%s run %d: the writer saw an anomaly: %s\n%s", mode, ph.runs, l, r.describe())
			}
			if !strings.HasPrefix(l, icTag) {
				continue // the test framework's own lines
			}
			f := strings.Fields(strings.TrimPrefix(l, icTag))
			v, err := strconv.ParseInt(f[len(f)-1], 10, 64)
			if len(f) != 2 || err != nil {
				t.Fatalf("%s run %d: unexpected line %q\n%s", mode, ph.runs, l, r.describe())
			}
			switch f[0] {
			case "recovered":
				if v < lo || v > hi {
					t.Fatalf("%s run %d recovered epoch %d; the runs before reported %d committed and at most %d precommitted", mode, ph.runs, v, lo, hi)
				}
				if v > lo {
					ph.landedUnreported++
				}
				lo, hi = v, v
				state = "between epochs"
			case "begin":
				state = "writing a new epoch (Write, flushes)"
				if v <= lo {
					state = "replaying an epoch"
				}
			case "precommit":
				state = "in PreCommit (staging)"
			case "precommitted":
				hi = v
				state = "in CommitEpoch (precommitted, not committed)"
			case "committed":
				if v != lo+1 {
					t.Fatalf("%s run %d committed epoch %d after %d", mode, ph.runs, v, lo)
				}
				lo, hi = v, v
				state = "right after a commit"
			case "skipped":
				state = "between epochs"
				if v < lo {
					state = "replaying an epoch"
				}
			case "done":
				state = "done"
			default:
				t.Fatalf("%s run %d: unexpected line %q\n%s", mode, ph.runs, l, r.describe())
			}
		}
		return state
	}
	startup, commit := 400*time.Millisecond, 40*time.Millisecond // running estimates
	began := time.Now()
	for ph.kills < kills {
		ph.runs++
		// Spread the kills over the epochs: a run triggered by the nth
		// event of a new epoch commits about nth-1 epochs.
		left := float64(n-lo) / float64(kills-ph.kills)
		nth := 1 + rng.IntN(max(1, int(2*left+0.5)))
		var plan icPlan
		switch k := rng.IntN(20); {
		case lo == n || k < 3:
			plan = icPlan{"start", 1, time.Duration(rng.Int64N(int64(startup*5/4) + 1))}
		case k < 5 && lo >= 2:
			plan = icPlan{"skipped", 1 + rng.IntN(2), 0}
		case k < 7:
			plan = icPlan{"recovered", 1, time.Duration(rng.Int64N(int64(3*commit) + 1))}
		case k < 9:
			plan = icPlan{"begin", nth, time.Duration(rng.Int64N(int64(8 * time.Millisecond)))}
		case k < 12:
			plan = icPlan{"precommit", nth, time.Duration(rng.Int64N(int64(6 * time.Millisecond)))}
		case k < 17:
			plan = icPlan{"precommitted", nth, time.Duration(rng.Int64N(int64(commit) + 1))}
		default:
			plan = icPlan{"committed", nth, 0}
		}
		flush := []int64{0, 1, 2, 3}[rng.IntN(4)]
		pace := time.Duration(rng.IntN(6)) * time.Millisecond
		runEnv := append(slices.Clone(env), icFlushEnv+"="+strconv.FormatInt(flush, 10),
			fmt.Sprintf("%s=%d:%d", icPaceEnv, rng.Uint64(), pace.Microseconds()))
		r := runIcebergCrashHelper(t, exe, runEnv, plan, time.Minute)
		state := check(r)
		if r.hardKilled {
			t.Fatalf("%s run %d (flush %d, %v) hung:\n%s", mode, ph.runs, flush, plan, r.describe())
		}
		if r.startup > 0 {
			startup = (3*startup + r.startup) / 4
		}
		for _, c := range r.commits {
			commit = (7*commit + c) / 8
		}
		checkIcebergCatalogFile(t, dir)
		if !r.killed {
			if r.exitErr != nil || state != "done" {
				t.Fatalf("%s run %d (flush %d, %v) ended by itself before the kill:\n%s", mode, ph.runs, flush, plan, r.describe())
			}
			ph.finishedEarly++
			continue
		}
		ph.kills++
		ph.where[state]++
		ph.triggers[plan.trigger]++
		if strings.HasPrefix(state, "writing") || strings.HasPrefix(state, "in PreCommit") {
			ph.stagingKills++
		}
		if time.Since(began) > 3*time.Minute {
			t.Fatalf("%s: gave up after %d kills in %v", mode, ph.kills, time.Since(began))
		}
	}
	t.Logf("%s: after %d kills epoch %d is committed (at most %d); startup ~%v, commit ~%v; the last run finishes",
		mode, ph.kills, lo, hi, startup.Round(time.Millisecond), commit.Round(time.Millisecond))
	ph.runs++
	r := runIcebergCrashHelper(t, exe, append(slices.Clone(env), icFlushEnv+"=2", icPaceEnv+"=1:0"), icPlan{nth: -1}, 2*time.Minute)
	if state := check(r); r.killed || r.exitErr != nil || state != "done" {
		t.Fatalf("%s: final run did not finish:\n%s", mode, r.describe())
	}
	// One more restart after the end: it recovers n and only replays.
	ph.runs++
	r = runIcebergCrashHelper(t, exe, append(slices.Clone(env), icFlushEnv+"=0", icPaceEnv+"=1:0"), icPlan{nth: -1}, 2*time.Minute)
	if state := check(r); r.killed || r.exitErr != nil || state != "done" {
		t.Fatalf("%s: replay-only run did not finish:\n%s", mode, r.describe())
	}
	if lo != n {
		t.Fatalf("%s: writer finished with epoch %d committed, want %d", mode, lo, n)
	}
	ph.elapsed = time.Since(began)
	t.Logf("%s: %d runs, %d kills, %d epochs in %v; %d runs finished before their kill; %d restarts recovered an epoch whose commit landed unreported",
		mode, ph.runs, ph.kills, n, ph.elapsed.Round(time.Millisecond), ph.finishedEarly, ph.landedUnreported)
	for _, l := range []struct {
		what string
		m    map[string]int
	}{{"kills landed", ph.where}, {"kills triggered by", ph.triggers}} {
		keys := make([]string, 0, len(l.m))
		for k := range l.m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t.Logf("  %s: %s %-46s %d", mode, l.what, k+":", l.m[k])
		}
	}
	return ph
}

// icScan reads table tbl at snapshot snap with iceberg-go's own scan, sorted.
func icScan(t testing.TB, tbl *table.Table, snap int64) []string {
	t.Helper()
	return tableRows(t, tbl, table.WithSnapshotID(snap))
}

// verifyIcebergCrashTable reads the phase's table through a fresh catalog
// handle: one snapshot per epoch, in order, each carrying the writer id
// and its epoch; snapshot k holds exactly the serial result of epochs
// 1..k; every file a snapshot references exists; files the crashes left
// unreferenced are bounded by the kills that could have cut a staging
// short (a kill between a file's write and the journal naming it).
func verifyIcebergCrashTable(t *testing.T, dir string, ph icPhase) {
	ctx := context.Background()
	id := icTable(ph.mode)
	tbl := freshTable(t, dir, id)
	meta := tbl.Metadata()
	snaps := snapshots(t, dir, id)
	if len(snaps) != int(ph.n) || len(meta.Snapshots()) != int(ph.n) {
		t.Errorf("%s: %d snapshots on main, %d in the metadata, want %d (one per epoch)", ph.mode, len(snaps), len(meta.Snapshots()), ph.n)
	}
	model := icModel{}
	prev := int64(0)
	epochs, commitIDs := map[int64]bool{}, map[string]bool{}
	referenced := map[string]bool{}
	var want []string
	mismatches := 0
	for _, s := range snaps {
		props := map[string]string{}
		if s.Summary != nil {
			props = s.Summary.Properties
		}
		e, err := strconv.ParseInt(props[icetable.SummaryEpoch], 10, 64)
		switch {
		case props[icetable.SummaryWriterID] != icWriterID(ph.mode) || err != nil:
			t.Errorf("%s: snapshot %d summary %v: want writer %s and an epoch", ph.mode, s.SnapshotID, props, icWriterID(ph.mode))
			continue
		case epochs[e]:
			t.Errorf("%s: epoch %d committed twice (snapshot %d)", ph.mode, e, s.SnapshotID)
		case e <= prev:
			t.Errorf("%s: snapshot %d records epoch %d after epoch %d", ph.mode, s.SnapshotID, e, prev)
		case e != prev+1:
			t.Errorf("%s: snapshot %d records epoch %d after epoch %d: epochs lost", ph.mode, s.SnapshotID, e, prev)
		}
		if c := props[icetable.SummaryCommitID]; c == "" || commitIDs[c] {
			t.Errorf("%s: snapshot %d has an empty or repeated commit id %q", ph.mode, s.SnapshotID, c)
		} else {
			commitIDs[c] = true
		}
		epochs[e] = true
		for ep := prev + 1; ep <= e; ep++ {
			model.apply(ph.mode, ep)
		}
		prev = max(prev, e)
		want = model.sorted()
		if got := icScan(t, tbl, s.SnapshotID); !slices.Equal(got, want) {
			if mismatches++; mismatches <= 3 { // the first ones tell enough
				t.Errorf("%s: snapshot %d (epoch %d) holds %d rows, want %d (epochs 1..%d serially) (-want +got):\n%s",
					ph.mode, s.SnapshotID, e, len(got), len(want), e, cmp.Diff(want, got))
			}
		}
		tasks, err := tbl.Scan(table.WithSnapshotID(s.SnapshotID)).PlanFiles(ctx)
		if err != nil {
			t.Fatalf("%s: plan snapshot %d: %v", ph.mode, s.SnapshotID, err)
		}
		for _, task := range tasks {
			files := []ice.DataFile{task.File}
			for _, g := range [][]ice.DataFile{task.DeleteFiles, task.EqualityDeleteFiles, task.DeletionVectorFiles} {
				files = append(files, g...)
			}
			for _, f := range files {
				p, err := icetable.LocalPath(f.FilePath())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(p); err != nil {
					t.Errorf("%s: snapshot %d references a file that is gone: %v", ph.mode, s.SnapshotID, err)
				}
				referenced[p] = true
			}
		}
	}
	if mismatches > 3 {
		t.Errorf("%s: %d snapshots in all differ from the serial result", ph.mode, mismatches)
	}
	for e := int64(1); e <= ph.n; e++ {
		if !epochs[e] {
			t.Errorf("%s: epoch %d has no snapshot", ph.mode, e)
		}
	}
	// The head, read once more through a fresh handle: the whole upstream,
	// every row exactly once.
	if head := tbl.CurrentSnapshot(); head != nil {
		got := icScan(t, freshTable(t, dir, id), head.SnapshotID)
		seen := map[string]int{}
		for _, r := range got {
			if seen[r]++; seen[r] == 2 {
				t.Errorf("%s: row %s is in the table twice", ph.mode, r)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: final table (-want +got):\n%s", ph.mode, cmp.Diff(want, got))
		}
	}
	loc, err := icetable.LocalPath(tbl.Location())
	if err != nil {
		t.Fatal(err)
	}
	var orphans []string
	onDisk := 0
	filepath.WalkDir(filepath.Join(loc, "data"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			onDisk++
			if !referenced[p] {
				orphans = append(orphans, strings.TrimPrefix(p, loc+"/"))
			}
		}
		return nil
	})
	// A kill can orphan at most what one staging step writes before the
	// journal names it: a data file, and in upsert mode an equality-delete
	// file before it.
	if bound := 2 * ph.stagingKills; len(orphans) > bound {
		t.Errorf("%s: %d unreferenced files in the table's data directory, more than the %d that %d kills during staging can explain: %v",
			ph.mode, len(orphans), bound, ph.stagingKills, orphans)
	}
	t.Logf("%s: table has %d snapshots, %d rows, %d referenced files; %d files on disk, %d orphaned by kills during staging (%d such kills)",
		ph.mode, len(snaps), len(want), len(referenced), onDisk, len(orphans), ph.stagingKills)
}

// checkIcebergCrashJournal: after the clean final runs no staging journal
// is left behind.
func checkIcebergCrashJournal(t *testing.T, stateDir, mode string) {
	t.Helper()
	entries, err := os.ReadDir(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), icWriterID(mode)) {
			t.Errorf("%s: staging journal %s left after a clean finish", mode, e.Name())
		}
	}
}

// checkIcebergCatalogFile opens the SQLite catalog file the killed
// processes wrote and checks it is sound and holds the catalog's tables.
func checkIcebergCatalogFile(t *testing.T, dir string) []string {
	t.Helper()
	path := filepath.Join(dir, "iceberg", "catalog.db")
	if _, err := os.Stat(path); err != nil {
		return nil // a kill before the catalog existed
	}
	db, err := sql.Open("sqlite", icetable.SQLiteDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res []string
	rs, err := db.Query("PRAGMA integrity_check")
	if err != nil {
		t.Fatalf("catalog %s: integrity check: %v", path, err)
	}
	for rs.Next() {
		var s string
		if err := rs.Scan(&s); err != nil {
			t.Fatal(err)
		}
		res = append(res, s)
	}
	if err := errors.Join(rs.Err(), rs.Close()); err != nil || !slices.Equal(res, []string{"ok"}) {
		t.Fatalf("catalog %s is corrupt: %v %v", path, res, err)
	}
	var tables []string
	rs, err = db.Query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
	if err != nil {
		t.Fatalf("catalog %s: list tables: %v", path, err)
	}
	defer rs.Close()
	for rs.Next() {
		var s string
		if err := rs.Scan(&s); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, s)
	}
	return tables
}

// checkIcebergCrashCatalog: at the end, the SQLite file is sound, and a
// fresh catalog handle lists exactly the crash tables.
func checkIcebergCrashCatalog(t *testing.T, dir string, phases []icPhase) {
	sqlTables := checkIcebergCatalogFile(t, dir)
	cat, err := icetable.OpenCatalog(context.Background(), icetable.CatalogConfig{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	var got, want []string
	for ident, err := range cat.Iceberg().ListTables(context.Background(), table.Identifier{"db"}) {
		if err != nil {
			t.Fatalf("list catalog tables: %v", err)
		}
		got = append(got, strings.Join(ident, "."))
	}
	for _, ph := range phases {
		want = append(want, icTable(ph.mode).String())
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("catalog lists tables %v, want %v", got, want)
	}
	t.Logf("catalog file: integrity ok, SQL tables %v; Iceberg tables %v", sqlTables, got)
}
