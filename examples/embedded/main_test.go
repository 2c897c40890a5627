package main

import (
	"bytes"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakesql/lakesql/internal/deltatest"
	"github.com/lakesql/lakesql/internal/goldentest"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(&out, dir); err != nil {
		t.Fatal(err)
	}
	goldentest.Check(t, out.Bytes(), "expected.txt")

	// Versions 0 (create), 1 (autocommit INSERT), 2 (the transaction); the
	// rolled-back transaction made none, and wrote no data file.
	table := filepath.Join(dir, "lake", "orders")
	if got := deltatest.Versions(t, table); got != 3 {
		t.Errorf("Delta versions = %d, want 3", got)
	}
	if got := dataFiles(t, table); len(got) != 2 {
		t.Errorf("data files = %v, want 2: one per committed version", got)
	}
}

// dataFiles lists the Parquet files of a table outside its log.
func dataFiles(t *testing.T, table string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(table, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "_delta_log" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".parquet") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
