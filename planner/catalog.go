package planner

// go-mysql-server's view of the sinks: a provider with one database,
// "lakesql", in which every sink is a table. Inserting into one buffers the
// statement's rows and hands them to the session's epoch when the statement
// succeeds; reading one reads the last committed version through DuckDB.

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"

	"github.com/lakesql/lakesql/internal/intconv"
	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/sinkddl"
	"github.com/lakesql/lakesql/sqlsink"
)

type provider struct{ engine *Engine }

func (p *provider) Database(_ *gms.Context, name string) (gms.Database, error) {
	if strings.EqualFold(name, DatabaseName) {
		return &database{engine: p.engine}, nil
	}
	return nil, gms.ErrDatabaseNotFound.New(name)
}

func (p *provider) HasDatabase(_ *gms.Context, name string) bool {
	return strings.EqualFold(name, DatabaseName)
}

func (p *provider) AllDatabases(*gms.Context) []gms.Database {
	return []gms.Database{&database{engine: p.engine}}
}

type database struct{ engine *Engine }

func (d *database) Name() string { return DatabaseName }

// GetTableInsensitive opens the sink on first use, so a definition that no
// longer matches its table fails with the reason on use (unreadable.go).
func (d *database) GetTableInsensitive(ctx *gms.Context, name string) (gms.Table, bool, error) {
	h, ok := d.engine.lookup(name)
	if !ok {
		return nil, false, nil
	}
	s, err := h.open(ctx)
	if err != nil {
		return newUnreadableTable(h, err), true, nil
	}
	sch, values, err := h.schemaFor(s)
	if err != nil {
		return newUnreadableTable(h, err), true, nil
	}
	if sess, ok := ctx.Session.(*Session); ok && sess.opColumnShown(ctx) {
		sch = append(sch.Copy(), &gms.Column{Name: sqlsink.OpColumn, Type: types.LongText, Nullable: true,
			Source: h.rec.Name, DatabaseSource: DatabaseName})
	}
	t := &table{h: h, sink: s, schema: sch, values: values}
	if len(s.Config().Key) > 0 {
		return &keyedTable{t}, true, nil
	}
	return t, true, nil
}

func (d *database) GetTableNames(*gms.Context) ([]string, error) {
	return d.engine.sinkNames(), nil
}

// schemaFor returns the go-mysql-server schema of an opened sink, and what
// its columns accept before conversion (valuecheck.go).
func (h *sinkHandle) schemaFor(s *sqlsink.Sink) (gms.Schema, []valueRule, error) {
	h.openMu.Lock()
	defer h.openMu.Unlock()
	if h.gschema != nil {
		return h.gschema, h.values, nil
	}
	key := map[string]bool{}
	for _, k := range s.Config().Key {
		key[k] = true
	}
	var out gms.Schema
	declared := columnRules(h.def)
	precisions := fractionDigits(h.def)
	spelled := map[string]string{}
	if h.def != nil {
		for _, c := range h.def.Columns {
			spelled[c.Name] = c.SQLType
		}
	}
	// No rules at all (a sink of BIGINT, DOUBLE, ... columns, or one that
	// attached without columns) leaves nothing to check per row.
	h.rules = nil
	h.values = nil
	for _, f := range s.Schema().Fields() {
		h.values = append(h.values, valueRuleFor(f.Type, spelled[f.Name]))
		if len(declared) > 0 {
			h.rules = append(h.rules, declared[f.Name])
		}
		t, ok := declaredType(spelled[f.Name], f.Type)
		if !ok {
			var err error
			if t, err = gmsType(f.Type); err != nil {
				return nil, nil, fmt.Errorf("sink %s: column %s: %w", h.rec.Name, f.Name, err)
			}
		}
		if dt, ok := t.(gms.DatetimeType); ok {
			// DATETIME(p) and TIMESTAMP(p) keep their declared precision:
			// values are rounded to it and shown with it, as in MySQL.
			if p, ok := precisions[f.Name]; ok {
				t = types.MustCreateDatetimeType(dt.Type(), p)
			}
		}
		out = append(out, &gms.Column{Name: f.Name, Type: t, Nullable: f.Nullable, Source: h.rec.Name,
			DatabaseSource: DatabaseName, PrimaryKey: key[f.Name]})
	}
	h.gschema = out
	return out, h.values, nil
}

// withOpColumn returns the schema with the changelog column _op appended.
func withOpColumn(s *arrow.Schema) *arrow.Schema {
	fields := append(slices.Clone(s.Fields()), arrow.Field{Name: sqlsink.OpColumn, Type: arrow.BinaryTypes.String, Nullable: true})
	return arrow.NewSchema(fields, nil)
}

// gmsType maps an Arrow type of a sink column to go-mysql-server's type.
func gmsType(t arrow.DataType) (gms.Type, error) {
	if isNested(t) {
		return types.LongText, nil // JSON text (nested.go)
	}
	switch t := t.(type) {
	case *arrow.BooleanType:
		return types.Boolean, nil
	case *arrow.Int8Type:
		return types.Int8, nil
	case *arrow.Int16Type:
		return types.Int16, nil
	case *arrow.Int32Type:
		return types.Int32, nil
	case *arrow.Int64Type:
		return types.Int64, nil
	case *arrow.Float32Type:
		return types.Float32, nil
	case *arrow.Float64Type:
		return types.Float64, nil
	case *arrow.Decimal128Type:
		if wideDecimal(t) {
			return describeDecimal(t), nil
		}
		return types.CreateColumnDecimalType(uint8(t.Precision), uint8(t.Scale)) // shown with its scale, as MySQL does
	case *arrow.StringType, *arrow.LargeStringType:
		return types.LongText, nil
	case *arrow.BinaryType, *arrow.LargeBinaryType:
		return types.LongBlob, nil
	case *arrow.Date32Type:
		return types.Date, nil
	case *arrow.TimestampType:
		if t.TimeZone == "" {
			return types.DatetimeMaxPrecision, nil
		}
		return types.TimestampMaxPrecision, nil
	}
	return nil, fmt.Errorf("%w: %s", sinkddl.ErrUnsupportedType, t)
}

type table struct {
	h      *sinkHandle
	sink   *sqlsink.Sink
	schema gms.Schema
	values []valueRule // by column of the sink's schema
}

var (
	_ gms.Table           = (*table)(nil)
	_ gms.InsertableTable = (*table)(nil)
	_ gms.TemporaryTable  = (*table)(nil)
)

// IsTemporary implements sql.TemporaryTable: a sink never is one.
// go-mysql-server's check of writes in a READ ONLY transaction asks every
// table written to, and fails with a nil pointer on a table that does not
// answer, instead of refusing the write with 1792.
func (t *table) IsTemporary() bool { return false }

func (t *table) Name() string               { return t.h.rec.Name }
func (t *table) String() string             { return t.h.rec.Name }
func (t *table) Schema() gms.Schema         { return t.schema }
func (t *table) Collation() gms.CollationID { return gms.Collation_Default }

type onePartition struct{}

func (onePartition) Key() []byte { return []byte("all") }

func (t *table) Partitions(*gms.Context) (gms.PartitionIter, error) {
	return gms.PartitionsToPartitionIter(onePartition{}), nil
}

// PartitionRows reads the last committed version through DuckDB. Inside a
// transaction this is still the last committed version: a transaction does
// not see its own uncommitted rows.
func (t *table) PartitionRows(ctx *gms.Context, _ gms.Partition) (gms.RowIter, error) {
	if sess, ok := ctx.Session.(*Session); ok {
		// An UPDATE or DELETE locks its sink before it reads the rows
		// it changes.
		if err := sess.lockTarget(ctx, t.h); err != nil {
			return nil, sess.fail(err)
		}
	}
	e := t.h.engine
	scan, err := scanSQL(ctx, t.sink, e.db)
	if err != nil {
		return nil, fmt.Errorf("sink %s: %w", t.h.rec.Name, err)
	}
	cols := make([]string, len(t.schema))
	for i, c := range t.schema {
		q := sqlquote.Ident(c.Name)
		if i >= len(t.sink.Schema().Fields()) {
			q = "'I'" // the _op column of a changelog INSERT ... SELECT
		} else if _, isDec := t.sink.Schema().Field(i).Type.(*arrow.Decimal128Type); isDec {
			// Every digit, also of a scale go-mysql-server cannot hold.
			q = "CAST(" + q + " AS VARCHAR)"
		}
		cols[i] = q
	}
	rows, err := e.db.QueryContext(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM ("+scan+")")
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			// Killed (or its client gone) while DuckDB read: 1317.
			return nil, fmt.Errorf("sink %s: read: %w (%w)", t.h.rec.Name, errInterrupted, cerr)
		}
		return nil, fmt.Errorf("sink %s: read: %w", t.h.rec.Name, err)
	}
	return &scanIter{t: t, rows: rows, n: len(cols)}, nil
}

// scanSQL is a DuckDB query over the last committed version of the sink's
// table, through the sink's own provider (Delta, or its Iceberg catalog).
func scanSQL(ctx context.Context, s *sqlsink.Sink, q *sql.DB) (string, error) {
	scan, ok, err := s.ScanSQL(ctx, q)
	if !ok {
		return "", fmt.Errorf("%w: reading a table of this backend", ErrNotSupported)
	}
	return scan, err
}

// scanIter streams a sink's rows from DuckDB.
type scanIter struct {
	t    *table
	rows *sql.Rows
	n    int
}

func (it *scanIter) Next(ctx *gms.Context) (gms.Row, error) {
	if !it.rows.Next() {
		if err := it.rows.Err(); err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return nil, fmt.Errorf("sink %s: read: %w (%w)", it.t.h.rec.Name, errInterrupted, cerr)
			}
			return nil, err
		}
		return nil, io.EOF
	}
	vals := make([]any, it.n)
	ptrs := make([]any, it.n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := it.rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	fields := it.t.sink.Schema().Fields()
	for i, v := range vals {
		if v == nil {
			continue
		}
		if i < len(fields) && isNested(fields[i].Type) {
			text, err := nestedText(v, fields[i].Type)
			if err != nil {
				return nil, fmt.Errorf("sink %s: column %s: %w", it.t.h.rec.Name, fields[i].Name, err)
			}
			vals[i] = text
			continue
		}
		if b, ok := v.(bool); ok {
			v = int8(0)
			if b {
				v = int8(1)
			}
		}
		cv, _, err := it.t.schema[i].Type.Convert(ctx, v)
		if err != nil {
			return nil, fmt.Errorf("sink %s: column %s: %w", it.t.h.rec.Name, it.t.schema[i].Name, err)
		}
		vals[i] = cv
	}
	return gms.NewRow(vals...), nil
}

func (it *scanIter) Close(*gms.Context) error { return it.rows.Close() }

// Inserter implements sql.InsertableTable.
func (t *table) Inserter(*gms.Context) gms.RowInserter {
	return &inserter{t: t}
}

// inserter buffers one statement's rows. go-mysql-server calls
// StatementBegin, Insert for each row, then StatementComplete (the
// statement succeeded: the rows go to the session's epoch, as one batch)
// or DiscardChanges (it failed: they are dropped), then Close.
type inserter struct {
	t    *table
	mu   sync.Mutex
	rows []gms.Row
}

func (i *inserter) StatementBegin(*gms.Context) {
	i.mu.Lock()
	i.rows = i.rows[:0]
	i.mu.Unlock()
}

func (i *inserter) DiscardChanges(*gms.Context, error) error {
	i.mu.Lock()
	i.rows = nil
	i.mu.Unlock()
	return nil
}

func (i *inserter) StatementComplete(ctx *gms.Context) error {
	i.mu.Lock()
	rows := i.rows
	i.rows = nil
	i.mu.Unlock()
	if len(rows) == 0 {
		return nil
	}
	s, ok := ctx.Session.(*Session)
	if !ok {
		return fmt.Errorf("sink %s: not a lakesql session", i.t.h.rec.Name)
	}
	return s.write(ctx, i.t.h, rows)
}

func (i *inserter) Insert(ctx *gms.Context, row gms.Row) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	for c, r := range i.t.h.rules {
		if c < len(row) {
			if err := r.check(row[c], i.t.schema[c].Name, len(i.rows)+1); err != nil {
				return failed(ctx, fmt.Errorf("sink %s: %w", i.t.h.rec.Name, err))
			}
		}
	}
	i.rows = append(i.rows, row.Copy())
	return nil
}

func (i *inserter) Close(*gms.Context) error { return nil }

// rowsToRecord converts go-mysql-server rows (already converted to the
// columns' types) into an Arrow batch of the sink's schema.
func rowsToRecord(schema *arrow.Schema, rows []gms.Row) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for r, row := range rows {
		if len(row) != len(schema.Fields()) {
			return nil, fmt.Errorf("row %d has %d values, the sink has %d columns", r+1, len(row), len(schema.Fields()))
		}
		for c, v := range row {
			if err := appendValue(b.Field(c), schema.Field(c).Type, v); err != nil {
				return nil, fmt.Errorf("row %d, column %s: %w", r+1, schema.Field(c).Name, err)
			}
		}
	}
	return b.NewRecordBatch(), nil
}

// appendValue appends v, refusing a value the builder's type cannot hold
// rather than wrapping it.
func appendValue(fb array.Builder, t arrow.DataType, v any) error {
	if v == nil {
		fb.AppendNull()
		return nil
	}
	if isNested(t) {
		return appendNested(fb, t, v)
	}
	bad := func() error { return fmt.Errorf("%w: value %v (%T) does not fit %s", sqlsink.ErrBadRow, v, v, t) }
	switch b := fb.(type) {
	case *array.BooleanBuilder:
		n, ok := intconv.ToInt64(v)
		if !ok {
			if x, isBool := v.(bool); isBool {
				b.Append(x)
				return nil
			}
			return bad()
		}
		b.Append(n != 0)
	case *array.Int8Builder:
		n, ok := intconv.ToInt64(v)
		if !ok || n != int64(int8(n)) {
			return bad()
		}
		b.Append(int8(n))
	case *array.Int16Builder:
		n, ok := intconv.ToInt64(v)
		if !ok || n != int64(int16(n)) {
			return bad()
		}
		b.Append(int16(n))
	case *array.Int32Builder:
		n, ok := intconv.ToInt64(v)
		if !ok || n != int64(int32(n)) {
			return bad()
		}
		b.Append(int32(n))
	case *array.Int64Builder:
		n, ok := intconv.ToInt64(v)
		if !ok {
			return bad()
		}
		b.Append(n)
	case *array.Float32Builder:
		switch x := v.(type) {
		case float32:
			b.Append(x)
		case float64:
			// Never an infinity from a finite value (valuecheck.go refuses
			// those first; this is the last line).
			if math.IsInf(float64(float32(x)), 0) && !math.IsInf(x, 0) {
				return bad()
			}
			b.Append(float32(x))
		default:
			return bad()
		}
	case *array.Float64Builder:
		switch x := v.(type) {
		case float64:
			b.Append(x)
		case float32:
			b.Append(float64(x))
		default:
			return bad()
		}
	case *array.Decimal128Builder:
		dt := t.(*arrow.Decimal128Type)
		var s string
		switch x := v.(type) {
		case decimal.Decimal:
			s = x.StringFixed(dt.Scale)
		case string:
			s = x
		default:
			return bad()
		}
		n, err := decimal128.FromString(s, dt.Precision, dt.Scale)
		if err != nil {
			return fmt.Errorf("%w: %v", sqlsink.ErrBadRow, err)
		}
		b.Append(n)
	case *array.StringBuilder:
		switch x := v.(type) {
		case string:
			b.Append(x)
		case []byte:
			b.Append(string(x))
		default:
			return bad()
		}
	case *array.BinaryBuilder:
		switch x := v.(type) {
		case []byte:
			b.Append(x)
		case string:
			b.AppendString(x)
		default:
			return bad()
		}
	case *array.Date32Builder:
		x, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		b.Append(arrow.Date32FromTime(x))
	case *array.TimestampBuilder:
		x, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		b.Append(arrow.Timestamp(x.UnixMicro()))
	default:
		return fmt.Errorf("%w: %s", sinkddl.ErrUnsupportedType, t)
	}
	return nil
}

var (
	_ gms.DeletableTable = (*table)(nil)
	_ gms.UpdatableTable = (*table)(nil)
)

// Deleter implements sql.DeletableTable: on an upsert sink each deleted
// row becomes a changelog row with _op = 'D' (go-mysql-server finds the rows
// in the last committed version, the WHERE applied).
func (t *table) Deleter(ctx *gms.Context) gms.RowDeleter {
	return t.changeWriter(ctx)
}

// Updater implements sql.UpdatableTable: on an upsert sink each updated
// row becomes a changelog row with _op = 'U'. Changing a key column is
// refused.
func (t *table) Updater(ctx *gms.Context) gms.RowUpdater {
	return t.changeWriter(ctx)
}

// changeWriter returns the writer of an UPDATE or DELETE of the sink, and
// records the sink as one the running statement changes, so that it is
// locked before its rows are read (Session.lockTarget).
func (t *table) changeWriter(ctx *gms.Context) *changeWriter {
	if sess, ok := ctx.Session.(*Session); ok {
		sess.addTarget(ctx, t.h)
	}
	return &changeWriter{inserter: inserter{t: t}}
}

// changeWriter turns DELETE and UPDATE into changelog rows, buffered per
// statement like inserts.
type changeWriter struct {
	inserter
}

// StatementComplete hands the statement's changelog rows over, unless the
// statement changes more than one sink (Session.checkOneTarget): then no
// sink gets any.
func (c *changeWriter) StatementComplete(ctx *gms.Context) error {
	if sess, ok := ctx.Session.(*Session); ok {
		if err := sess.checkOneTarget(ctx); err != nil {
			_ = c.DiscardChanges(ctx, err)
			return sess.fail(err)
		}
	}
	return c.inserter.StatementComplete(ctx)
}

func (c *changeWriter) upsertOnly(ctx *gms.Context, what string) error {
	if c.t.sink.Config().Mode != sqlsink.ModeUpsert {
		return failed(ctx, fmt.Errorf("%w: %s on sink %s, which is in append mode (it needs mode = 'upsert' and a PRIMARY KEY)",
			ErrNotSupported, what, c.t.h.rec.Name))
	}
	return nil
}

// failed records err with the statement's session (for the wire layer's
// error codes, see Session.TakeError) and returns it.
func failed(ctx *gms.Context, err error) error {
	if s, ok := ctx.Session.(*Session); ok {
		return s.fail(err)
	}
	return err
}

func (c *changeWriter) Delete(ctx *gms.Context, row gms.Row) error {
	if err := c.upsertOnly(ctx, "DELETE"); err != nil {
		return err
	}
	return c.Insert(ctx, append(row.Copy()[:len(row):len(row)], "D"))
}

func (c *changeWriter) Update(ctx *gms.Context, old, new gms.Row) error {
	if err := c.upsertOnly(ctx, "UPDATE"); err != nil {
		return err
	}
	for i, col := range c.t.schema {
		if !col.PrimaryKey {
			continue
		}
		if cmp, err := col.Type.Compare(ctx, old[i], new[i]); err != nil || cmp != 0 {
			return failed(ctx, fmt.Errorf("%w: UPDATE of the key column %s of sink %s (delete the row and insert a new one)",
				ErrNotSupported, col.Name, c.t.h.rec.Name))
		}
	}
	return c.Insert(ctx, append(new.Copy()[:len(new):len(new)], "U"))
}
