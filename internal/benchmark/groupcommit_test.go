package benchmark

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestGroupCommitWorkloads runs concurrent-commits and small-batches once
// at a tiny size against a real server (and MariaDB where installed), and
// checks their figures: every commit acknowledged and counted, versions
// written, MariaDB's figures present exactly when it is installed.
func TestGroupCommitWorkloads(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers; skipped in -short mode")
	}
	_, _, merr := findMariaDB()
	ws, err := Select(All(), []string{"concurrent-commits", "small-batches"})
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	rs := Run(context.Background(), ws, Options{Runs: 1, NoWarmUp: true, Dir: t.TempDir(), Log: &log,
		Sizes: map[string]int{"concurrent-commits": 64, "small-batches": 50}})
	for _, r := range rs {
		if r.Err != nil || r.Unavailable != "" {
			t.Fatalf("%s: %v %s\n%s", r.Name, r.Err, r.Unavailable, log.String())
		}
		if !(r.Lakesql.Median > 0) || !(r.Ref.Median > 0) {
			t.Errorf("%s: figures %v / %v", r.Name, r.Lakesql.Median, r.Ref.Median)
		}
		mariaKey := map[string]string{"concurrent-commits": "mariadb_commits_s", "small-batches": "mariadb_rows_s"}[r.Name]
		_, measured := r.RefExtra[mariaKey]
		if measured != (merr == nil) {
			t.Errorf("%s: %s measured %v, MariaDB installed %v (%v); note %q", r.Name, mariaKey, measured, merr == nil, merr, r.Note)
		}
		if merr == nil && !(r.RefExtra["lakesql_over_mariadb"] > 0) {
			t.Errorf("%s: no lakesql_over_mariadb: %v", r.Name, r.RefExtra)
		}
	}
	cc, sb := rs[0], rs[1]
	if v := cc.LakesqlExtra["commit_versions"]; !(v >= 1 && v <= 64) {
		t.Errorf("concurrent-commits: %v commit versions for 64 commits", v)
	}
	if v := cc.LakesqlExtra["versions"]; v < cc.LakesqlExtra["commit_versions"] {
		t.Errorf("concurrent-commits: the table grew by %v versions, fewer than its commits' %v", v, cc.LakesqlExtra["commit_versions"])
	}
	if v := cc.RefExtra["commit_versions"]; v != 64 {
		t.Errorf("concurrent-commits over one connection: %v commit versions, want 64 (no group without a second connection)", v)
	}
	if v := sb.LakesqlExtra["commit_versions"]; v != 5 {
		t.Errorf("small-batches: %v commit versions for 5 transactions", v)
	}
	t.Logf("concurrent-commits: lakesql %v, reference %v", cc.LakesqlExtra, cc.RefExtra)
	t.Logf("small-batches: lakesql %v, reference %v", sb.LakesqlExtra, sb.RefExtra)
}

// TestGroupCommitWorkloadsWithoutMariaDB checks that an absent mariadbd
// leaves the MariaDB figures out with a note, and fails nothing.
func TestGroupCommitWorkloadsWithoutMariaDB(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server; skipped in -short mode")
	}
	t.Setenv("PATH", t.TempDir())
	saved := mariadbDirs
	mariadbDirs = nil
	t.Cleanup(func() { mariadbDirs = saved })
	ws, err := Select(All(), []string{"small-batches"})
	if err != nil {
		t.Fatal(err)
	}
	rs := Run(context.Background(), ws, Options{Runs: 1, NoWarmUp: true, Dir: t.TempDir(),
		Sizes: map[string]int{"small-batches": 20}})
	r := rs[0]
	if r.Err != nil || r.Unavailable != "" {
		t.Fatalf("%v %s", r.Err, r.Unavailable)
	}
	if _, ok := r.RefExtra["mariadb_rows_s"]; ok || !strings.Contains(r.Note, "MariaDB reference absent") {
		t.Errorf("extras %v, note %q", r.RefExtra, r.Note)
	}
	var text bytes.Buffer
	if err := WriteTable(&text, rs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "note: MariaDB reference absent") {
		t.Errorf("the table does not say MariaDB is absent:\n%s", text.String())
	}
}
