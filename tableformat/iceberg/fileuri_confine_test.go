package iceberg

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfineEscapedClimb: a manifest path whose escapes decode to a climb
// out of the table (%2E%2E%2F) is checked where it resolves: localPath
// takes the decoded form when only it exists, so confinement must see
// that form and refuse it, not the harmless spelling.
func TestConfineEscapedClimb(t *testing.T) {
	root := t.TempDir()
	tbl := filepath.Join(root, "table")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(tbl, "data"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.parquet"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{
		"file://" + tbl + "/data/%2E%2E%2F%2E%2E%2Foutside/secret.parquet",
		"file://" + tbl + "/data/%2E%2E/%2E%2E/outside/secret.parquet",
		"file://" + tbl + "/data/..%2F..%2Foutside/secret.parquet",
	} {
		lp, err := localPath(uri)
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		// Only the decoded form exists, so that is the file a read opens.
		if !strings.HasPrefix(lp, outside) {
			t.Fatalf("%s resolves to %s, want the decoded file in %s", uri, lp, outside)
		}
		if err := confineFiles("file://"+tbl, nil, []string{uri}); !errors.Is(err, ErrPathOutsideTable) {
			t.Errorf("%s resolves to %s outside the table, yet confineFiles said %v", uri, lp, err)
		}
	}
}

// FuzzLocalPath: whatever a manifest names, localPath either refuses it or
// gives an absolute, clean path, and never panics.
func FuzzLocalPath(f *testing.F) {
	for _, s := range []string{"file:///t/p=a%2Fb/x.parquet", "/t/x", "file:/t/%2E%2E/x", "file://host/x",
		"file:x", "s3://b/k", "file:///t/%zz", "file:///t/a%2F..%2F..%2Fx", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		p, err := localPath(uri)
		if err != nil {
			return
		}
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			t.Fatalf("localPath(%q) = %q: not absolute and clean", uri, p)
		}
	})
}
