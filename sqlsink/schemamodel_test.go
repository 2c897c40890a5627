package sqlsink

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
)

// The schema model test: an append sink and an upsert sink (changelog
// deletes included) share one table, and random steps interleave their
// epochs with schema changes (ADD of columns of several types, widening,
// RENAME and DROP where the format allows them, and changes the format
// refuses), reopens and replays. A plain Go model holds the columns, each
// with an identity that survives renames, and the rows by key. After
// every step the table equals the model, read with the provider's scan
// and with the format's own reader, names and values; every writer's last
// epoch is recorded (LastEpoch), and a replay of it is skipped.

var (
	schemaSeed  = flag.Uint64("schema.seed", 0, "TestSchemaModel: the random seed run after the fixed ones (0: from the clock)")
	schemaSeeds = flag.Int("schema.seeds", 1, "TestSchemaModel: how many random seeds after the fixed ones")
	schemaSteps = flag.Int("schema.steps", 24, "TestSchemaModel: steps per run")
)

// scKind is a column type the model writes and reads back exactly.
type scKind int

const (
	scInt scKind = iota
	scLong
	scFloat
	scDouble
	scString
)

func (k scKind) arrow() arrow.DataType {
	return []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String}[k]
}

// scCol is a column of the model: ident stays through renames and
// widenings, so rows keep their values; a dropped column's ident is gone
// for good (a column added later under its name is another one).
type scCol struct {
	ident int
	name  string
	kind  scKind
}

type schemaModel struct {
	cols []scCol
	rows map[int64]map[int]any // key -> ident -> value (absent: NULL)
}

// header spells the model's columns as specColumns does.
func (m *schemaModel) header() string {
	var parts []string
	for _, c := range m.cols {
		parts = append(parts, c.name+":"+c.kind.arrow().String())
	}
	return strings.Join(parts, ",")
}

func (m *schemaModel) names() []string {
	var out []string
	for _, c := range m.cols {
		out = append(out, c.name)
	}
	return out
}

func scCell(k scKind, v any) string {
	if v == nil {
		return "NULL"
	}
	switch k {
	case scFloat, scDouble:
		return fmt.Sprint(v.(float64))
	case scString:
		return v.(string)
	}
	return strconv.FormatInt(v.(int64), 10)
}

// table is the model's rows as the readers spell them, sorted.
func (m *schemaModel) table() []string {
	out := []string{}
	for id, vals := range m.rows {
		parts := make([]string, len(m.cols))
		for i, c := range m.cols {
			v := vals[c.ident]
			if c.ident == 0 {
				v = id
			}
			parts[i] = scCell(c.kind, v)
		}
		out = append(out, strings.Join(parts, "|"))
	}
	sort.Strings(out)
	return out
}

type scWriter struct {
	name string
	mode Mode
	s    *Sink
	last int64
}

type schemaRun struct {
	t       *testing.T
	e       *env
	l       lake
	seed    uint64
	rng     *rand.Rand
	model   *schemaModel
	app     *scWriter
	ups     *scWriter
	log     []string
	nextID  int64
	nextCol int
	counts  map[string]int
}

func TestSchemaModel(t *testing.T) {
	extra := *schemaSeed
	if extra == 0 {
		extra = uint64(time.Now().UnixNano())
	}
	seeds := []uint64{1, 2}
	for i := 0; i < *schemaSeeds; i++ {
		seeds = append(seeds, extra+uint64(i))
	}
	t.Logf("seeds %v (rerun the random ones with -schema.seed=%d -schema.seeds=%d; longer with -schema.steps)", seeds, extra, *schemaSeeds)
	for _, l := range lakes {
		t.Run(l.name, func(t *testing.T) {
			for _, seed := range seeds {
				t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
					runSchemaModel(t, l, seed, *schemaSteps)
				})
			}
		})
	}
}

// scRenames tells whether the lake renames and drops columns (Delta:
// only with column mapping, which smTableProperties turns on).
func scRenames(l lake) bool { return l.name != deltaLake.name || acDeltaColumnMapping }

func runSchemaModel(t *testing.T, l lake, seed uint64, steps int) {
	e := newLakeEnv(t, l)
	if _, ok := e.provider.(catalogadapter.SchemaEvolver); !ok {
		t.Fatalf("the %s provider does not change schemas", l.name)
	}
	r := &schemaRun{t: t, e: e, l: l, seed: seed, rng: rand.New(rand.NewPCG(seed, 0x736368656d61)),
		model: &schemaModel{cols: []scCol{{0, "id", scLong}, {1, "amount", scDouble}, {2, "region", scString}},
			rows: map[int64]map[int]any{}},
		nextID: 1000, nextCol: 3, counts: map[string]int{}}
	base := e.config("base")
	base.TableProperties = acTableProperties(l)
	r.open(base).Close() // creates the table
	r.app = &scWriter{name: "append", mode: ModeAppend}
	r.ups = &scWriter{name: "upsert", mode: ModeUpsert}
	r.reopen(r.app)
	r.reopen(r.ups)
	r.check("start")
	for i := 0; i < steps; i++ {
		switch n := r.rng.IntN(20); {
		case n < 5:
			r.appendEpoch()
		case n < 10:
			r.upsertEpoch()
		case n < 17:
			r.alter()
		case n < 18:
			r.refused()
		case n < 19:
			r.replay()
		default:
			r.reopen(r.app)
			r.reopen(r.ups)
			r.note("reopen")
		}
		r.check(fmt.Sprintf("step %d (%s)", i, r.log[len(r.log)-1]))
	}
	t.Logf("seed %d: %d steps %v; columns %s, %d rows", seed, steps, r.counts, r.model.header(), len(r.model.rows))
}

func (r *schemaRun) fatalf(format string, args ...any) {
	r.t.Helper()
	r.t.Fatalf("seed %d: %s\nsteps:\n%s", r.seed, fmt.Sprintf(format, args...), strings.Join(r.log, "\n"))
}

func (r *schemaRun) note(format string, args ...any) {
	r.log = append(r.log, fmt.Sprintf(format, args...))
	r.counts[strings.Fields(r.log[len(r.log)-1])[0]]++
}

func (r *schemaRun) open(cfg Config) *Sink {
	r.t.Helper()
	s, err := New(cfg)
	if err != nil {
		r.fatalf("new %s: %v", cfg.Name, err)
	}
	if err := s.Open(context.Background()); err != nil {
		r.fatalf("open %s: %v", cfg.Name, err)
	}
	r.t.Cleanup(func() { s.Close() })
	return s
}

// reopen opens w's sink afresh, taking the table's current schema.
func (r *schemaRun) reopen(w *scWriter) {
	if w.s != nil {
		if err := w.s.Close(); err != nil {
			r.fatalf("close %s: %v", w.name, err)
		}
	}
	cfg := r.e.config(w.name)
	cfg.WriterID, cfg.Mode = w.name, w.mode
	if w.mode == ModeUpsert {
		cfg.Key = []string{"id"}
	}
	cfg.Schema = nil // the table's
	w.s = r.open(cfg)
	if got := w.s.Schema(); got == nil || len(got.Fields()) != len(r.model.cols) {
		r.fatalf("%s reopened with schema %v, the model has %s", w.name, got, r.model.header())
	}
}

// value is a random value of kind k (exact in every reader).
func (r *schemaRun) value(k scKind) any {
	if r.rng.IntN(6) == 0 {
		return nil
	}
	switch k {
	case scInt, scLong:
		return int64(r.rng.IntN(2000) - 1000)
	case scFloat, scDouble:
		return float64(r.rng.IntN(200)) + 0.5
	}
	return fmt.Sprintf("s%d", r.rng.IntN(100))
}

// batch builds a batch of rows (key -> ident -> value) under the model's
// columns, with _op when ops is not nil.
func (r *schemaRun) batch(keys []int64, vals []map[int]any, ops []string) arrow.RecordBatch {
	var fields []arrow.Field
	if ops != nil {
		fields = append(fields, arrow.Field{Name: OpColumn, Type: arrow.BinaryTypes.String})
	}
	for _, c := range r.model.cols {
		fields = append(fields, arrow.Field{Name: c.name, Type: c.kind.arrow(), Nullable: c.ident != 0})
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for i, k := range keys {
		j := 0
		if ops != nil {
			b.Field(0).(*array.StringBuilder).Append(ops[i])
			j = 1
		}
		for ci, c := range r.model.cols {
			fb := b.Field(j + ci)
			v := vals[i][c.ident]
			if c.ident == 0 {
				v = k
			}
			if v == nil {
				fb.AppendNull()
				continue
			}
			switch c.kind {
			case scInt:
				fb.(*array.Int32Builder).Append(int32(v.(int64)))
			case scLong:
				fb.(*array.Int64Builder).Append(v.(int64))
			case scFloat:
				fb.(*array.Float32Builder).Append(float32(v.(float64)))
			case scDouble:
				fb.(*array.Float64Builder).Append(v.(float64))
			case scString:
				fb.(*array.StringBuilder).Append(v.(string))
			}
		}
	}
	rec := b.NewRecordBatch()
	r.t.Cleanup(rec.Release)
	return rec
}

func (r *schemaRun) randomRow() map[int]any {
	vals := map[int]any{}
	for _, c := range r.model.cols {
		if c.ident != 0 {
			if v := r.value(c.kind); v != nil {
				vals[c.ident] = v
			}
		}
	}
	return vals
}

func (r *schemaRun) commit(w *scWriter, b arrow.RecordBatch) {
	r.t.Helper()
	w.last++
	res, err := commitEpoch(w.s, w.last, b)
	if err != nil {
		r.fatalf("%s epoch %d: %v", w.name, w.last, err)
	}
	if res.Skipped {
		r.fatalf("%s epoch %d was skipped", w.name, w.last)
	}
}

func commitEpoch(s *Sink, n int64, batches ...arrow.RecordBatch) (CommitResult, error) {
	ctx := context.Background()
	if err := s.BeginEpoch(ctx, n); err != nil {
		return CommitResult{}, err
	}
	for _, b := range batches {
		if err := s.Write(ctx, b); err != nil {
			return CommitResult{}, err
		}
	}
	if err := s.PreCommit(ctx, n); err != nil {
		return CommitResult{}, err
	}
	return s.CommitEpoch(ctx, n)
}

// appendEpoch appends 1..4 new rows.
func (r *schemaRun) appendEpoch() {
	var keys []int64
	var vals []map[int]any
	for i := 0; i <= r.rng.IntN(4); i++ {
		keys = append(keys, r.nextID)
		vals = append(vals, r.randomRow())
		r.nextID++
	}
	r.commit(r.app, r.batch(keys, vals, nil))
	for i, k := range keys {
		r.model.rows[k] = vals[i]
	}
	r.note("append %d rows (epoch %d)", len(keys), r.app.last)
}

// upsertEpoch upserts old and new keys and deletes some, one change per
// key (the upsert model test covers several per key).
func (r *schemaRun) upsertEpoch() {
	live := slices.Sorted(func(yield func(int64) bool) {
		for k := range r.model.rows {
			if !yield(k) {
				return
			}
		}
	})
	var keys []int64
	var vals []map[int]any
	var ops []string
	seen := map[int64]bool{}
	dels := 0
	for i := 0; i <= r.rng.IntN(5); i++ {
		var k int64
		if len(live) > 0 && r.rng.IntN(3) > 0 {
			k = live[r.rng.IntN(len(live))]
		} else {
			k = int64(r.rng.IntN(40))
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		keys = append(keys, k)
		if _, had := r.model.rows[k]; had && r.rng.IntN(4) == 0 {
			ops, vals = append(ops, "D"), append(vals, map[int]any{})
			dels++
			continue
		}
		ops, vals = append(ops, "U"), append(vals, r.randomRow())
	}
	r.commit(r.ups, r.batch(keys, vals, ops))
	for i, k := range keys {
		if ops[i] == "D" {
			delete(r.model.rows, k)
		} else {
			r.model.rows[k] = vals[i]
		}
	}
	r.note("upsert %d keys, %d deletes (epoch %d)", len(keys), dels, r.ups.last)
}

// alterSchema makes one change through the upsert sink (ALTER SINK's
// path), between its epochs.
func (r *schemaRun) alterSchema(c catalogadapter.SchemaChange) error {
	return r.ups.s.AlterSchema(context.Background(), []SchemaChange{c})
}

// alter makes a random change the format allows, and the model with it;
// the upsert sink, which made it, takes the new schema itself, the append
// sink when reopened.
func (r *schemaRun) alter() {
	r.alterOne()
	if got := specColumns(catalogadapter.TableSpec{Schema: r.ups.s.Schema()}); got != r.model.header() {
		r.fatalf("the upsert sink took columns %s after its ALTER, the model has %s", got, r.model.header())
	}
	r.reopen(r.app)
}

func (r *schemaRun) alterOne() {
	m := r.model
	var choices []string
	widenable := func(c scCol) bool { return c.kind == scInt || c.kind == scFloat }
	var others []int // columns but the key
	for i, c := range m.cols {
		if c.ident != 0 {
			others = append(others, i)
		}
	}
	choices = append(choices, "add", "add")
	if slices.ContainsFunc(m.cols, widenable) {
		choices = append(choices, "widen", "widen")
	}
	if scRenames(r.l) && len(others) > 0 {
		choices = append(choices, "rename", "rename", "drop")
	}
	switch choices[r.rng.IntN(len(choices))] {
	case "add":
		k := scKind(r.rng.IntN(5))
		name := fmt.Sprintf("c%d", r.nextCol)
		r.must(catalogadapter.SchemaChange{Kind: catalogadapter.AddColumn, Column: name, Type: k.arrow(), Comment: "added by step " + strconv.Itoa(len(r.log))})
		m.cols = append(m.cols, scCol{r.nextCol, name, k})
		r.nextCol++
		r.note("add %s %s", name, k.arrow())
	case "widen":
		var can []int
		for i, c := range m.cols {
			if widenable(c) {
				can = append(can, i)
			}
		}
		i := can[r.rng.IntN(len(can))]
		to := scLong
		if m.cols[i].kind == scFloat {
			to = scDouble
		}
		r.must(catalogadapter.SchemaChange{Kind: catalogadapter.WidenColumn, Column: m.cols[i].name, Type: to.arrow()})
		r.note("widen %s from %s to %s", m.cols[i].name, m.cols[i].kind.arrow(), to.arrow())
		m.cols[i].kind = to
	case "rename":
		i := others[r.rng.IntN(len(others))]
		name := fmt.Sprintf("n%d", r.nextCol)
		r.nextCol++
		r.must(catalogadapter.SchemaChange{Kind: catalogadapter.RenameColumn, Column: m.cols[i].name, NewName: name})
		r.note("rename %s to %s", m.cols[i].name, name)
		m.cols[i].name = name
	case "drop":
		i := others[r.rng.IntN(len(others))]
		r.must(catalogadapter.SchemaChange{Kind: catalogadapter.DropColumn, Column: m.cols[i].name})
		r.note("drop %s", m.cols[i].name)
		for _, vals := range m.rows {
			delete(vals, m.cols[i].ident)
		}
		m.cols = slices.Delete(m.cols, i, i+1)
	}
}

func (r *schemaRun) must(c catalogadapter.SchemaChange) {
	r.t.Helper()
	if err := r.alterSchema(c); err != nil {
		r.fatalf("%s %s: %v", c.Kind, c.Column, err)
	}
}

// refused tries a change the format refuses: narrowing, renaming onto an
// existing name, adding an existing one. Nothing may change.
func (r *schemaRun) refused() {
	m := r.model
	kind := r.rng.IntN(4)
	if len(m.cols) < 2 {
		kind = 3 // only id is left: the others need a column beside it
	}
	var c scCol
	if kind != 3 {
		c = m.cols[1+r.rng.IntN(len(m.cols)-1)]
	}
	var ch catalogadapter.SchemaChange
	switch kind {
	case 3:
		ch = catalogadapter.SchemaChange{Kind: catalogadapter.DropColumn, Column: "id"} // the upsert sink's key
	case 0:
		narrower := map[scKind]arrow.DataType{scLong: arrow.PrimitiveTypes.Int32, scDouble: arrow.PrimitiveTypes.Float32,
			scInt: arrow.PrimitiveTypes.Int16, scFloat: arrow.PrimitiveTypes.Int32, scString: arrow.PrimitiveTypes.Int64}
		if c.kind == scInt {
			c = m.cols[0] // id: long to int
			ch = catalogadapter.SchemaChange{Kind: catalogadapter.WidenColumn, Column: "id", Type: arrow.PrimitiveTypes.Int32}
		} else {
			ch = catalogadapter.SchemaChange{Kind: catalogadapter.WidenColumn, Column: c.name, Type: narrower[c.kind]}
		}
	case 1:
		if !scRenames(r.l) {
			ch = catalogadapter.SchemaChange{Kind: catalogadapter.AddColumn, Column: c.name, Type: arrow.PrimitiveTypes.Int64}
			break
		}
		ch = catalogadapter.SchemaChange{Kind: catalogadapter.RenameColumn, Column: c.name, NewName: "id"}
	default:
		ch = catalogadapter.SchemaChange{Kind: catalogadapter.AddColumn, Column: strings.ToUpper(c.name), Type: arrow.PrimitiveTypes.Int64}
	}
	err := r.alterSchema(ch)
	if !errors.Is(err, catalogadapter.ErrSchemaChange) {
		r.fatalf("refused change %+v: %v, want ErrSchemaChange", ch, err)
	}
	r.note("refused %s %s", ch.Kind, ch.Column)
}

// replay commits a writer's last epoch again: skipped, nothing changes.
func (r *schemaRun) replay() {
	w := []*scWriter{r.app, r.ups}[r.rng.IntN(2)]
	if w.last == 0 {
		r.note("replay of nothing")
		return
	}
	res, err := commitEpoch(w.s, w.last, r.batch([]int64{r.nextID + 1_000_000}, []map[int]any{r.randomRow()}, nil))
	if err != nil || !res.Skipped {
		r.fatalf("replay of %s epoch %d: %+v %v, want skipped", w.name, w.last, res, err)
	}
	r.note("replay %s epoch %d", w.name, w.last)
}

// check compares the table with the model through both readers, and the
// exactly-once record.
func (r *schemaRun) check(when string) {
	r.t.Helper()
	ctx := context.Background()
	spec, err := r.e.provider.TableSpec(ctx, r.e.table)
	if err != nil {
		r.fatalf("%s: %v", when, err)
	}
	if got := specColumns(spec); got != r.model.header() {
		r.fatalf("%s: the table's columns are %s, the model's %s", when, got, r.model.header())
	}
	want := r.model.table()
	for _, read := range []struct {
		name string
		fn   func() ([]string, []string, error)
	}{
		{"the provider's scan", func() ([]string, []string, error) { return sinkScanTable(ctx, r.e.provider, r.e.table, r.e.db) }},
		{"the format's own reader", func() ([]string, []string, error) { return independentTable(r.t, r.l, r.e.root, r.e.table) }},
	} {
		cols, rows, err := read.fn()
		if err != nil {
			r.fatalf("%s: %s: %v", when, read.name, err)
		}
		if diff := cmp.Diff(r.model.names(), cols); diff != "" {
			r.fatalf("%s: %s reads the columns (-model +table):\n%s", when, read.name, diff)
		}
		if diff := cmp.Diff(want, rows); diff != "" {
			r.fatalf("%s: %s (-model +table):\n%s", when, read.name, diff)
		}
	}
	for _, w := range []*scWriter{r.app, r.ups} {
		e, ok, err := r.e.provider.LastEpoch(ctx, r.e.table, w.name)
		if err != nil || (w.last > 0 && (!ok || e != w.last)) {
			r.fatalf("%s: %s's last epoch %d %v %v, want %d", when, w.name, e, ok, err, w.last)
		}
	}
}
