package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/lakesql/lakesql/internal/benchmark"
)

const benchUsage = `Usage: lakesql bench [--quick] [--json] [--only NAME[,NAME...]] [--runs N] [--cpuprofile FILE] [--dir DIR]

Runs lakesql's workloads against a reference doing the same job in the same
process, A B A B, and prints each one's median figures, their range, the
ratio lakesql / reference and its target. --quick uses smaller sizes
(minutes, not the full run's half hour and more). Progress goes to stderr.

Workloads:
`

// benchCommand runs lakesql bench. Started with benchmark.ChildEnv set, the
// process is a child of a running bench (the memory workload measures a
// child's peak RSS) and does only that.
func benchCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if benchmark.IsChild() {
		return benchmark.RunChild(ctx, stderr)
	}
	fs := flag.NewFlagSet("lakesql bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, benchUsage)
		for _, w := range benchmark.All() {
			fmt.Fprintf(stderr, "  %-26s target %s\n", w.Name, w.Target)
		}
		fmt.Fprintln(stderr, "\nFlags:")
		fs.PrintDefaults()
	}
	var (
		quick, asJSON bool
		only, dir     string
		cpuprofile    string
		runs          int
	)
	fs.BoolVar(&quick, "quick", false, "smaller sizes: 1M rows instead of 10M, 200 commits instead of 2,000, ...")
	fs.BoolVar(&asJSON, "json", false, "write one JSON object per workload on stdout instead of the table")
	fs.StringVar(&only, "only", "", "run only these workloads (comma-separated names)")
	fs.IntVar(&runs, "runs", 0, "timed runs per side (at least 3; default: 3 quick, 3 to 5 full)")
	fs.StringVar(&cpuprofile, "cpuprofile", "", "write a CPU profile of the run to FILE (samples carry workload and side labels)")
	fs.StringVar(&dir, "dir", "", "where the temp directories go (default: the system's temp directory)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lakesql bench: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if runs != 0 && runs < 3 {
		fmt.Fprintln(stderr, "lakesql bench: --runs must be at least 3 (a median of fewer says little)")
		return 2
	}
	var names []string
	for _, n := range strings.Split(only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	ws, err := benchmark.Select(benchmark.All(), names)
	if err != nil {
		fmt.Fprintf(stderr, "lakesql bench: %v\n", err)
		return 2
	}
	opts := benchmark.Options{Quick: quick, Runs: runs, Dir: dir, Log: stderr}
	if exe, err := os.Executable(); err == nil {
		opts.Child = func(ctx context.Context) *exec.Cmd { return exec.CommandContext(ctx, exe, "bench") }
		opts.Executable = exe
	}
	return runBench(ctx, ws, opts, asJSON, cpuprofile, stdout, stderr)
}

// runBench runs the selected workloads and writes the report; it is
// benchCommand after the flags, and what the tests call with tiny sizes.
func runBench(ctx context.Context, ws []benchmark.Workload, opts benchmark.Options, asJSON bool,
	cpuprofile string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			fmt.Fprintf(stderr, "lakesql bench: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "lakesql bench: CPU profile: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	mode := "full"
	if opts.Quick {
		mode = "quick"
	}
	start, loadBefore := time.Now(), benchmark.LoadAverage()
	header := fmt.Sprintf("lakesql bench (%s), %s\nmachine: %s\n", mode, start.UTC().Format("2006-01-02 15:04 UTC"), benchmark.Machine(ctx))
	if asJSON {
		fmt.Fprint(stderr, header)
	} else {
		fmt.Fprintln(stdout, header)
	}
	results := benchmark.Run(ctx, ws, opts)
	var err error
	if asJSON {
		err = benchmark.WriteJSON(stdout, results)
	} else {
		err = benchmark.WriteTable(stdout, results)
		fmt.Fprintf(stdout, "\nload average %s before, %s after; took %s\n",
			loadBefore, benchmark.LoadAverage(), time.Since(start).Round(time.Second))
	}
	if err != nil {
		fmt.Fprintf(stderr, "lakesql bench: %v\n", err)
		return 1
	}
	for _, r := range results {
		if r.Err != nil {
			return 1
		}
	}
	return 0
}
