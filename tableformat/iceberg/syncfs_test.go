package iceberg

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	iceio "github.com/apache/iceberg-go/io"
)

// TestSyncedLocalFS: iceberg-go's local schemes resolve to the syncing file
// system, which creates missing folders and writes what it is given, by
// Create and by WriteFile, under plain paths and file:// URIs.
func TestSyncedLocalFS(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, loc := range []string{dir, "file://" + dir} {
		fsys, err := iceio.LoadFS(ctx, nil, loc)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := fsys.(syncedFS); !ok {
			t.Fatalf("%s: iceberg-go's file system is %T, want syncedFS", loc, fsys)
		}
	}
	fsys := syncedFS{}
	created := filepath.Join(dir, "data", "region=eu", "part-0.parquet")
	w, err := fsys.Create("file://" + created)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := w.(syncedFile); !ok {
		t.Errorf("Create returned %T, want syncedFile", w)
	}
	if _, err := w.Write([]byte("rows")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	written := filepath.Join(dir, "metadata", "00001.metadata.json")
	if err := fsys.WriteFile(written, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{created: "rows", written: "{}"} {
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("%s holds %q (%v), want %q", path, got, err, want)
		}
	}
}
