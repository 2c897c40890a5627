package fsync

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestFileAndDir(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "a.parquet")
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := File(path); err != nil {
		t.Errorf("File: %v", err)
	}
	if err := Dir(root); err != nil {
		t.Errorf("Dir: %v", err)
	}
	if err := File(filepath.Join(root, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("File of a missing path: %v, want ErrNotExist", err)
	}
	if err := Dir(filepath.Join(root, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Dir of a missing folder: %v, want ErrNotExist", err)
	}
}

func TestUp(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "table", "p=1", "q=2")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Up(deep, filepath.Join(root, "table")); err != nil {
		t.Fatalf("Up: %v", err)
	}
	if err := Up(deep, ""); err != nil {
		t.Fatalf("Up to the file system's root: %v", err)
	}
	// A folder that is not there is an error, not a silent success.
	if err := Up(filepath.Join(root, "table", "gone", "q=2"), filepath.Join(root, "table")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Up through a missing folder: %v, want ErrNotExist", err)
	}
}
