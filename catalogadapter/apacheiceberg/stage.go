package apacheiceberg

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/sqlquote"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// receiptMeta is a receipt's metadata: the staged files, each able to be
// committed or deleted by another process.
type receiptMeta struct {
	Files []icetable.StagedFile `json:"files"`
	// Schema is the schema the files were written for when that is a
	// schema the commit makes (Source.Evolve); see evolve.go.
	Schema json.RawMessage `json:"schema,omitempty"`
	// DVRead, on the receipt of an upsert's deletion vectors, is the
	// snapshot the deleted rows were found in (-1: the table was empty):
	// data committed after it may hold keys the deletes missed.
	DVRead *int64 `json:"dv_read_snapshot,omitempty"`
}

// receipt turns written files into a receipt. Rows and Files count data
// files only; Bytes counts everything written.
func receipt(meta table.Metadata, files []ice.DataFile) (catalogadapter.Receipt, error) {
	return receiptOf(meta, files, receiptMeta{}, nil)
}

// receiptOf is receipt with rm's fields besides the files, and each
// deletion vector's base from bases (by its data file); a file's bytes
// count once however many entries name it (the DVs of one Puffin file).
func receiptOf(meta table.Metadata, files []ice.DataFile, rm receiptMeta, bases map[string]icetable.DVBase) (catalogadapter.Receipt, error) {
	rm.Files = []icetable.StagedFile{}
	var r catalogadapter.Receipt
	counted := map[string]bool{}
	for _, f := range files {
		s, err := icetable.Stage(meta, f)
		if err != nil {
			return catalogadapter.Receipt{}, mapErr(err)
		}
		if ref := f.ReferencedDataFile(); ref != nil && table.IsDeletionVector(f) {
			base, ok := bases[*ref]
			if !ok {
				return catalogadapter.Receipt{}, fmt.Errorf("%w: deletion vector for %s without its base", catalogadapter.ErrInvalid, *ref)
			}
			s.DVBase = &base
		}
		rm.Files = append(rm.Files, s)
		if !counted[s.Path] {
			r.Bytes += s.Bytes
		}
		counted[s.Path] = true
		if s.Content == icetable.ContentData {
			r.Files++
			r.Rows += s.Rows
		}
	}
	var err error
	r.Metadata, err = json.Marshal(rm)
	return r, err
}

// decodeReceipts reads the staged files out of receipts, and the oldest
// snapshot an upsert's deletion vectors were found in (nil: none).
func decodeReceipts(receipts []catalogadapter.Receipt) ([]icetable.StagedFile, *int64, error) {
	var out []icetable.StagedFile
	var dvRead *int64
	seen := map[string]bool{}
	for i, r := range receipts {
		if len(strings.TrimSpace(string(r.Metadata))) == 0 {
			continue
		}
		var rm receiptMeta
		if err := json.Unmarshal(r.Metadata, &rm); err != nil {
			return nil, nil, fmt.Errorf("%w: receipt %d: metadata is not a list of staged Iceberg files: %w", catalogadapter.ErrInvalid, i, err)
		}
		if rm.DVRead != nil && (dvRead == nil || *rm.DVRead < *dvRead) {
			dvRead = rm.DVRead
		}
		for j, f := range rm.Files {
			// The DVs of one Puffin file share its path: each is told
			// apart by its entry (its data file), checked at decoding.
			key := f.Path
			if f.DVBase != nil {
				key = f.Path + "\x00" + string(f.Entry)
			}
			switch {
			case f.Path == "" || len(f.Entry) == 0:
				return nil, nil, fmt.Errorf("%w: receipt %d, file %d: no path or entry", catalogadapter.ErrInvalid, i, j)
			case f.Content == icetable.ContentPosDeletes && (f.DVBase == nil || rm.DVRead == nil):
				return nil, nil, fmt.Errorf("%w: receipt %d: position deletes %s are not a deletion vector of an upsert", catalogadapter.ErrInvalid, i, f.Path)
			case f.Content != icetable.ContentData && f.Content != icetable.ContentEqDeletes && f.Content != icetable.ContentPosDeletes:
				return nil, nil, fmt.Errorf("%w: receipt %d: file %s has content %q", catalogadapter.ErrInvalid, i, f.Path, f.Content)
			case seen[key]:
				return nil, nil, fmt.Errorf("%w: receipt %d: file %s is staged twice", catalogadapter.ErrInvalid, i, f.Path)
			}
			seen[key] = true
			out = append(out, f)
		}
	}
	return out, dvRead, nil
}

func (p *Provider) targetFileSize() int64 { return p.opts.TargetFileSize }

// WriteBatch implements catalogadapter.ArrowStager: iceberg-go writes the
// record as Parquet data files of the table (partitioned, with field ids
// and statistics) and nothing is committed. Columns are matched to the
// table's by name (exactly, else ignoring case); metadata columns
// (leading _) are skipped, absent nullable columns are NULL, and values
// are cast to the table's types where Arrow can do so losslessly.
func (p *Provider) WriteBatch(ctx context.Context, id catalogadapter.TableIdent, rec arrow.RecordBatch) (catalogadapter.Receipt, error) {
	ctx = p.cat.WithIO(ctx) // one AWS configuration for every FileIO the call opens
	if rec == nil {
		return catalogadapter.Receipt{}, fmt.Errorf("write batch to %s: %w: nil record", id, catalogadapter.ErrInvalid)
	}
	tbl, _, err := p.load(ctx, id)
	if err != nil {
		return catalogadapter.Receipt{}, err
	}
	return p.writeBatch(ctx, id, tbl, rec)
}

// writeBatch is WriteBatch into the table as loaded.
func (p *Provider) writeBatch(ctx context.Context, id catalogadapter.TableIdent, tbl *table.Table, rec arrow.RecordBatch) (catalogadapter.Receipt, error) {
	out, err := conform(ctx, tbl, rec)
	if err != nil {
		return catalogadapter.Receipt{}, fmt.Errorf("write batch to %s: %w", id, err)
	}
	if out.NumRows() == 0 {
		out.Release()
		return receipt(tbl.Metadata(), nil)
	}
	staged := p.opts.Now()
	recs := func(yield func(arrow.RecordBatch, error) bool) { yield(out, nil) }
	files, err := icetable.WriteFiles(ctx, tbl, out.Schema(), recs, p.targetFileSize())
	if err != nil {
		return catalogadapter.Receipt{}, fmt.Errorf("write batch to %s: %w", id, mapErr(err))
	}
	r, err := receipt(tbl.Metadata(), files)
	if err != nil {
		return r, err
	}
	return stamped(r, staged)
}

// conform builds a record with exactly the table's columns, in order.
func conform(ctx context.Context, tbl *table.Table, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	want, err := icetable.ArrowSchema(tbl.Schema())
	if err != nil {
		return nil, mapErr(err)
	}
	rs := rec.Schema()
	if rs == nil || rs.NumFields() != int(rec.NumCols()) {
		return nil, fmt.Errorf("%w: record schema does not match its columns", catalogadapter.ErrInvalid)
	}
	from := map[string]int{}
	for i, f := range rs.Fields() {
		if strings.HasPrefix(f.Name, "_") && len(want.FieldIndices(f.Name)) == 0 {
			continue
		}
		name := f.Name
		if len(want.FieldIndices(name)) == 0 {
			for _, w := range want.Fields() {
				if strings.EqualFold(w.Name, name) {
					name = w.Name
				}
			}
		}
		if len(want.FieldIndices(name)) == 0 {
			return nil, fmt.Errorf("%w: column %q is not in the table", catalogadapter.ErrInvalid, f.Name)
		}
		if _, dup := from[name]; dup {
			return nil, fmt.Errorf("%w: two columns write table column %q", catalogadapter.ErrInvalid, name)
		}
		from[name] = i
	}
	n := rec.NumRows()
	cols := make([]arrow.Array, want.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, w := range want.Fields() {
		src, ok := from[w.Name]
		switch {
		case !ok && !w.Nullable:
			return nil, fmt.Errorf("%w: NOT NULL column %q is missing", catalogadapter.ErrInvalid, w.Name)
		case !ok:
			cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, w.Type, int(n))
			continue
		}
		col := rec.Column(src)
		if col.Len() != int(n) {
			return nil, fmt.Errorf("%w: column %q has %d values, the record %d rows", catalogadapter.ErrInvalid, w.Name, col.Len(), n)
		}
		if !arrow.TypeEqual(col.DataType(), w.Type) {
			cast, err := compute.CastArray(ctx, col, compute.SafeCastOptions(w.Type))
			if err != nil {
				return nil, fmt.Errorf("%w: column %q: cannot write %s into %s: %w", catalogadapter.ErrInvalid, w.Name, col.DataType(), w.Type, err)
			}
			col = cast
		} else {
			col.Retain()
		}
		cols[i] = col
		if !w.Nullable && col.NullN() > 0 {
			return nil, fmt.Errorf("%w: %d NULL value(s) in NOT NULL column %q", catalogadapter.ErrInvalid, col.NullN(), w.Name)
		}
	}
	return array.NewRecordBatch(want, cols, n), nil
}

// sqlConn returns a single DuckDB connection for q: views and temp tables
// live on one connection, so a *sql.Conn is used as it is.
func sqlConn(ctx context.Context, q catalogadapter.Querier) (*sql.Conn, func(), error) {
	switch c := q.(type) {
	case *sql.Conn:
		return c, func() {}, nil
	case *sql.DB:
		conn, err := c.Conn(ctx)
		if err != nil {
			return nil, nil, err
		}
		return conn, func() { conn.Close() }, nil
	}
	return nil, nil, fmt.Errorf("%w: staging from DuckDB needs a *sql.Conn or *sql.DB, got %T", catalogadapter.ErrUnsupported, q)
}

// StageSQL implements catalogadapter.Provider. For an unpartitioned table of
// primitive columns DuckDB writes the Parquet files itself (with field
// ids) and iceberg-go reads their footers into DataFiles; on object
// storage they are written to the catalog's cache folder first and then
// uploaded through the table's FileIO. Otherwise DuckDB hands the rows
// over as Arrow and iceberg-go's writer partitions and writes them,
// through the table's FileIO wherever the table is.
func (p *Provider) StageSQL(ctx context.Context, id catalogadapter.TableIdent, q catalogadapter.Querier, source catalogadapter.Source) (catalogadapter.Receipt, error) {
	ctx = p.cat.WithIO(ctx) // one AWS configuration for every FileIO the call opens
	query := strings.TrimRight(strings.TrimSpace(source.Query), "; \t\r\n")
	if q == nil || query == "" {
		return catalogadapter.Receipt{}, fmt.Errorf("stage SQL into %s: %w: nil querier or empty query", id, catalogadapter.ErrInvalid)
	}
	tbl, _, err := p.load(ctx, id)
	if err != nil {
		return catalogadapter.Receipt{}, err
	}
	if len(source.Evolve) > 0 {
		if tbl, err = evolvedTable(ctx, tbl, source.Evolve); err != nil {
			return catalogadapter.Receipt{}, fmt.Errorf("stage SQL into %s: %w", id, err)
		}
	}
	conn, done, err := sqlConn(ctx, q)
	if err != nil {
		return catalogadapter.Receipt{}, fmt.Errorf("stage SQL into %s: %w", id, err)
	}
	defer done()
	var names []string
	if source.Columns == nil {
		if names, err = describeNames(ctx, conn, query); err != nil {
			return catalogadapter.Receipt{}, fmt.Errorf("stage SQL into %s: %w", id, err)
		}
	}
	for _, c := range source.Columns {
		names = append(names, c.Name)
	}
	staged := p.opts.Now()
	files, err := p.writeRows(ctx, tbl, conn, query, names, p.targetFileSize())
	if err != nil {
		return catalogadapter.Receipt{}, fmt.Errorf("stage SQL into %s: %w", id, err)
	}
	receiptFor := receipt
	if len(source.Evolve) > 0 {
		receiptFor = evolvedReceipt
	}
	r, err := receiptFor(tbl.Metadata(), files)
	if err != nil {
		return r, err
	}
	return stamped(r, staged)
}

// writeRows writes the rows of query, whose columns are names, as data
// files of tbl aiming at target bytes (0: the table's own target), and
// commits nothing: DuckDB's COPY where it can serve the table, else
// iceberg-go's writer.
func (p *Provider) writeRows(ctx context.Context, tbl *table.Table, conn *sql.Conn, query string, names []string, target int64) ([]ice.DataFile, error) {
	sel, err := selectList(tbl, names)
	if err != nil {
		return nil, err
	}
	src := "SELECT " + sel + " FROM (" + query + ") AS lakesql_src"
	var files []ice.DataFile
	if !p.opts.IcebergGoWriter {
		files, err = icetable.CopyQuery(ctx, tbl, conn, src, icetable.CopyOptions{TargetFileSize: target, CacheDir: p.cat.CacheDir(), Now: p.opts.Now})
	}
	if p.opts.IcebergGoWriter || errors.Is(err, icetable.ErrUnsupported) {
		files, err = icetable.WriteQuery(ctx, tbl, conn, src, target)
	}
	return files, mapErr(err)
}

// describeNames asks DuckDB for the names of the columns query yields.
func describeNames(ctx context.Context, conn *sql.Conn, query string) ([]string, error) {
	rows, err := conn.QueryContext(ctx, "SELECT column_name FROM (DESCRIBE SELECT * FROM ("+query+") AS lakesql_src)")
	if err != nil {
		return nil, fmt.Errorf("describe query: %w", err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, fmt.Errorf("describe query: %w", err)
		}
		names = append(names, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("describe query: %w", err)
	}
	return names, nil
}

// selectList matches the source's column names to the table's and returns
// the SELECT list yielding the table's columns, in table order, cast to
// their types; absent nullable columns are NULL.
func selectList(tbl *table.Table, names []string) (string, error) {
	have := make(map[string]string, len(names))
	for _, c := range names {
		have[strings.ToLower(c)] = c
	}
	schema := tbl.Schema()
	used := map[string]bool{}
	var parts []string
	for _, f := range schema.Fields() {
		t, err := icetable.DuckDBType(f.Type)
		if err != nil {
			return "", mapErr(err)
		}
		src, ok := have[strings.ToLower(f.Name)]
		switch {
		case ok:
			used[strings.ToLower(f.Name)] = true
			parts = append(parts, fmt.Sprintf("CAST(%s AS %s) AS %s", sqlquote.Ident(src), t, sqlquote.Ident(f.Name)))
		case !f.Required:
			parts = append(parts, fmt.Sprintf("CAST(NULL AS %s) AS %s", t, sqlquote.Ident(f.Name)))
		default:
			return "", fmt.Errorf("%w: NOT NULL column %q is missing", catalogadapter.ErrInvalid, f.Name)
		}
	}
	for k, c := range have {
		if !used[k] && !strings.HasPrefix(c, "_") {
			return "", fmt.Errorf("%w: column %q is not in the table", catalogadapter.ErrInvalid, c)
		}
	}
	return strings.Join(parts, ", "), nil
}

// StageRowDelta implements catalogadapter.RowDeltaStager: the keys become
// equality-delete files on the key columns, the rows data files; Commit
// adds both in one snapshot. Equality deletes cannot serve format
// version 1 tables, floating-point or nested keys, partitioned tables
// whose partition columns are not all key columns, or partitioned tables
// that still hold data files of an older partition spec: those fail with
// ErrUnsupported, and the sink rewrites files instead.
func (p *Provider) StageRowDelta(ctx context.Context, id catalogadapter.TableIdent, q catalogadapter.Querier, key []string, keysQuery, rowsQuery string) ([]catalogadapter.Receipt, error) {
	ctx = p.cat.WithIO(ctx) // one AWS configuration for every FileIO the call opens
	tbl, _, err := p.load(ctx, id)
	if err != nil {
		return nil, err
	}
	if tbl.Metadata().Version() >= icetable.MinDVFormatVersion {
		return p.stageDeletionVectors(ctx, id, tbl, q, key, keysQuery, rowsQuery)
	}
	cols, ids, err := icetable.EqualityColumns(ctx, tbl, key)
	if err != nil {
		return nil, fmt.Errorf("stage row delta into %s: %w", id, mapErr(err))
	}
	if len(cols) != len(key) {
		return nil, fmt.Errorf("stage row delta into %s: %w: key %v", id, catalogadapter.ErrInvalid, key)
	}
	conn, done, err := sqlConn(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("stage row delta into %s: %w", id, err)
	}
	defer done()
	sel, err := icetable.DuckDBSelect(tbl.Schema(), cols)
	if err != nil {
		return nil, fmt.Errorf("stage row delta into %s: %w", id, mapErr(err))
	}
	dels, err := icetable.WriteEqualityDeletesQuery(ctx, tbl, conn, "SELECT DISTINCT "+sel+" FROM ("+keysQuery+") AS lakesql_keys", ids)
	if err != nil {
		return nil, fmt.Errorf("stage row delta into %s: %w", id, mapErr(err))
	}
	delReceipt, err := receipt(tbl.Metadata(), dels)
	if err != nil {
		return nil, errors.Join(err, p.removeFiles(ctx, tbl, dels))
	}
	rowReceipt, err := p.StageSQL(ctx, id, conn, catalogadapter.Source{Query: rowsQuery})
	if err != nil {
		return nil, errors.Join(err, p.removeFiles(ctx, tbl, dels))
	}
	return []catalogadapter.Receipt{delReceipt, rowReceipt}, nil
}
