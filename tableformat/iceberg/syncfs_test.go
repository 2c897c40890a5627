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

// TestCacheLimit: a catalog's CacheMaxBytes bounds the copies in its cache
// folder (dir/files), shared by every user of the folder; the first setting
// stays.
func TestCacheLimit(t *testing.T) {
	dir := t.TempDir()
	cat, err := OpenCatalog(context.Background(), CatalogConfig{DataDir: dir, CacheMaxBytes: 123 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	l := cacheLimit(cat.CacheDir())
	if l.MaxBytes != 123<<20 || l.Dir != filepath.Join(cat.CacheDir(), "files") {
		t.Errorf("limit %d on %s, want %d on %s", l.MaxBytes, l.Dir, 123<<20, filepath.Join(cat.CacheDir(), "files"))
	}
	SetCacheLimit(cat.CacheDir(), 1)
	if cacheLimit(cat.CacheDir()) != l || l.MaxBytes != 123<<20 {
		t.Errorf("a second setting replaced the limit in use")
	}
	if other := cacheLimit(t.TempDir()); other.MaxBytes != 0 {
		t.Errorf("a folder without a setting has limit %d, want the default (0)", other.MaxBytes)
	}
}
