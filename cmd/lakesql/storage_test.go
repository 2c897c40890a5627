package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const flagSecret = "flag-secret-value"

func TestStorageFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		root    string
		storage storageFlags
	)
	addStorageFlags(fs, &root, &storage)
	err := fs.Parse([]string{"--table-root", "s3://b/p",
		"--storage", "storage.endpoint=http://127.0.0.1:7070/x?a=b", // '=' in a value
		"--storage", "region=eu-west-1", // the storage. prefix may be left out
		"--storage", "storage.secret_access_key=" + flagSecret,
		"--storage", "storage.access_key_id=id",
	})
	if err != nil || storage.check() != nil {
		t.Fatalf("parse: %v, %v", err, storage.check())
	}
	want := map[string]string{
		"storage.endpoint":          "http://127.0.0.1:7070/x?a=b",
		"storage.region":            "eu-west-1",
		"storage.secret_access_key": flagSecret,
		"storage.access_key_id":     "id",
	}
	if diff := cmp.Diff(want, storage.opts); diff != "" || root != "s3://b/p" {
		t.Errorf("root %q, storage (-want +got):\n%s", root, diff)
	}
	if s := storage.String(); strings.Contains(s, flagSecret) || !strings.Contains(s, "storage.secret_access_key=****") {
		t.Errorf("String() = %q: the secret must be masked", s)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{flagSecret}, "--storage takes KEY=VALUE"},
		{[]string{"=" + flagSecret}, "--storage takes KEY=VALUE"},
		{[]string{"storage.secret_acess_key=" + flagSecret}, `unknown storage option "storage.secret_acess_key"`},
		{[]string{"storage.max_attempts=0"}, "storage.max_attempts"},
		{[]string{"storage.region=a", "storage.region=b"}, "storage.region given twice"},
		// The first error is the one reported.
		{[]string{"storage.colour=x", "storage.max_attempts=0"}, "storage.colour"},
	} {
		var s storageFlags
		for _, a := range tc.args {
			if err := s.Set(a); err != nil {
				t.Errorf("Set(%q) returned %v: the flag package would print the argument", a, err)
			}
		}
		err := s.check()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error containing %q", tc.args, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), flagSecret) {
			t.Errorf("%q: the error shows the secret: %v", tc.args, err)
		}
	}
}

// TestStorageFlagsCommands: serve, the REPL and test refuse a bad
// --storage with exit code 2, without printing the secret, and their help
// lists the flags.
func TestStorageFlagsCommands(t *testing.T) {
	bad := []string{"--storage", "storage.secret_acess_key=" + flagSecret}
	for _, args := range [][]string{
		append([]string{"serve", "--data", t.TempDir()}, bad...),
		append([]string{"--data", t.TempDir(), "-e", "SELECT 1"}, bad...),
		append([]string{"test", filepath.Join("testdata", "none.slt")}, bad...),
		{"test", "--dsn", "root@tcp(127.0.0.1:1)/lakesql", "--table-root", "s3://b/p", "x.slt"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
		if code != 2 || errb.Len() == 0 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and a message", args, code, errb.String())
		}
		if strings.Contains(out.String()+errb.String(), flagSecret) {
			t.Errorf("%q printed the secret: %s%s", args, out.String(), errb.String())
		}
	}
	for _, args := range [][]string{{"serve", "--help"}, {"--help"}, {"test", "--help"}} {
		if args[0] == "--help" {
			args = []string{"-data", t.TempDir(), "--help"} // the REPL's own help, not lakesql help
		}
		var out, errb bytes.Buffer
		run(context.Background(), args, strings.NewReader(""), &out, &errb)
		for _, f := range []string{"-table-root", "-storage", "storage.endpoint", "s3://"} {
			if !strings.Contains(errb.String(), f) {
				t.Errorf("%q: the help lacks %s:\n%s", args, f, errb.String())
			}
		}
	}
}

// TestREPLObjectStorage: the REPL with --table-root on S3 and --storage
// writes relative Delta locations to the bucket; an s3:// --allowed-roots
// entry is a location, not a file path.
func TestREPLObjectStorage(t *testing.T) {
	root := lake.URL(lakePrefix(t) + "/tables")
	dir := t.TempDir()
	args := append([]string{"--data", dir, "--table-root", root}, lakeStorageFlags(true)...)
	code, out, errs := runREPL(t, "", append(args, "-e",
		replSetup+"INSERT INTO orders VALUES (1, 1.5, 'eu'); SELECT id, amount, region FROM orders; SHOW CREATE SINK orders")...)
	if code != 0 || !strings.Contains(out, "|  1 |    1.5 | eu     |") {
		t.Fatalf("exit %d, stdout %s, stderr %s", code, out, errs)
	}
	if n := lakeVersions(t, root+"/lake/orders"); n != 2 {
		t.Errorf("the table in the bucket has %d versions, want 2 (CREATE and INSERT)", n)
	}
	if _, err := os.Stat(filepath.Join(dir, "lake")); err == nil {
		t.Errorf("the table was written to the data directory too")
	}
	if strings.Contains(out+errs, lake.SecretKey) {
		t.Errorf("the REPL printed the secret:\n%s\n%s", out, errs)
	}

	// --allowed-roots with an s3:// entry: the table root's parent.
	parent := root[:strings.LastIndex(root, "/")]
	code, out, errs = runREPL(t, "", append(args, "--allowed-roots", dir+","+parent, "-e",
		"CREATE SINK inside INTO DELTA '"+parent+"/inside' (id INT); "+
			"CREATE SINK outside INTO DELTA '"+lake.URL("elsewhere/t")+"' (id INT)")...)
	if code != 1 || !strings.Contains(errs, "outside the allowed roots ("+parent+")") {
		t.Errorf("exit %d, stdout %s, stderr %s; want the second sink refused", code, out, errs)
	}
	if n := lakeVersions(t, parent+"/inside"); n != 1 {
		t.Errorf("the sink under the s3:// allowed root has %d versions, want 1", n)
	}
}

// TestTestCommandObjectStorage: lakesql test --table-root s3://...
// --storage ... --label lakesql-s3 runs the files with their tables, and
// __TEST_DIR__, in the bucket.
func TestTestCommandObjectStorage(t *testing.T) {
	prefix := lakePrefix(t)
	dir := t.TempDir()
	labelled := sltPassing + `
onlyif lakesql-s3
statement ok
CREATE SINK d INTO DELTA '__TEST_DIR__/d' (id INT)
`
	if err := os.WriteFile(filepath.Join(dir, "a.slt"), []byte(labelled), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--table-root", lake.URL(prefix), "--label", "lakesql-s3", "-v"}, lakeStorageFlags(true)...)
	code, out, errs := runTest(t, append(args, dir)...)
	if code != 0 || lastLine(out) != "4 passed, 0 failed, 1 skipped" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	var sinkS, sinkD int
	for _, k := range lakeKeys(t, lake.URL(prefix)) {
		switch {
		case strings.Contains(k, "/tables/lake/s/_delta_log/"):
			sinkS++
		case strings.Contains(k, "/tmp/d/_delta_log/"):
			sinkD++
		}
	}
	if sinkS == 0 || sinkD == 0 {
		t.Errorf("objects of sink s: %d, of sink d under __TEST_DIR__: %d; want both in the bucket", sinkS, sinkD)
	}
	if strings.Contains(out+errs, lake.SecretKey) {
		t.Errorf("lakesql test printed the secret")
	}
}
