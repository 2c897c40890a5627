package sqlsink

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/icebergtest"
)

// TestIcebergEpochSurvivesExpiry: two sinks of different writer ids
// append; a VACUUM that keeps no history expires every snapshot but the
// last, which only one of them made. Every writer's last epoch is what it
// was, for the sinks that stay open and for new sinks that recover it
// from the table, and a replay of either writer's last epoch is skipped:
// no row lands twice.
func TestIcebergEpochSurvivesExpiry(t *testing.T) {
	ctx := context.Background()
	l := icebergtest.Local(t)
	p := lakeProvider(t, l)
	a := openSink(t, sinkConfig(t, p, "a"))
	cfgB := sinkConfig(t, p, "b")
	cfgB.Schema = nil // attach
	b := openSink(t, cfgB)
	epoch(t, a, 1, batch(t, row{ID: 1, Amount: 1, Region: "a"}))
	epoch(t, b, 5, batch(t, row{ID: 2, Amount: 2, Region: "b"}))
	epoch(t, a, 2, batch(t, row{ID: 3, Amount: 3, Region: "a"}))
	want := icebergRows(t, l.Dir)
	writers := []string{"lakesql-a", "lakesql-b"}
	last := func(p catalogadapter.Provider) map[string]int64 {
		out := map[string]int64{}
		for _, w := range writers {
			e, ok, err := p.LastEpoch(ctx, ordersID, w)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				out[w] = e
			}
		}
		return out
	}
	before := last(p)
	if diff := cmp.Diff(map[string]int64{"lakesql-a": 2, "lakesql-b": 5}, before); diff != "" {
		t.Fatalf("last epochs (-want +got):\n%s", diff)
	}
	out, err := a.Vacuum(ctx, VacuumOptions{Retain: 0, AllowShortRetention: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.SnapshotsExpired != 2 || len(l.Snapshots(t, ordersID)) != 1 {
		t.Fatalf("vacuum expired %d snapshots, %d left; want all but the last", out.SnapshotsExpired, len(l.Snapshots(t, ordersID)))
	}
	if diff := cmp.Diff(before, last(lakeProvider(t, l))); diff != "" {
		t.Fatalf("last epochs after expiry (-before +after):\n%s", diff)
	}
	// A replay through the sink that stayed open, and through new sinks
	// (a restart) that learn the last epoch from the table alone.
	if res := epoch(t, b, 5, batch(t, row{ID: 2, Amount: 2, Region: "b"})); !res.Skipped {
		t.Errorf("replay of b's epoch 5 through its open sink: %+v", res)
	}
	for _, name := range []string{"a", "b"} {
		cfg := sinkConfig(t, lakeProvider(t, l), name)
		cfg.Schema = nil
		s := openSink(t, cfg)
		e, ok := s.LastCommittedEpoch()
		if want := before["lakesql-"+name]; !ok || e != want {
			t.Errorf("sink %s recovers epoch %d %v after expiry, want %d", name, e, ok, want)
		}
		if res := epoch(t, s, before["lakesql-"+name], batch(t, row{ID: 99, Region: "replay"})); !res.Skipped {
			t.Errorf("replay of %s's last epoch after a restart: %+v", name, res)
		}
	}
	// The provider's own check, below the sink's: a commit of writer b's
	// epoch 5 finds it in the table's properties.
	res, err := p.Commit(ctx, ordersID, nil, catalogadapter.CommitOptions{WriterID: "lakesql-b", Epoch: 5})
	if err != nil || !res.Skipped {
		t.Errorf("commit of b's epoch 5 after expiry: %+v %v; want skipped", res, err)
	}
	if got := icebergRows(t, l.Dir); !slices.Equal(got, want) {
		t.Errorf("rows %q after the replays, want %q", got, want)
	}
}
