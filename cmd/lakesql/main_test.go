package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakesql/lakesql/tableformat/delta"
)

func TestRunCommands(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t")
	store, err := delta.NewLocalStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	schema := &delta.StructType{Fields: []*delta.StructField{{Name: "id", Type: delta.TypeLong}}}
	snap, err := delta.Create(ctx, store, delta.CreateOptions{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snap.Commit(ctx, []delta.Action{{Txn: &delta.Txn{AppID: "svc-a", Version: 7}}}, delta.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args     []string
		code     int
		out, err string
	}{
		{[]string{"version"}, 0, "lakesql " + version, ""},
		{[]string{"help"}, 0, "Usage:", ""},
		{[]string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{[]string{"delta-info", dir}, 0, "version: 1\n", ""},
		{[]string{"delta-info", dir}, 0, "txn: svc-a = 7", ""},
		{[]string{"delta-info", dir, "0"}, 0, "version: 0\n", ""},
		{[]string{"delta-info", dir, "5"}, 1, "", "the latest version is 1"},
		{[]string{"delta-info", t.TempDir()}, 1, "", "not a Delta table"},
		{[]string{"delta-info"}, 1, "", "usage: lakesql delta-info"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(ctx, tc.args, strings.NewReader(""), &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String(), tc.out) || !strings.Contains(stderr.String(), tc.err) {
			t.Errorf("lakesql %v: exit %d, stdout %q, stderr %q; want exit %d, stdout containing %q, stderr containing %q",
				tc.args, code, stdout.String(), stderr.String(), tc.code, tc.out, tc.err)
		}
	}
}
