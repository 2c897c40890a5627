package benchmark

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// startupTargetMS is the absolute goal for lakesql's median start-up, in
// milliseconds; it is reported beside the ratio as target_ms.
const startupTargetMS = 100

// Startup is the start-up workload: each run execs `lakesql version` and
// `lakesql --data EMPTY -e "SELECT 1"` n times each and reports the median
// wall time of the slower of the two commands, with both medians as extra
// figures. The reference execs /bin/true as often, the floor of a process
// start on this machine, so the ratio shows lakesql's own overhead; the
// target of 50 puts lakesql near 100 ms when /bin/true takes about 2 ms.
func Startup() Workload {
	return Workload{
		Name: "startup", Unit: "ms", Target: AtMost(50),
		Quick: Size{N: 3, Runs: 3}, Full: Size{N: 10, Runs: 3},
		Describe: func(n int) string {
			return fmt.Sprintf("%d execs each of `lakesql version` and `lakesql -e \"SELECT 1\"` on an empty data directory (target %d ms absolute)", n, startupTargetMS)
		},
		Reference: "exec of /bin/true, as many times",
		Setup:     setupStartup,
	}
}

func setupStartup(ctx context.Context, env Env, n int) (Sides, error) {
	exe := env.Executable
	if exe == "" {
		return nil, errors.New("startup needs the lakesql executable (Env.Executable)")
	}
	trueExe, err := exec.LookPath("true")
	if err != nil {
		return nil, fmt.Errorf("startup reference: %w", err)
	}
	run := 0
	return sidesFuncs{
		lakesql: func(ctx context.Context) (Sample, error) {
			run++
			data := filepath.Join(env.Dir, fmt.Sprintf("empty%d", run))
			if err := os.MkdirAll(data, 0o755); err != nil {
				return Sample{}, err
			}
			defer os.RemoveAll(data)
			version, err := medianExec(ctx, n, exe, "version")
			if err != nil {
				return Sample{}, err
			}
			// Each exec gets a data directory that is empty when it starts.
			var selects []float64
			for i := range n {
				dir := filepath.Join(data, fmt.Sprint(i))
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return Sample{}, err
				}
				d, err := timeExec(ctx, exe, "--data", dir, "-e", "SELECT 1")
				if err != nil {
					return Sample{}, err
				}
				selects = append(selects, ms(d))
			}
			sel := median(selects)
			return Sample{Value: max(version, sel), Extra: map[string]float64{
				"version_ms": version, "select1_ms": sel, "target_ms": startupTargetMS,
			}}, nil
		},
		reference: func(ctx context.Context) (Sample, error) {
			m, err := medianExec(ctx, n, trueExe)
			if err != nil {
				return Sample{}, err
			}
			return Sample{Value: m}, nil
		},
	}, nil
}

// medianExec runs name args n times and returns the median wall time in ms.
func medianExec(ctx context.Context, n int, name string, args ...string) (float64, error) {
	xs := make([]float64, 0, n)
	for range n {
		d, err := timeExec(ctx, name, args...)
		if err != nil {
			return 0, err
		}
		xs = append(xs, ms(d))
	}
	return median(xs), nil
}

// timeExec runs one command to its exit and returns its wall time; the
// environment drops the bench child marker so lakesql runs as a user's would.
func timeExec(ctx context.Context, name string, args ...string) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, ChildEnv+"=")
	})
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("%s %v: %w: %s", filepath.Base(name), args, err, out)
	}
	return d, nil
}
