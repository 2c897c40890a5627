package benchmark

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
)

// Machine describes where a run happened, for the output and the README:
// figures mean little without it.
func Machine(ctx context.Context) string {
	var si syscall.Sysinfo_t
	mem := "unknown memory"
	if syscall.Sysinfo(&si) == nil {
		mem = fmt.Sprintf("%.1f GiB RAM", float64(si.Totalram)*float64(si.Unit)/(1<<30))
	}
	return fmt.Sprintf("%s, %d cores, %s, %s/%s, %s, DuckDB %s", cpuModel(), runtime.NumCPU(), mem,
		runtime.GOOS, runtime.GOARCH, runtime.Version(), duckdbVersion(ctx))
}

// cpuModel is the CPU's model name from /proc/cpuinfo.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// LoadAverage is the 1, 5 and 15 minute load averages, to tell a quiet
// run from a busy one.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
