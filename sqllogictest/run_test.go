package sqllogictest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/lakesql/lakesql/planner/wire"
)

const password = "slt-pw"

// target builds a Runner for one way of reaching lakesql.
type targetKind struct {
	name string
	open func(t *testing.T, out *bytes.Buffer) *Runner
}

var targets = []targetKind{
	{"embedded", func(t *testing.T, out *bytes.Buffer) *Runner {
		return New(Options{TempDir: t.TempDir(), Out: out})
	}},
	{"server", func(t *testing.T, out *bytes.Buffer) *Runner {
		ts := startServer(t)
		return New(Options{DSN: ts.dsn(), TempDir: ts.tempRoot, Out: out, Restart: ts.restart})
	}},
}

// testServer is an in-process lakesql serve whose restart hook shuts it
// down (engine included) and starts it again on the same data directory,
// on a new port.
type testServer struct {
	t        *testing.T
	dataDir  string
	tempRoot string
	opts     serverOptions

	mu       sync.Mutex
	srv      *wire.Server
	done     chan error
	restarts int
}

// serverOptions are what a test server's engine gets besides its data
// directory: where relative Delta locations go, the default storage
// options, and further allowed roots (the data directory and tempRoot are
// always allowed).
type serverOptions struct {
	tableRoot string
	storage   map[string]string
	roots     []string
	lockWait  time.Duration
}

func startServer(t *testing.T) *testServer {
	t.Helper()
	return startServerWith(t, serverOptions{})
}

func startServerWith(t *testing.T, opts serverOptions) *testServer {
	t.Helper()
	ts := &testServer{t: t, dataDir: t.TempDir(), tempRoot: t.TempDir(), opts: opts}
	if err := ts.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ts.stop(); err != nil {
			t.Errorf("stopping the server: %v", err)
		}
	})
	return ts
}

func (ts *testServer) start() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv, err := wire.New(context.Background(), wire.Config{
		Listener: l, DataDir: ts.dataDir, RootPassword: password,
		AllowedRoots: append([]string{ts.dataDir, ts.tempRoot}, ts.opts.roots...),
		TableRoot:    ts.opts.tableRoot, Storage: ts.opts.storage, LockWaitTimeout: ts.opts.lockWait,
	})
	if err != nil {
		l.Close()
		return err
	}
	ts.srv, ts.done = srv, make(chan error, 1)
	go func() { ts.done <- srv.Serve() }()
	return nil
}

func (ts *testServer) stop() error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.srv == nil {
		return nil
	}
	// The deadline only bounds a hung shutdown; the tests assert nothing
	// about time.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := ts.srv.Shutdown(ctx)
	<-ts.done
	ts.srv = nil
	return err
}

func (ts *testServer) dsn() string {
	return fmt.Sprintf("root:%s@tcp(%s)/lakesql", password, ts.srv.Addr())
}

func (ts *testServer) restart(ctx context.Context) (string, error) {
	if err := ts.stop(); err != nil {
		return "", err
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if err := ts.start(); err != nil {
		return "", err
	}
	ts.restarts++
	return ts.dsn(), nil
}

// runFile runs one fixture and returns its summary and the report.
func runFile(t *testing.T, tk targetKind, name string) (Summary, string) {
	t.Helper()
	var out bytes.Buffer
	r := tk.open(t, &out)
	sum := r.RunFile(context.Background(), filepath.Join("testdata", name))
	return sum, out.String()
}

// counts compares the three counters, with the report on a mismatch.
func counts(t *testing.T, sum Summary, report string, passed, failed, skipped int) {
	t.Helper()
	if sum.Passed != passed || sum.Failed != failed || sum.Skipped != skipped {
		t.Errorf("got %s, want %s\nreport:\n%s", sum, Summary{Passed: passed, Failed: failed, Skipped: skipped}, report)
	}
}

func TestRunPassingFile(t *testing.T) {
	for _, tk := range targets {
		t.Run(tk.name, func(t *testing.T) {
			sum, report := runFile(t, tk, "pass.slt")
			counts(t, sum, report, 21, 0, 2)
			if report != "" {
				t.Errorf("a passing file printed:\n%s", report)
			}
		})
	}
}

func TestRunFailingFile(t *testing.T) {
	file := filepath.Join("testdata", "fail.slt")
	want := []Failure{
		{File: file, Line: 8, SQL: "SELECT id FROM s ORDER BY id", Expected: "1\n3", Actual: "1\n2"},
		{File: file, Line: 14, SQL: "INSERT INTO nowhere VALUES (1)", Expected: "statement ok",
			Actual: "ERROR 1146 ("},
		{File: file, Line: 17, SQL: "SELECT 1", Expected: "an error", Actual: "statement ok"},
		{File: file, Line: 20, SQL: "SELECT * FROM nowhere", Expected: "an error containing:\nsomething else",
			Actual: "ERROR 1146 ("},
		{File: file, Line: 26, SQL: "SELECT * FROM nowhere", Expected: "an error with code 1062", Actual: "ERROR 1146 ("},
		{File: file, Line: 29, SQL: "SELECT id, v FROM s", Expected: "1 columns (query I)", Actual: "2 columns:\n1\ta\n2\tb"},
		{File: file, Line: 32, SQL: "SELECT id, v\nFROM s ORDER BY id", Expected: "1\ta\n2\tc", Actual: "1\ta\n2\tb"},
		{File: file, Line: 41, SQL: "SELECT id FROM s", Expected: "2 values hashing to 00000000000000000000000000000000",
			Actual: "2 values hashing to " + HashValues([]string{"1", "2"})},
		{File: file, Line: 51, SQL: "SELECT id FROM s WHERE id = 1", Expected: "the same result as label-x at line 46", Actual: "1"},
		{File: file, Line: 57, Iter: "i=2", SQL: "SELECT 2 < 2", Expected: "1", Actual: "0"},
		{File: file, Line: 69, SQL: "SELECT id FROM s WHERE id > 100", Expected: "1", Actual: "no rows"},
	}
	// Only the error code is compared: SQLSTATEs and messages are the
	// planner's to refine.
	trimMessage := cmp.Transformer("trim", func(f Failure) Failure {
		if i := strings.Index(f.Actual, " ("); i >= 0 && strings.HasPrefix(f.Actual, "ERROR") {
			f.Actual = f.Actual[:i+2]
		}
		return f
	})
	for _, tk := range targets {
		t.Run(tk.name, func(t *testing.T) {
			sum, report := runFile(t, tk, "fail.slt")
			counts(t, sum, report, 6, len(want), 0)
			if diff := cmp.Diff(want, sum.Failures, trimMessage, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("failures (-want +got):\n%s", diff)
			}
			// The report carries file:line, the SQL, expected and actual.
			for _, s := range []string{
				"FAIL " + file + ":8\n  sql:\n    SELECT id FROM s ORDER BY id\n  expected:\n    1\n    3\n  actual:\n    1\n    2\n",
				"FAIL " + file + ":57 (i=2)\n",
				"    ERROR 1146 (42S02): ",
			} {
				if !strings.Contains(report, s) {
					t.Errorf("report lacks %q:\n%s", s, report)
				}
			}
		})
	}
}

func TestRunSortModesAndHashes(t *testing.T) {
	for _, tk := range targets {
		t.Run(tk.name, func(t *testing.T) {
			sum, report := runFile(t, tk, "sort.slt")
			counts(t, sum, report, 11, 0, 0)
		})
	}
}

// TestRunConnections: con2 does not see con1's open transaction (a SELECT
// reads the last committed version), and sees it once committed.
func TestRunConnections(t *testing.T) {
	for _, tk := range targets {
		t.Run(tk.name, func(t *testing.T) {
			sum, report := runFile(t, tk, "connections.slt")
			counts(t, sum, report, 19, 0, 0)
		})
	}
}

// TestRunRestart: after restart a committed sink and its rows are there,
// and the transactions that were open are not. Against a server the hook
// restarts it on a new port, so the runner must reconnect to the new DSN;
// without a hook, restart only reconnects.
func TestRunRestart(t *testing.T) {
	file := filepath.Join("testdata", "restart.slt")
	t.Run("embedded", func(t *testing.T) {
		var out bytes.Buffer
		sum := New(Options{TempDir: t.TempDir(), Out: &out}).RunFile(context.Background(), file)
		counts(t, sum, out.String(), 13, 0, 0)
	})
	t.Run("server", func(t *testing.T) {
		var out bytes.Buffer
		ts := startServer(t)
		sum := New(Options{DSN: ts.dsn(), TempDir: ts.tempRoot, Out: &out, Restart: ts.restart}).
			RunFile(context.Background(), file)
		counts(t, sum, out.String(), 13, 0, 0)
		if ts.restarts != 1 {
			t.Errorf("the restart hook ran %d times, want 1", ts.restarts)
		}
	})
	t.Run("server without a hook", func(t *testing.T) {
		var out bytes.Buffer
		ts := startServer(t)
		sum := New(Options{DSN: ts.dsn(), TempDir: ts.tempRoot, Out: &out}).RunFile(context.Background(), file)
		counts(t, sum, out.String(), 13, 0, 0)
	})
}

func TestRunControlRecords(t *testing.T) {
	for _, tc := range []struct {
		file                    string
		passed, failed, skipped int
	}{
		// the CREATE, loop i 0 3, a nested loop 2x2, then loop i 0 3 of checks.
		{"loop.slt", 1 + 3 + 4 + 3, 0, 0},
		// 1 before the unknown capability; the rest (3, and 2 loop rounds of 1) skipped.
		{"require.slt", 1, 0, 5},
		// 2 records skipped by mode skip (one of them would fail), 2 run.
		{"mode.slt", 2, 0, 2},
		// halt stops the file: the failing record after it is never run or counted.
		{"halt.slt", 1, 0, 0},
		{"testdir.slt", 3, 0, 0},
	} {
		for _, tk := range targets {
			t.Run(tk.name+"/"+tc.file, func(t *testing.T) {
				sum, report := runFile(t, tk, tc.file)
				counts(t, sum, report, tc.passed, tc.failed, tc.skipped)
			})
		}
	}
}

func TestRunUnparsableAndMissingFiles(t *testing.T) {
	var out bytes.Buffer
	r := New(Options{TempDir: t.TempDir(), Out: &out})
	sum := r.Run(context.Background(), []string{
		filepath.Join("testdata", "unparsable.slt"),
		filepath.Join("testdata", "no-such-file.slt"),
	})
	if sum.Failed != 2 || sum.Passed != 0 || len(sum.Failures) != 2 {
		t.Fatalf("got %s with %d failures, want 2 failed", sum, len(sum.Failures))
	}
	if f := sum.Failures[0]; f.Line != 3 || f.Actual != "parse error: statement ok cannot have ---- (only statement error takes an expected message)" {
		t.Errorf("parse failure: %+v", f)
	}
	if f := sum.Failures[1]; !strings.Contains(f.Actual, "no-such-file.slt") {
		t.Errorf("missing file failure: %+v", f)
	}
}

func TestSummaryString(t *testing.T) {
	for _, tc := range []struct {
		s    Summary
		want string
	}{
		{Summary{Passed: 3}, "3 passed, 0 failed"},
		{Summary{Passed: 3, Failed: 1, Skipped: 2}, "3 passed, 1 failed, 2 skipped"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.s, got, tc.want)
		}
	}
}
