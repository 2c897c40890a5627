package sqlsink

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// wantErr fails unless err wraps want and its text holds each of names.
func wantErr(t testing.TB, what string, err, want error, names ...string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: want %v, got %v", what, want, err)
	}
	for _, n := range names {
		if !strings.Contains(err.Error(), n) {
			t.Fatalf("%s: the error does not name %q: %v", what, n, err)
		}
	}
}

func localStore(t testing.TB, dir string) delta.Storage {
	t.Helper()
	store, err := delta.NewLocalStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// lastMetadata reads the table's protocol and metaData as its log ends.
func lastMetadata(t testing.TB, dir string) (delta.Protocol, delta.Metadata) {
	t.Helper()
	snap, err := delta.NewTable(localStore(t, dir)).Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return snap.Protocol, snap.Metadata
}

// TestCheckConstraintRefusesBatch: ADD CONSTRAINT records the constraint
// as Spark spells it (delta.constraints.<name>, writer 3); then a batch
// with a row where it is false or NULL is refused whole, naming it and
// the row, and the epoch goes on with the batches it had.
func TestCheckConstraintRefusesBatch(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	s := e.open(e.config("c"))
	e.epoch(s, 1, batch(t, row{ID: 1, Amount: 5, Region: "eu"}))
	if err := s.AddConstraint(ctx, "Positive", "amount > 0 AND region IS NOT NULL"); err != nil {
		t.Fatal(err)
	}
	proto, md := lastMetadata(t, e.dir)
	if got := md.Configuration["delta.constraints.positive"]; got != "amount > 0 AND region IS NOT NULL" {
		t.Fatalf("configuration %v", md.Configuration)
	}
	if proto.MinWriterVersion != 3 {
		t.Fatalf("protocol %+v, want writer 3", proto)
	}
	if err := s.BeginEpoch(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, batch(t, row{ID: 2, Amount: 1, Region: "us"})); err != nil {
		t.Fatal(err)
	}
	err := s.Write(ctx, batch(t, row{ID: 3, Amount: 2, Region: "x"}, row{ID: 4, Amount: -1, Region: "x"}))
	wantErr(t, "negative amount", err, ErrCheckViolated, "'positive'", "amount = -1")
	wantErr(t, "NULL amount", s.Write(ctx, nullAmount(t, 5)), ErrCheckViolated, "'positive'", "amount = NULL")
	if err := s.Write(ctx, batch(t, row{ID: 6, Amount: 3, Region: "us"})); err != nil {
		t.Fatal(err)
	}
	if err := s.PreCommit(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitEpoch(ctx, 2); err != nil {
		t.Fatal(err)
	}
	want := []row{{ID: 1, Amount: 5, Region: "eu"}, {ID: 2, Amount: 1, Region: "us"}, {ID: 6, Amount: 3, Region: "us"}}
	if d := cmp.Diff(want, e.rows()); d != "" {
		t.Fatalf("rows (-want +got):\n%s", d)
	}

	// A sink opened later reads the constraint from the table.
	s.Close()
	s2 := e.open(e.config("c"))
	if err := s2.BeginEpoch(ctx, 3); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "after reopening", s2.Write(ctx, batch(t, row{ID: 7, Amount: 0, Region: "eu"})), ErrCheckViolated, "'positive'")
	if err := s2.RollbackEpoch(ctx, 3); err != nil {
		t.Fatal(err)
	}

	// Dropped, it no longer refuses; the protocol stays.
	if err := s2.DropConstraint(ctx, "positive", false); err != nil {
		t.Fatal(err)
	}
	if _, md := lastMetadata(t, e.dir); len(md.Constraints()) != 0 {
		t.Fatalf("constraints left: %v", md.Constraints())
	}
	e.epoch(s2, 4, batch(t, row{ID: 8, Amount: -8, Region: "eu"}))
}

// nullAmount is a batch of one row whose amount is NULL.
func nullAmount(t testing.TB, id int64) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, orderSchema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(id)
	b.Field(1).AppendNull()
	b.Field(2).(*array.StringBuilder).Append("eu")
	rec := b.NewRecordBatch()
	t.Cleanup(rec.Release)
	return rec
}

// TestAddConstraintRefusals: existing rows that break the constraint
// refuse it, naming a row, and leave the table as it was; so do a name
// taken, an expression outside the subset or over an unknown column,
// and an open epoch. DROP of an unknown constraint is ErrNoConstraint
// unless IF EXISTS.
func TestAddConstraintRefusals(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	s := e.open(e.config("c"))
	e.epoch(s, 1, batch(t, row{ID: 1, Amount: 5, Region: "eu"}, row{ID: 2, Amount: -5, Region: "eu"}))
	before := readDeltaLog(t, localStore(t, e.dir))

	wantErr(t, "existing row", s.AddConstraint(ctx, "pos", "amount > 0"), ErrCheckViolated, "pos", "existing row", "amount = -5")
	wantErr(t, "unknown column", s.AddConstraint(ctx, "c1", "nope > 0"), ErrUnsupported, "nope")
	wantErr(t, "outside the subset", s.AddConstraint(ctx, "c2", "rand() > 0"), ErrUnsupported, "rand")
	wantErr(t, "a statement", s.AddConstraint(ctx, "c3", "1 = 1); DROP TABLE buf; --"), ErrUnsupported)
	wantErr(t, "not boolean", s.AddConstraint(ctx, "c4", "amount + 1"), ErrInvalid, "BOOLEAN")
	wantErr(t, "bad name", s.AddConstraint(ctx, "a-b", "amount > -10"), ErrInvalid, "a-b")
	if after := readDeltaLog(t, localStore(t, e.dir)); len(after) != len(before) {
		t.Fatalf("a refused constraint wrote %d versions", len(after)-len(before))
	}

	if err := s.AddConstraint(ctx, "floor", "amount >= -5"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "duplicate", s.AddConstraint(ctx, "FLOOR", "amount > -9"), ErrConstraintExists, "FLOOR")
	wantErr(t, "drop unknown", s.DropConstraint(ctx, "nope", false), ErrNoConstraint, "nope")
	if err := s.DropConstraint(ctx, "nope", true); err != nil {
		t.Fatalf("DROP CONSTRAINT IF EXISTS: %v", err)
	}
	if err := s.BeginEpoch(ctx, 2); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "open epoch", s.AddConstraint(ctx, "x", "id > 0"), ErrWrongState, "epoch 2")
}

// TestConstraintAddedByAnotherWriter: a writer whose epoch was checked
// before another writer added a constraint cannot commit it (the rows
// were not checked against it): the commit is a conflict naming the
// change, every retry too; once rolled back, its next epoch is checked
// against the new constraint.
func TestConstraintAddedByAnotherWriter(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	a := e.open(e.config("a"))
	e.epoch(a, 1, batch(t, row{ID: 1, Amount: 5}))
	cfgB := e.config("b")
	cfgB.WriterID = "b"
	b := e.open(cfgB)
	precommit(t, b, 1, batch(t, row{ID: 2, Amount: -1}))
	if err := a.AddConstraint(ctx, "pos", "amount > 0"); err != nil {
		t.Fatal(err)
	}
	for try := 0; try < 2; try++ {
		_, err := b.CommitEpoch(ctx, 1)
		wantErr(t, "commit checked against old rules", err, ErrConflict, "constraints changed")
	}
	if err := b.RollbackEpoch(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := b.BeginEpoch(ctx, 1); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "next epoch", b.Write(ctx, batch(t, row{ID: 2, Amount: -1})), ErrCheckViolated, "pos")
	if err := b.Write(ctx, batch(t, row{ID: 3, Amount: 1})); err != nil {
		t.Fatal(err)
	}
	if err := b.PreCommit(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CommitEpoch(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]row{{ID: 1, Amount: 5}, {ID: 3, Amount: 1}}, e.rows()); d != "" {
		t.Fatalf("rows (-want +got):\n%s", d)
	}
}

// TestUpsertChecksUpsertsOnly: in upsert mode the rows upserted are
// checked, deletes are not (they carry only a key).
func TestUpsertChecksUpsertsOnly(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	cfg := e.config("u")
	cfg.Mode, cfg.Key = ModeUpsert, []string{"id"}
	s := e.open(cfg)
	e.epoch(s, 1, batch(t, row{ID: 1, Amount: 5, Region: "eu"}, row{ID: 2, Amount: 6, Region: "eu"}))
	if err := s.AddConstraint(ctx, "pos", "amount > 0"); err != nil {
		t.Fatal(err)
	}
	if err := s.BeginEpoch(ctx, 2); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "upsert", s.Write(ctx, batch(t, row{Op: "U", ID: 1, Amount: -1})), ErrCheckViolated, "pos")
	if err := s.Write(ctx, batch(t, row{Op: "D", ID: 2, Amount: -1}, row{Op: "U", ID: 1, Amount: 7, Region: "us"})); err != nil {
		t.Fatal(err)
	}
	if err := s.PreCommit(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitEpoch(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]row{{ID: 1, Amount: 7, Region: "us"}}, e.rows()); d != "" {
		t.Fatalf("rows (-want +got):\n%s", d)
	}
}

// TestIcebergHasNoConstraints: Iceberg keeps no CHECK constraints, and
// says so by name.
func TestIcebergHasNoConstraints(t *testing.T) {
	e := newLakeEnv(t, icebergLake)
	s := e.open(e.config("i"))
	wantErr(t, "iceberg", s.AddConstraint(context.Background(), "pos", "amount > 0"), ErrUnsupported, "Iceberg")
	wantErr(t, "iceberg", s.DropConstraint(context.Background(), "pos", true), ErrUnsupported, "Iceberg")
}

// sparkTable writes version 0 of a Delta table as Spark would: protocol,
// and a metaData whose schema carries column metadata.
func sparkTable(t testing.TB, dir string, proto delta.Protocol, fields []map[string]any, conf map[string]string) {
	t.Helper()
	schema, err := json.Marshal(map[string]any{"type": "struct", "fields": fields})
	if err != nil {
		t.Fatal(err)
	}
	data, err := delta.EncodeActions([]delta.Action{
		{Protocol: &proto},
		{MetaData: &delta.Metadata{ID: "0b6f1d2c-1111-4a2b-9c3d-5e6f7a8b9c0d", Format: delta.Format{Provider: "parquet"},
			SchemaString: string(schema), PartitionColumns: []string{}, Configuration: conf}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "_delta_log", "00000000000000000000.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func field(name, typ string, nullable bool, meta map[string]any) map[string]any {
	if meta == nil {
		meta = map[string]any{}
	}
	return map[string]any{"name": name, "type": typ, "nullable": nullable, "metadata": meta}
}

// genBatch is a batch of (id, amount[, twice]); twice < -1e9 leaves the
// value NULL, and withTwice false leaves the column out.
func genBatch(t testing.TB, withTwice bool, rows ...[3]float64) arrow.RecordBatch {
	t.Helper()
	fields := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}
	if withTwice {
		fields = append(fields, arrow.Field{Name: "twice", Type: arrow.PrimitiveTypes.Float64, Nullable: true})
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(r[0]))
		b.Field(1).(*array.Float64Builder).Append(r[1])
		if withTwice {
			if r[2] < -1e9 {
				b.Field(2).AppendNull()
			} else {
				b.Field(2).(*array.Float64Builder).Append(r[2])
			}
		}
	}
	rec := b.NewRecordBatch()
	t.Cleanup(rec.Release)
	return rec
}

// TestGeneratedColumnsAndInvariants: on a table Spark made (writer 4, a
// generated column, a column invariant, a CHECK constraint), a row
// without the generated value gets it computed, one giving the right
// value is taken, and one giving another is refused naming the column;
// the invariant and the constraint refuse what breaks them.
func TestGeneratedColumnsAndInvariants(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	sparkTable(t, e.table.Name, delta.Protocol{MinReaderVersion: 1, MinWriterVersion: 4}, []map[string]any{
		field("id", "long", false, map[string]any{"delta.invariants": `{"expression":{"expression":"id < 1000"}}`}),
		field("amount", "double", true, nil),
		field("twice", "double", false, map[string]any{"delta.generationExpression": "amount * 2"}),
	}, map[string]string{"delta.constraints.small": "twice < 100"})
	cfg := e.config("g")
	cfg.Schema = nil
	s := e.open(cfg)
	if err := s.BeginEpoch(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for _, ok := range []arrow.RecordBatch{
		genBatch(t, false, [3]float64{1, 1.5}),
		genBatch(t, true, [3]float64{2, 2, 4}, [3]float64{3, 3, -2e9}),
	} {
		if err := s.Write(ctx, ok); err != nil {
			t.Fatal(err)
		}
	}
	wantErr(t, "wrong generated value", s.Write(ctx, genBatch(t, true, [3]float64{4, 4, 9})), ErrGeneratedValue, "twice", "amount * 2")
	wantErr(t, "generated value NULL in a NOT NULL column", s.Write(ctx, nullAmountGen(t, 5)), ErrBadRow, "twice")
	wantErr(t, "invariant", s.Write(ctx, genBatch(t, false, [3]float64{1000, 1})), ErrCheckViolated, "invariant on id", "id = 1000")
	wantErr(t, "constraint over the generated column", s.Write(ctx, genBatch(t, false, [3]float64{6, 50})), ErrCheckViolated, "small", "twice = 100")
	if err := s.PreCommit(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitEpoch(ctx, 1); err != nil {
		t.Fatal(err)
	}
	q, err := e.provider.(catalogadapter.Scanner).ScanSQL(ctx, e.table, e.db, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := e.db.QueryContext(ctx, "SELECT id, amount, twice FROM ("+q+") ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var got [][3]float64
	for rs.Next() {
		var r [3]float64
		if err := rs.Scan(&r[0], &r[1], &r[2]); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if d := cmp.Diff([][3]float64{{1, 1.5, 3}, {2, 2, 4}, {3, 3, 6}}, got); d != "" {
		t.Fatalf("rows (-want +got):\n%s", d)
	}
	if proto, _ := lastMetadata(t, e.dir); proto.MinWriterVersion != 4 {
		t.Fatalf("the protocol changed: %+v", proto)
	}
}

func nullAmountGen(t testing.TB, id int64) arrow.RecordBatch {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(id)
	b.Field(1).AppendNull()
	rec := b.NewRecordBatch()
	t.Cleanup(rec.Release)
	return rec
}

// TestRulesOutsideTheSubsetRefuseTheTable: a table whose constraint or
// generation expression sparkexpr does not translate, or DuckDB does not
// bind, is refused at open, naming it.
func TestRulesOutsideTheSubsetRefuseTheTable(t *testing.T) {
	for _, c := range []struct {
		name  string
		proto delta.Protocol
		conf  map[string]string
		want  []string
	}{
		{"function", delta.Protocol{MinReaderVersion: 1, MinWriterVersion: 3}, map[string]string{"delta.constraints.r": "rand() < 2"}, []string{"CHECK constraint r", "rand"}},
		{"not boolean", delta.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"checkConstraints"}},
			map[string]string{"delta.constraints.n": "amount + 1"}, []string{"CHECK constraint n", "BOOLEAN"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			sparkTable(t, e.table.Name, c.proto, []map[string]any{field("id", "long", false, nil), field("amount", "double", true, nil)}, c.conf)
			cfg := e.config("r")
			cfg.Schema = nil
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Open(context.Background()); !errors.Is(err, ErrUnsupported) {
				t.Fatalf("want ErrUnsupported, got %v", err)
			} else {
				for _, w := range c.want {
					if !strings.Contains(err.Error(), w) {
						t.Fatalf("the error does not name %q: %v", w, err)
					}
				}
			}
		})
	}
}

// TestIdentityColumnsRefused: identity columns (writer 6, or the
// identityColumns feature) are not allocated, so such a table refuses
// the epoch, naming the feature, and stays as it was.
func TestIdentityColumnsRefused(t *testing.T) {
	ctx := context.Background()
	for _, proto := range []delta.Protocol{
		{MinReaderVersion: 1, MinWriterVersion: 6},
		{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"identityColumns"}},
	} {
		e := newEnv(t)
		sparkTable(t, e.table.Name, proto, []map[string]any{
			field("id", "long", false, map[string]any{"delta.identity.start": 1, "delta.identity.step": 1, "delta.identity.allowExplicitInsert": false}),
			field("amount", "double", true, nil)}, map[string]string{})
		cfg := e.config("r")
		cfg.Schema = nil
		s := e.open(cfg)
		if err := s.BeginEpoch(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if err := s.Write(ctx, genBatch(t, false, [3]float64{1, 1})); err != nil {
			t.Fatal(err)
		}
		wantErr(t, "identity", s.PreCommit(ctx, 1), ErrUnsupported, "identityColumns")
		if n := len(readDeltaLog(t, localStore(t, e.dir))); n != 1 {
			t.Fatalf("%d versions, want 1", n)
		}
	}
}
