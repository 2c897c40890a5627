package benchmark

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/deltalake"
	"github.com/lakesql/lakesql/sqlsink"
)

// The memory workload's child process: this program re-executed with
// ChildEnv set (the parent supplies the command, see Env.Child). Peak RSS
// is per process, so the epoch must run alone in one.
const (
	// ChildEnv names the child's job; a program that finds it set calls
	// RunChild instead of doing anything else.
	ChildEnv     = "LAKESQL_BENCH_CHILD"
	childDirEnv  = "LAKESQL_BENCH_CHILD_DIR"
	childRowsEnv = "LAKESQL_BENCH_CHILD_ROWS"
	childMemory  = "memory"
)

// memorySinkLimit is the sink's DuckDB memory limit in the memory
// workload; the reference is this plus memoryHeadroomMiB.
const (
	memorySinkLimit   = "512MB"
	memorySinkMiB     = 512
	memoryHeadroomMiB = 512
)

// Memory is workload 9: the peak RSS of a process that writes n rows as
// one append epoch through sqlsink into Delta, with the sink's memory
// limit at 512MB: the child's own VmHWM (see childPeak for why not its
// rusage alone). The reference is a budget, not a run: DuckDB's
// configured limit plus 512 MiB for everything else (Go heap, Arrow
// batches, DuckDB outside its limit).
func Memory() Workload {
	return Workload{
		Name: "memory", Unit: "MiB", Target: AtMost(1),
		Quick: Size{N: 5_000_000, Runs: 3}, Full: Size{N: 20_000_000, Runs: 3},
		Describe: func(n int) string {
			return fmt.Sprintf("peak RSS of a %s-row epoch, sink memory_limit %s", formatCount(n), memorySinkLimit)
		},
		Reference: fmt.Sprintf("the budget: DuckDB's memory_limit (%d MiB) + %d MiB", memorySinkMiB, memoryHeadroomMiB),
		NoWarmUp:  true,
		Setup:     setupMemory,
	}
}

func setupMemory(ctx context.Context, env Env, n int) (Sides, error) {
	if env.Child == nil {
		return nil, fmt.Errorf("%w: the memory workload re-executes its program, and this one cannot", ErrUnavailable)
	}
	run := 0
	return sidesFuncs{
		lakesql: func(ctx context.Context) (Sample, error) {
			run++
			dir := filepath.Join(env.Dir, fmt.Sprintf("t%d", run))
			defer os.RemoveAll(dir)
			cmd := env.Child(ctx)
			cmd.Env = append(os.Environ(), ChildEnv+"="+childMemory,
				childDirEnv+"="+filepath.Join(dir, "orders"), childRowsEnv+"="+strconv.Itoa(n), "TMPDIR="+dir)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return Sample{}, err
			}
			start := time.Now()
			if err := cmd.Run(); err != nil {
				return Sample{}, fmt.Errorf("child %s: %w\n%s", cmd.Path, err, out.String())
			}
			peakKiB, err := childPeak(cmd, out.String())
			if err != nil {
				return Sample{}, err
			}
			snap, err := openLatest(ctx, filepath.Join(dir, "orders"))
			if err != nil {
				return Sample{}, err
			}
			var rows int64
			for _, a := range snap.Files() {
				k, _ := a.NumRecords()
				rows += k
			}
			if rows != int64(n) || snap.Version != 1 {
				return Sample{}, fmt.Errorf("the child's table is at version %d with %d rows, want version 1 with %d", snap.Version, rows, n)
			}
			return Sample{Value: float64(peakKiB) / 1024, Extra: map[string]float64{"child_s": time.Since(start).Seconds()}}, nil
		},
		reference: func(context.Context) (Sample, error) {
			return Sample{Value: memorySinkMiB + memoryHeadroomMiB}, nil
		},
	}, nil
}

// childHWMPrefix marks the child's report of its own peak RSS on stdout.
const childHWMPrefix = "lakesql-bench-child: VmHWM kB "

// childPeak is the child's peak RSS in KiB. Its rusage (ru_maxrss) cannot
// be used alone: Go starts children with vfork semantics (CLONE_VM), and
// Linux folds the high-water mark of the memory the child shares until
// exec (the parent's) into the child's maxrss, so a large parent shows as
// a large child. The child's own VmHWM, read by the child just before it
// exits, counts only its own memory; rusage is the fallback where there
// is no /proc.
func childPeak(cmd *exec.Cmd, out string) (int64, error) {
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), childHWMPrefix); ok {
			kib, err := strconv.ParseInt(v, 10, 64)
			if err != nil || kib <= 0 {
				return 0, fmt.Errorf("child reported peak RSS %q", v)
			}
			return kib, nil
		}
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > 0 {
		return ru.Maxrss, nil // KiB on Linux
	}
	return 0, fmt.Errorf("the child reported no peak RSS, and its rusage has none:\n%s", out)
}

// vmHWM is this process's peak RSS in KiB, from /proc/self/status.
func vmHWM() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}

// IsChild reports whether this process is a benchmark child.
func IsChild() bool { return os.Getenv(ChildEnv) != "" }

// RunChild does the child's job named by ChildEnv and returns the exit
// code; errors go to stderr.
func RunChild(ctx context.Context, stderr io.Writer) int {
	if job := os.Getenv(ChildEnv); job != childMemory {
		fmt.Fprintf(stderr, "lakesql bench child: unknown job %q\n", job)
		return 2
	}
	n, err := strconv.Atoi(os.Getenv(childRowsEnv))
	if err != nil || n <= 0 {
		fmt.Fprintf(stderr, "lakesql bench child: bad %s %q\n", childRowsEnv, os.Getenv(childRowsEnv))
		return 2
	}
	if err := memoryEpoch(ctx, os.Getenv(childDirEnv), n); err != nil {
		fmt.Fprintf(stderr, "lakesql bench child: %v\n", err)
		return 1
	}
	if kib, err := vmHWM(); err == nil {
		fmt.Printf("%s%d\n", childHWMPrefix, kib)
	}
	return 0
}

// memoryEpoch writes n rows as epoch 1 of a new table at dir, building
// each batch just before writing it, as a stream would arrive.
func memoryEpoch(ctx context.Context, dir string, n int) error {
	if dir == "" {
		return fmt.Errorf("%s is not set", childDirEnv)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer db.Close()
	s, err := sqlsink.New(sqlsink.Config{
		Name: "bench", Provider: deltalake.New(db, deltalake.Options{}),
		Table: catalogadapter.TableIdent{Name: dir}, Schema: rowSchema,
		MemoryLimit: memorySinkLimit, TempDir: filepath.Join(filepath.Dir(dir), "spill"),
	})
	if err != nil {
		return err
	}
	if err := s.Open(ctx); err != nil {
		return fmt.Errorf("open sink: %w", err)
	}
	defer s.Close()
	if err := s.BeginEpoch(ctx, 1); err != nil {
		return err
	}
	for done := 0; done < n; done += batchRows {
		k := min(batchRows, n-done)
		recs := makeBatches(int64(done), 1, k, 0)
		err := s.Write(ctx, recs[0])
		releaseBatches(recs)
		if err != nil {
			return fmt.Errorf("write rows %d to %d: %w", done, done+k, err)
		}
	}
	if err := s.PreCommit(ctx, 1); err != nil {
		return err
	}
	res, err := s.CommitEpoch(ctx, 1)
	if err != nil {
		return err
	}
	if res.Rows != int64(n) {
		return fmt.Errorf("commit result %+v, want %d rows", res, n)
	}
	return s.Close()
}
