package sqlsink

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
)

// Failures part-way through an epoch: whatever fails, every row the sink
// accepted lands once, and a row it refused does not land. The tests that
// wrap the provider in hooks (hookProvider) run on Delta only: the hooks
// wrap the Delta provider.

var errTransient = errors.New("transient storage error")

// failStaging makes p's staging fail with errTransient while *on is set.
func failStaging(p *hookProvider, on *bool) {
	p.beforeStage = func() error {
		if *on {
			return errTransient
		}
		return nil
	}
}

// TestFailedFlushTakesNothing: a Write whose flush (of the batches before
// it) fails does not take its batch, keeps the earlier ones, and can be
// sent again: every row lands once.
func TestFailedFlushTakesNothing(t *testing.T) {
	e := newEnv(t)
	p, failing := &hookProvider{Provider: e.delta()}, false
	failStaging(p, &failing)
	cfg := writerConfig(e, "a", "svc-a", p, ModeAppend)
	cfg.FlushRows = 2
	s := e.open(cfg)
	ctx := context.Background()
	if err := s.BeginEpoch(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, batch(t, row{ID: 1, Amount: 1}, row{ID: 2, Amount: 2})); err != nil {
		t.Fatal(err)
	}
	second := batch(t, row{ID: 3, Amount: 3})
	failing = true
	if err := s.Write(ctx, second); !errors.Is(err, errTransient) {
		t.Fatalf("Write with a failing flush: %v", err)
	}
	failing = false
	if err := s.Write(ctx, second); err != nil { // sent again
		t.Fatal(err)
	}
	if err := s.PreCommit(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitEpoch(ctx, 1); err != nil {
		t.Fatal(err)
	}
	want := []row{{ID: 1, Amount: 1}, {ID: 2, Amount: 2}, {ID: 3, Amount: 3}}
	if diff := cmp.Diff(want, e.rows()); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

// TestJournalFailureStagesOnce: a flush whose files are staged but whose
// staging journal cannot be written deletes those files and keeps the rows
// buffered, so the next flush stages them once.
func TestJournalFailureStagesOnce(t *testing.T) {
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			e := newLakeEnv(t, l)
			cfg := writerConfig(e, "a", "svc-a", nil, ModeAppend)
			cfg.FlushRows = 2
			cfg.StateDir = filepath.Join(t.TempDir(), "state")
			s := e.open(cfg)
			ctx := context.Background()
			if err := s.BeginEpoch(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if err := s.Write(ctx, batch(t, row{ID: 1, Amount: 1}, row{ID: 2, Amount: 2})); err != nil {
				t.Fatal(err)
			}
			// The state directory becomes unwritable: a file in its place.
			if err := os.RemoveAll(cfg.StateDir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cfg.StateDir, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := s.Write(ctx, batch(t, row{ID: 3, Amount: 3})); err == nil {
				t.Fatal("Write succeeded without a journal")
			}
			if files := e.parquetFiles(); len(files) != 0 {
				t.Errorf("files of the failed flush left behind: %v", files)
			}
			if err := os.Remove(cfg.StateDir); err != nil {
				t.Fatal(err)
			}
			if err := s.PreCommit(ctx, 1); err != nil {
				t.Fatal(err)
			}
			res, err := s.CommitEpoch(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			want := []row{{ID: 1, Amount: 1}, {ID: 2, Amount: 2}}
			if diff := cmp.Diff(want, e.rows()); diff != "" || res.Files != 1 {
				t.Errorf("%d files; rows (-want +got):\n%s", res.Files, diff)
			}
		})
	}
}

// TestFailedMaterializeKeepsEarlierBatches: batches of the table's exact
// types wait as Arrow; a later batch of other types moves them into the
// buffer table first. When that move fails (a cancelled Write), only the
// later batch is refused: the earlier ones still land.
func TestFailedMaterializeKeepsEarlierBatches(t *testing.T) {
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			e := newLakeEnv(t, l)
			s := e.open(writerConfig(e, "a", "svc-a", nil, ModeAppend))
			ctx := context.Background()
			if err := s.BeginEpoch(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if err := s.Write(ctx, batch(t, row{ID: 1, Amount: 1}, row{ID: 2, Amount: 2})); err != nil {
				t.Fatal(err)
			}
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			if err := s.Write(cctx, int32Batch(t, 3)); err == nil {
				t.Fatal("a Write with a cancelled context succeeded")
			}
			if err := s.PreCommit(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if _, err := s.CommitEpoch(ctx, 1); err != nil {
				t.Fatal(err)
			}
			want := []row{{ID: 1, Amount: 1}, {ID: 2, Amount: 2}}
			if diff := cmp.Diff(want, e.rows()); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFailedMergeRedoIsRedoneOnRetry: an upsert that lost a race discards
// its merge and redoes it; when the redo fails, the CommitEpoch the caller
// retries redoes the merge again instead of committing an empty epoch
// (which would also make the epoch a replay, so its rows never land).
func TestFailedMergeRedoIsRedoneOnRetry(t *testing.T) {
	e := newEnv(t)
	p, failing := &hookProvider{Provider: e.delta()}, false
	failStaging(p, &failing)
	a := e.open(writerConfig(e, "a", "svc-a", p, ModeUpsert))
	b := e.open(writerConfig(e, "b", "svc-b", nil, ModeUpsert))
	ctx := context.Background()
	e.epoch(a, 1, batch(t, row{Op: "I", ID: 0, Amount: 1}, row{Op: "I", ID: 1, Amount: 1}))

	r := newRun(t, a, 2, []row{{Op: "U", ID: 0, Amount: 7}, {Op: "U", ID: 70, Amount: 7}})
	if err := r.prepare(ctx); err != nil {
		t.Fatal(err)
	}
	e.epoch(b, 1, batch(t, row{Op: "I", ID: 5, Amount: 5})) // b wins the race
	failing = true
	if _, err := a.CommitEpoch(ctx, 2); !errors.Is(err, errTransient) {
		t.Fatalf("CommitEpoch with a failing redo: %v", err)
	}
	failing = false
	res, err := a.CommitEpoch(ctx, 2)
	if err != nil {
		t.Fatalf("retried CommitEpoch: %v", err)
	}
	want := []row{{ID: 0, Amount: 7}, {ID: 1, Amount: 1}, {ID: 5, Amount: 5}, {ID: 70, Amount: 7}}
	if diff := cmp.Diff(want, e.rows()); diff != "" || res.Rows == 0 {
		t.Errorf("%+v; rows (-want +got):\n%s", res, diff)
	}
}

// TestJournalRecoveryKeepsCommittedFiles: a crash after a commit landed
// and before its journal was cleared leaves a journal naming committed
// files. When a later version has removed one of them (another writer's
// copy-on-write), the restarted sink must not delete it: the version that
// added it still names it.
func TestJournalRecoveryKeepsCommittedFiles(t *testing.T) {
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			e := newLakeEnv(t, l)
			ctx := context.Background()
			cfg := writerConfig(e, "a", "svc-a", nil, ModeAppend)
			cfg.StateDir = t.TempDir()
			a := e.open(cfg)
			if err := a.BeginEpoch(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if err := a.Write(ctx, batch(t, row{ID: 1, Amount: 1}, row{ID: 2, Amount: 2})); err != nil {
				t.Fatal(err)
			}
			if err := a.PreCommit(ctx, 1); err != nil {
				t.Fatal(err)
			}
			journals, _ := filepath.Glob(filepath.Join(cfg.StateDir, "staged-*.json"))
			if len(journals) != 1 {
				t.Fatalf("journals %v, want one", journals)
			}
			journal, err := os.ReadFile(journals[0])
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.CommitEpoch(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			a.Close()
			if err := os.WriteFile(journals[0], journal, 0o644); err != nil { // the crash
				t.Fatal(err)
			}
			b := e.open(writerConfig(e, "b", "svc-b", nil, ModeUpsert))
			e.epoch(b, 1, batch(t, row{Op: "U", ID: 1, Amount: 10})) // rewrites the file
			e.open(cfg)                                              // the crashed writer restarts

			q, err := e.provider.(catalogadapter.Scanner).ScanSQL(ctx, e.table, e.db, res.Version, nil)
			if err != nil {
				t.Fatal(err)
			}
			var n int
			if err := e.db.QueryRowContext(ctx, "SELECT count(*) FROM ("+q+")").Scan(&n); err != nil || n != 2 {
				t.Errorf("version %d, which epoch 1 committed: %d rows, %v; want 2 rows", res.Version, n, err)
			}
		})
	}
}

// TestJournalPerTable: sinks of two tables with one writer id and one
// state directory keep separate journals; opening one neither deletes the
// files the other has staged nor forgets them (a crash would leave them).
func TestJournalPerTable(t *testing.T) {
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			e := newLakeEnv(t, l)
			ctx := context.Background()
			state := t.TempDir()
			cfgA := writerConfig(e, "a", "svc", nil, ModeAppend)
			cfgA.StateDir = state
			a := e.open(cfgA)
			if err := a.BeginEpoch(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if err := a.Write(ctx, batch(t, row{ID: 1, Amount: 1})); err != nil {
				t.Fatal(err)
			}
			if err := a.PreCommit(ctx, 1); err != nil {
				t.Fatal(err)
			}
			cfgB := writerConfig(e, "b", "svc", nil, ModeAppend)
			cfgB.StateDir = state
			_, cfgB.Table = l.open(t, e.db, e.root, "other")
			e.open(cfgB)
			if journals, _ := filepath.Glob(filepath.Join(state, "staged-*.json")); len(journals) != 1 {
				t.Errorf("journals after the other sink opened: %v, want the first sink's", journals)
			}
			if _, err := a.CommitEpoch(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]row{{ID: 1, Amount: 1}}, e.rows()); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRoundedKeyRefused: a float key for an integer key column is refused,
// not rounded: 1.2 and 1.4 would both become key 1, and one row would
// silently replace the other.
func TestRoundedKeyRefused(t *testing.T) {
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			e := newLakeEnv(t, l)
			s := e.open(writerConfig(e, "a", "svc-a", nil, ModeUpsert))
			sc := arrow.NewSchema([]arrow.Field{
				{Name: "id", Type: arrow.PrimitiveTypes.Float64},
				{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
			}, nil)
			bld := array.NewRecordBuilder(memory.DefaultAllocator, sc)
			defer bld.Release()
			bld.Field(0).(*array.Float64Builder).AppendValues([]float64{1.2, 1.4}, nil)
			bld.Field(1).(*array.Float64Builder).AppendValues([]float64{12, 14}, nil)
			rec := bld.NewRecordBatch()
			defer rec.Release()
			ctx := context.Background()
			if err := s.BeginEpoch(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if err := s.Write(ctx, rec); !errors.Is(err, ErrBadRow) {
				t.Errorf("Write of float keys into an integer key: %v, want ErrBadRow", err)
			}
		})
	}
}

// TestUpsertFloatKeyOnDelta: a FLOAT key upserted twice is one row. Delta
// keeps a FLOAT column's bounds as decimal text ("1.1"), which, read as a
// float64, fell below the key float32(1.1): the upsert's pruning skipped
// the file holding the key, and the key was written twice.
func TestUpsertFloatKeyOnDelta(t *testing.T) {
	e := newEnv(t)
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Float32},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	cfg := e.config("f")
	cfg.Schema, cfg.Mode, cfg.Key = sc, ModeUpsert, []string{"k"}
	s := e.open(cfg)
	record := func(k float32, v int64) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		b.Field(0).(*array.Float32Builder).Append(k)
		b.Field(1).(*array.Int64Builder).Append(v)
		rec := b.NewRecordBatch()
		t.Cleanup(rec.Release)
		return rec
	}
	e.epoch(s, 1, record(1.1, 1))
	e.epoch(s, 2, record(1.1, 2))
	ctx := context.Background()
	q, err := e.delta().ScanSQL(ctx, cfg.Table, e.db, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var n, v int64
	if err := e.db.QueryRowContext(ctx, "SELECT count(*), max(v) FROM ("+q+")").Scan(&n, &v); err != nil {
		t.Fatal(err)
	}
	if n != 1 || v != 2 {
		t.Errorf("after upserting key 1.1 twice: %d rows, max v %d; want 1 row with v 2", n, v)
	}
}

// TestMisspelledOpColumnRefused: columns named with a leading _ are never
// written, so an _OP column would be dropped and its deletes become
// upserts; it is refused instead, as is a batch with two _op columns.
func TestMisspelledOpColumnRefused(t *testing.T) {
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			e := newLakeEnv(t, l)
			cfg := e.config("orders")
			cfg.Mode, cfg.Key = ModeUpsert, []string{"id"}
			s := e.open(cfg)
			ctx := context.Background()
			if err := s.BeginEpoch(ctx, 1); err != nil {
				t.Fatal(err)
			}
			for _, names := range [][]string{{"_OP"}, {"_op", "_op"}} {
				fields := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}
				for _, n := range names {
					fields = append(fields, arrow.Field{Name: n, Type: arrow.BinaryTypes.String})
				}
				b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
				b.Field(0).(*array.Int64Builder).Append(1)
				for i := range names {
					b.Field(i + 1).(*array.StringBuilder).Append("D")
				}
				rec := b.NewRecordBatch()
				b.Release()
				err := s.Write(ctx, rec)
				rec.Release()
				if !errors.Is(err, ErrBadOp) {
					t.Errorf("batch with columns %v: %v, want ErrBadOp", names, err)
				}
			}
		})
	}
}
