package planner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDataDirLock: an engine holds its data directory from Open to Close;
// a second Open of it fails at once with ErrDataDirInUse naming the
// holder, and succeeds once the first engine is closed. Another data
// directory is unaffected.
func TestDataDirLock(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	first, err := Open(ctx, Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	_, err = Open(ctx, Options{DataDir: filepath.Join(dir, ".")})
	if !errors.Is(err, ErrDataDirInUse) {
		t.Fatalf("second Open: %v, want ErrDataDirInUse", err)
	}
	for _, want := range []string{dir, fmt.Sprintf("this process (%d)", os.Getpid()), LockFile} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("second Open's error %q does not name %q", err, want)
		}
	}
	other, err := Open(ctx, Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatalf("Open of another data directory: %v", err)
	}
	other.Close()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(ctx, Options{DataDir: dir})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	again.Close()
}
