package benchmark

import (
	"context"
	"io"
	"os/exec"
)

// Workload is one line of `lakesql bench`.
type Workload struct {
	// Name is what --only selects and the output shows.
	Name string
	// Unit is the unit of both sides' figures ("rows/s", "ms", "MiB").
	Unit string
	// Target bounds the ratio lakesql / reference.
	Target Target
	// Quick and Full are the sizes of a --quick and a full run.
	Quick, Full Size
	// Describe says what a size means, in words ("10M rows in one epoch").
	Describe func(n int) string
	// Reference says what the reference side does, in words.
	Reference string
	// NoWarmUp skips the untimed warm-up pair, for workloads whose runs
	// are long enough (or separate processes) that one-time costs vanish
	// in them, and a warm-up would only add minutes.
	NoWarmUp bool
	// Setup prepares a run of size n in env.Dir (removed afterwards) and
	// returns its two sides.
	Setup func(ctx context.Context, env Env, n int) (Sides, error)
}

// Size is how big one run of a workload is and how often it runs.
type Size struct {
	// N is what the workload counts: rows, statements, commits, versions.
	N int
	// Runs is the number of timed runs per side (at least 3).
	Runs int
}

// Sides are the two halves of a workload, set up and ready to run. Each
// call is one timed run; the runner calls them alternately.
type Sides interface {
	Lakesql(ctx context.Context) (Sample, error)
	Reference(ctx context.Context) (Sample, error)
	Close() error
}

// Noter is implemented by Sides with something to say beside the
// figures, such as a further reference that is not installed on this
// machine (and whose figures are therefore absent); the runner puts the
// note in the result, the text under the table and the JSON line.
type Noter interface {
	Note() string
}

// Sample is one run's figure in the workload's unit, and any further
// figures worth reporting (keyed by name with their unit: "p50_ms").
type Sample struct {
	Value float64
	Extra map[string]float64
}

// Env is what a workload's setup gets from the runner.
type Env struct {
	// Dir is a fresh directory for this workload; the runner removes it.
	Dir string
	// Child returns a command that re-executes this program as a benchmark
	// child process (see RunChild); nil when the program cannot, and then
	// workloads that need one report themselves unavailable.
	Child func(ctx context.Context) *exec.Cmd
	// Executable is the lakesql binary; empty when there is none, and then
	// workloads that exec it report themselves unavailable. It is not
	// Child's program: under `go test` that is the test binary.
	Executable string
	// Log receives progress lines.
	Log io.Writer
}

// sidesFuncs adapts three functions to Sides.
type sidesFuncs struct {
	lakesql, reference func(ctx context.Context) (Sample, error)
	close              func() error
	note               string
}

func (s sidesFuncs) Note() string { return s.note }

func (s sidesFuncs) Lakesql(ctx context.Context) (Sample, error)   { return s.lakesql(ctx) }
func (s sidesFuncs) Reference(ctx context.Context) (Sample, error) { return s.reference(ctx) }

func (s sidesFuncs) Close() error {
	if s.close == nil {
		return nil
	}
	return s.close()
}
