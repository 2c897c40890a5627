package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/lakesql/lakesql/internal/benchmark"
)

// TestBenchChild is the memory workload's child when the workload runs in
// this test binary: the test binary re-executed with only this test. (Not
// init: DuckDB calls back into Go from its own threads, and such calls
// wait until every init has returned.)
func TestBenchChild(t *testing.T) {
	if !benchmark.IsChild() {
		t.Skip("the child process of the memory workload in TestBenchSmoke")
	}
	if code := benchmark.RunChild(context.Background(), os.Stderr); code != 0 {
		t.Fatalf("child exit code %d", code)
	}
}

// tinySizes make every workload a matter of seconds.
var tinySizes = map[string]int{
	"ingest-arrow": 20_000, "ingest-arrow-partitioned": 20_000, "ingest-wire": 3_000,
	"commit-latency": 5, "concurrent-commits": 48, "small-batches": 100, "open-long-history": 30, "open-300k": 2_000, "upsert": 20_000, "select-agg": 20_000,
	"ingest-iceberg": 20_000, "memory": 100_000,
	"small-files": 60, "optimize": 200, "storage": 5,
	"upsert-dv": 20_000, "delete-dv": 20_000, "startup": 2,
}

// TestBenchSmoke runs every workload at a tiny size through the command's
// report and checks that each JSON line is well-formed: the fields the
// issue names, positive figures, a finite ratio. It says nothing about
// speed.
func TestBenchSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every benchmark workload once; skipped in -short mode")
	}
	ws := benchmark.All()
	for _, w := range ws {
		if _, ok := tinySizes[w.Name]; !ok {
			t.Fatalf("workload %s has no tiny size in this test", w.Name)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts := benchmark.Options{
		Runs: 1, NoWarmUp: true, Sizes: tinySizes, Dir: t.TempDir(),
		Child: func(ctx context.Context) *exec.Cmd {
			return exec.CommandContext(ctx, exe, "-test.run=^TestBenchChild$", "-test.count=1")
		},
		// Not the test binary: run without the child marker, it would run
		// this test again.
		Executable: buildLakesql(t),
	}
	var stdout, stderr bytes.Buffer
	opts.Log = &stderr
	code := runBench(context.Background(), ws, opts, true, "", &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != len(ws) {
		t.Fatalf("%d JSON lines for %d workloads:\n%s", len(lines), len(ws), stdout.String())
	}
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, l)
		}
		for _, k := range []string{"name", "lakesql", "reference", "unit", "ratio", "target"} {
			if _, ok := m[k]; !ok {
				t.Errorf("line %d has no %q: %s", i+1, k, l)
			}
		}
		if m["name"] != ws[i].Name {
			t.Errorf("line %d is %v, want %s", i+1, m["name"], ws[i].Name)
		}
		if m["available"] != true {
			t.Errorf("%s did not run: %s", ws[i].Name, l)
			continue
		}
		for _, k := range []string{"lakesql", "reference", "ratio"} {
			v, ok := m[k].(float64)
			if !ok || !(v > 0) || math.IsInf(v, 0) {
				t.Errorf("%s: %s = %v, want a positive finite number", ws[i].Name, k, m[k])
			}
		}
		if u, _ := m["unit"].(string); u == "" {
			t.Errorf("%s: no unit", ws[i].Name)
		}
		if ws[i].Name == "commit-latency" {
			extra, _ := m["reference_extra"].(map[string]any)
			if v, _ := extra["duckdb_commits_s"].(float64); !(v > 0) {
				t.Errorf("commit-latency: no DuckDB floor (reference_extra.duckdb_commits_s): %s", l)
			}
		}
		if tg, _ := m["target"].(string); !strings.HasPrefix(tg, ">= ") && !strings.HasPrefix(tg, "<= ") {
			t.Errorf("%s: target %q", ws[i].Name, tg)
		}
	}
	if t.Failed() {
		t.Logf("stderr:\n%s", stderr.String())
	}
}

// TestBenchTable checks the text report of one workload: the header with
// the machine, the table row with the ratio and target, the notes.
func TestBenchTable(t *testing.T) {
	ws, err := benchmark.Select(benchmark.All(), []string{"open-long-history"})
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	opts := benchmark.Options{Runs: 1, NoWarmUp: true, Sizes: map[string]int{"open-long-history": 20}, Dir: t.TempDir(), Log: &stderr}
	if code := runBench(context.Background(), ws, opts, false, "", &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"lakesql bench (full)", "machine: ", "| workload", "| open-long-history", "≤ 2", " ms (", "load average"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestBenchFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"--runs", "2"}, 2, "at least 3"},
		{[]string{"--only", "nope"}, 2, `unknown workload "nope"`},
		{[]string{"extra"}, 2, "unexpected argument"},
		{[]string{"--help"}, 0, "ingest-arrow-partitioned"},
	} {
		var stdout, stderr bytes.Buffer
		code := benchCommand(context.Background(), tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.err) {
			t.Errorf("bench %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr.String(), tc.code, tc.err)
		}
	}
}
