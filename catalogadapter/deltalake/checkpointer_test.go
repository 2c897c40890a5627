package deltalake

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/clocktest"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// TestBackgroundCheckpoints: with BackgroundCheckpoints a commit due for a
// checkpoint returns without it, the checkpoint follows, readers start
// from it, and Close waits for the one being written; a closed provider
// starts none, and its commits still land.
func TestBackgroundCheckpoints(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	opts := testOptions(clocktest.New(t0))
	opts.CheckpointInterval, opts.BackgroundCheckpoints = 3, true
	p := New(db, opts)
	id := newTable(t, p, catalogadapter.TableDef{})
	checkpoint := func(v int64) string {
		return filepath.Join(id.Name, "_delta_log", fmt.Sprintf("%020d.checkpoint.parquet", v))
	}
	commit := func(n int64) {
		t.Helper()
		r := writeRows(t, p, id, idRows(n*10, 2))
		out, err := p.Commit(ctx, id, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{WriterID: "w", Epoch: n})
		if err != nil {
			t.Fatal(err)
		}
		if out.Version != n {
			t.Fatalf("epoch %d committed as version %d", n, out.Version)
		}
	}
	for n := int64(1); n <= 3; n++ {
		commit(n)
	}
	p.checkpoints.wait()
	if degraded, reason := p.Health(id); degraded {
		t.Fatalf("background checkpoint: %s", reason)
	}
	if _, err := os.Stat(checkpoint(3)); err != nil {
		t.Fatalf("no checkpoint at version 3: %v", err)
	}
	store, err := delta.NewLocalStorage(id.Name)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := delta.NewTable(store).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version != 3 || snap.CheckpointVersion != 3 || len(snap.Files()) != 3 {
		t.Errorf("reader: version %d from checkpoint %d with %d files, want 3 from 3 with 3", snap.Version, snap.CheckpointVersion, len(snap.Files()))
	}

	for n := int64(4); n <= 6; n++ {
		commit(n)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(checkpoint(6)); err != nil {
		t.Fatalf("Close returned before the checkpoint at version 6: %v", err)
	}
	for n := int64(7); n <= 9; n++ {
		commit(n)
	}
	if _, err := os.Stat(checkpoint(9)); !os.IsNotExist(err) {
		t.Errorf("a closed provider wrote a checkpoint at version 9 (%v)", err)
	}
	if got := scanRows(t, p, db, id, -1, nil); len(got) != 18 {
		t.Errorf("%d rows after 9 commits of 2, want 18", len(got))
	}
}

// failCheckpoints fails the writes of checkpoint files while on is set.
type failCheckpoints struct {
	delta.Storage
	on *atomic.Bool
}

func (s failCheckpoints) Put(ctx context.Context, key string, data []byte) error {
	if s.on.Load() && strings.Contains(key, ".checkpoint.") {
		return errors.New("disk full")
	}
	return s.Storage.Put(ctx, key, data)
}

// TestBackgroundCheckpointFailureIsReported: a background checkpoint that
// fails leaves the commits landed and the table degraded, saying why,
// until a later checkpoint of the table succeeds.
func TestBackgroundCheckpointFailureIsReported(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	var failing atomic.Bool
	opts := testOptions(clocktest.New(t0))
	opts.CheckpointInterval, opts.BackgroundCheckpoints = 2, true
	opts.WrapStorage = func(s delta.Storage) delta.Storage { return failCheckpoints{s, &failing} }
	p := New(db, opts)
	defer p.Close()
	id := newTable(t, p, catalogadapter.TableDef{})
	commit := func(n int64) {
		t.Helper()
		r := writeRows(t, p, id, idRows(n*10, 1))
		if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{WriterID: "w", Epoch: n}); err != nil {
			t.Fatal(err)
		}
		p.checkpoints.wait()
	}
	failing.Store(true)
	commit(1)
	commit(2)
	degraded, reason := p.Health(id)
	if !degraded || !strings.Contains(reason, "checkpoint at version 2") || !strings.Contains(reason, "disk full") {
		t.Errorf("after a failed checkpoint: degraded %v, %q; want degraded naming version 2 and the cause", degraded, reason)
	}
	if got := scanRows(t, p, db, id, -1, nil); len(got) != 2 {
		t.Errorf("%d rows after a failed checkpoint, want 2", len(got))
	}
	failing.Store(false)
	commit(3)
	commit(4)
	if degraded, reason := p.Health(id); degraded {
		t.Errorf("after a checkpoint that succeeded: still degraded: %s", reason)
	}
}
