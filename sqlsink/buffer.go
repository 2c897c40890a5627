package sqlsink

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/duckarrow"
	"github.com/lakesql/lakesql/internal/sqlquote"
)

// ErrBadRow marks a batch refused for its values: a NULL in a NOT NULL
// column or a key column, a value that does not convert, an unknown column.
var ErrBadRow = errors.New("invalid row")

// Hidden buffer columns: arrival order and the row's effect.
const (
	seqColumn = "__lakesql_seq"
	opBufCol  = "__lakesql_op"
)

// column is one table column as the buffer holds it.
type column struct {
	name      string
	duckType  string
	nullable  bool
	arrowType arrow.DataType // the table's type, for automatic evolution
}

// buffer holds an epoch's rows in an embedded DuckDB until they are staged.
// Rows enter through an Arrow scan, never as SQL text. DuckDB's memory
// limit and temp directory let a large epoch spill to disk.
type buffer struct {
	db       *sql.DB
	conn     *sql.Conn // one connection: views and temp tables are per connection
	tempDir  string
	ownsTemp bool // the temp dir is ours to remove
	cols     []column
	byName   map[string]int
	key      []string

	// In append mode, batches whose columns already have the table's types
	// wait here as Arrow and are staged straight from an Arrow scan: copying
	// them into a DuckDB table first would cost more than writing Parquet.
	// Everything else goes into the DuckDB table buf.
	direct     bool
	appendMode bool
	pending    []arrow.RecordBatch
	// rules are the table's row rules the buffer applies (rowrules.go);
	// nil when it has none.
	rules *bufferRules
	// inTable is false while the buf table is known to be empty: set
	// before any INSERT into it, reset only by a DELETE that succeeded.
	// It spares an epoch that never used the table a count and a DELETE.
	inTable bool

	rows  int64
	bytes int64
	// sizes mirrors rows and bytes for Sink.Metrics, which reads them
	// without the sink's lock; nil until the sink sets it.
	sizes   *counters
	first   time.Time // arrival of the oldest buffered row
	seq     int64
	viewSeq int
}

func openBuffer(ctx context.Context, cfg Config, schema *arrow.Schema) (*buffer, error) {
	tempDir, owns := cfg.TempDir, false
	if tempDir == "" {
		d, err := os.MkdirTemp("", "lakesql-buffer-")
		if err != nil {
			return nil, fmt.Errorf("buffer temp dir: %w", err)
		}
		tempDir, owns = d, true
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, fmt.Errorf("open DuckDB buffer: %w", err)
	}
	b := &buffer{db: db, tempDir: tempDir, ownsTemp: owns, byName: map[string]int{}, key: cfg.Key,
		direct: cfg.Mode == ModeAppend, appendMode: cfg.Mode == ModeAppend}
	settings := []string{
		"SET memory_limit = " + sqlquote.String(cfg.MemoryLimit),
		"SET temp_directory = " + sqlquote.String(tempDir),
		"SET preserve_insertion_order = false",
		"SET TimeZone = 'UTC'",
	}
	if cfg.Threads > 0 {
		settings = append(settings, fmt.Sprintf("SET threads = %d", cfg.Threads))
	}
	for _, s := range settings {
		if _, err := db.ExecContext(ctx, s); err != nil {
			db.Close()
			return nil, fmt.Errorf("configure DuckDB buffer (%s): %w", s, err)
		}
	}
	if b.conn, err = db.Conn(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("DuckDB buffer connection: %w", err)
	}
	defs := make([]string, 0, len(schema.Fields())+2)
	for i, f := range schema.Fields() {
		typ, err := catalogadapter.DuckDBType(f.Type)
		if err != nil {
			b.close()
			return nil, fmt.Errorf("column %q: %w", f.Name, err)
		}
		b.cols = append(b.cols, column{name: f.Name, duckType: typ, nullable: f.Nullable, arrowType: f.Type})
		b.byName[f.Name] = i
		defs = append(defs, sqlquote.Ident(f.Name)+" "+typ)
	}
	defs = append(defs, seqColumn+" BIGINT", opBufCol+" UTINYINT")
	if _, err := b.conn.ExecContext(ctx, "CREATE TABLE buf ("+strings.Join(defs, ", ")+")"); err != nil {
		b.close()
		return nil, fmt.Errorf("create DuckDB buffer: %w", err)
	}
	return b, nil
}

// append buffers one batch. Either all its rows are buffered or none: the
// checks run first, and the insert is one statement.
func (b *buffer) append(ctx context.Context, rec arrow.RecordBatch, ops []Op, now time.Time) error {
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	if err := b.check(rec, ops); err != nil {
		return err
	}
	if b.direct && b.exact(rec) {
		data := dropMetadataColumns(rec)
		if len(b.pending) > 0 && !b.pending[0].Schema().Equal(data.Schema()) {
			if err := b.materialize(ctx); err != nil {
				data.Release()
				return err
			}
		}
		b.pending = append(b.pending, data)
	} else {
		// Keep arrival order: what waits as Arrow goes in first.
		if err := b.materialize(ctx); err != nil {
			return err
		}
		aug, err := b.augment(rec, ops)
		if err != nil {
			return err
		}
		err = b.insert(ctx, []arrow.RecordBatch{aug}, true)
		aug.Release()
		if err != nil {
			return err
		}
	}
	if b.rows == 0 {
		b.first = now
	}
	b.rows += int64(n)
	b.bytes += RecordBytes(rec)
	b.seq += int64(n)
	b.publish()
	return nil
}

// exact tells whether every column of rec already has the table's type, so
// its rows need no cast on the way to Parquet, and no table column is missing.
func (b *buffer) exact(rec arrow.RecordBatch) bool {
	seen := 0
	for _, f := range rec.Schema().Fields() {
		if strings.HasPrefix(f.Name, "_") {
			continue
		}
		typ, err := catalogadapter.DuckDBType(f.Type)
		if err != nil || typ != b.cols[b.byName[f.Name]].duckType {
			return false
		}
		seen++
	}
	return seen == len(b.cols)
}

// insert copies batches of one schema into the buf table with one INSERT;
// withSeq says whether they carry the arrival order and op columns.
func (b *buffer) insert(ctx context.Context, recs []arrow.RecordBatch, withSeq bool) error {
	view, release, err := b.registerView(recs)
	if err != nil {
		return err
	}
	defer release()
	schema := recs[0].Schema()
	names := make([]string, 0, len(b.cols)+2)
	exprs := make([]string, 0, len(b.cols)+2)
	for _, c := range b.cols {
		names = append(names, sqlquote.Ident(c.name))
		if len(schema.FieldIndices(c.name)) == 0 {
			exprs = append(exprs, "NULL")
			continue
		}
		exprs = append(exprs, fmt.Sprintf("CAST(%s AS %s)", sqlquote.Ident(c.name), c.duckType))
	}
	if withSeq {
		names = append(names, seqColumn, opBufCol)
		exprs = append(exprs, seqColumn, opBufCol)
	}
	q := fmt.Sprintf("INSERT INTO buf (%s) SELECT %s FROM %s", strings.Join(names, ", "), strings.Join(exprs, ", "), view)
	if b.rules != nil && withSeq {
		return b.insertChecked(ctx, fmt.Sprintf("INSERT INTO buf (%s) %s", strings.Join(names, ", "), b.fillSelect(names, exprs, view)), b.seq)
	}
	b.inTable = true // even a failed INSERT counts: the DELETE settles it
	if _, err := b.conn.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("%w: %v", ErrBadRow, err)
	}
	return nil
}

// registerView makes batches of one schema scannable as a DuckDB view. The
// scan is single-pass; release drops the view and the batches' stream.
func (b *buffer) registerView(recs []arrow.RecordBatch) (string, func(), error) {
	b.viewSeq++
	view := fmt.Sprintf("__lakesql_batch_%d", b.viewSeq)
	var release func()
	err := b.conn.Raw(func(dc any) error {
		ar, err := duckarrow.FromConn(dc.(driver.Conn))
		if err != nil {
			return err
		}
		rr, err := array.NewRecordReader(recs[0].Schema(), recs)
		if err != nil {
			return err
		}
		defer rr.Release()
		release, err = ar.RegisterView(rr, view)
		return err
	})
	if err != nil {
		return "", nil, fmt.Errorf("buffer batch: %w", err)
	}
	return view, func() {
		b.conn.ExecContext(context.Background(), "DROP VIEW IF EXISTS "+view)
		release()
	}, nil
}

// materialize moves the batches waiting as Arrow into the buf table. Their
// arrival order is kept in the seq column, which append mode does not need.
func (b *buffer) materialize(ctx context.Context) error {
	if len(b.pending) == 0 {
		return nil
	}
	// A failed INSERT takes none of them: they stay pending, since the
	// Writes that brought them succeeded.
	if err := b.insert(ctx, b.pending, false); err != nil {
		return err
	}
	b.releasePending()
	return nil
}

func (b *buffer) releasePending() {
	for _, r := range b.pending {
		r.Release()
	}
	b.pending = nil
}

// source returns a query over every buffered row, in the table's columns
// (their names and types given, so the stager need not ask DuckDB), and a
// function to call once the query has run.
func (b *buffer) source(ctx context.Context) (catalogadapter.Source, func(), error) {
	if len(b.pending) > 0 && b.tableEmpty(ctx) {
		view, release, err := b.registerView(b.pending)
		if err != nil {
			return catalogadapter.Source{}, nil, err
		}
		return b.sourceOf(view), release, nil
	}
	if err := b.materialize(ctx); err != nil {
		return catalogadapter.Source{}, nil, err
	}
	return b.sourceOf("buf"), func() {}, nil
}

// sourceOf is the table's columns read from the view or table from, with
// the buffer's types: the buf table has them, and so do the batches of an
// Arrow view (exact admits no other).
func (b *buffer) sourceOf(from string) catalogadapter.Source {
	cols := make([]catalogadapter.SourceColumn, len(b.cols))
	for i, c := range b.cols {
		cols[i] = catalogadapter.SourceColumn{Name: c.name, DuckDBType: c.duckType}
	}
	return catalogadapter.Source{Query: "SELECT " + b.selectList() + " FROM " + from, Columns: cols}
}

func (b *buffer) tableEmpty(ctx context.Context) bool {
	if !b.inTable {
		return true
	}
	var n int64
	err := b.conn.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM buf LIMIT 1)").Scan(&n)
	return err == nil && n == 0
}

// check refuses a batch before anything of it is buffered.
func (b *buffer) check(rec arrow.RecordBatch, ops []Op) error {
	present := map[string]bool{}
	for _, f := range rec.Schema().Fields() {
		if strings.HasPrefix(f.Name, "_") {
			continue
		}
		if _, ok := b.byName[f.Name]; !ok {
			return fmt.Errorf("%w: column %q is not in the table", ErrBadRow, f.Name)
		}
		if present[f.Name] {
			return fmt.Errorf("%w: column %q is given twice", ErrBadRow, f.Name)
		}
		present[f.Name] = true
	}
	isKey := map[string]bool{}
	for _, k := range b.key {
		isKey[k] = true
	}
	for _, c := range b.cols {
		if (c.nullable || b.rules.generates(c.name)) && !isKey[c.name] {
			continue // a generated column is filled, then checked
		}
		idx := rec.Schema().FieldIndices(c.name)
		if len(idx) == 0 {
			if isKey[c.name] {
				return fmt.Errorf("%w: key column %q is missing", ErrBadRow, c.name)
			}
			if ops == nil || hasUpsert(ops) {
				return fmt.Errorf("%w: NOT NULL column %q is missing", ErrBadRow, c.name)
			}
			continue
		}
		if isKey[c.name] && roundsToInteger(rec.Schema().Field(idx[0]).Type, c.duckType) {
			return fmt.Errorf("%w: key column %q is %s: %s values would be rounded, and distinct keys merged",
				ErrBadRow, c.name, c.duckType, rec.Schema().Field(idx[0]).Type)
		}
		col := rec.Column(idx[0])
		if col.NullN() == 0 {
			continue
		}
		for i := 0; i < col.Len(); i++ {
			if !col.IsNull(i) {
				continue
			}
			if isKey[c.name] {
				return fmt.Errorf("%w: row %d: key column %q is NULL", ErrBadRow, i, c.name)
			}
			if ops == nil || ops[i] == OpUpsert {
				return fmt.Errorf("%w: row %d: NULL in NOT NULL column %q", ErrBadRow, i, c.name)
			}
		}
	}
	return nil
}

// roundsToInteger tells whether DuckDB's cast of from into the integer
// type duckType would round (floats and decimals do). Values of other
// columns are rounded as MySQL rounds them; a key's must not be, since
// rounding makes distinct keys one.
func roundsToInteger(from arrow.DataType, duckType string) bool {
	switch duckType {
	case "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
		"UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT":
	default:
		return false
	}
	switch from.ID() {
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256:
		return true
	}
	return false
}

func hasUpsert(ops []Op) bool {
	for _, o := range ops {
		if o == OpUpsert {
			return true
		}
	}
	return false
}

// augment adds the arrival order and op columns to a batch.
func (b *buffer) augment(rec arrow.RecordBatch, ops []Op) (arrow.RecordBatch, error) {
	n := int(rec.NumRows())
	mem := memory.DefaultAllocator
	sb := array.NewInt64Builder(mem)
	defer sb.Release()
	ob := array.NewUint8Builder(mem)
	defer ob.Release()
	sb.Reserve(n)
	ob.Reserve(n)
	for i := 0; i < n; i++ {
		sb.UnsafeAppend(b.seq + int64(i))
		op := OpUpsert
		if ops != nil {
			op = ops[i]
		}
		ob.UnsafeAppend(uint8(op))
	}
	seq, opc := sb.NewArray(), ob.NewArray()
	defer seq.Release()
	defer opc.Release()
	data := dropMetadataColumns(rec)
	defer data.Release()
	fields := append(data.Schema().Fields(),
		arrow.Field{Name: seqColumn, Type: arrow.PrimitiveTypes.Int64},
		arrow.Field{Name: opBufCol, Type: arrow.PrimitiveTypes.Uint8})
	cols := append(append([]arrow.Array(nil), data.Columns()...), seq, opc)
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(n)), nil
}

// RecordBytes estimates a batch's size from its Arrow buffers, as the
// flush and small-epoch bounds count it.
func RecordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	var walk func(d arrow.ArrayData)
	walk = func(d arrow.ArrayData) {
		for _, buf := range d.Buffers() {
			if buf != nil {
				n += int64(buf.Len())
			}
		}
		for _, c := range d.Children() {
			walk(c)
		}
	}
	for _, c := range rec.Columns() {
		walk(c.Data())
	}
	return n
}

// selectList is the table's columns, quoted, for SELECTs over the buffer.
func (b *buffer) selectList() string {
	names := make([]string, len(b.cols))
	for i, c := range b.cols {
		names[i] = sqlquote.Ident(c.name)
	}
	return strings.Join(names, ", ")
}

// clear empties the buffer.
func (b *buffer) clear(ctx context.Context) error {
	b.releasePending()
	if b.inTable {
		if _, err := b.conn.ExecContext(ctx, "DELETE FROM buf"); err != nil {
			return fmt.Errorf("clear buffer: %w", err)
		}
		b.inTable = false
	}
	b.rows, b.bytes, b.first = 0, 0, time.Time{}
	b.publish()
	return nil
}

// publish mirrors the buffer's size into the sink's counters.
func (b *buffer) publish() {
	if b.sizes != nil {
		b.sizes.bufRows.Store(b.rows)
		b.sizes.bufBytes.Store(b.bytes)
	}
}

func (b *buffer) close() error {
	b.releasePending()
	var errs []error
	if b.conn != nil {
		errs = append(errs, b.conn.Close())
	}
	errs = append(errs, b.db.Close())
	if b.ownsTemp {
		errs = append(errs, os.RemoveAll(b.tempDir))
	}
	return errors.Join(errs...)
}
