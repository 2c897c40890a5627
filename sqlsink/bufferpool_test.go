package sqlsink

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// With room for one buffer, two sinks take it in turns; an upsert sink's
// merge, a replay and an epoch in flight all come through.
func TestBufferPoolTakesTurns(t *testing.T) {
	ctx := context.Background()
	pool := NewBufferPool(1, 0, nil)
	ea, eb := newEnv(t), newEnv(t)
	ca := ea.config("a")
	ca.Mode, ca.Key, ca.Buffers = ModeUpsert, []string{"id"}, pool
	cb := eb.config("b")
	cb.Buffers = pool
	a := ea.open(ca)
	b := eb.open(cb) // takes a's buffer
	if n := pool.Open(); n != 1 || a.buf != nil || b.buf == nil {
		t.Fatalf("after opening b: %d open, a's buffer %v, b's %v; want 1, closed, open", n, a.buf != nil, b.buf != nil)
	}
	ea.epoch(a, 1, batch(t, row{ID: 1, Amount: 1}, row{ID: 2, Amount: 2}))
	ea.epoch(a, 2, batch(t, row{ID: 1, Amount: 10}))
	eb.epoch(b, 1, batch(t, row{ID: 7, Amount: 7}))
	if res := ea.epoch(a, 2, batch(t, row{ID: 1, Amount: 99})); !res.Skipped {
		t.Fatalf("the replay of epoch 2 after the buffer came back was not skipped: %+v", res)
	}
	// An epoch in flight keeps its buffer while the other sink takes one.
	if err := a.BeginEpoch(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if err := a.Write(ctx, batch(t, row{ID: 3, Amount: 3})); err != nil {
		t.Fatal(err)
	}
	eb.epoch(b, 2, batch(t, row{ID: 8, Amount: 8}))
	if a.buf == nil || pool.Open() != 2 {
		t.Fatalf("a's epoch lost its buffer (%d open)", pool.Open())
	}
	if err := a.PreCommit(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CommitEpoch(ctx, 3); err != nil {
		t.Fatal(err)
	}
	want := []row{{ID: 1, Amount: 10}, {ID: 2, Amount: 2}, {ID: 3, Amount: 3}}
	if diff := cmp.Diff(want, ea.rows()); diff != "" {
		t.Fatalf("a's rows (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]row{{ID: 7, Amount: 7}, {ID: 8, Amount: 8}}, eb.rows()); diff != "" {
		t.Fatalf("b's rows (-want +got):\n%s", diff)
	}
	a.Close()
	b.Close()
	if n := pool.Open(); n != 0 {
		t.Fatalf("%d buffers open after both sinks closed", n)
	}
}
