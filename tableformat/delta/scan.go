package delta

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakesql/lakesql/internal/duckarrow"
	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/tableformat/filecache"
)

// Querier runs SQL on DuckDB; *sql.DB, *sql.Conn and *sql.Tx satisfy it.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Column names DuckDB adds to scans; chosen so they cannot clash with
// ordinary table columns.
const (
	fileColumn   = "__lakesql_delta_file"
	rowNumColumn = "file_row_number"
)

// ScanSQL returns a DuckDB SELECT that yields the snapshot's rows under the
// table's logical column names and types, partition values included, and
// rows removed by deletion vectors left out. The DuckDB session must use
// TimeZone 'UTC' (see PrepareDuckDB), since timestamps are cast under it.
func (s *Snapshot) ScanSQL(ctx context.Context, q Querier) (string, error) {
	return s.ScanFilesSQL(ctx, q, s.files)
}

// ScanFilesSQL is ScanSQL restricted to some of the snapshot's files: the
// rows a copy-on-write rewrite must carry over.
func (s *Snapshot) ScanFilesSQL(ctx context.Context, q Querier, files []*Add) (string, error) {
	query, _, err := s.scanFilesSQL(ctx, q, files, false)
	return query, err
}

// scanFilesSQL is ScanFilesSQL; with positions, each row also carries the
// local path of its file (fileColumn) and its index in it (rowNumColumn),
// and the map returned tells the add action of each local path.
func (s *Snapshot) scanFilesSQL(ctx context.Context, q Querier, files []*Add, positions bool) (string, map[*Add]string, error) {
	schema, err := s.Schema()
	if err != nil {
		return "", nil, err
	}
	mode := s.Metadata.Configuration["delta.columnMapping.mode"]
	if mode != "" && mode != "none" && mode != "name" && mode != "id" {
		return "", nil, unsupported("column mapping mode %q", mode)
	}
	parts := map[string]bool{}
	for _, c := range s.Metadata.PartitionColumns {
		if schema.Field(c) == nil {
			return "", nil, corrupt("partition column %q is not in the schema", c)
		}
		parts[c] = true
	}
	var plain, withDV []*Add
	paths, err := s.table.localPaths(ctx, files, s.Version)
	if err != nil {
		return "", nil, err
	}
	for _, f := range files {
		if f.DeletionVector != nil {
			withDV = append(withDV, f)
		} else {
			plain = append(plain, f)
		}
	}
	if len(files) == 0 {
		q, err := s.emptySQL(schema)
		return q, nil, err
	}
	allPaths := make([]string, 0, len(files))
	for _, f := range files {
		allPaths = append(allPaths, paths[f])
	}
	mapped := mode != "" && mode != "none"
	trees, err := parquetSchemas(ctx, q, allPaths)
	if err != nil {
		return "", nil, err
	}
	byID := mode == "id" && len(parts) < len(schema.Fields)
	readOpts := "union_by_name = true"
	if byID {
		if err := checkFieldIDs(trees, schema, parts); err != nil {
			return "", nil, err
		}
		if readOpts, err = fieldIDSchema(schema, parts); err != nil {
			return "", nil, err
		}
	}
	// selectFor is the select list over some of the files: a column none of
	// them holds (added to the schema after they were written) is NULL.
	selectFor := func(ps []string) (string, error) {
		present, err := presentColumns(trees, ps, schema, byID)
		if err != nil {
			return "", err
		}
		return s.selectList(schema, parts, present, mapped)
	}
	// Under column mapping, partitionValues are keyed by physical name.
	pkeys := make([]string, len(s.Metadata.PartitionColumns))
	for i, c := range s.Metadata.PartitionColumns {
		pkeys[i] = physicalName(schema.Field(c), mapped)
	}
	rowNums, posCols := "", ""
	if positions {
		rowNums = ", file_row_number = true"
		posCols = fmt.Sprintf(", d.%s, d.%s", sqlquote.Ident(fileColumn), rowNumColumn)
	}
	var branches []string
	if len(plain) > 0 {
		ps := make([]string, len(plain))
		for i, f := range plain {
			ps[i] = paths[f]
		}
		sel, err := selectFor(ps)
		if err != nil {
			return "", nil, err
		}
		sel += posCols
		from := fmt.Sprintf("read_parquet(%s, %s, filename = '%s'%s) AS d", sqlList(ps), readOpts, fileColumn, rowNums)
		branches = append(branches, branch(sel, from, pkeys, plain, paths, ""))
	}
	rules := s.table.rules()
	for _, f := range withDV {
		if err := rules.checkDeletionVector(f.DeletionVector, s.Version); err != nil {
			return "", nil, fmt.Errorf("deletion vector of %s: %w", f.Path, err)
		}
		rows, err := LoadDeletionVector(ctx, s.table.store, f.DeletionVector)
		if err != nil {
			return "", nil, fmt.Errorf("deletion vector of %s: %w", f.Path, err)
		}
		sel, err := selectFor([]string{paths[f]})
		if err != nil {
			return "", nil, err
		}
		sel += posCols
		from := fmt.Sprintf("read_parquet(%s, %s, filename = '%s', file_row_number = true) AS d",
			sqlList([]string{paths[f]}), readOpts, fileColumn)
		where := ""
		if len(rows) > 0 {
			nums := make([]string, len(rows))
			for i, r := range rows {
				nums[i] = strconv.FormatUint(r, 10)
			}
			// One string split by DuckDB: a list literal of as many
			// numbers costs several times more to parse than the scan.
			where = fmt.Sprintf("d.%s NOT IN (SELECT CAST(unnest(string_split('%s', ',')) AS UBIGINT))", rowNumColumn, strings.Join(nums, ","))
		}
		branches = append(branches, branch(sel, from, pkeys, []*Add{f}, paths, where))
	}
	return strings.Join(branches, "\nUNION ALL\n"), paths, nil
}

// branch is one SELECT over files, joined with their partition values.
func branch(sel, from string, pkeys []string, files []*Add, paths map[*Add]string, where string) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	b.WriteString(sel)
	b.WriteString(" FROM ")
	b.WriteString(from)
	if pcs := pkeys; len(pcs) > 0 {
		b.WriteString(" JOIN (VALUES ")
		for i, f := range files {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(")
			b.WriteString(sqlquote.String(paths[f]))
			for _, c := range pcs {
				b.WriteString(", ")
				v := f.PartitionValues[c]
				if v == nil || *v == "" { // the protocol reads "" as null
					b.WriteString("NULL::VARCHAR")
				} else {
					b.WriteString(sqlquote.String(*v))
				}
			}
			b.WriteString(")")
		}
		b.WriteString(") AS p(")
		b.WriteString(sqlquote.Ident(fileColumn))
		for i := range pcs {
			fmt.Fprintf(&b, ", pv%d", i)
		}
		fmt.Fprintf(&b, ") ON d.%s = p.%s", sqlquote.Ident(fileColumn), sqlquote.Ident(fileColumn))
	}
	if where != "" {
		b.WriteString(" WHERE ")
		b.WriteString(where)
	}
	return b.String()
}

// selectList maps each logical column to an expression over the scan.
func (s *Snapshot) selectList(schema *StructType, parts map[string]bool, present map[string]bool, mapped bool) (string, error) {
	pidx := map[string]int{}
	for i, c := range s.Metadata.PartitionColumns {
		pidx[c] = i
	}
	cols := make([]string, 0, len(schema.Fields))
	for _, f := range schema.Fields {
		typ, err := DuckDBType(f.Type)
		if err != nil {
			return "", fmt.Errorf("column %q: %w", f.Name, err)
		}
		var expr string
		switch {
		case parts[f.Name]:
			src := fmt.Sprintf("p.pv%d", pidx[f.Name])
			if f.Type == TypeBinary {
				src = "encode(" + src + ")"
			}
			expr = fmt.Sprintf("CAST(%s AS %s)", src, typ)
		default:
			phys := physicalName(f, mapped)
			if !present[phys] {
				expr = fmt.Sprintf("CAST(NULL AS %s)", typ)
				break
			}
			inner, err := mappedExpr(f.Type, "d."+sqlquote.Ident(phys), mapped, 0)
			if err != nil {
				return "", fmt.Errorf("column %q: %w", f.Name, err)
			}
			expr = fmt.Sprintf("CAST(%s AS %s)", inner, typ)
		}
		cols = append(cols, expr+" AS "+sqlquote.Ident(f.Name))
	}
	return strings.Join(cols, ", "), nil
}

// physicalName is the column's name in the data files.
func physicalName(f *StructField, mapped bool) string {
	if mapped {
		if p, ok := f.Metadata["delta.columnMapping.physicalName"].(string); ok && p != "" {
			return p
		}
	}
	return f.Name
}

// mappedExpr renames nested struct fields from physical to logical names
// under column mapping; without it, the value passes through. depth keeps
// lambda parameter names distinct in nested lists and maps.
func mappedExpr(t DataType, src string, mapped bool, depth int) (string, error) {
	if !mapped || !hasStruct(t) {
		return src, nil
	}
	switch tt := t.(type) {
	case *StructType:
		fields := make([]string, len(tt.Fields))
		for i, f := range tt.Fields {
			inner, err := mappedExpr(f.Type, src+"."+sqlquote.Ident(physicalName(f, true)), true, depth)
			if err != nil {
				return "", err
			}
			fields[i] = sqlquote.Ident(f.Name) + " := " + inner
		}
		return fmt.Sprintf("CASE WHEN %s IS NULL THEN NULL ELSE struct_pack(%s) END", src, strings.Join(fields, ", ")), nil
	case *ArrayType:
		x := fmt.Sprintf("x%d", depth)
		inner, err := mappedExpr(tt.ElementType, x, true, depth+1)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("list_transform(%s, %s -> %s)", src, x, inner), nil
	case *MapType:
		e := fmt.Sprintf("e%d", depth)
		k, err := mappedExpr(tt.KeyType, e+".key", true, depth+1)
		if err != nil {
			return "", err
		}
		v, err := mappedExpr(tt.ValueType, e+".value", true, depth+1)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("map_from_entries(list_transform(map_entries(%s), %s -> struct_pack(key := %s, value := %s)))",
			src, e, k, v), nil
	}
	return src, nil
}

func hasStruct(t DataType) bool {
	switch tt := t.(type) {
	case *StructType:
		return true
	case *ArrayType:
		return hasStruct(tt.ElementType)
	case *MapType:
		return hasStruct(tt.KeyType) || hasStruct(tt.ValueType)
	}
	return false
}

func (s *Snapshot) emptySQL(schema *StructType) (string, error) {
	cols := make([]string, len(schema.Fields))
	for i, f := range schema.Fields {
		typ, err := DuckDBType(f.Type)
		if err != nil {
			return "", fmt.Errorf("column %q: %w", f.Name, err)
		}
		cols[i] = fmt.Sprintf("CAST(NULL AS %s) AS %s", typ, sqlquote.Ident(f.Name))
	}
	return "SELECT " + strings.Join(cols, ", ") + " WHERE false", nil
}

// presentColumns tells which physical top-level columns the files at
// paths hold. In column mapping id mode every data column is in the read
// (read_parquet's schema option yields NULL for one a file lacks).
func presentColumns(trees map[string]*parquetNode, paths []string, schema *StructType, byID bool) (map[string]bool, error) {
	out := map[string]bool{}
	if byID {
		for _, f := range schema.Fields {
			out[physicalName(f, true)] = true
		}
		return out, nil
	}
	for _, p := range paths {
		root, ok := trees[p]
		if !ok {
			return nil, fmt.Errorf("data file %s: DuckDB reported no Parquet schema for it", p)
		}
		for _, c := range root.children {
			out[c.name] = true
		}
	}
	return out, nil
}

// parquetNode is one element of a Parquet file's schema tree.
type parquetNode struct {
	name     string
	fieldID  sql.NullInt64
	children []*parquetNode
}

// parquetSchemas reads the schema tree of each file, keyed by its path.
func parquetSchemas(ctx context.Context, q Querier, paths []string) (map[string]*parquetNode, error) {
	rows, err := q.QueryContext(ctx, fmt.Sprintf(
		"SELECT file_name, name, num_children, field_id FROM parquet_schema(%s) ORDER BY file_name, column_id", sqlList(paths)))
	if err != nil {
		if strings.Contains(err.Error(), "No files found that match the pattern") {
			// The log names a file that is not there: the table lost data.
			return nil, fmt.Errorf("read data file schemas: %w: a data file the log names is missing: %w", ErrCorruptLog, err)
		}
		return nil, fmt.Errorf("read data file schemas: %w", err)
	}
	defer rows.Close()
	flat := map[string][]schemaElement{}
	for rows.Next() {
		var file string
		var n parquetNode
		var children sql.NullInt64
		if err := rows.Scan(&file, &n.name, &children, &n.fieldID); err != nil {
			return nil, fmt.Errorf("read data file schemas: %w", err)
		}
		flat[file] = append(flat[file], schemaElement{&n, children.Int64})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read data file schemas: %w", err)
	}
	out := make(map[string]*parquetNode, len(flat))
	for file, elems := range flat {
		if _, err := linkChildren(elems, 0); err != nil {
			return nil, fmt.Errorf("data file %s: %w", file, err)
		}
		out[file] = elems[0].node
	}
	return out, nil
}

// schemaElement is a row of parquet_schema: a node and its child count.
type schemaElement struct {
	node     *parquetNode
	children int64
}

// linkChildren gives elems[i] its children, which follow it depth first,
// and returns the index after its subtree.
func linkChildren(elems []schemaElement, i int) (int, error) {
	next := i + 1
	for k := int64(0); k < elems[i].children; k++ {
		if next >= len(elems) {
			return 0, fmt.Errorf("truncated Parquet schema")
		}
		elems[i].node.children = append(elems[i].node.children, elems[next].node)
		var err error
		if next, err = linkChildren(elems, next); err != nil {
			return 0, err
		}
	}
	return next, nil
}

// localPaths resolves the files to local paths, fetching several at a
// time from object storage (filecache.ForEach). version is the
// snapshot's, for errors.
func (t *Table) localPaths(ctx context.Context, files []*Add, version int64) (map[*Add]string, error) {
	r := t.rules()
	if r.local {
		out := make(map[*Add]string, len(files))
		for _, f := range files {
			p, err := t.dataFile(ctx, r, f.Path, version)
			if err != nil {
				return nil, err
			}
			out[f] = p
		}
		return out, nil
	}
	var mu sync.Mutex
	out := make(map[*Add]string, len(files))
	err := filecache.ForEach(ctx, files, func(f *Add) error {
		p, err := t.dataFile(ctx, r, f.Path, version)
		if err != nil {
			return err
		}
		mu.Lock()
		out[f] = p
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// fileKey turns a relative add path into its storage key; absolute paths
// and URIs are refused (DeleteFiles only deletes what WriteFiles wrote).
func (t *Table) fileKey(p string) (string, error) {
	if u, err := url.Parse(p); err == nil && u.Scheme != "" {
		return "", fmt.Errorf("%s is not relative to the table", p)
	}
	rel, err := url.PathUnescape(p)
	if err != nil {
		return "", corrupt("data file path %q: %v", p, err)
	}
	if strings.HasPrefix(rel, "/") {
		return "", fmt.Errorf("%s is not relative to the table", p)
	}
	if climbs(rel) {
		return "", fmt.Errorf("%s climbs out of the table", p)
	}
	return rel, nil
}

// prepareSQL is what PrepareDuckDB runs. SET GLOBAL covers the sessions
// without a TimeZone of their own, but not one that has one (a plain SET
// TimeZone is session-wide): SET SESSION covers the session at hand.
const prepareSQL = "SET GLOBAL TimeZone = 'UTC'; SET SESSION TimeZone = 'UTC'"

// PrepareDuckDB sets the session options ScanSQL relies on.
func PrepareDuckDB(ctx context.Context, db interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}) error {
	_, err := db.ExecContext(ctx, prepareSQL)
	return err
}

// Prepared returns query preceded by PrepareDuckDB's settings, to run in
// one call where a statement follows anyway: DuckDB runs the statements in
// order on one connection and returns the last one's rows, and each call
// saved is a round trip through database/sql and cgo.
func Prepared(query string) string { return prepareSQL + "; " + query }

// Scan streams the snapshot's rows as Arrow record batches, read by DuckDB
// on conn. The caller releases the reader and keeps conn open until then.
func (s *Snapshot) Scan(ctx context.Context, conn *sql.Conn) (array.RecordReader, error) {
	query, err := s.ScanSQL(ctx, conn)
	if err != nil {
		return nil, err
	}
	var rr array.RecordReader
	err = conn.Raw(func(dc any) error {
		ar, err := duckarrow.FromConn(dc.(driver.Conn))
		if err != nil {
			return err
		}
		rr, err = ar.QueryContext(ctx, query)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("scan version %d: %w", s.Version, err)
	}
	return rr, nil
}

func sqlList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = sqlquote.String(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
