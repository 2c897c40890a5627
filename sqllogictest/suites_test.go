package sqllogictest

// The project's own suites: every .slt file under suites/, run on the
// embedded engine and against an in-process lakesql serve. Each file runs
// on its own: a fresh data directory embedded, a fresh server (with its own
// data directory) over the wire, whose restart hook restarts that server on
// the same data directory, so `restart` tests recovery in both modes.
//
// A record a suite skips with `skipif lakesql` is a known bug or a runner
// limitation; its comment (# BUG: ...) says which. Skipped records are
// counted and logged, never failed.

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/lakesql/lakesql/planner"
)

// shortLockWait is the capability lock_wait.slt requires: the test
// shortens planner.LockWaitTimeout (50 s by default), so that a statement
// that waits for another transaction's sink fails with 1205 soon. Only the
// outcome (1205) is checked, never the time.
const shortLockWait = "short-lock-wait"

// suitesDir holds the suites; lakesql test sqllogictest/suites runs the
// same files.
const suitesDir = "suites"

// suiteFiles lists the suites; a missing or empty folder fails the test,
// so a mistyped path never passes silently.
func suiteFiles(t *testing.T) []string {
	t.Helper()
	files, err := Expand([]string{suitesDir})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestSuites(t *testing.T) {
	files := suiteFiles(t)
	// Set before any session exists, restored after every subtest ended.
	saved := planner.LockWaitTimeout
	planner.LockWaitTimeout = time.Second
	t.Cleanup(func() { planner.LockWaitTimeout = saved })
	caps := []string{shortLockWait}
	modes := []struct {
		name string
		run  func(t *testing.T, file string, out *bytes.Buffer) Summary
	}{
		{"embedded", func(t *testing.T, file string, out *bytes.Buffer) Summary {
			return New(Options{TempDir: t.TempDir(), Out: out, Capabilities: caps}).RunFile(context.Background(), file)
		}},
		{"server", func(t *testing.T, file string, out *bytes.Buffer) Summary {
			ts := startServer(t)
			return New(Options{DSN: ts.dsn(), TempDir: ts.tempRoot, Out: out, Restart: ts.restart, Capabilities: caps}).
				RunFile(context.Background(), file)
		}},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			for _, file := range files {
				name, err := filepath.Rel(suitesDir, file)
				if err != nil {
					t.Fatal(err)
				}
				t.Run(name, func(t *testing.T) {
					// Files are independent (their own data directory or
					// server), so they may run side by side.
					t.Parallel()
					var out bytes.Buffer
					sum := m.run(t, file, &out)
					t.Logf("%s %s: %s", m.name, file, sum)
					switch {
					case sum.Failed > 0:
						t.Errorf("%s: %s\n%s", file, sum, out.String())
					case sum.Passed == 0:
						// A file that only skips tests nothing.
						t.Errorf("%s: no record passed (%s)", file, sum)
					}
				})
			}
		})
	}
}
