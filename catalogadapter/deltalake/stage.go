package deltalake

import (
	"context"
	"crypto/rand"
	"database/sql/driver"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/duckarrow"
	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// WriteBatch implements catalogadapter.ArrowStager. The record is handed to
// DuckDB as a view over its Arrow memory (no copy), and DuckDB writes the
// Parquet files and their statistics.
func (p *Provider) WriteBatch(ctx context.Context, id catalogadapter.TableIdent, rec arrow.RecordBatch) (catalogadapter.Receipt, error) {
	if rec == nil {
		return catalogadapter.Receipt{}, fmt.Errorf("write batch to %s: %w: nil record", id.Name, catalogadapter.ErrInvalid)
	}
	t, snap, err := p.latest(ctx, id)
	if err != nil {
		return catalogadapter.Receipt{}, err
	}
	schema, err := snap.Schema()
	if err != nil {
		return catalogadapter.Receipt{}, readError(id.Name, err)
	}
	src, err := arrowColumns(schema, rec)
	if err != nil {
		return catalogadapter.Receipt{}, fmt.Errorf("write batch to %s: %w", id.Name, err)
	}
	sel, used, err := selectList(schema, src)
	if err != nil {
		return catalogadapter.Receipt{}, fmt.Errorf("write batch to %s: %w", id.Name, err)
	}
	if rec.NumRows() == 0 {
		return p.receipt(t, snap, nil), nil
	}
	if r, ok, err := p.writeRecord(ctx, id.Name, t, snap, schema, rec, src); ok {
		return r, err
	}
	conn, err := p.db.Conn(ctx)
	if err != nil {
		return catalogadapter.Receipt{}, fmt.Errorf("write batch to %s: DuckDB connection: %w", id.Name, err)
	}
	defer conn.Close()
	if len(used) == 0 {
		// Only NULLs to write: DuckDB cannot scan a record without
		// columns, so generate the rows instead.
		query := fmt.Sprintf("SELECT %s FROM range(%d)", sel, rec.NumRows())
		return p.stage(ctx, id.Name, t, snap, conn, query)
	}
	// Only the columns we write reach DuckDB, so a metadata column of a
	// type DuckDB cannot scan does no harm.
	fields := make([]arrow.Field, len(used))
	cols := make([]arrow.Array, len(used))
	for i, c := range used {
		fields[i] = rec.Schema().Field(c)
		cols[i] = rec.Column(c)
	}
	projected := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
	rr, err := array.NewRecordReader(projected.Schema(), []arrow.RecordBatch{projected})
	projected.Release()
	if err != nil {
		return catalogadapter.Receipt{}, fmt.Errorf("write batch to %s: %w: %w", id.Name, catalogadapter.ErrInvalid, err)
	}
	// The exported stream takes its own reference to rr.
	defer rr.Release()
	view := "lakesql_stage_" + randomHex(8)
	var release func()
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(driver.Conn)
		if !ok {
			return fmt.Errorf("driver connection is %T, not DuckDB", dc)
		}
		ar, err := duckarrow.FromConn(c)
		if err != nil {
			return err
		}
		release, err = ar.RegisterView(rr, view)
		return err
	})
	if err != nil {
		return catalogadapter.Receipt{}, fmt.Errorf("write batch to %s: register Arrow view: %w", id.Name, err)
	}
	defer func() {
		// The view is temporary but lives on the pooled connection; drop
		// it before its stream is freed.
		conn.ExecContext(context.WithoutCancel(ctx), "DROP VIEW IF EXISTS "+sqlquote.Ident(view))
		release()
	}()
	return p.stage(ctx, id.Name, t, snap, conn, "SELECT "+sel+" FROM "+sqlquote.Ident(view))
}

// StageSQL implements catalogadapter.Provider: the rows of query, run on q,
// become staged data files without a round trip through Arrow.
func (p *Provider) StageSQL(ctx context.Context, id catalogadapter.TableIdent, q catalogadapter.Querier, source catalogadapter.Source) (catalogadapter.Receipt, error) {
	if q == nil {
		return catalogadapter.Receipt{}, fmt.Errorf("stage SQL into %s: %w: nil querier", id.Name, catalogadapter.ErrInvalid)
	}
	query := strings.TrimRight(strings.TrimSpace(source.Query), "; \t\r\n")
	if query == "" {
		return catalogadapter.Receipt{}, fmt.Errorf("stage SQL into %s: %w: empty query", id.Name, catalogadapter.ErrInvalid)
	}
	t, snap, err := p.latest(ctx, id)
	if err != nil {
		return catalogadapter.Receipt{}, err
	}
	schema, err := snap.Schema()
	if err != nil {
		return catalogadapter.Receipt{}, readError(id.Name, err)
	}
	if len(source.Evolve) > 0 {
		if snap, schema, err = evolvedForStaging(snap, source.Evolve); err != nil {
			return catalogadapter.Receipt{}, fmt.Errorf("stage SQL into %s: %w", id.Name, err)
		}
	}
	var src []srcColumn
	if source.Columns == nil {
		if src, err = describeColumns(ctx, q, query); err != nil {
			return catalogadapter.Receipt{}, fmt.Errorf("stage SQL into %s: %w", id.Name, err)
		}
	}
	for _, c := range source.Columns {
		src = append(src, srcColumn{name: c.Name, typeName: c.DuckDBType, typ: duckDBType(c.DuckDBType)})
	}
	sel, _, err := selectList(schema, src)
	if err != nil {
		return catalogadapter.Receipt{}, fmt.Errorf("stage SQL into %s: %w", id.Name, err)
	}
	return p.stage(ctx, id.Name, t, snap, q, "SELECT "+sel+" FROM ("+query+") AS lakesql_src")
}

// stage writes the rows of query as data files of snap's table and turns
// the add actions into a receipt.
func (p *Provider) stage(ctx context.Context, path string, t *delta.Table, snap *delta.Snapshot, q delta.Querier, query string) (catalogadapter.Receipt, error) {
	adds, err := snap.WriteFiles(ctx, q, query, delta.WriteOptions{TargetFileSize: p.targetFileSize(snap), Now: p.opts.Now})
	if err != nil {
		if errors.Is(err, delta.ErrUnsupportedFeature) {
			return catalogadapter.Receipt{}, fmt.Errorf("stage rows into %s: %w: %w", path, catalogadapter.ErrUnsupported, err)
		}
		return catalogadapter.Receipt{}, fmt.Errorf("stage rows into %s: %w", path, err)
	}
	if err := checkNotNull(snap, adds); err != nil {
		if derr := t.DeleteFiles(context.WithoutCancel(ctx), adds); derr != nil {
			err = errors.Join(err, derr)
		}
		return catalogadapter.Receipt{}, fmt.Errorf("stage rows into %s: %w", path, err)
	}
	return p.receipt(t, snap, adds), nil
}

// targetFileSize is the table's delta.targetFileSize when it is set and
// valid, else the provider's option.
func (p *Provider) targetFileSize(snap *delta.Snapshot) int64 {
	if v, ok := snap.Metadata.Configuration["delta.targetFileSize"]; ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return p.opts.TargetFileSize
}

// receipt turns the adds staged on snap of t into a receipt: their JSON
// for any process, and beside it, for a commit in this one, the adds
// themselves and the snapshot they were staged on.
func (p *Provider) receipt(t *delta.Table, snap *delta.Snapshot, adds []*delta.Add) catalogadapter.Receipt {
	if adds == nil {
		adds = []*delta.Add{}
	}
	r := catalogadapter.Receipt{Files: len(adds)}
	for _, a := range adds {
		if n, ok := a.NumRecords(); ok {
			r.Rows += n
		}
		r.Bytes += a.Size
	}
	// Adds hold only strings, numbers and maps of strings: this cannot fail.
	r.Metadata, _ = json.Marshal(adds)
	r.InProcess = &stagedFiles{p: p, root: t.Storage().URI(), snap: snap, adds: adds, metadata: r.Metadata}
	return r
}

// stagedFiles is the in-process form of a receipt this provider made.
type stagedFiles struct {
	p    *Provider
	root string          // the table's storage URI
	snap *delta.Snapshot // the version the files were written for
	adds []*delta.Add    // what metadata encodes
	// metadata is the receipt's Metadata as made: a receipt whose Metadata
	// was since replaced is judged by its Metadata alone.
	metadata []byte
}

// ownStaged returns r's in-process form when this provider made it for
// the table at root and r still carries the Metadata it was made with.
func (p *Provider) ownStaged(root string, r catalogadapter.Receipt) *stagedFiles {
	s, ok := r.InProcess.(*stagedFiles)
	if !ok || s == nil || s.p != p || s.root != root ||
		len(r.Metadata) != len(s.metadata) || len(r.Metadata) == 0 || &r.Metadata[0] != &s.metadata[0] {
		return nil
	}
	return s
}

// checkNotNull refuses NULLs in NOT NULL columns, which DuckDB's CAST lets
// through. The per-file null counts DuckDB already computed make this free;
// nested NOT NULL fields are not checked.
func checkNotNull(snap *delta.Snapshot, adds []*delta.Add) error {
	schema, err := snap.Schema()
	if err != nil {
		return err
	}
	parts := map[string]bool{}
	for _, c := range snap.Metadata.PartitionColumns {
		parts[c] = true
	}
	mode := snap.Metadata.Configuration["delta.columnMapping.mode"]
	mapped := mode != "" && mode != "none"
	for _, f := range schema.Fields {
		if f.Nullable {
			continue
		}
		key := physicalName(f, mapped) // files and stats name columns so
		for _, a := range adds {
			if parts[f.Name] {
				if a.PartitionValues[key] == nil {
					return fmt.Errorf("%w: NULL in NOT NULL partition column %q", catalogadapter.ErrInvalid, f.Name)
				}
				continue
			}
			var st struct {
				NullCount map[string]any `json:"nullCount"`
			}
			if a.Stats == "" || json.Unmarshal([]byte(a.Stats), &st) != nil {
				continue
			}
			if n, ok := st.NullCount[key].(float64); ok && n > 0 {
				return fmt.Errorf("%w: %d NULL value(s) in NOT NULL column %q", catalogadapter.ErrInvalid, int64(n), f.Name)
			}
		}
	}
	return nil
}

// srcColumn is one column of the rows to stage. typ is nil when its type is
// left for DuckDB's CAST to judge.
type srcColumn struct {
	name     string
	typ      delta.DataType
	typeName string // as the source spells it, for messages
	nulls    int    // NULLs known to be in the column
}

// arrowColumns describes the record's columns in Delta terms.
func arrowColumns(schema *delta.StructType, rec arrow.RecordBatch) ([]srcColumn, error) {
	rs := rec.Schema()
	if rs == nil || rs.NumFields() != int(rec.NumCols()) || rec.NumRows() < 0 {
		return nil, fmt.Errorf("%w: record schema does not match its columns", catalogadapter.ErrInvalid)
	}
	out := make([]srcColumn, rs.NumFields())
	for i, f := range rs.Fields() {
		c := srcColumn{name: f.Name, typeName: fmt.Sprint(f.Type)}
		if isMetadataColumn(schema, f.Name) {
			out[i] = c
			continue
		}
		dt, err := delta.FromArrowSchema(arrow.NewSchema([]arrow.Field{{Name: f.Name, Type: f.Type, Nullable: true}}, nil))
		if err != nil {
			return nil, fmt.Errorf("%w: column %q: Arrow type %s has no Delta equivalent: %w", catalogadapter.ErrInvalid, f.Name, f.Type, err)
		}
		c.typ = dt.Fields[0].Type
		// Arrow panics on inconsistent records; refuse them here instead.
		col := rec.Column(i)
		if col == nil || int64(col.Len()) != rec.NumRows() || !arrow.TypeEqual(col.DataType(), f.Type) {
			return nil, fmt.Errorf("%w: column %q: its array does not match the record's schema or row count",
				catalogadapter.ErrInvalid, f.Name)
		}
		c.nulls = col.NullN()
		out[i] = c
	}
	return out, nil
}

// describeColumns asks DuckDB for the names and types query yields.
func describeColumns(ctx context.Context, q delta.Querier, query string) ([]srcColumn, error) {
	rows, err := q.QueryContext(ctx, "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM ("+query+") AS lakesql_src)")
	if err != nil {
		return nil, fmt.Errorf("describe query: %w", err)
	}
	defer rows.Close()
	var out []srcColumn
	for rows.Next() {
		var c srcColumn
		if err := rows.Scan(&c.name, &c.typeName); err != nil {
			return nil, fmt.Errorf("describe query: %w", err)
		}
		c.typ = duckDBType(c.typeName)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("describe query: %w", err)
	}
	return out, nil
}

// isMetadataColumn tells whether a source column is sink metadata (_op,
// _seq, ...) rather than data. A leading underscore marks it, unless the
// table has a column of exactly that name: such a column is data.
func isMetadataColumn(schema *delta.StructType, name string) bool {
	return strings.HasPrefix(name, "_") && schema.Field(name) == nil
}

// selectList matches the source columns to the table's by name and returns
// the SELECT list that yields the table's columns, in table order, plus the
// indexes of the source columns it reads. Names match exactly, else
// case-insensitively (as in DuckDB and Delta); absent nullable columns are
// NULL.
func selectList(schema *delta.StructType, src []srcColumn) (string, []int, error) {
	lower := map[string][]*delta.StructField{}
	for _, f := range schema.Fields {
		k := strings.ToLower(f.Name)
		lower[k] = append(lower[k], f)
	}
	from := map[string]int{} // table column -> source column index
	var used []int
	for i, c := range src {
		if isMetadataColumn(schema, c.name) {
			continue
		}
		f := schema.Field(c.name)
		if f == nil {
			if cands := lower[strings.ToLower(c.name)]; len(cands) == 1 {
				f = cands[0]
			}
		}
		if f == nil {
			return "", nil, fmt.Errorf("%w: column %q is not in the table (columns: %s)",
				catalogadapter.ErrInvalid, c.name, strings.Join(schema.FieldNames(), ", "))
		}
		if j, dup := from[f.Name]; dup {
			return "", nil, fmt.Errorf("%w: columns %q and %q both write table column %q",
				catalogadapter.ErrInvalid, src[j].name, c.name, f.Name)
		}
		if !typeAccepted(c, f.Type) {
			return "", nil, fmt.Errorf("%w: column %q: cannot write %s into a %s column",
				catalogadapter.ErrInvalid, c.name, c.typeName, f.Type)
		}
		if !f.Nullable && c.nulls > 0 {
			return "", nil, fmt.Errorf("%w: %d NULL value(s) in NOT NULL column %q",
				catalogadapter.ErrInvalid, c.nulls, f.Name)
		}
		from[f.Name] = i
		used = append(used, i)
	}
	exprs := make([]string, len(schema.Fields))
	for k, f := range schema.Fields {
		i, ok := from[f.Name]
		switch {
		case ok:
			exprs[k] = fmt.Sprintf("%s AS %s", sqlquote.Ident(src[i].name), sqlquote.Ident(f.Name))
		case f.Nullable:
			exprs[k] = "NULL AS " + sqlquote.Ident(f.Name)
		default:
			return "", nil, fmt.Errorf("%w: NOT NULL column %q is missing", catalogadapter.ErrInvalid, f.Name)
		}
	}
	// Keep the source order of used columns: the projected record follows it.
	return strings.Join(exprs, ", "), used, nil
}

// typeAccepted tells whether a source column may be written into a column
// of type to: the same type, or a widening that loses nothing.
func typeAccepted(c srcColumn, to delta.DataType) bool {
	if c.typ == nil {
		switch to.(type) {
		case *delta.StructType, *delta.ArrayType, *delta.MapType:
			return true // nested DuckDB types: CAST decides
		}
		return strings.EqualFold(strings.Trim(c.typeName, `"`), "NULL")
	}
	return assignable(c.typ, to)
}

// intDigits is the decimal digits each integer type needs, by rank.
var intDigits = map[int]int{1: 3, 2: 5, 3: 10, 4: 19}

func intRank(t delta.DataType) int {
	switch t {
	case delta.TypeByte:
		return 1
	case delta.TypeShort:
		return 2
	case delta.TypeInteger:
		return 3
	case delta.TypeLong:
		return 4
	}
	return 0
}

// assignable is Delta's lossless widening: integers to wider integers, to
// double (up to integer) or to a decimal with room for them; float to
// double; decimals to decimals with as many integer and fraction digits.
// Decimals also go into double, since DuckDB types numeric literals such
// as 1.5 as decimals. timestamp and timestamp_ntz do not mix: one is an
// instant, the other a wall clock.
func assignable(from, to delta.DataType) bool {
	if from == nil || to == nil {
		return false
	}
	if from.String() == to.String() {
		return true
	}
	fr, tr := intRank(from), intRank(to)
	if fr > 0 && tr > 0 {
		return fr <= tr
	}
	if to == delta.TypeDouble {
		_, dec := from.(delta.DecimalType)
		return dec || from == delta.TypeFloat || (fr > 0 && fr <= 3)
	}
	if td, ok := to.(delta.DecimalType); ok {
		if fd, ok := from.(delta.DecimalType); ok {
			return td.Scale >= fd.Scale && td.Precision-td.Scale >= fd.Precision-fd.Scale
		}
		if fr > 0 {
			return td.Precision-td.Scale >= intDigits[fr]
		}
	}
	return false
}

// duckDBType maps a DuckDB type name from DESCRIBE to a Delta type, or nil
// when there is no plain equivalent.
func duckDBType(s string) delta.DataType {
	u := strings.ToUpper(strings.TrimSpace(s))
	switch u {
	case "BOOLEAN":
		return delta.TypeBoolean
	case "TINYINT":
		return delta.TypeByte
	case "SMALLINT", "UTINYINT":
		return delta.TypeShort
	case "INTEGER", "USMALLINT":
		return delta.TypeInteger
	case "BIGINT", "UINTEGER":
		return delta.TypeLong
	case "FLOAT":
		return delta.TypeFloat
	case "DOUBLE":
		return delta.TypeDouble
	case "VARCHAR":
		return delta.TypeString
	case "BLOB":
		return delta.TypeBinary
	case "DATE":
		return delta.TypeDate
	case "TIMESTAMP WITH TIME ZONE", "TIMESTAMPTZ":
		return delta.TypeTimestamp
	case "TIMESTAMP", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS":
		return delta.TypeTimestampNTZ
	}
	if strings.HasPrefix(u, "ENUM(") {
		return delta.TypeString
	}
	if strings.HasPrefix(u, "DECIMAL(") && strings.HasSuffix(u, ")") {
		ps := strings.Split(u[len("DECIMAL("):len(u)-1], ",")
		if len(ps) == 2 {
			p, err1 := strconv.Atoi(strings.TrimSpace(ps[0]))
			sc, err2 := strconv.Atoi(strings.TrimSpace(ps[1]))
			if err1 == nil && err2 == nil && p >= 1 && p <= delta.MaxDecimalPrecision && sc >= 0 && sc <= p {
				return delta.DecimalType{Precision: p, Scale: sc}
			}
		}
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand panics rather than return short)
	return hex.EncodeToString(b)
}
