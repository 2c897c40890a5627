package delta

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestReplayCommitsInOrder: commits decoded on several workers apply in
// version order. Each commit adds a file and removes the one before; a
// removed file added again later is live, one added and removed later is
// not. Two corrupt commits: the error names the earlier, as a replay one
// commit after another would.
func TestReplayCommitsInOrder(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Log("GOMAXPROCS 1: replay runs on one goroutine")
	}
	ctx := context.Background()
	store, err := NewLocalStorage(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Create(ctx, store, CreateOptions{Schema: &StructType{Fields: []*StructField{{Name: "id", Type: TypeLong}}}}); err != nil {
		t.Fatal(err)
	}
	const n = 200
	for v := int64(1); v <= n; v++ {
		actions := []Action{{Add: &Add{Path: fmt.Sprintf("f%03d.parquet", v), Size: v, DataChange: true}}}
		if v > 1 {
			actions = append(actions, Action{Remove: &Remove{Path: fmt.Sprintf("f%03d.parquet", v-1), DataChange: true}})
		}
		if v == n {
			// Re-added: the newest action on the path wins.
			actions = append(actions, Action{Add: &Add{Path: "f050.parquet", Size: 1000, DataChange: true}})
		}
		biWriteCommit(t, store, v, actions)
	}
	snap, err := NewTable(store).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range snap.Files() {
		got = append(got, fmt.Sprintf("%s:%d", f.Path, f.Size))
	}
	if want := []string{"f050.parquet:1000", fmt.Sprintf("f%03d.parquet:%d", n, n)}; !slices.Equal(got, want) {
		t.Fatalf("live files %v, want %v", got, want)
	}
	for _, v := range []int64{170, 90} {
		if err := os.WriteFile(store.LocalPath(commitKey(v)), []byte("{\"add\":{\"path\":\"x\"}}\nnot json\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err = NewTable(store).Latest(ctx)
	if !errors.Is(err, ErrCorruptLog) || !strings.Contains(err.Error(), "commit 90 ") {
		t.Fatalf("error %v, want a corrupt log naming commit 90", err)
	}
}
