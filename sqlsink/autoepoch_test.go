package sqlsink

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/go-cmp/cmp"
)

// autoEpoch runs one epoch numbered by the sink (BeginNextEpoch).
func (e *env) autoEpoch(s *Sink, batches ...arrow.RecordBatch) (begun int64, res CommitResult) {
	e.t.Helper()
	ctx := context.Background()
	n, err := s.BeginNextEpoch(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, b := range batches {
		if err := s.Write(ctx, b); err != nil {
			e.t.Fatal(err)
		}
	}
	if err := s.PreCommit(ctx, n); err != nil {
		e.t.Fatal(err)
	}
	if res, err = s.CommitEpoch(ctx, n); err != nil {
		e.t.Fatal(err)
	}
	return n, res
}

// TestAutomaticEpochIsNeverAReplay: two sinks on one table under one
// writer id (two processes of one configuration). The one that opened
// first numbers its next epoch after what it saw; the other has taken
// that number meanwhile. Its rows are new, so they commit under the
// table's next epoch instead of being skipped as a replay; an epoch the
// caller names is still skipped when the table holds it.
func TestAutomaticEpochIsNeverAReplay(t *testing.T) {
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			for _, mode := range []Mode{ModeAppend, ModeUpsert} {
				t.Run(fmt.Sprint(mode), func(t *testing.T) {
					e := newLakeEnv(t, l)
					cfg := e.config("orders")
					cfg.WriterID = "shared"
					cfg.Mode = mode
					if mode == ModeUpsert {
						cfg.Key = []string{"id"}
					}
					stale := e.open(cfg)
					cfg.TempDir = t.TempDir()
					other := e.open(cfg)
					for id := int64(1); id <= 3; id++ {
						if n, res := e.autoEpoch(other, batch(t, row{ID: id, Region: "other"})); n != id || res.Epoch != id || res.Skipped {
							t.Fatalf("other's epoch %d: began %d, result %+v", id, n, res)
						}
					}
					n, res := e.autoEpoch(stale, batch(t, row{ID: 10, Region: "stale"}))
					if n != 1 || res.Skipped || res.Epoch != 4 || res.Rows != 1 {
						t.Fatalf("stale sink: began %d, result %+v; want epoch 1 landing as 4 with 1 row", n, res)
					}
					if last, _ := stale.LastCommittedEpoch(); last != 4 {
						t.Fatalf("LastCommittedEpoch = %d, want 4", last)
					}
					if n, res = e.autoEpoch(stale, batch(t, row{ID: 11, Region: "stale"})); n != 5 || res.Epoch != 5 {
						t.Fatalf("next automatic epoch: began %d, landed %d; want 5", n, res.Epoch)
					}
					want := []row{{ID: 1, Region: "other"}, {ID: 2, Region: "other"}, {ID: 3, Region: "other"},
						{ID: 10, Region: "stale"}, {ID: 11, Region: "stale"}}
					if diff := cmp.Diff(want, e.rows()); diff != "" {
						t.Fatalf("rows (-want +got):\n%s", diff)
					}
					// A named epoch the table holds is a replay, from either sink.
					if res := e.epoch(other, 5, batch(t, row{ID: 99, Region: "replay"})); !res.Skipped || res.Epoch != 5 {
						t.Fatalf("named epoch 5 again: %+v, want skipped", res)
					}
					if diff := cmp.Diff(want, e.rows()); diff != "" {
						t.Fatalf("rows after the replay (-want +got):\n%s", diff)
					}
					if m := stale.Metrics(); m.EpochsSkipped != 0 || m.EpochsCommitted != 2 {
						t.Fatalf("stale sink's metrics %+v: want 2 committed, none skipped", m)
					}
				})
			}
		})
	}
}

// TestAutomaticEpochAtLeastOnce: without epochs in the table, an automatic
// epoch lands under its own number.
func TestAutomaticEpochAtLeastOnce(t *testing.T) {
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			e := newLakeEnv(t, l)
			cfg := e.config("orders")
			cfg.Delivery = AtLeastOnce
			s := e.open(cfg)
			for want := int64(1); want <= 2; want++ {
				if n, res := e.autoEpoch(s, batch(t, row{ID: want})); n != want || res.Epoch != want || res.Skipped {
					t.Fatalf("began %d, result %+v; want epoch %d", n, res, want)
				}
			}
		})
	}
}
