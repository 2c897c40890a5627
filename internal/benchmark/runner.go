package benchmark

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"time"
)

// ErrUnavailable marks a workload that cannot run in this build or
// setting; its result says why instead of failing the run.
var ErrUnavailable = errors.New("not available")

// Options configure Run.
type Options struct {
	// Quick selects the workloads' quick sizes.
	Quick bool
	// Runs, when positive, replaces every workload's timed runs per side.
	Runs int
	// Sizes, when set, replaces a workload's N by name (tests use tiny ones).
	Sizes map[string]int
	// NoWarmUp skips the untimed warm-up pair.
	NoWarmUp bool
	// Dir is where the workloads' temp directories go (os.TempDir when
	// empty); each is removed when its workload ends.
	Dir string
	// Child re-executes this program as a benchmark child (see Env.Child).
	Child func(ctx context.Context) *exec.Cmd
	// Executable is the lakesql binary, for workloads that exec it as a
	// user would (see Env.Executable).
	Executable string
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

// Result is one workload's outcome.
type Result struct {
	Name, Unit string
	// Size and Reference say, in words, what ran.
	Size, Reference string
	N, Runs         int
	Target          Target
	// Lakesql and Ref summarize each side's runs.
	Lakesql, Ref Summary
	// Ratio is Lakesql.Median / Ref.Median; PairedRatio the median of the
	// ratios of the runs that ran back to back, the steadier figure when
	// the machine's load drifts.
	Ratio, PairedRatio float64
	// LakesqlExtra and RefExtra are the medians of each side's further
	// figures (Sample.Extra).
	LakesqlExtra, RefExtra map[string]float64
	// Note is what the sides said beside the figures (see Noter).
	Note string
	// Unavailable says why the workload did not run; Err why it failed.
	Unavailable string
	Err         error
	Elapsed     time.Duration
}

// Met reports whether the ratio meets the target.
func (r Result) Met() bool { return r.Err == nil && r.Unavailable == "" && r.Target.Met(r.Ratio) }

// Select returns the workloads named in names (all of them when names is
// empty), in their order, or an error naming an unknown one.
func Select(ws []Workload, names []string) ([]Workload, error) {
	if len(names) == 0 {
		return ws, nil
	}
	var out []Workload
	for _, n := range names {
		i := slices.IndexFunc(ws, func(w Workload) bool { return w.Name == n })
		if i < 0 {
			known := make([]string, len(ws))
			for j, w := range ws {
				known[j] = w.Name
			}
			return nil, fmt.Errorf("unknown workload %q (known: %v)", n, known)
		}
		out = append(out, ws[i])
	}
	return out, nil
}

// Run runs the workloads one after the other. A workload that fails does
// not stop the others: its result carries the error.
func Run(ctx context.Context, ws []Workload, opts Options) []Result {
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	out := make([]Result, 0, len(ws))
	for _, w := range ws {
		if ctx.Err() != nil {
			out = append(out, Result{Name: w.Name, Unit: w.Unit, Target: w.Target, Err: ctx.Err()})
			continue
		}
		r := runOne(ctx, w, opts, log)
		switch {
		case r.Err != nil:
			fmt.Fprintf(log, "%s: FAILED: %v\n", w.Name, r.Err)
		case r.Unavailable != "":
			fmt.Fprintf(log, "%s: not available: %s\n", w.Name, r.Unavailable)
		default:
			fmt.Fprintf(log, "%s: done in %s\n", w.Name, r.Elapsed.Round(time.Second))
		}
		out = append(out, r)
	}
	return out
}

func runOne(ctx context.Context, w Workload, opts Options, log io.Writer) (r Result) {
	start := time.Now()
	size := w.Full
	if opts.Quick {
		size = w.Quick
	}
	if n, ok := opts.Sizes[w.Name]; ok {
		size.N = n
	}
	if opts.Runs > 0 {
		size.Runs = opts.Runs
	}
	size.Runs = max(size.Runs, 1)
	r = Result{Name: w.Name, Unit: w.Unit, Reference: w.Reference, N: size.N, Runs: size.Runs,
		Target: w.Target, Ratio: math.NaN(), PairedRatio: math.NaN()}
	if w.Describe != nil {
		r.Size = w.Describe(size.N)
	}
	defer func() { r.Elapsed = time.Since(start) }()

	dir, err := os.MkdirTemp(opts.Dir, "lakesql-bench-"+w.Name+"-")
	if err != nil {
		r.Err = fmt.Errorf("temp dir: %w", err)
		return r
	}
	defer func() {
		if err := os.RemoveAll(dir); err != nil && r.Err == nil {
			r.Err = fmt.Errorf("remove temp dir: %w", err)
		}
	}()
	fmt.Fprintf(log, "%s: setting up %s\n", w.Name, r.Size)
	var sides Sides
	pprof.Do(ctx, pprof.Labels("workload", w.Name), func(ctx context.Context) {
		sides, err = w.Setup(ctx, Env{Dir: dir, Child: opts.Child, Executable: opts.Executable, Log: log}, size.N)
	})
	if errors.Is(err, ErrUnavailable) {
		r.Unavailable = err.Error()
		return r
	}
	if err != nil {
		r.Err = fmt.Errorf("setup: %w", err)
		return r
	}
	if n, ok := sides.(Noter); ok {
		r.Note = n.Note()
	}
	defer func() {
		if err := sides.Close(); err != nil && r.Err == nil {
			r.Err = fmt.Errorf("close: %w", err)
		}
	}()
	progress := func(run int, a, b Sample) {
		tag := fmt.Sprintf("run %d/%d", run, size.Runs)
		if run == 0 {
			tag = "warm-up"
		}
		fmt.Fprintf(log, "%s %s: lakesql %s | reference %s | ratio %.3f\n",
			w.Name, tag, formatValue(a.Value, w.Unit), formatValue(b.Value, w.Unit), a.Value/b.Value)
	}
	as, bs, err := interleave(ctx, w.Name, sides, size.Runs, !opts.NoWarmUp && !w.NoWarmUp, progress)
	if err != nil {
		r.Err = err
		return r
	}
	summarizeInto(&r, as, bs)
	return r
}

// interleave runs the sides A B A B ...: one untimed pair first when warm,
// then runs timed pairs. Each call carries pprof labels naming the
// workload and the side, so a CPU profile can be split by them.
func interleave(ctx context.Context, name string, s Sides, runs int, warm bool,
	progress func(run int, a, b Sample)) (as, bs []Sample, err error) {
	call := func(side string, f func(context.Context) (Sample, error)) (smp Sample, err error) {
		pprof.Do(ctx, pprof.Labels("workload", name, "side", side), func(ctx context.Context) {
			smp, err = f(ctx)
		})
		if err == nil && (math.IsNaN(smp.Value) || math.IsInf(smp.Value, 0) || smp.Value <= 0) {
			err = fmt.Errorf("%s: figure %v is not a positive number", side, smp.Value)
		}
		if err != nil {
			err = fmt.Errorf("%s: %w", side, err)
		}
		return smp, err
	}
	first := 1
	if warm {
		first = 0
	}
	for run := first; run <= runs; run++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		a, err := call("lakesql", s.Lakesql)
		if err != nil {
			return nil, nil, err
		}
		b, err := call("reference", s.Reference)
		if err != nil {
			return nil, nil, err
		}
		if progress != nil {
			progress(run, a, b)
		}
		if run > 0 {
			as, bs = append(as, a), append(bs, b)
		}
	}
	return as, bs, nil
}

// summarizeInto fills r's figures from the timed samples of both sides.
func summarizeInto(r *Result, as, bs []Sample) {
	av, bv := values(as), values(bs)
	r.Lakesql, r.Ref = summarize(av), summarize(bv)
	r.Ratio = r.Lakesql.Median / r.Ref.Median
	paired := make([]float64, 0, len(av))
	for i := range min(len(av), len(bv)) {
		paired = append(paired, av[i]/bv[i])
	}
	r.PairedRatio = median(paired)
	r.LakesqlExtra, r.RefExtra = extraMedians(as), extraMedians(bs)
}

// values are the samples' figures.
func values(ss []Sample) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		out[i] = s.Value
	}
	return out
}

// extraMedians is the median of each extra figure over the samples that
// have it; nil when none has any.
func extraMedians(ss []Sample) map[string]float64 {
	byKey := map[string][]float64{}
	for _, s := range ss {
		for k, v := range s.Extra {
			byKey[k] = append(byKey[k], v)
		}
	}
	if len(byKey) == 0 {
		return nil
	}
	out := make(map[string]float64, len(byKey))
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		out[k] = median(byKey[k])
	}
	return out
}
