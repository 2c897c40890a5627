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
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter/providertest"
)

// TestCrashRecovery re-executes the test binary as a writer process
// (TestCrashHelper) that commits numbered epochs through the sink into a
// table of each lake, kills it with SIGKILL at chosen moments (start-up
// and recovery, mid-replay, writing, PreCommit, CommitEpoch, right after a
// commit), restarts it, and finally checks that the table took every
// upstream row exactly once and that every version the crashes left
// behind holds exactly the serial result of the epochs up to it (the
// lake's crash checks read its history with the format's own reader). A
// first phase appends, a second upserts with overlapping keys and deletes
// into a second table of the same lake.

var (
	crashKills        = flag.Int("crash.kills", 15, "TestCrashRecovery: kills of the append writer, per lake")
	crashEpochs       = flag.Int("crash.epochs", 25, "TestCrashRecovery: epochs the append writer commits")
	crashUpsertKills  = flag.Int("crash.upsert.kills", 15, "TestCrashRecovery: kills of the upsert writer, per lake (0: no upsert phase)")
	crashUpsertEpochs = flag.Int("crash.upsert.epochs", 25, "TestCrashRecovery: epochs the upsert writer commits")
	crashSeed         = flag.Uint64("crash.seed", 0, "TestCrashRecovery: random seed (0: from the clock)")
)

// Environment of the helper process.
const (
	crashHelperEnv = "LAKESQL_CRASH_HELPER" // "1" runs TestCrashHelper
	crashLakeEnv   = "LAKESQL_CRASH_LAKE"   // the lake's name
	crashDirEnv    = "LAKESQL_CRASH_DIR"    // the lake's directory
	crashStateEnv  = "LAKESQL_CRASH_STATE"  // the sink's state directory (staging journal)
	crashModeEnv   = "LAKESQL_CRASH_MODE"   // append or upsert
	crashEpochsEnv = "LAKESQL_CRASH_N"      // the last epoch to write
	crashFlushEnv  = "LAKESQL_CRASH_FLUSH"  // FlushRows (0: the default)
	crashPaceEnv   = "LAKESQL_CRASH_PACE"   // upstream gaps, "seed:microseconds"
	crashReplay    = 2                      // epochs replayed before the recovered one
	crashTag       = "@crash "              // marks the helper's progress lines
)

// Exit codes of the helper when it sees something wrong (0: done).
const (
	crashExitSetup      = 2
	crashExitNotSkipped = 3 // a replayed epoch was written again
	crashExitSkipped    = 4 // a new epoch was reported as skipped
	crashExitRecord     = 5 // a new epoch is not the sink's last committed one
	crashExitRows       = 6 // a new epoch committed another number of rows
	crashExitSinkError  = 7
	crashExitVersion    = 8 // a new epoch did not land as version == epoch
)

// crashChecks are a lake's checks of what the crash test left: history
// reads the phase's table with the format's own reader; afterRun (nil:
// none) runs after every writer process, end after the last phase.
type crashChecks struct {
	history  func(t *testing.T, root string, ph crashPhase)
	afterRun func(t *testing.T, root string)
	end      func(t *testing.T, root string, phases []crashPhase)
}

func crashTableName(mode string) string { return "crash_" + mode }

func crashWriterID(mode string) string { return "crash-writer-" + mode }

// crashRows is the deterministic upstream: the rows epoch e carries.
// Append: new ids e*1000+i. Upsert: ids from 0..29, so epochs overlap; a
// few rows delete, some epochs upsert a key twice (the last arrival wins)
// or upsert then delete it.
func crashRows(mode string, e int64) []row {
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

// crashBatches cuts epoch e's rows into the batches the writer sends: one,
// two, or two plus an empty one.
func crashBatches(t testing.TB, mode string, e int64) []arrow.RecordBatch {
	rows := crashRows(mode, e)
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

// crashModel is the serial result: the table after epochs 1..k, applied one
// after the other with no crash, as a map from id to row.
type crashModel map[int64]row

func (m crashModel) apply(mode string, e int64) {
	for _, r := range crashRows(mode, e) {
		if mode == "append" || r.Op != "D" {
			r.Op = ""
			m[r.ID] = r
		} else {
			delete(m, r.ID)
		}
	}
}

func (m crashModel) sorted() []string {
	out := []string{}
	for _, r := range m {
		out = append(out, r.String())
	}
	sort.Strings(out)
	return out
}

// crashCommitRows is how many rows a commit of epoch e adds: all of them in
// append mode, the keys whose last arrival upserts in upsert mode (on a
// lake whose upserts rewrite files, the rows those keep come on top).
func crashCommitRows(mode string, e int64) int64 {
	if mode == "append" {
		return int64(len(crashRows(mode, e)))
	}
	last := map[int64]string{}
	for _, r := range crashRows(mode, e) {
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

func crashExit(code int, format string, args ...any) {
	fmt.Printf("FATAL "+format+"\n", args...)
	os.Exit(code)
}

// TestCrashHelper is the writer process of TestCrashRecovery; it
// does nothing in an ordinary test run.
func TestCrashHelper(t *testing.T) {
	if os.Getenv(crashHelperEnv) != "1" {
		t.Skip("helper process of TestCrashRecovery")
	}
	l, okLake := lakeNamed(os.Getenv(crashLakeEnv))
	dir, stateDir, mode := os.Getenv(crashDirEnv), os.Getenv(crashStateEnv), os.Getenv(crashModeEnv)
	n, err1 := strconv.ParseInt(os.Getenv(crashEpochsEnv), 10, 64)
	flush, err2 := strconv.ParseInt(os.Getenv(crashFlushEnv), 10, 64)
	var paceSeed uint64
	var pace int64
	_, err3 := fmt.Sscanf(os.Getenv(crashPaceEnv), "%d:%d", &paceSeed, &pace)
	if !okLake || dir == "" || stateDir == "" || (mode != "append" && mode != "upsert") || err1 != nil || err2 != nil || err3 != nil {
		crashExit(crashExitSetup, "bad helper environment: lake %q, dir %q, state %q, mode %q, %v, %v, %v",
			os.Getenv(crashLakeEnv), dir, stateDir, mode, err1, err2, err3)
	}
	// The upstream delivers a new epoch's batches with gaps of up to pace;
	// replays come as fast as the writer reads.
	rng := rand.New(rand.NewPCG(paceSeed, 1))
	gap := func() {
		if pace > 0 {
			time.Sleep(time.Duration(rng.Int64N(pace+1)) * time.Microsecond)
		}
	}
	p, table := l.open(t, providertest.OpenDuckDB(t), dir, crashTableName(mode))
	cfg := Config{
		Name: "crash-" + mode, Provider: p, Table: table, Schema: orderSchema,
		// Versions are pinned per epoch: no auto-compaction among them.
		DisableAutoCompact: true,
		WriterID:           crashWriterID(mode), FlushRows: flush, TempDir: t.TempDir(), MemoryLimit: "256MB", Threads: 2,
		// Delta checkpoints among the versions the kills leave (Iceberg has none).
		CheckpointInterval: 5,
		// The staging journal lets a restarted run delete what a killed one staged.
		StateDir: stateDir,
	}
	if mode == "upsert" {
		cfg.Mode, cfg.Key = ModeUpsert, []string{"id"}
	}
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
	// Resume at last+1, re-sending the epochs before it: the one in flight
	// when the previous run died may have landed unreported.
	for ep := max(last-crashReplay, 1); ep <= n; ep++ {
		replay := ep <= last
		fmt.Printf(crashTag+"begin %d\n", ep)
		if err := s.BeginEpoch(ctx, ep); err != nil {
			crashExit(crashExitSinkError, "begin %d: %v", ep, err)
		}
		for _, b := range crashBatches(t, mode, ep) {
			if !replay {
				gap()
			}
			if err := s.Write(ctx, b); err != nil {
				crashExit(crashExitSinkError, "write %d: %v", ep, err)
			}
		}
		if !replay {
			gap()
			fmt.Printf(crashTag+"precommit %d\n", ep)
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
		switch got, _ := s.LastCommittedEpoch(); {
		case replay && !res.Skipped:
			crashExit(crashExitNotSkipped, "replayed epoch %d was not skipped: %+v", ep, res)
		case replay:
			fmt.Printf(crashTag+"skipped %d\n", ep)
		case res.Skipped:
			crashExit(crashExitSkipped, "new epoch %d was skipped: %+v", ep, res)
		case got != ep:
			crashExit(crashExitRecord, "after committing epoch %d the sink's last committed epoch is %d", ep, got)
		case res.Rows < crashCommitRows(mode, ep) || (res.Rows != crashCommitRows(mode, ep) && (mode == "append" || !l.upsertRewrites)):
			crashExit(crashExitRows, "epoch %d committed %d rows, want %d: %+v", ep, res.Rows, crashCommitRows(mode, ep), res)
		case res.Version != l.commitVersion(t, dir, table, ep):
			crashExit(crashExitVersion, "epoch %d landed as version %d", ep, res.Version)
		default:
			fmt.Printf(crashTag+"committed %d\n", ep)
		}
	}
	fmt.Printf(crashTag+"done %d\n", n)
}

// crashPlan says when a helper run is killed: delay after the nth progress
// line of kind trigger ("start": the process start; "recovered"; "begin",
// "precommit", "precommitted", "committed": of a new epoch; "skipped": a
// replay). nth < 0 leaves the run to finish.
type crashPlan struct {
	trigger string
	nth     int
	delay   time.Duration
}

func (p crashPlan) String() string {
	if p.nth < 0 {
		return "no kill"
	}
	return fmt.Sprintf("%s #%d +%v", p.trigger, p.nth, p.delay)
}

// crashRun is one helper process.
type crashRun struct {
	out        bytes.Buffer
	errOut     bytes.Buffer
	killed     bool // by SIGKILL
	hardKilled bool // by the hard limit, not the plan
	exitErr    error
	startup    time.Duration   // start to the recovered line (0: not reached)
	commits    []time.Duration // precommitted to committed lines
}

func (r *crashRun) lines() []string {
	return strings.Split(strings.TrimRight(r.out.String(), "\n"), "\n")
}

func (r *crashRun) describe() string {
	return fmt.Sprintf("exit %v\nstdout:\n%s\nstderr:\n%s", r.exitErr, r.out.String(), r.errOut.String())
}

// runCrashHelper starts the helper and kills it as plan says; past
// hardLimit it is killed anyway.
func runCrashHelper(t *testing.T, exe string, env []string, plan crashPlan, hardLimit time.Duration) *crashRun {
	t.Helper()
	return runCrashProcess(t, exe, "TestCrashHelper", env, plan, hardLimit)
}

// runCrashProcess is runCrashHelper for any child test that prints
// crashTag progress lines.
func runCrashProcess(t *testing.T, exe, test string, env []string, plan crashPlan, hardLimit time.Duration) *crashRun {
	t.Helper()
	r := &crashRun{}
	cmd := exec.Command(exe, "-test.run=^"+test+"$", "-test.count=1", "-test.timeout=5m")
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
			f := strings.Fields(strings.TrimPrefix(l, crashTag))
			if !strings.HasPrefix(l, crashTag) || len(f) != 2 {
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

// crashPhase is what one phase (one mode) of the crash test saw.
type crashPhase struct {
	mode                       string
	n                          int64
	runs, kills, finishedEarly int
	landedUnreported           int
	stagingKills               int // kills that may have cut a staging short
	where, triggers            map[string]int
	elapsed                    time.Duration
}

func TestCrashRecovery(t *testing.T) {
	if os.Getenv(crashHelperEnv) == "1" {
		t.Skip("this is the helper process")
	}
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -crash.seed=%d)", seed, seed)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x6c616b6573716c))
			dir, stateDir := t.TempDir(), t.TempDir()
			// The helper's temp dirs (DuckDB spill, t.TempDir) outlive a SIGKILL:
			// keep them under ours.
			baseEnv := append(os.Environ(), crashHelperEnv+"=1", crashLakeEnv+"="+l.name, crashDirEnv+"="+dir,
				crashStateEnv+"="+stateDir, "TMPDIR="+t.TempDir())
			start := time.Now()
			phases := []struct {
				mode         string
				kills, epoch int
			}{{"append", *crashKills, *crashEpochs}, {"upsert", *crashUpsertKills, *crashUpsertEpochs}}
			var results []crashPhase
			for _, ph := range phases {
				if ph.kills <= 0 && ph.mode == "upsert" {
					continue
				}
				res := runCrashPhase(t, rng, exe, baseEnv, l, dir, ph.mode, int64(ph.epoch), ph.kills)
				results = append(results, res)
				if t.Failed() {
					return
				}
				l.crash.history(t, dir, res)
				checkCrashRows(t, l, dir, res)
				checkCrashJournal(t, stateDir, ph.mode)
			}
			if l.crash.end != nil {
				l.crash.end(t, dir, results)
			}
			total := 0
			for _, r := range results {
				total += r.kills
			}
			t.Logf("%d kills in all, %v", total, time.Since(start).Round(time.Millisecond))
		})
	}
}

// runCrashPhase kills the writer of mode kills times, then lets it
// finish, checking after every run that what it recovered is what the
// runs before reported.
func runCrashPhase(t *testing.T, rng *rand.Rand, exe string, baseEnv []string, l lake, dir, mode string, n int64, kills int) crashPhase {
	ph := crashPhase{mode: mode, n: n, where: map[string]int{}, triggers: map[string]int{}}
	env := append(slices.Clone(baseEnv), crashModeEnv+"="+mode, crashEpochsEnv+"="+strconv.FormatInt(n, 10))
	// What the runs printed bounds what a restart may recover: every epoch
	// reported committed is durable (lo); an epoch reported precommitted
	// but not committed may or may not have landed (hi).
	var lo, hi int64
	check := func(r *crashRun) string {
		state := "start-up (open, recovery)"
		for _, l := range r.lines() {
			if strings.HasPrefix(l, "FATAL") {
				t.Fatalf("%s run %d: the writer saw an anomaly: %s\n%s", mode, ph.runs, l, r.describe())
			}
			if !strings.HasPrefix(l, crashTag) {
				continue // the test framework's own lines
			}
			f := strings.Fields(strings.TrimPrefix(l, crashTag))
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
		var plan crashPlan
		switch k := rng.IntN(20); {
		case lo == n || k < 3:
			plan = crashPlan{"start", 1, time.Duration(rng.Int64N(int64(startup*5/4) + 1))}
		case k < 5 && lo >= 2:
			plan = crashPlan{"skipped", 1 + rng.IntN(2), 0}
		case k < 7:
			plan = crashPlan{"recovered", 1, time.Duration(rng.Int64N(int64(3*commit) + 1))}
		case k < 9:
			plan = crashPlan{"begin", nth, time.Duration(rng.Int64N(int64(8 * time.Millisecond)))}
		case k < 12:
			plan = crashPlan{"precommit", nth, time.Duration(rng.Int64N(int64(6 * time.Millisecond)))}
		case k < 17:
			plan = crashPlan{"precommitted", nth, time.Duration(rng.Int64N(int64(commit) + 1))}
		default:
			plan = crashPlan{"committed", nth, 0}
		}
		flush := []int64{0, 1, 2, 3}[rng.IntN(4)]
		pace := time.Duration(rng.IntN(6)) * time.Millisecond
		runEnv := append(slices.Clone(env), crashFlushEnv+"="+strconv.FormatInt(flush, 10),
			fmt.Sprintf("%s=%d:%d", crashPaceEnv, rng.Uint64(), pace.Microseconds()))
		r := runCrashHelper(t, exe, runEnv, plan, time.Minute)
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
		if l.crash.afterRun != nil {
			l.crash.afterRun(t, dir)
		}
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
	r := runCrashHelper(t, exe, append(slices.Clone(env), crashFlushEnv+"=2", crashPaceEnv+"=1:0"), crashPlan{nth: -1}, 2*time.Minute)
	if state := check(r); r.killed || r.exitErr != nil || state != "done" {
		t.Fatalf("%s: final run did not finish:\n%s", mode, r.describe())
	}
	// One more restart after the end: it recovers n and only replays.
	ph.runs++
	r = runCrashHelper(t, exe, append(slices.Clone(env), crashFlushEnv+"=0", crashPaceEnv+"=1:0"), crashPlan{nth: -1}, 2*time.Minute)
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

// checkCrashRows reads the phase's table through the provider, what the
// sink and SELECT read: the whole upstream's serial result, every row once.
func checkCrashRows(t *testing.T, l lake, root string, ph crashPhase) {
	t.Helper()
	db := providertest.OpenDuckDB(t)
	p, id := l.open(t, db, root, crashTableName(ph.mode))
	model := crashModel{}
	for ep := int64(1); ep <= ph.n; ep++ {
		model.apply(ph.mode, ep)
	}
	var got []string
	for _, r := range scanRows(t, p, id, db, -1) {
		got = append(got, r.String())
	}
	sort.Strings(got)
	if want := model.sorted(); !slices.Equal(got, want) {
		t.Errorf("%s: final table through the provider (-want +got):\n%s", ph.mode, cmp.Diff(want, got))
	}
}

// checkCrashJournal: after the clean final runs no staging journal is
// left behind.
func checkCrashJournal(t *testing.T, stateDir, mode string) {
	t.Helper()
	entries, err := os.ReadDir(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), crashWriterID(mode)) {
			t.Errorf("%s: staging journal %s left after a clean finish", mode, e.Name())
		}
	}
}
