package filecache

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestLimitTrim: the copies used least recently go first, until the folder
// fits; copies used within Keep and downloads in progress stay; Used makes
// a copy recent.
func TestLimitTrim(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	write := func(rel string, size int, age time.Duration) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	left := func() []string {
		t.Helper()
		var out []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(dir, p)
				out = append(out, filepath.ToSlash(rel))
			}
			return nil
		})
		slices.Sort(out)
		return out
	}
	write("t1/a.parquet", 1000, 3*time.Hour)
	write("t1/b.parquet", 1000, 2*time.Hour)
	write("t2/c.parquet", 1000, time.Hour)
	write("t2/d.parquet", 1000, time.Minute)
	write("t2/.download-1", 5000, 5*time.Hour)

	l := &Limit{Dir: dir, MaxBytes: 2500, Keep: 10 * time.Minute, Now: func() time.Time { return now }}
	freed, err := l.Trim()
	if err != nil || freed != 2000 {
		t.Fatalf("Trim freed %d (%v), want 2000", freed, err)
	}
	if got, want := left(), []string{"t2/.download-1", "t2/c.parquet", "t2/d.parquet"}; !slices.Equal(got, want) {
		t.Fatalf("left %v, want %v", got, want)
	}

	// Over a smaller limit, the copy used a minute ago still stays.
	l.MaxBytes = 500
	if freed, err := l.Trim(); err != nil || freed != 1000 {
		t.Fatalf("Trim freed %d (%v), want 1000", freed, err)
	}
	if got, want := left(), []string{"t2/.download-1", "t2/d.parquet"}; !slices.Equal(got, want) {
		t.Fatalf("left %v, want %v", got, want)
	}

	// Used protects a copy: with the real clock, d is used now.
	write("t3/e.parquet", 1000, 4*time.Hour)
	Used(filepath.Join(dir, "t3", "e.parquet"))
	l.Now = nil
	if freed, err := l.Trim(); err != nil || freed != 1000 {
		t.Fatalf("Trim freed %d (%v), want 1000 (d is an hour old by the real clock? %v)", freed, err, left())
	}
	if got, want := left(), []string{"t2/.download-1", "t3/e.parquet"}; !slices.Equal(got, want) {
		t.Fatalf("left %v, want %v", got, want)
	}

	// A folder that does not exist yet has nothing to trim.
	if freed, err := (&Limit{Dir: filepath.Join(dir, "none"), MaxBytes: 1}).Trim(); err != nil || freed != 0 {
		t.Errorf("Trim of a missing folder: %d, %v", freed, err)
	}
}

// TestLimitAdded: a trim runs once more than a tenth of MaxBytes arrived.
func TestLimitAdded(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for _, n := range []string{"a", "b", "c"} {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, make([]byte, 400), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	l := &Limit{Dir: dir, MaxBytes: 1000}
	l.Added(100) // a tenth: not yet
	if _, err := os.Stat(filepath.Join(dir, "a")); err != nil {
		t.Fatalf("trimmed after a tenth of the limit: %v", err)
	}
	l.Added(1) // more than a tenth since the last trim
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("%d copies left of 1200 bytes over a 1000-byte limit, want 2", len(entries))
	}
}
