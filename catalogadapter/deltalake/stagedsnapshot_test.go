package deltalake

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/clocktest"
)

// TestOneSnapshotReadPerEpoch: staging reads the log once (the cached
// snapshot brought up to date: commit 1 absent, _last_checkpoint, commit 0
// unchanged); the commit of what was staged in this process reads the
// staged file's size and commit 0 (still the table's?) before its put, and
// leaves finding a newer version to the put. A receipt that went through
// JSON still commits, with the full checks and a read of the log.
func TestOneSnapshotReadPerEpoch(t *testing.T) {
	ctx := context.Background()
	var ops storageOps
	opts := testOptions(clocktest.New(t0))
	opts.WrapStorage = ops.wrap
	p := New(openDB(t), opts)
	id := newTable(t, p, catalogadapter.TableDef{})
	ops.take()

	r := writeRows(t, p, id, idRows(0, 1))
	if got, want := ops.take(), map[string]int{"Get": 3, "PutFile": 1}; !cmp.Equal(want, got) {
		t.Errorf("stage: storage calls %v, want %v", got, want)
	}
	out, err := p.Commit(ctx, id, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{WriterID: "me", Epoch: 1})
	if err != nil || out.Version != 1 || out.Retries != 0 || out.Skipped {
		t.Fatalf("commit: %+v, %v", out, err)
	}
	if got, want := ops.take(), map[string]int{"Stat": 1, "Get": 1, "PutIfAbsent": 1}; !cmp.Equal(want, got) {
		t.Errorf("commit: storage calls %v, want %v", got, want)
	}

	// From JSON, as a journal read back after a crash gives it.
	js, err := json.Marshal(writeRows(t, p, id, idRows(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), "InProcess") {
		t.Errorf("the in-process form was encoded: %s", js)
	}
	var back catalogadapter.Receipt
	if err := json.Unmarshal(js, &back); err != nil || back.InProcess != nil {
		t.Fatalf("decode %s: %+v, %v", js, back, err)
	}
	ops.take()
	out, err = p.Commit(ctx, id, []catalogadapter.Receipt{back}, catalogadapter.CommitOptions{WriterID: "me", Epoch: 2})
	if err != nil || out.Version != 2 || out.Retries != 0 || out.Skipped {
		t.Fatalf("commit from JSON: %+v, %v", out, err)
	}
	if got, want := ops.take(), map[string]int{"Stat": 1, "Get": 3, "PutIfAbsent": 1}; !cmp.Equal(want, got) {
		t.Errorf("commit from JSON: storage calls %v, want %v", got, want)
	}
	if got := scanRows(t, p, p.db, id, -1, nil); !cmp.Equal(idRows(0, 2), got) {
		t.Errorf("rows (-want +got):\n%s", cmp.Diff(idRows(0, 2), got))
	}
}

// TestStaleStagedSnapshot: another process commits between our stage and
// our commit. The commit on the staged version loses its put, checks the
// winners and lands on the next version at once; a replayed epoch whose
// receipt is stale is skipped, because the winner that holds it is
// checked, and writes nothing.
func TestStaleStagedSnapshot(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p, other := New(db, testOptions(clocktest.New(t0))), New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})
	commit := func(pr *Provider, r catalogadapter.Receipt, writer string, epoch int64) catalogadapter.CommitOutcome {
		t.Helper()
		out, err := pr.Commit(ctx, id, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{WriterID: writer, Epoch: epoch})
		if err != nil {
			t.Fatalf("%s epoch %d: %v", writer, epoch, err)
		}
		return out
	}

	mine := writeRows(t, p, id, idRows(0, 2)) // staged on version 0
	commit(other, writeRows(t, other, id, idRows(2, 2)), "other", 1)
	if out := commit(p, mine, "me", 1); out.Version != 2 || out.Retries != 1 || out.Skipped {
		t.Errorf("stale receipt: %+v, want version 2 after one lost put", out)
	}

	// Our epoch 2 lands from another process (a replacement of ours), and
	// then another writer's commit: both after we staged it.
	replay := writeRows(t, p, id, idRows(10, 2)) // staged on version 2
	commit(other, writeRows(t, other, id, idRows(4, 2)), "me", 2)
	commit(other, writeRows(t, other, id, idRows(6, 2)), "other", 2)
	if out := commit(p, replay, "me", 2); !out.Skipped || out.Version != 4 || out.Retries != 0 {
		t.Errorf("stale replay: %+v, want skipped at version 4", out)
	}
	if v, _, err := other.Files(ctx, id); err != nil || v != 4 {
		t.Errorf("the table is at version %d (%v), want 4: the replay wrote", v, err)
	}
	if got := scanRows(t, other, db, id, -1, nil); !cmp.Equal(idRows(0, 8), got) {
		t.Errorf("rows (-want +got):\n%s", cmp.Diff(idRows(0, 8), got))
	}
	if err := p.Discard(ctx, id, []catalogadapter.Receipt{replay}); err != nil {
		t.Fatal(err)
	}
}

// TestStagedOnReplacedTable: between our stage and our commit, another
// process deletes the table's log and creates the table again, with fewer
// versions than we staged on. Putting the version after ours would leave a
// gap in the new log; the commit finds the entry it was staged on gone,
// reads the new table, and lands on it.
func TestStagedOnReplacedTable(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p, other := New(db, testOptions(clocktest.New(t0))), New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})
	for e := int64(1); e <= 3; e++ {
		if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{writeRows(t, p, id, idRows(100*e, 1))}, catalogadapter.CommitOptions{WriterID: "me", Epoch: e}); err != nil {
			t.Fatal(err)
		}
	}
	mine := writeRows(t, p, id, idRows(0, 1)) // staged on version 3
	if err := os.RemoveAll(filepath.Join(id.Name, "_delta_log")); err != nil {
		t.Fatal(err)
	}
	if err := other.CreateTable(ctx, id, catalogadapter.TableDef{Schema: ordersSchema()}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Commit(ctx, id, []catalogadapter.Receipt{writeRows(t, other, id, idRows(1, 1))}, catalogadapter.CommitOptions{WriterID: "other", Epoch: 1}); err != nil {
		t.Fatal(err)
	}
	out, err := p.Commit(ctx, id, []catalogadapter.Receipt{mine}, catalogadapter.CommitOptions{WriterID: "me", Epoch: 4})
	if err != nil || out.Version != 2 || out.Skipped {
		t.Fatalf("commit: %+v, %v; want version 2 of the new table", out, err)
	}
	if got := scanRows(t, other, db, id, -1, nil); !cmp.Equal(idRows(0, 2), got) {
		t.Errorf("rows (-want +got):\n%s", cmp.Diff(idRows(0, 2), got))
	}
}
