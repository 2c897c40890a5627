package benchmark

// The Go benchmarks and measuring tests of the layers below run the
// workloads through here, so that `go test -bench` and `lakesql bench` time
// the same code. (The lakesql binary links package testing already.)

import (
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// RunLakesql runs the lakesql side of w at size n as a Go benchmark: w is
// set up once, untimed, in b.TempDir; each iteration is one run of the
// side; the median of the runs' figures is reported in w's unit, and each
// further figure under its own name.
func RunLakesql(b *testing.B, w Workload, n int) { runSide(b, w, n, Sides.Lakesql) }

// RunReference is RunLakesql for the reference side of w.
func RunReference(b *testing.B, w Workload, n int) { runSide(b, w, n, Sides.Reference) }

func runSide(b *testing.B, w Workload, n int, side func(Sides, context.Context) (Sample, error)) {
	b.Helper()
	ctx := b.Context()
	sides, err := w.Setup(ctx, Env{Dir: b.TempDir(), Log: io.Discard}, n)
	if errors.Is(err, ErrUnavailable) {
		b.Skipf("%s: %v", w.Name, err)
	}
	if err != nil {
		b.Fatalf("%s: setup: %v", w.Name, err)
	}
	b.Cleanup(func() {
		if err := sides.Close(); err != nil {
			b.Errorf("%s: close: %v", w.Name, err)
		}
	})
	var samples []Sample
	for b.Loop() {
		s, err := side(sides, ctx)
		if err != nil {
			b.Fatalf("%s: %v", w.Name, err)
		}
		samples = append(samples, s)
	}
	b.ReportMetric(median(values(samples)), w.Unit)
	extra := extraMedians(samples)
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		b.ReportMetric(extra[k], k)
	}
}

// RunRatio runs the workloads as `lakesql bench --only` does (full sizes,
// or sizes[name] where given), when LAKESQL_BENCH=1, and prints the
// results table; LAKESQL_BENCH_RUNS replaces the timed runs per side. It
// fails on a workload that fails, never on timing.
func RunRatio(t *testing.T, sizes map[string]int, ws ...Workload) {
	t.Helper()
	if os.Getenv("LAKESQL_BENCH") != "1" {
		t.Skip("measures lakesql against its reference: set LAKESQL_BENCH=1 to run it")
	}
	opts := Options{Sizes: sizes, Dir: t.TempDir(), Log: testLog{t}}
	if v := os.Getenv("LAKESQL_BENCH_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("bad LAKESQL_BENCH_RUNS %q", v)
		}
		opts.Runs = n
	}
	rs := Run(t.Context(), ws, opts)
	if err := WriteTable(os.Stdout, rs); err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Err != nil {
			t.Errorf("%s: %v", r.Name, r.Err)
		}
	}
}

// testLog writes the runner's progress lines to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
