package sqlsink

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// dvConfig is an upsert sink on id whose created table has deletion
// vectors on.
func dvConfig(e *env, name string) Config {
	cfg := e.config(name)
	cfg.Mode, cfg.Key = ModeUpsert, []string{"id"}
	cfg.TableProperties = map[string]string{delta.EnableDeletionVectorsKey: "true"}
	return cfg
}

// commitActions reads the add and remove actions of a version of the
// env's Delta table.
func commitActions(t *testing.T, dir string, version int64) (adds []*delta.Add, removes []*delta.Remove) {
	t.Helper()
	store, err := delta.NewLocalStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	actions, err := delta.OpenTable(store, delta.TableOptions{}).ReadCommit(context.Background(), version)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range actions {
		if a.Add != nil {
			adds = append(adds, a.Add)
		}
		if a.Remove != nil {
			removes = append(removes, a.Remove)
		}
	}
	return adds, removes
}

// dvRows loads a DV of the env's table.
func dvRows(t *testing.T, dir string, d *delta.DeletionVectorDescriptor) []uint64 {
	t.Helper()
	store, err := delta.NewLocalStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := delta.LoadDeletionVector(context.Background(), store, d)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func statsOf(t *testing.T, stats string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(stats), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// An upsert and a delete on a table with deletion vectors mark rows in a
// DV instead of rewriting the file; a second one merges with the first;
// the protocol is the one the spec asks for; a copy-on-write sink on the
// same table rewrites the file without the rows the DV deleted.
func TestDeletionVectorUpsertAndDelete(t *testing.T) {
	e := newEnv(t)
	cfg := dvConfig(e, "orders")
	s := e.open(cfg)
	e.epoch(s, 1, batch(t, row{ID: 1, Amount: 1}, row{ID: 2, Amount: 2}, row{ID: 3, Amount: 3}, row{ID: 4, Amount: 4}, row{ID: 5, Amount: 5}))
	first := e.parquetFiles()
	if len(first) != 1 {
		t.Fatalf("%d files after the first epoch", len(first))
	}
	snap := latestSnapshot(t, e.dir)
	if p := snap.Protocol; p.MinReaderVersion != 3 || p.MinWriterVersion != 7 ||
		!slices.Contains(p.ReaderFeatures, "deletionVectors") || !slices.Contains(p.WriterFeatures, "deletionVectors") {
		t.Fatalf("protocol %+v, want reader 3 / writer 7 with deletionVectors in both lists", p)
	}

	res := e.epoch(s, 2, batch(t, row{Op: "U", ID: 2, Amount: 20}, row{Op: "D", ID: 3}, row{Op: "I", ID: 6, Amount: 6}))
	want := []row{{ID: 1, Amount: 1}, {ID: 2, Amount: 20}, {ID: 4, Amount: 4}, {ID: 5, Amount: 5}, {ID: 6, Amount: 6}}
	if diff := cmp.Diff(want, e.rows()); diff != "" {
		t.Fatalf("rows (-want +got):\n%s", diff)
	}
	adds, removes := commitActions(t, e.dir, res.Version)
	var dvAdd *delta.Add
	for _, a := range adds {
		if a.DeletionVector != nil {
			dvAdd = a
		}
	}
	if dvAdd == nil || len(removes) != 1 || removes[0].Path != dvAdd.Path || removes[0].DeletionVector != nil || !dvAdd.DataChange {
		t.Fatalf("want remove(file) + add(same file, DV): adds %+v removes %+v", adds, removes)
	}
	if got := dvRows(t, e.dir, dvAdd.DeletionVector); !cmp.Equal(got, []uint64{1, 2}) {
		t.Fatalf("DV rows %v, want [1 2] (ids 2 and 3)", got)
	}
	if st := statsOf(t, dvAdd.Stats); st["numRecords"] != 5.0 || st["tightBounds"] != false {
		t.Fatalf("stats %s: want the physical numRecords 5 and tightBounds false", dvAdd.Stats)
	}
	if files := e.parquetFiles(); len(files) != 2 || !slices.Contains(files, first[0]) {
		t.Fatalf("files %v: the first file must stay, plus one of new rows", files)
	}

	// A second delete on the same file merges with its DV.
	res = e.epoch(s, 3, batch(t, row{Op: "D", ID: 4}, row{Op: "U", ID: 1, Amount: 10}))
	adds, removes = commitActions(t, e.dir, res.Version)
	if len(removes) != 1 || removes[0].DeletionVector == nil || removes[0].DeletionVector.UniqueID() != dvAdd.DeletionVector.UniqueID() {
		t.Fatalf("the remove must carry the old DV: %+v", removes)
	}
	for _, a := range adds {
		if a.DeletionVector != nil {
			if got := dvRows(t, e.dir, a.DeletionVector); !cmp.Equal(got, []uint64{0, 1, 2, 3}) {
				t.Fatalf("merged DV rows %v, want [0 1 2 3]", got)
			}
		}
	}
	want = []row{{ID: 1, Amount: 10}, {ID: 2, Amount: 20}, {ID: 5, Amount: 5}, {ID: 6, Amount: 6}}
	if diff := cmp.Diff(want, e.rows()); diff != "" {
		t.Fatalf("rows (-want +got):\n%s", diff)
	}

	// Deleting the last row of the first file takes the file out.
	res = e.epoch(s, 4, batch(t, row{Op: "D", ID: 5}))
	adds, removes = commitActions(t, e.dir, res.Version)
	for _, a := range adds {
		if a.Path == dvAdd.Path {
			t.Fatalf("a file with every row deleted is added again: %+v", a)
		}
	}
	if len(removes) != 1 || removes[0].Path != dvAdd.Path {
		t.Fatalf("removes %+v, want the first file", removes)
	}
	if diff := cmp.Diff([]row{{ID: 1, Amount: 10}, {ID: 2, Amount: 20}, {ID: 6, Amount: 6}}, e.rows()); diff != "" {
		t.Fatalf("rows (-want +got):\n%s", diff)
	}
	s.Close()

	// copy_on_write on the same table: the rewrite of a file with a DV
	// leaves out the rows the DV deletes.
	cow := cfg
	cow.DeleteMode = DeleteModeCopyOnWrite
	s2 := e.open(cow)
	e.epoch(s2, 5, batch(t, row{Op: "D", ID: 2}))
	res = e.epoch(s2, 6, batch(t, row{Op: "U", ID: 1, Amount: 100}))
	adds, _ = commitActions(t, e.dir, res.Version)
	for _, a := range adds {
		if a.DeletionVector != nil {
			t.Fatalf("copy_on_write wrote a DV: %+v", a)
		}
	}
	if diff := cmp.Diff([]row{{ID: 1, Amount: 100}, {ID: 6, Amount: 6}}, e.rows()); diff != "" {
		t.Fatalf("rows after copy-on-write (-want +got):\n%s", diff)
	}
}

// A copy-on-write upsert into a file another writer gave a DV drops the
// rows the DV deleted: none comes back.
func TestCopyOnWriteDropsRowsOfTheDV(t *testing.T) {
	e := newEnv(t)
	s := e.open(dvConfig(e, "orders"))
	e.epoch(s, 1, batch(t, row{ID: 1, Amount: 1}, row{ID: 2, Amount: 2}, row{ID: 3, Amount: 3}))
	e.epoch(s, 2, batch(t, row{Op: "D", ID: 2}))
	s.Close()
	cow := dvConfig(e, "orders")
	cow.DeleteMode = DeleteModeCopyOnWrite
	s = e.open(cow)
	e.epoch(s, 3, batch(t, row{Op: "U", ID: 3, Amount: 30}))
	if diff := cmp.Diff([]row{{ID: 1, Amount: 1}, {ID: 3, Amount: 30}}, e.rows()); diff != "" {
		t.Fatalf("rows (-want +got):\n%s", diff)
	}
}

// delete_mode = 'deletion_vectors' on a table without the feature is
// refused by name when the sink opens; the default falls back to
// copy-on-write.
func TestDeleteModeNeedsTheFeature(t *testing.T) {
	e := newEnv(t)
	cfg := e.config("orders")
	cfg.Mode, cfg.Key = ModeUpsert, []string{"id"}
	s := e.open(cfg)
	e.epoch(s, 1, batch(t, row{ID: 1, Amount: 1}, row{ID: 2, Amount: 2}))
	e.epoch(s, 2, batch(t, row{Op: "D", ID: 1}))
	if diff := cmp.Diff([]row{{ID: 2, Amount: 2}}, e.rows()); diff != "" {
		t.Fatalf("rows (-want +got):\n%s", diff)
	}
	s.Close()
	cfg.DeleteMode = DeleteModeDeletionVectors
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Open(context.Background())
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "delete_mode") {
		t.Fatalf("got %v, want ErrConfig naming delete_mode", err)
	}
	bad := e.config("orders")
	bad.DeleteMode = "merge_on_read"
	if _, err = New(bad); !errors.Is(err, ErrConfig) {
		t.Fatalf("an unknown delete mode: %v", err)
	}
}

// Two writers delete rows of the same file: the one that commits second
// finds the file's DV changed, redoes its merge on the new table, and both
// deletes hold (Delta: a concurrent DV on the file is a conflict).
func TestDeletionVectorConcurrentDeletes(t *testing.T) {
	e := newEnv(t)
	a := e.open(dvConfig(e, "a"))
	e.epoch(a, 1, batch(t, row{ID: 1, Amount: 1}, row{ID: 2, Amount: 2}, row{ID: 3, Amount: 3}, row{ID: 4, Amount: 4}))
	cfgB := dvConfig(e, "b")
	cfgB.WriterID = "lakesql-b"
	b := e.open(cfgB)
	precommit(t, a, 2, batch(t, row{Op: "D", ID: 1}, row{Op: "U", ID: 4, Amount: 40}))
	e.epoch(b, 1, batch(t, row{Op: "D", ID: 2}))
	if _, err := a.CommitEpoch(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]row{{ID: 3, Amount: 3}, {ID: 4, Amount: 40}}, e.rows()); diff != "" {
		t.Fatalf("rows (-want +got):\n%s", diff)
	}
	if n := a.counters.conflicts.Load(); n < 1 {
		t.Fatalf("%d conflicts counted; the second commit must have redone its merge", n)
	}
	snap := latestSnapshot(t, e.dir)
	for _, f := range snap.Files() {
		if f.DeletionVector != nil {
			if got := dvRows(t, e.dir, f.DeletionVector); !cmp.Equal(got, []uint64{0, 1, 3}) {
				t.Fatalf("DV rows %v, want [0 1 3] (ids 1, 2 and the old 4)", got)
			}
		}
	}
}

// A staged DV that is never committed is deleted with the epoch's files:
// nothing of it stays behind.
func TestDeletionVectorRollbackDeletesTheFile(t *testing.T) {
	e := newEnv(t)
	s := e.open(dvConfig(e, "orders"))
	e.epoch(s, 1, batch(t, row{ID: 1, Amount: 1}, row{ID: 2, Amount: 2}))
	precommit(t, s, 2, batch(t, row{Op: "D", ID: 1}))
	if got := dvFiles(t, e.dir); len(got) != 1 {
		t.Fatalf("%d DV files staged, want 1", len(got))
	}
	if err := s.RollbackEpoch(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	if got := dvFiles(t, e.dir); len(got) != 0 {
		t.Fatalf("DV files %v left after rollback", got)
	}
	if diff := cmp.Diff([]row{{ID: 1, Amount: 1}, {ID: 2, Amount: 2}}, e.rows()); diff != "" {
		t.Fatalf("rows (-want +got):\n%s", diff)
	}
}

// The kernel's table with a DV written by Databricks: an upsert and a
// delete merge with its DV, and our rows match what the table says.
func TestDeletionVectorKernelTableUpsert(t *testing.T) {
	src := filepath.Join("..", "..", "shared", "testdata", "delta", "kernel", "table-with-dv-small")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("SKIPPED LOUDLY: shared test data missing: %v", err)
	}
	e := newEnv(t)
	if err := os.CopyFS(e.dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	cfg := e.config("kernel")
	cfg.Schema = nil
	cfg.Mode, cfg.Key = ModeUpsert, []string{"value"}
	s := e.open(cfg)
	ctx := context.Background()
	if err := s.BeginEpoch(ctx, 1); err != nil {
		t.Fatal(err)
	}
	rec := valueBatch(t, []string{"D", "D", "U"}, []int32{3, 0, 5})
	if err := s.Write(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if err := s.PreCommit(ctx, 1); err != nil {
		t.Fatal(err)
	}
	res, err := s.CommitEpoch(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	adds, removes := commitActions(t, e.dir, res.Version)
	if len(removes) != 1 || removes[0].DeletionVector == nil || removes[0].DeletionVector.PathOrInlineDv != "vBn[lx{q8@P<9BNH/isA" {
		t.Fatalf("the remove must carry Databricks' DV: %+v", removes)
	}
	found := false
	for _, a := range adds {
		if a.DeletionVector != nil {
			found = true
			if got := dvRows(t, e.dir, a.DeletionVector); !cmp.Equal(got, []uint64{0, 3, 5, 9}) {
				t.Fatalf("DV rows %v, want [0 3 5 9]", got)
			}
		}
	}
	if !found {
		t.Fatal("no add with a DV")
	}
	q, err := e.provider.(catalogadapter.Scanner).ScanSQL(ctx, e.table, e.db, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := e.db.QueryContext(ctx, "SELECT value FROM ("+q+") ORDER BY value")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var got []int32
	for rs.Next() {
		var v int32
		if err := rs.Scan(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if diff := cmp.Diff([]int32{1, 2, 4, 5, 6, 7, 8}, got); diff != "" {
		t.Fatalf("values (-want +got):\n%s", diff)
	}
}

// valueBatch is a changelog batch of the kernel table's one int column.
func valueBatch(t *testing.T, ops []string, values []int32) arrow.RecordBatch {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: OpColumn, Type: arrow.BinaryTypes.String},
		{Name: "value", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues(ops, nil)
	b.Field(1).(*array.Int32Builder).AppendValues(values, nil)
	rec := b.NewRecordBatch()
	t.Cleanup(rec.Release)
	return rec
}

func dvFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "deletion_vector_") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func latestSnapshot(t *testing.T, dir string) *delta.Snapshot {
	t.Helper()
	store, err := delta.NewLocalStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := delta.OpenTable(store, delta.TableOptions{}).Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return snap
}
