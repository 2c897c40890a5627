package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lakesql/lakesql/planner/wire"
)

const sltPassing = `statement ok
CREATE SINK s INTO DELTA 'lake/s' (id BIGINT NOT NULL, v VARCHAR(20))

statement ok
INSERT INTO s VALUES (1, 'a # b'), (2, NULL)

query IT rowsort
SELECT id, v FROM s
----
2	NULL
1	a # b

skipif lakesql
statement ok
not SQL
`

const sltFailing = `statement ok
CREATE SINK f INTO DELTA 'lake/f' (id BIGINT NOT NULL)

query I
SELECT count(*) FROM f
----
1
`

// writeSLTTree writes a folder of .slt files (one in a subfolder, and a
// file that is not .slt, which a folder run must ignore).
func writeSLTTree(t *testing.T, withFailure bool) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"a.slt":        sltPassing,
		"sub/b.slt":    sltPassing,
		"notes.txt":    "not a test",
		"sub/skip.sql": "neither",
	}
	if withFailure {
		files["sub/c.slt"] = sltFailing
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runTest(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"test"}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestTestCommand(t *testing.T) {
	passing := writeSLTTree(t, false)
	failing := writeSLTTree(t, true)

	code, out, errOut := runTest(t, passing)
	if code != 0 || lastLine(out) != "6 passed, 0 failed, 2 skipped" {
		t.Errorf("a passing folder: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	code, out, _ = runTest(t, "-v", failing)
	if code != 1 || lastLine(out) != "7 passed, 1 failed, 2 skipped" {
		t.Errorf("a folder with a failure: exit %d, stdout %q", code, out)
	}
	c := filepath.Join(failing, "sub", "c.slt")
	for _, s := range []string{
		"FAIL " + c + ":4\n  sql:\n    SELECT count(*) FROM f\n  expected:\n    1\n  actual:\n    0\n",
		filepath.Join(failing, "a.slt") + ": 3 passed, 0 failed, 1 skipped\n", // -v, and a.slt before sub/
	} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	if i, j := strings.Index(out, "a.slt:"), strings.Index(out, "b.slt:"); i < 0 || j < i {
		t.Errorf("files not run in sorted order:\n%s", out)
	}

	// A file given by name runs whatever its extension.
	named := filepath.Join(t.TempDir(), "one.test")
	if err := os.WriteFile(named, []byte(sltPassing), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runTest(t, named); code != 0 || lastLine(out) != "3 passed, 0 failed, 1 skipped" {
		t.Errorf("a named file: exit %d, stdout %q", code, out)
	}

	// --data keeps the engine's data: the sink is there afterwards.
	data := t.TempDir()
	if code, out, _ := runTest(t, "--data", data, filepath.Join(passing, "a.slt")); code != 0 {
		t.Errorf("--data: exit %d, stdout %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(data, "lake", "s", "_delta_log")); err != nil {
		t.Errorf("--data: the sink's table is not in the data directory: %v", err)
	}
}

func TestTestCommandUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{nil, 2, "no files or folders given"},
		{[]string{filepath.Join(t.TempDir(), "missing.slt")}, 2, "missing.slt"},
		{[]string{t.TempDir()}, 2, "no .slt files under"},
		{[]string{"--frobnicate", "x.slt"}, 2, "flag provided but not defined"},
		{[]string{"--dsn", "root@tcp(127.0.0.1:1)/lakesql", "--data", "d", "x.slt"}, 2, "--data is for the embedded engine"},
		{[]string{"--help"}, 0, "Usage: lakesql test"},
	} {
		code, _, errOut := runTest(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.err) {
			t.Errorf("lakesql test %q: exit %d, stderr %q; want exit %d, stderr containing %q", tc.args, code, errOut, tc.code, tc.err)
		}
	}
	var out bytes.Buffer
	run(context.Background(), []string{"help"}, strings.NewReader(""), &out, &out)
	if !strings.Contains(out.String(), "lakesql test [--dsn DSN] FILE|FOLDER...") {
		t.Errorf("lakesql help does not list test:\n%s", out.String())
	}
}

// TestTestCommandServer runs files against an in-process lakesql serve.
func TestTestCommandServer(t *testing.T) {
	dataDir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := wire.New(context.Background(), wire.Config{Listener: l, DataDir: dataDir, RootPassword: "slt-pw"})
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	t.Cleanup(func() {
		// The deadline bounds a hung shutdown only; nothing is timed.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		<-served
	})
	dsn := fmt.Sprintf("root:slt-pw@tcp(%s)/lakesql", srv.Addr())

	dir := t.TempDir()
	for name, body := range map[string]string{"a.slt": sltPassing, "c.slt": sltFailing} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := runTest(t, "--dsn", dsn, dir)
	if code != 1 || lastLine(out) != "4 passed, 1 failed, 1 skipped" || !strings.Contains(out, "c.slt:4\n") {
		t.Errorf("against a server: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// The server kept what the files did: files share a server's state.
	if _, err := os.Stat(filepath.Join(dataDir, "lake", "s", "_delta_log")); err != nil {
		t.Errorf("the sink is not in the server's data directory: %v", err)
	}
}
