package filecache

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

func TestPath(t *testing.T) {
	dir := t.TempDir()
	if got, want := Path(dir, "s3/lake/a/b.parquet"), filepath.Join(dir, "s3", "lake", "a", "b.parquet"); got != want {
		t.Errorf("clean name: %s, want %s", got, want)
	}
	seen := map[string]string{}
	for _, name := range []string{"", "a/./b", "a//b", "a/b/", "../x", "/abs", `a\b`, "a\x00b", "a/b"} {
		p := Path(dir, name)
		if !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			t.Errorf("%q leaves the cache: %s", name, p)
		}
		hashed := strings.Contains(p, string(filepath.Separator)+"hashed"+string(filepath.Separator))
		if hashed != (name != "a/b") {
			t.Errorf("%q: hashed %v", name, hashed)
		}
		if other, dup := seen[p]; dup {
			t.Errorf("%q and %q share %s", name, other, p)
		}
		seen[p] = name
	}
}

func TestFill(t *testing.T) {
	dst := filepath.Join(t.TempDir(), "x", "f")
	boom := errors.New("boom")
	if err := Fill(dst, func(w io.Writer) error { io.WriteString(w, "half"); return boom }); !errors.Is(err, boom) {
		t.Fatalf("failed fill: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(dst)); len(entries) != 0 {
		t.Fatalf("a failed fill left %v", entries)
	}
	if err := Fill(dst, func(w io.Writer) error { _, err := io.WriteString(w, "whole"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(dst); err != nil || string(b) != "whole" {
		t.Fatalf("read %q, %v", b, err)
	}
}

func TestForEach(t *testing.T) {
	items := make([]int, 100)
	for i := range items {
		items[i] = i
	}
	var sum, running, peak atomic.Int64
	err := ForEach(context.Background(), items, func(i int) error {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		sum.Add(int64(i))
		running.Add(-1)
		return nil
	})
	if err != nil || sum.Load() != 4950 {
		t.Fatalf("sum %d, %v", sum.Load(), err)
	}
	if peak.Load() > MaxTransfers {
		t.Errorf("%d ran at once, more than %d", peak.Load(), MaxTransfers)
	}
	boom := errors.New("boom")
	err = ForEach(context.Background(), items, func(i int) error {
		if i == 0 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want boom", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ForEach(ctx, items, func(int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
