package delta

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// upFiles lists the snapshot's files in a total order: Files sorts by path
// only, and two files of one path (different deletion vectors) may tie.
func upFiles(s *Snapshot) []*Add {
	out := append([]*Add(nil), s.Files()...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].DeletionVector.UniqueID() < out[j].DeletionVector.UniqueID()
	})
	return out
}

// upSame fails unless got holds the same table state as want. Empty and
// nil maps are equal: a checkpoint and a JSON entry spell them differently.
func upSame(t *testing.T, what string, got, want *Snapshot) {
	t.Helper()
	empty := cmpopts.EquateEmpty()
	if got.Version != want.Version {
		t.Fatalf("%s: version %d, want %d", what, got.Version, want.Version)
	}
	if d := cmp.Diff(want.Metadata, got.Metadata, empty); d != "" {
		t.Fatalf("%s: metadata (-want +got):\n%s", what, d)
	}
	if d := cmp.Diff(want.Protocol, got.Protocol, empty); d != "" {
		t.Fatalf("%s: protocol (-want +got):\n%s", what, d)
	}
	if d := cmp.Diff(upFiles(want), upFiles(got), empty); d != "" {
		t.Fatalf("%s: files (-want +got):\n%s", what, d)
	}
	for i := 1; i < len(got.Files()); i++ {
		if got.Files()[i-1].Path > got.Files()[i].Path {
			t.Fatalf("%s: files not sorted by path: %s before %s", what, got.Files()[i-1].Path, got.Files()[i].Path)
		}
	}
	if d := cmp.Diff(want.Txns(), got.Txns(), empty); d != "" {
		t.Fatalf("%s: txns (-want +got):\n%s", what, d)
	}
	if d := cmp.Diff(want.DomainMetadata(), got.DomainMetadata(), empty); d != "" {
		t.Fatalf("%s: domain metadata (-want +got):\n%s", what, d)
	}
	ws, err := want.Schema()
	if err != nil {
		t.Fatal(err)
	}
	gs, err := got.Schema()
	if err != nil {
		t.Fatalf("%s: schema: %v", what, err)
	}
	if d := cmp.Diff(ws, gs, empty); d != "" {
		t.Fatalf("%s: schema (-want +got):\n%s", what, d)
	}
}

// upLatest reads the table through a handle of its own, as a fresh reader.
func upLatest(t *testing.T, store Storage) *Snapshot {
	t.Helper()
	s, err := NewTable(store).Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// upWrite writes a log entry as another writer would, bypassing Commit.
func upWrite(t *testing.T, store Storage, version int64, actions []Action) {
	t.Helper()
	data, err := EncodeActions(actions)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutIfAbsent(context.Background(), commitKey(version), data); err != nil {
		t.Fatal(err)
	}
}

// TestUpdateMatchesReplay drives a table through random commits by other
// writers (adds, re-adds, removes of live and dead files, deletion
// vectors, txns, domain metadata, schema changes, checkpoints) and by the
// reader itself, and checks after every step that the snapshot Update
// derives from the previous one, and the one Commit returns, equal a fresh
// replay of the log.
func TestUpdateMatchesReplay(t *testing.T) {
	ctx := context.Background()
	store, table := ctNewTable(t, map[string]string{"delta.checkpointInterval": "7"})
	other := NewTable(store)
	rng := rand.New(rand.NewPCG(7, 11))
	prev, err := table.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The domain metadata below needs its table feature.
	dm := WithFeatures(prev.Protocol, FeatureDomainMetadata)
	if _, err := prev.Commit(ctx, []Action{{Protocol: &dm}}, CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if prev, err = table.Latest(ctx); err != nil {
		t.Fatal(err)
	}
	schema := atSchema()
	dv := func() *DeletionVectorDescriptor {
		return &DeletionVectorDescriptor{StorageType: "i", PathOrInlineDv: fmt.Sprintf("dv%d", rng.IntN(2)), SizeInBytes: 10, Cardinality: 1}
	}
	foreign := func(version int64) []Action {
		var out []Action
		for range rng.IntN(4) {
			p := fmt.Sprintf("part-%02d.parquet", rng.IntN(12))
			switch rng.IntN(6) {
			case 0, 1, 2:
				a := ctAdd(p)
				a.Size = version
				if rng.IntN(4) == 0 {
					a.DeletionVector = dv()
				}
				out = append(out, Action{Add: a})
			case 3, 4:
				r := &Remove{Path: p, DataChange: true}
				if rng.IntN(4) == 0 {
					r.DeletionVector = dv()
				}
				out = append(out, Action{Remove: r})
			case 5:
				out = append(out, Action{Txn: &Txn{AppID: fmt.Sprintf("app-%d", rng.IntN(3)), Version: version}})
			}
		}
		if len(out) == 0 { // an entry holds at least one action
			out = append(out, Action{Txn: &Txn{AppID: "filler", Version: version}})
		}
		switch rng.IntN(12) {
		case 0:
			out = append(out, Action{DomainMetadata: &DomainMetadata{Domain: fmt.Sprintf("d%d", rng.IntN(2)), Configuration: fmt.Sprint(version), Removed: rng.IntN(3) == 0}})
		case 1:
			schema = &StructType{Fields: append(append([]*StructField(nil), schema.Fields...),
				&StructField{Name: fmt.Sprintf("c%d", version), Type: TypeLong, Nullable: true})}
			js, err := schema.JSON()
			if err != nil {
				t.Fatal(err)
			}
			md := upLatest(t, store).Metadata
			md.SchemaString = js
			md.Configuration = map[string]string{"delta.checkpointInterval": "7", "v": fmt.Sprint(version)}
			out = append(out, Action{MetaData: &md})
		}
		return out
	}
	for step := range 120 {
		what := fmt.Sprintf("step %d", step)
		switch rng.IntN(4) {
		case 0: // we commit on what we hold
			actions := foreign(prev.Version + 1)
			actions = append(actions, Action{Txn: &Txn{AppID: "me", Version: int64(step)}})
			res, err := prev.Commit(ctx, actions, CommitOptions{})
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if res.Snapshot == nil {
				t.Fatalf("%s: commit returned no snapshot", what)
			}
			upSame(t, what+" (commit)", res.Snapshot, upLatest(t, store))
			prev = res.Snapshot
			continue
		case 1: // nothing happened meanwhile
		default: // others committed, and maybe checkpointed
			latest := upLatest(t, store)
			for range 1 + rng.IntN(3) {
				latest.Version++
				upWrite(t, store, latest.Version, foreign(latest.Version))
			}
			if rng.IntN(3) == 0 {
				if err := other.Checkpoint(ctx, latest.Version); err != nil {
					t.Fatalf("%s: checkpoint: %v", what, err)
				}
			}
		}
		next, err := table.Update(ctx, prev)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		want := upLatest(t, store)
		upSame(t, what, next, want)
		if next.Version == prev.Version && next != prev {
			t.Fatalf("%s: nothing changed, yet Update did not return the snapshot it was given", what)
		}
		// Snapshots are shared: deriving one must leave its base as it was.
		old, err := other.At(ctx, prev.Version)
		if err != nil {
			t.Fatal(err)
		}
		upSame(t, what+" (the base)", prev, old)
		prev = next
	}
	if prev.Version < 100 {
		t.Fatalf("only %d versions: the test did not exercise much", prev.Version)
	}
}

// TestUpdateRecreatedTable: a table deleted and created again at the same
// path, longer, shorter or as long as before, is read afresh: nothing of the
// old table's state leaks into the snapshot Update returns.
func TestUpdateRecreatedTable(t *testing.T) {
	ctx := context.Background()
	for _, versions := range []int64{2, 5, 9} {
		t.Run(fmt.Sprint(versions), func(t *testing.T) {
			store, table := ctNewTable(t, nil)
			prev, err := table.Latest(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for v := int64(1); v <= 5; v++ {
				res, err := prev.Commit(ctx, []Action{{Add: ctAdd(fmt.Sprintf("old-%d.parquet", v))}}, CommitOptions{})
				if err != nil {
					t.Fatal(err)
				}
				prev = res.Snapshot
			}
			if err := os.RemoveAll(store.Root); err != nil {
				t.Fatal(err)
			}
			if _, err := Create(ctx, store, CreateOptions{Schema: atSchema()}); err != nil {
				t.Fatal(err)
			}
			for v := int64(1); v <= versions; v++ {
				upWrite(t, store, v, []Action{{Add: ctAdd(fmt.Sprintf("new-%d.parquet", v))}})
			}
			next, err := table.Update(ctx, prev)
			if err != nil {
				t.Fatal(err)
			}
			want := upLatest(t, store)
			upSame(t, "recreated", next, want)
			if next.Metadata.ID == prev.Metadata.ID {
				t.Fatal("the snapshot still has the old table's id")
			}
		})
	}
}

// TestUpdateAfterLogCleanup: the log before a checkpoint was deleted, the
// snapshot's own entry with it or (out of order) not: Update replays from
// the checkpoint instead of taking the missing entries for the end of the
// log.
func TestUpdateAfterLogCleanup(t *testing.T) {
	for _, keepOwn := range []bool{false, true} {
		t.Run(fmt.Sprintf("keepOwn=%v", keepOwn), func(t *testing.T) {
			ctx := context.Background()
			store, table := ctNewTable(t, nil)
			for v := int64(1); v <= 3; v++ {
				upWrite(t, store, v, []Action{{Add: ctAdd(fmt.Sprintf("f-%d.parquet", v))}})
			}
			prev, err := table.Latest(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for v := int64(4); v <= 12; v++ {
				upWrite(t, store, v, []Action{{Add: ctAdd(fmt.Sprintf("f-%d.parquet", v))}, {Remove: &Remove{Path: fmt.Sprintf("f-%d.parquet", v-3), DataChange: true}}})
			}
			if err := table.Checkpoint(ctx, 10); err != nil {
				t.Fatal(err)
			}
			for v := int64(0); v < 10; v++ {
				if keepOwn && v == prev.Version {
					continue
				}
				if err := os.Remove(store.LocalPath(commitKey(v))); err != nil {
					t.Fatal(err)
				}
			}
			next, err := table.Update(ctx, prev)
			if err != nil {
				t.Fatal(err)
			}
			upSame(t, "after cleanup", next, upLatest(t, store))
			if next.Version != 12 {
				t.Fatalf("version %d, want 12", next.Version)
			}
		})
	}
}

// TestUpdateLongGap: more new commits than Update applies one by one still
// give the latest state.
func TestUpdateLongGap(t *testing.T) {
	ctx := context.Background()
	store, table := ctNewTable(t, nil)
	prev, err := table.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(maxUpdateCommits + 5)
	for v := int64(1); v <= n; v++ {
		upWrite(t, store, v, []Action{{Add: ctAdd(fmt.Sprintf("f-%03d.parquet", v))}})
	}
	next, err := table.Update(ctx, prev)
	if err != nil {
		t.Fatal(err)
	}
	upSame(t, "long gap", next, upLatest(t, store))
}

// TestUpdateErrors: a corrupt new entry fails as a replay would; a
// snapshot of another table, or none, gives that table's latest.
func TestUpdateErrors(t *testing.T) {
	ctx := context.Background()
	store, table := ctNewTable(t, nil)
	prev, err := table.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	otherStore, otherTable := ctNewTable(t, nil)
	upWrite(t, otherStore, 1, []Action{{Add: ctAdd("x.parquet")}})
	got, err := table.Update(ctx, upLatest(t, otherStore))
	if err != nil {
		t.Fatal(err)
	}
	upSame(t, "snapshot of another table", got, prev)
	if got, err = otherTable.Update(ctx, nil); err != nil {
		t.Fatal(err)
	}
	upSame(t, "no snapshot", got, upLatest(t, otherStore))

	if err := store.PutIfAbsent(ctx, commitKey(1), []byte("not json\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := table.Update(ctx, prev); !errors.Is(err, ErrCorruptLog) {
		t.Fatalf("corrupt entry: got %v, want ErrCorruptLog", err)
	}
	if err := os.RemoveAll(filepath.Join(store.Root, logDir)); err != nil {
		t.Fatal(err)
	}
	if _, err := table.Update(ctx, prev); !errors.Is(err, ErrNotATable) {
		t.Fatalf("deleted table: got %v, want ErrNotATable", err)
	}
}

// TestCommitOnDerivedSnapshot: snapshots returned by Commit chain commits
// across checkpoints without reading the log, and one that went stale
// still loses its put-if-absent race.
func TestCommitOnDerivedSnapshot(t *testing.T) {
	ctx := context.Background()
	store, table := ctNewTable(t, map[string]string{"delta.checkpointInterval": "4"})
	snap, err := table.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stale := snap
	for v := int64(1); v <= 10; v++ {
		res, err := snap.Commit(ctx, []Action{{Add: ctAdd(fmt.Sprintf("f-%02d.parquet", v))}, {Txn: &Txn{AppID: "me", Version: v}}}, CommitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Version != v || res.Snapshot == nil || res.Snapshot.Version != v {
			t.Fatalf("commit %d: %+v", v, res)
		}
		if v%4 == 0 && !res.Checkpointed {
			t.Fatalf("commit %d: no checkpoint (%v)", v, res.CheckpointErr)
		}
		snap = res.Snapshot
	}
	upSame(t, "chained", snap, upLatest(t, store))
	_, err = stale.Commit(ctx, []Action{{Add: ctAdd("late.parquet")}}, CommitOptions{})
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Version != 1 || len(ce.Winners) != 10 {
		t.Fatalf("stale commit: got %v, want a conflict at version 1 with 10 winners", err)
	}
}
