package sqlsink

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// noteBatch is an orders batch with a note column the table may lack.
func noteBatch(t testing.TB, id int64, note string) arrow.RecordBatch {
	t.Helper()
	schema := arrow.NewSchema(append(orderSchema.Fields(), arrow.Field{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true}), nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(id)
	b.Field(1).(*array.Float64Builder).Append(float64(id))
	b.Field(2).(*array.StringBuilder).Append("eu")
	b.Field(3).(*array.StringBuilder).Append(note)
	rec := b.NewRecordBatch()
	t.Cleanup(rec.Release)
	return rec
}

// notes reads id and note of the table, note "NULL" when null.
func (e *env) notes() [][2]string {
	e.t.Helper()
	ctx := context.Background()
	q, err := e.provider.(catalogadapter.Scanner).ScanSQL(ctx, e.table, e.db, -1, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	rs, err := e.db.QueryContext(ctx, "SELECT id::VARCHAR, coalesce(note, 'NULL') FROM ("+q+") ORDER BY id")
	if err != nil {
		e.t.Fatal(err)
	}
	defer rs.Close()
	var out [][2]string
	for rs.Next() {
		var r [2]string
		if err := rs.Scan(&r[0], &r[1]); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func addNoteColumn() SchemaChange {
	return SchemaChange{Kind: catalogadapter.AddColumn, Column: "note", Type: arrow.BinaryTypes.String}
}

// entryKinds lists the actions of a Delta log entry.
func entryKinds(t *testing.T, dir string, version int64) []string {
	t.Helper()
	store, err := delta.NewLocalStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	actions, err := delta.OpenTable(store, delta.TableOptions{}).ReadCommit(context.Background(), version)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range actions {
		switch {
		case a.MetaData != nil:
			out = append(out, "metaData")
		case a.Add != nil:
			out = append(out, "add")
		case a.Txn != nil:
			out = append(out, "txn")
		case a.Protocol != nil:
			out = append(out, "protocol")
		}
	}
	return out
}

func TestAlterSchemaBetweenEpochs(t *testing.T) {
	e := newEnv(t)
	s := e.open(e.config("alter"))
	ctx := context.Background()
	e.epoch(s, 1, batch(t, row{ID: 1, Amount: 1, Region: "eu"}))
	if err := s.BeginEpoch(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.AlterSchema(ctx, []SchemaChange{addNoteColumn()}); !errors.Is(err, ErrEpochOpen) {
		t.Fatalf("want ErrEpochOpen while epoch 2 is open, got %v", err)
	}
	if err := s.RollbackEpoch(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.AlterSchema(ctx, []SchemaChange{addNoteColumn()}); err != nil {
		t.Fatal(err)
	}
	if idx := s.Schema().FieldIndices("note"); len(idx) != 1 {
		t.Fatalf("Schema() must report the new column: %v", s.Schema())
	}
	res := e.epoch(s, 3, noteBatch(t, 2, "hi"))
	if res.Version != 3 {
		t.Fatalf("create, epoch 1, ALTER, epoch 3: version %d", res.Version)
	}
	if diff := cmp.Diff([][2]string{{"1", "NULL"}, {"2", "hi"}}, e.notes()); diff != "" {
		t.Fatal(diff)
	}
	// A key column stays.
	up := e.config("alter-up")
	up.Mode, up.Key, up.WriterID = ModeUpsert, []string{"id"}, "up"
	up.Schema = nil
	su := e.open(up)
	if err := su.AlterSchema(ctx, []SchemaChange{{Kind: catalogadapter.DropColumn, Column: "id"}}); !errors.Is(err, ErrSchemaChange) {
		t.Fatalf("dropping the key: %v", err)
	}
}

func TestAutoEvolutionAddsColumnsInTheDataCommit(t *testing.T) {
	e := newEnv(t)
	cfg := e.config("auto")
	cfg.SchemaEvolution = EvolveAddColumns
	s := e.open(cfg)
	e.epoch(s, 1, batch(t, row{ID: 1, Amount: 1, Region: "eu"}))
	res := e.epoch(s, 2, batch(t, row{ID: 2, Amount: 2, Region: "eu"}), noteBatch(t, 3, "new"))
	if res.Version != 2 {
		t.Fatalf("the new column and its rows are one version: got %d", res.Version)
	}
	if diff := cmp.Diff([]string{"metaData", "txn", "add"}, entryKinds(t, e.dir, 2)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if len(s.Schema().FieldIndices("note")) != 1 {
		t.Fatal("Schema() must report the new column after the commit")
	}
	if diff := cmp.Diff([][2]string{{"1", "NULL"}, {"2", "NULL"}, {"3", "new"}}, e.notes()); diff != "" {
		t.Fatal(diff)
	}
	// Rolled back, the evolution leaves nothing.
	ctx := context.Background()
	if err := s.BeginEpoch(ctx, 3); err != nil {
		t.Fatal(err)
	}
	other := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "extra", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)
	ob := array.NewRecordBuilder(memory.DefaultAllocator, other)
	ob.Field(0).(*array.Int64Builder).Append(9)
	ob.Field(1).(*array.Int32Builder).Append(9)
	rec := ob.NewRecordBatch()
	ob.Release()
	defer rec.Release()
	if err := s.Write(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if err := s.RollbackEpoch(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if len(s.Schema().FieldIndices("extra")) != 0 {
		t.Fatal("a rolled-back epoch must not change the schema")
	}
	e.epoch(s, 4, batch(t, row{ID: 4, Amount: 4, Region: "eu"}))
	spec, err := e.provider.TableSpec(ctx, e.table)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Schema.NumFields() != 4 {
		t.Fatalf("the table must not have the rolled-back column: %v", spec.Schema)
	}

	// Without the option, such a batch is refused as before.
	plain := e.config("plain")
	plain.WriterID, plain.Schema = "plain", nil
	p := e.open(plain)
	if err := p.BeginEpoch(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := p.Write(ctx, rec); !errors.Is(err, ErrBadRow) {
		t.Fatalf("want ErrBadRow for an unknown column, got %v", err)
	}
}

// Two sinks on one table: one alters while the other has an epoch
// staged. The staged files fit the new schema and land; an upsert, which
// read the table, redoes its merge on the new schema.
func TestAlterSchemaConcurrentWithAnotherSink(t *testing.T) {
	for _, mode := range []Mode{ModeAppend, ModeUpsert} {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			a := e.open(writerConfig(e, "a", "a", nil, mode))
			e.epoch(a, 1, batch(t, row{ID: 1, Amount: 1, Region: "eu"}))
			bcfg := writerConfig(e, "b", "b", secondProvider(t), ModeAppend)
			bcfg.Schema = nil
			b := e.open(bcfg)

			precommit(t, a, 2, batch(t, row{ID: 1, Amount: 10, Region: "us"}, row{ID: 2, Amount: 2, Region: "eu"}))
			if err := b.AlterSchema(ctx, []SchemaChange{addNoteColumn()}); err != nil {
				t.Fatal(err)
			}
			res, err := a.CommitEpoch(ctx, 2)
			if err != nil {
				t.Fatal(err)
			}
			if res.Version != 3 {
				t.Fatalf("a's epoch lands after the ALTER: version %d", res.Version)
			}
			want := []row{{ID: 1, Amount: 1, Region: "eu"}, {ID: 1, Amount: 10, Region: "us"}, {ID: 2, Amount: 2, Region: "eu"}}
			if mode == ModeUpsert {
				want = []row{{ID: 1, Amount: 10, Region: "us"}, {ID: 2, Amount: 2, Region: "eu"}}
			}
			if diff := cmp.Diff(want, e.rows()); diff != "" {
				t.Fatal(diff)
			}
			if got := e.notes(); len(got) == 0 || got[0][1] != "NULL" {
				t.Fatalf("notes %v", got)
			}
		})
	}
}

// A backend without schema evolution refuses ALTER by name.
func TestAlterSchemaUnsupportedBackend(t *testing.T) {
	e := newLakeEnv(t, icebergLake)
	s := e.open(e.config("ice"))
	if _, ok := e.provider.(catalogadapter.SchemaEvolver); ok {
		t.Skip("SKIPPING: the Iceberg backend evolves schemas now; its end-to-end test covers it")
	}
	err := s.AlterSchema(context.Background(), []SchemaChange{addNoteColumn()})
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("want ErrUnsupported, got %v", err)
	}
}

// An upsert epoch that adds a column rewrites the files holding its keys:
// their other rows read NULL in the new column (old files lack it), and
// the new column lands in the epoch's version, in either delete mode.
func TestAutoEvolutionInAnUpsert(t *testing.T) {
	for _, mode := range []DeleteMode{DeleteModeCopyOnWrite, DeleteModeDeletionVectors} {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnv(t)
			cfg := dvConfig(e, "auto-up")
			cfg.SchemaEvolution, cfg.DeleteMode = EvolveAddColumns, mode
			s := e.open(cfg)
			e.epoch(s, 1, batch(t, row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 2, Region: "eu"}))
			if res := e.epoch(s, 2, noteBatch(t, 2, "new"), noteBatch(t, 3, "three")); res.Version != 2 {
				t.Fatalf("the new column and its rows are one version: got %d", res.Version)
			}
			if diff := cmp.Diff([][2]string{{"1", "NULL"}, {"2", "new"}, {"3", "three"}}, e.notes()); diff != "" {
				t.Fatal(diff)
			}
		})
	}
}
