package delta

import (
	"archive/tar"
	"context"
	"database/sql"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/klauspost/compress/zstd"
)

// sharedTestData is the shared folder of real Delta tables, relative to this
// package (the repository's ../shared).
const sharedTestData = "../../../shared/testdata/delta"

// requireSharedTestData skips, loudly, when the shared test tables are absent.
func requireSharedTestData(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(sharedTestData); err != nil {
		t.Skipf("SKIPPING: shared Delta test tables not found at %s (the repository's ../shared): %v", sharedTestData, err)
	}
}

// untarZst unpacks a .tar.zst archive into dst.
func untarZst(t testing.TB, archive, dst string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", archive, err)
		}
		name := filepath.Clean(h.Name)
		if strings.HasPrefix(name, "..") || filepath.IsAbs(name) {
			t.Fatalf("%s: unsafe entry %q", archive, h.Name)
		}
		target := filepath.Join(dst, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := os.Create(target)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(out, tr); err != nil {
				t.Fatal(err)
			}
			out.Close()
		}
	}
}

// openDuckDB opens an in-memory DuckDB prepared for scans.
func openDuckDB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := PrepareDuckDB(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return db
}
