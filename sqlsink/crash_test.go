package sqlsink

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
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
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/tableformat/delta"
)

// The crash test re-executes the test binary as a writer process
// (TestCrashHelper), kills it with SIGKILL at random moments, restarts it,
// and finally checks that the table took every upstream row exactly once
// and that every version the crashes left behind is a readable table.

var (
	crashKills  = flag.Int("crash.kills", 50, "TestCrashRecovery: how many times the writer process is killed")
	crashEpochs = flag.Int("crash.epochs", 60, "TestCrashRecovery: epochs the writer process commits")
	crashSeed   = flag.Uint64("crash.seed", 0, "TestCrashRecovery: random seed (0: from the clock)")
)

// Environment of the helper process.
const (
	crashHelperEnv = "LAKESQL_CRASH_HELPER" // "1" runs TestCrashHelper
	crashDirEnv    = "LAKESQL_CRASH_DIR"    // the table directory
	crashEpochsEnv = "LAKESQL_CRASH_N"      // the last epoch to write
	crashFlushEnv  = "LAKESQL_CRASH_FLUSH"  // FlushRows (0: the default)
	crashPaceEnv   = "LAKESQL_CRASH_PACE"   // upstream pacing, "seed:microseconds"
	crashWriterID  = "crash-writer"
	crashReplay    = 2         // epochs replayed before the recovered one
	crashTag       = "@crash " // marks the helper's progress lines
)

// Exit codes of the helper when it sees something wrong (0: done).
const (
	crashExitSetup      = 2
	crashExitNotSkipped = 3 // a replayed epoch was written again
	crashExitSkipped    = 4 // a new epoch was reported as skipped
	crashExitVersion    = 5 // a new epoch did not land as version == epoch
	crashExitSinkError  = 6
)

// crashIDs is the deterministic upstream: the ids epoch e carries.
func crashIDs(e int64) []int64 {
	var ids []int64
	for i := int64(0); i <= e%7+1; i++ {
		ids = append(ids, e*1000+i)
	}
	return ids
}

// crashBatches cuts epoch e's rows into the batches the writer sends:
// one, two, or two plus an empty one.
func crashBatches(t testing.TB, e int64) []arrow.RecordBatch {
	var rows []row
	for _, id := range crashIDs(e) {
		rows = append(rows, row{ID: id, Amount: float64(id) / 10, Region: []string{"eu", "us", "ap"}[e%3]})
	}
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

// crashExit reports an anomaly on stdout, where the parent looks, and
// exits with a code the parent names.
func crashExit(code int, format string, args ...any) {
	fmt.Printf("FATAL "+format+"\n", args...)
	os.Exit(code)
}

// TestCrashHelper is the writer process of TestCrashRecovery; it does
// nothing in an ordinary test run.
func TestCrashHelper(t *testing.T) {
	if os.Getenv(crashHelperEnv) != "1" {
		t.Skip("helper process of TestCrashRecovery")
	}
	dir := os.Getenv(crashDirEnv)
	n, err1 := strconv.ParseInt(os.Getenv(crashEpochsEnv), 10, 64)
	flush, err2 := strconv.ParseInt(os.Getenv(crashFlushEnv), 10, 64)
	var paceSeed uint64
	var pace int64
	_, err3 := fmt.Sscanf(os.Getenv(crashPaceEnv), "%d:%d", &paceSeed, &pace)
	if dir == "" || err1 != nil || err2 != nil || err3 != nil {
		crashExit(crashExitSetup, "bad helper environment: dir %q, %v, %v, %v", dir, err1, err2, err3)
	}
	// The upstream delivers a new epoch's batches, and the end of the
	// epoch, with gaps of up to pace; replays come as fast as it reads.
	rng := rand.New(rand.NewPCG(paceSeed, 1))
	gap := func() {
		if pace > 0 {
			time.Sleep(time.Duration(rng.Int64N(pace+1)) * time.Microsecond)
		}
	}
	e := newEnv(t)
	e.dir = dir
	cfg := e.config("crash")
	cfg.WriterID = crashWriterID
	cfg.FlushRows = flush
	cfg.CheckpointInterval = 5
	// The staging journal lets a restarted run delete what a killed one staged.
	cfg.StateDir = filepath.Join(filepath.Dir(dir), "state")
	s, err := New(cfg)
	if err != nil {
		crashExit(crashExitSetup, "new sink: %v", err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.Open(ctx); err != nil {
		crashExit(crashExitSinkError, "open: %v", err)
	}
	last, ok := s.LastCommittedEpoch()
	if !ok {
		last = 0
	}
	fmt.Printf(crashTag+"recovered %d\n", last)
	start := max(last-crashReplay, 1)
	for ep := start; ep <= n; ep++ {
		replay := ep <= last
		fmt.Printf(crashTag+"begin %d\n", ep)
		if err := s.BeginEpoch(ctx, ep); err != nil {
			crashExit(crashExitSinkError, "begin %d: %v", ep, err)
		}
		for _, b := range crashBatches(t, ep) {
			if !replay {
				gap()
			}
			if err := s.Write(ctx, b); err != nil {
				crashExit(crashExitSinkError, "write %d: %v", ep, err)
			}
		}
		if !replay {
			gap()
		}
		if err := s.PreCommit(ctx, ep); err != nil {
			crashExit(crashExitSinkError, "precommit %d: %v", ep, err)
		}
		if !replay {
			fmt.Printf(crashTag+"precommitted %d\n", ep)
		}
		res, err := s.CommitEpoch(ctx, ep)
		if err != nil {
			crashExit(crashExitSinkError, "commit %d: %v", ep, err)
		}
		switch {
		case replay && !res.Skipped:
			crashExit(crashExitNotSkipped, "replayed epoch %d was not skipped: %+v", ep, res)
		case replay:
			fmt.Printf(crashTag+"skipped %d\n", ep)
		case res.Skipped:
			crashExit(crashExitSkipped, "new epoch %d was skipped: %+v", ep, res)
		case res.Version != ep:
			crashExit(crashExitVersion, "epoch %d landed as version %d", ep, res.Version)
		default:
			fmt.Printf(crashTag+"committed %d\n", ep)
		}
	}
	fmt.Printf(crashTag+"done %d\n", n)
}

// crashRun is one helper process.
type crashRun struct {
	out        bytes.Buffer
	errOut     bytes.Buffer
	killed     bool // by SIGKILL
	hardKilled bool // by the hard limit, not the planned kill
	exited     bool
	exitErr    error
	elapsed    time.Duration
}

func (r *crashRun) lines() []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(r.out.Bytes()))
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

func (r *crashRun) describe() string {
	return fmt.Sprintf("exit %v\nstdout:\n%s\nstderr:\n%s", r.exitErr, r.out.String(), r.errOut.String())
}

// runCrashHelper starts the helper and kills it with SIGKILL killAfter
// after it started (fromStart) or after it reported its recovery; with
// killAfter < 0 it is left to finish. Past hardLimit it is killed anyway.
func runCrashHelper(t *testing.T, exe string, env []string, killAfter time.Duration, fromStart bool, hardLimit time.Duration) *crashRun {
	t.Helper()
	r := &crashRun{}
	cmd := exec.Command(exe, "-test.run=^TestCrashHelper$", "-test.count=1", "-test.timeout=5m")
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
	recovered := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		seen := false
		for sc.Scan() {
			r.out.WriteString(sc.Text() + "\n")
			if !seen && strings.HasPrefix(sc.Text(), crashTag+"recovered ") {
				seen = true
				close(recovered)
			}
		}
		io.Copy(io.Discard, stdout)
		done <- cmd.Wait() // r.out is complete when done fires
	}()
	hard := time.NewTimer(hardLimit)
	defer hard.Stop()
	var kill <-chan time.Time
	if killAfter >= 0 && fromStart {
		kill = time.After(killAfter)
	}
	for r.exitErr == nil && !r.exited {
		select {
		case r.exitErr = <-done:
			r.exited = true
		case <-recovered:
			recovered = nil
			if killAfter >= 0 && !fromStart {
				kill = time.After(killAfter)
			}
		case <-kill:
			cmd.Process.Signal(syscall.SIGKILL)
			kill = nil
		case <-hard.C:
			cmd.Process.Signal(syscall.SIGKILL)
			r.hardKilled = true
		}
	}
	r.elapsed = time.Since(started)
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		r.killed = true
	}
	return r
}

func TestCrashRecovery(t *testing.T) {
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -crash.seed=%d), %d kills, %d epochs", seed, seed, *crashKills, *crashEpochs)
	rng := rand.New(rand.NewPCG(seed, 0x6c616b6573716c))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	n := int64(*crashEpochs)
	dir := filepath.Join(t.TempDir(), "crash")
	// The helper's temp dirs (DuckDB spill, t.TempDir) outlive a SIGKILL:
	// keep them under ours.
	tmp := t.TempDir()
	baseEnv := append(os.Environ(), crashHelperEnv+"=1", crashDirEnv+"="+dir,
		crashEpochsEnv+"="+strconv.FormatInt(n, 10), "TMPDIR="+tmp)

	// What the runs printed bounds what a restart may recover: every epoch
	// reported committed is durable (lo), an epoch reported precommitted
	// but not committed may or may not have landed (hi).
	var lo, hi int64
	where := map[string]int{}
	var midCommit, landedUnreported, recoveries int
	check := func(r *crashRun, run int) string {
		state := "start-up (before recovery)"
		for _, l := range r.lines() {
			if strings.HasPrefix(l, "FATAL") {
				t.Fatalf("run %d: the writer saw an anomaly: %s\n%s", run, l, r.describe())
			}
			if !strings.HasPrefix(l, crashTag) {
				continue // the test framework's own lines
			}
			f := strings.Fields(strings.TrimPrefix(l, crashTag))
			if len(f) != 2 {
				t.Fatalf("run %d: unexpected line %q\n%s", run, l, r.describe())
			}
			v, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatalf("run %d: unexpected line %q\n%s", run, l, r.describe())
			}
			switch f[0] {
			case "recovered":
				if v < lo || v > hi {
					t.Fatalf("run %d recovered epoch %d; the runs before reported %d committed and at most %d precommitted", run, v, lo, hi)
				}
				if v > lo {
					landedUnreported++
				}
				recoveries++
				lo, hi = v, v
				state = "between epochs"
			case "begin":
				state = "writing a new epoch"
				if v <= lo {
					state = "replaying an epoch"
				}
			case "precommitted":
				hi = v
				state = "mid-commit (precommitted, not committed)"
			case "committed":
				if v != lo+1 {
					t.Fatalf("run %d committed epoch %d after %d", run, v, lo)
				}
				lo, hi = v, v
				state = "between epochs"
			case "skipped":
				state = "between epochs"
			case "done":
				state = "done"
			default:
				t.Fatalf("run %d: unexpected line %q\n%s", run, l, r.describe())
			}
		}
		return state
	}

	// The writer commits an epoch in a few milliseconds, so unpaced it
	// would finish long before the kills are done. Its upstream is paced
	// instead, and the pace adapts so that the kills spread over all
	// epochs: slower while the writer is ahead of the kills, faster while
	// it is behind.
	pace := 20 * time.Millisecond
	paces := []time.Duration{}
	start := time.Now()
	runs, kills, finishedEarly := 0, 0, 0
	for kills < *crashKills {
		runs++
		if ahead := float64(lo)/float64(n) - float64(kills)/float64(*crashKills); ahead > 0.05 {
			pace = min(pace*3/2, 300*time.Millisecond)
		} else if ahead < -0.05 {
			pace = max(pace*2/3, time.Millisecond)
		}
		paces = append(paces, pace)
		flush := []int64{0, 1, 2, 3}[rng.IntN(4)]
		sleep := time.Duration(rng.IntN(301)) * time.Millisecond
		// Start-up (process, DuckDB, recovery) takes about as long as
		// the sleep, so most sleeps count from the recovery, and one
		// in four from the start, to kill open and recovery too.
		// Once the writer is done, runs only recover and replay, in a
		// few milliseconds: kill them from the start.
		fromStart := rng.IntN(4) == 0 || lo == n
		env := append(baseEnv, crashFlushEnv+"="+strconv.FormatInt(flush, 10),
			fmt.Sprintf("%s=%d:%d", crashPaceEnv, rng.Uint64(), pace.Microseconds()))
		r := runCrashHelper(t, exe, env, sleep, fromStart, time.Minute)
		state := check(r, runs)
		if r.hardKilled {
			t.Fatalf("run %d (flush %d) hung:\n%s", runs, flush, r.describe())
		}
		if !r.killed {
			if r.exitErr != nil || state != "done" {
				t.Fatalf("run %d (flush %d) ended by itself before the kill:\n%s", runs, flush, r.describe())
			}
			finishedEarly++
			continue
		}
		kills++
		where[state]++
		if strings.HasPrefix(state, "mid-commit") {
			midCommit++
		}
		if time.Since(start) > 3*time.Minute {
			t.Fatalf("gave up after %d kills in %v", kills, time.Since(start))
		}
	}
	sorted := slices.Clone(paces)
	slices.Sort(sorted)
	t.Logf("after the kills, epoch %d is committed (at most %d); the last run finishes; upstream pace min %v, median %v, max %v",
		lo, hi, sorted[0], sorted[len(sorted)/2], sorted[len(sorted)-1])
	// Let the writer finish.
	runs++
	r := runCrashHelper(t, exe, append(baseEnv, crashFlushEnv+"=2", crashPaceEnv+"=1:0"), -1, false, 2*time.Minute)
	if state := check(r, runs); r.killed || r.exitErr != nil || state != "done" {
		t.Fatalf("final run did not finish:\n%s", r.describe())
	}
	if lo != n {
		t.Fatalf("writer finished with epoch %d committed, want %d", lo, n)
	}
	t.Logf("%d runs, %d kills in %v; %d runs finished before their kill; %d restarts recovered an epoch whose commit landed unreported",
		runs, kills, time.Since(start).Round(time.Millisecond), finishedEarly, landedUnreported)
	t.Logf("%d kills landed mid-commit (after PreCommit, before CommitEpoch returned)", midCommit)
	states := make([]string, 0, len(where))
	for s := range where {
		states = append(states, s)
	}
	sort.Strings(states)
	for _, s := range states {
		t.Logf("  kills %-45s %d", s+":", where[s])
	}

	verifyCrashTable(t, dir, n)
}

// verifyCrashTable checks every version of the table: version v holds
// exactly the rows of epochs 1..v and records epoch v.
func verifyCrashTable(t *testing.T, dir string, n int64) {
	t.Helper()
	ctx := context.Background()
	e := newEnv(t)
	store, err := delta.NewLocalStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	tbl := delta.NewTable(store)
	latest, err := tbl.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if latest.Version != n {
		t.Errorf("latest version %d, want %d (one version per epoch)", latest.Version, n)
	}
	if v, ok := latest.TxnVersion(crashWriterID); !ok || v != n {
		t.Errorf("txn version of %s: %d %v, want %d", crashWriterID, v, ok, n)
	}
	if err := delta.PrepareDuckDB(ctx, e.db); err != nil {
		t.Fatal(err)
	}
	want := []int64{}
	for v := int64(0); v <= latest.Version; v++ {
		if v > 0 {
			want = append(want, crashIDs(v)...)
		}
		snap, err := tbl.At(ctx, v)
		if err != nil {
			t.Errorf("version %d is not readable: %v", v, err)
			continue
		}
		txn, ok := snap.TxnVersion(crashWriterID)
		if (v == 0 && ok) || (v > 0 && (!ok || txn != v)) {
			t.Errorf("version %d records epoch %d (%v), want %d", v, txn, ok, v)
		}
		q, err := snap.ScanSQL(ctx, e.db)
		if err != nil {
			t.Errorf("version %d: scan: %v", v, err)
			continue
		}
		got := []int64{}
		rs, err := e.db.QueryContext(ctx, "SELECT id FROM ("+q+") ORDER BY id")
		if err != nil {
			t.Errorf("version %d: read: %v", v, err)
			continue
		}
		for rs.Next() {
			var id int64
			if err := rs.Scan(&id); err != nil {
				t.Fatal(err)
			}
			got = append(got, id)
		}
		if err := rs.Close(); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Errorf("version %d has %d rows, want %d (epochs 1..%d)", v, len(got), len(want), v)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("version %d ids (-want +got):\n%s", v, diff)
		}
	}
	// The whole upstream, exactly once, through the sink's own reader too.
	e.dir = dir
	var final []int64
	for _, r := range e.rows() {
		final = append(final, r.ID)
	}
	if diff := cmp.Diff(want, final); diff != "" {
		t.Errorf("final table ids (-want +got):\n%s", diff)
	}
	// Files the crashes orphaned (staged, never committed) are harmless.
	// The staging journal removes most; a kill between DuckDB writing a
	// file and the journal naming it can still leave one.
	live := map[string]bool{}
	for _, f := range latest.Files() {
		live[filepath.Join(dir, filepath.FromSlash(f.Path))] = true
	}
	orphans := 0
	for _, p := range e.parquetFiles() {
		if !live[p] {
			orphans++
		}
	}
	t.Logf("table: %d versions, %d live files, %d orphaned staged files on disk", latest.Version+1, len(latest.Files()), orphans)
}
