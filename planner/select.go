package planner

// What a SELECT sees: the last committed version of each sink, on both
// routes, read when the statement starts. Inside an open transaction it
// does not see the transaction's own rows: they sit in the sinks' epoch
// buffers, not in the tables, until COMMIT. So INSERT ... SELECT from a
// sink the same transaction already wrote to reads only the committed
// rows, and two SELECTs in one transaction may see different versions if
// another session commits in between (read committed, no read-your-writes).
//
// The DuckDB route for SELECT. A SELECT over one sink whose every part has
// the same meaning in MySQL and in DuckDB is rendered as DuckDB SQL over the
// sink's last committed version (ScanSQL), so that projection, filtering,
// grouping, counting and sorting run inside DuckDB over the Parquet files.
// Anything else (joins, arithmetic, AVG of exact values, functions, subqueries, ...)
// goes to go-mysql-server, which reads the sink through the same scan,
// row by row: slower, never different.
//
// What is routed is a whitelist, rendered from the parsed statement, never
// the query text:
//
//	SELECT [DISTINCT] select_expr, ... FROM sink [[AS] alias]
//	  [WHERE cond] [GROUP BY col, ...] [HAVING cond]
//	  [ORDER BY expr [ASC|DESC], ...] [LIMIT n [OFFSET m]]
//
// select_expr: *, a column, COUNT(*), COUNT([DISTINCT] col), MIN(col),
// MAX(col), SUM([DISTINCT] col) of integers, DECIMAL(p ≤ 18), FLOAT and DOUBLE,
// AVG([DISTINCT] col) of FLOAT and DOUBLE, each with an optional alias. cond: comparisons (=, <>, !=, <,
// <=, >, >=) of columns and literals, AND, OR, NOT, IS [NOT] NULL,
// [NOT] BETWEEN, [NOT] IN (literals). ORDER BY keeps MySQL's NULL order
// (NULLs first ascending, last descending).

import (
	"context"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/sqlsink"
)

// duckPlan is a routed SELECT: its DuckDB text (without the sink's scan)
// and the go-mysql-server types of its result columns.
type duckPlan struct {
	h       *sinkHandle
	sink    *sqlsink.Sink
	body    string // the SELECT, reading from the CTE named sinkCTE
	columns []string
	types   []gms.Type
}

const sinkCTE = "__lakesql_sink"

// errNoRoute says the statement is not for the DuckDB route; it never
// reaches a user.
type errNoRoute struct{ why string }

func (e errNoRoute) Error() string { return "not routed to DuckDB: " + e.why }

func noRoute(format string, args ...any) error { return errNoRoute{fmt.Sprintf(format, args...)} }

// planDuck decides whether query takes the DuckDB route and renders it.
func (e *Engine) planDuck(ctx *gms.Context, query string) (*duckPlan, error) {
	st, err := gms.GlobalParser.ParseSimple(query)
	if err != nil {
		return nil, noRoute("parse: %v", err)
	}
	if err := CheckCost(st); err != nil {
		return nil, noRoute("%v", err) // go-mysql-server's parse refuses it
	}
	sel, ok := st.(*ast.Select)
	if !ok {
		return nil, noRoute("not a plain SELECT")
	}
	if sel.With != nil || sel.Into != nil || sel.Lock != "" || len(sel.Window) > 0 ||
		sel.QueryOpts.SQLCalcFoundRows || len(sel.From) != 1 {
		return nil, noRoute("clauses outside the whitelist")
	}
	ate, ok := sel.From[0].(*ast.AliasedTableExpr)
	if !ok || ate.AsOf != nil || len(ate.Partitions) > 0 || ate.Hints != nil || ate.Lateral {
		return nil, noRoute("FROM is not one table")
	}
	tn, ok := ate.Expr.(ast.TableName)
	if !ok {
		return nil, noRoute("FROM is not a table name")
	}
	if db := tn.DbQualifier.String(); db != "" && !strings.EqualFold(db, DatabaseName) {
		return nil, noRoute("another database")
	}
	if ctx.GetCurrentDatabase() != DatabaseName && tn.DbQualifier.IsEmpty() {
		return nil, noRoute("current database is not lakesql")
	}
	h, ok := e.lookup(tn.Name.String())
	if !ok {
		return nil, noRoute("not a sink")
	}
	sink, err := h.open(ctx)
	if err != nil {
		return nil, err // the user's error: the sink is unusable
	}
	gschema, _, err := h.schemaFor(sink)
	if err != nil {
		return nil, err
	}
	for _, f := range sink.Schema().Fields() {
		if isNested(f.Type) {
			// Their values are rendered as JSON in Go (nested.go).
			return nil, noRoute("nested column %s", f.Name)
		}
	}
	r := &duckRenderer{schema: gschema, table: strings.ToLower(tn.Name.String())}
	if !ate.As.IsEmpty() {
		r.alias = strings.ToLower(ate.As.String())
	}
	p := &duckPlan{h: h, sink: sink}
	aliases := map[string]bool{}
	var b strings.Builder
	b.WriteString("SELECT ")
	if sel.QueryOpts.Distinct {
		b.WriteString("DISTINCT ")
	}
	for i, se := range sel.SelectExprs {
		if i > 0 {
			b.WriteString(", ")
		}
		switch se := se.(type) {
		case *ast.StarExpr:
			if !se.TableName.IsEmpty() && !r.isTable(se.TableName) {
				return nil, noRoute("unknown qualifier")
			}
			for j, c := range gschema {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString(r.column(c))
				p.columns = append(p.columns, c.Name)
				p.types = append(p.types, c.Type)
			}
		case *ast.AliasedExpr:
			text, typ, err := r.selectExpr(se.Expr)
			if err != nil {
				return nil, err
			}
			name := se.InputExpression
			if !se.As.IsEmpty() {
				name = se.As.String()
				aliases[strings.ToLower(name)] = true
			} else if cn, ok := se.Expr.(*ast.ColName); ok {
				name = r.lookup(cn.Name.String()).Name
			}
			if name == "" {
				return nil, noRoute("unnamed column")
			}
			b.WriteString(text)
			b.WriteString(" AS ")
			b.WriteString(sqlquote.Ident(name))
			p.columns = append(p.columns, name)
			p.types = append(p.types, typ)
		default:
			return nil, noRoute("select expression %T", se)
		}
	}
	b.WriteString(" FROM " + sinkCTE)
	if sel.Where != nil {
		c, err := r.cond(sel.Where.Expr)
		if err != nil {
			return nil, err
		}
		b.WriteString(" WHERE " + c)
	}
	if len(sel.GroupBy) > 0 {
		b.WriteString(" GROUP BY ")
		for i, g := range sel.GroupBy {
			cn, ok := g.(*ast.ColName)
			if !ok {
				return nil, noRoute("GROUP BY an expression")
			}
			c, err := r.colName(cn)
			if err != nil {
				return nil, err
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c)
		}
	}
	if sel.Having != nil {
		if len(sel.GroupBy) == 0 {
			// MySQL lets HAVING without GROUP BY name the selected
			// columns (it filters rows then); DuckDB refuses a column
			// that is not aggregated there.
			return nil, noRoute("HAVING without GROUP BY")
		}
		r.allowAggregates = true
		c, err := r.cond(sel.Having.Expr)
		r.allowAggregates = false
		if err != nil {
			return nil, err
		}
		b.WriteString(" HAVING " + c)
	}
	if len(sel.OrderBy) > 0 {
		b.WriteString(" ORDER BY ")
		for i, o := range sel.OrderBy {
			if i > 0 {
				b.WriteString(", ")
			}
			var c string
			if cn, ok := o.Expr.(*ast.ColName); ok && cn.Qualifier.IsEmpty() && aliases[strings.ToLower(cn.Name.String())] {
				if r.hasColumn(cn.Name.String()) {
					return nil, noRoute("ORDER BY a name that is both an alias and a column")
				}
				// ORDER BY an alias of the select list.
				c = sqlquote.Ident(cn.Name.String())
			} else {
				var err error
				c, _, err = r.selectExpr(o.Expr)
				if err != nil {
					return nil, err
				}
			}
			b.WriteString(c)
			if o.Direction == ast.DescScr {
				b.WriteString(" DESC NULLS LAST")
			} else {
				b.WriteString(" ASC NULLS FIRST")
			}
		}
	}
	if sel.Limit != nil {
		if sel.Limit.Rowcount != nil {
			n, err := intLiteral(sel.Limit.Rowcount)
			if err != nil {
				return nil, err
			}
			b.WriteString(" LIMIT " + n)
		}
		if sel.Limit.Offset != nil {
			n, err := intLiteral(sel.Limit.Offset)
			if err != nil {
				return nil, err
			}
			b.WriteString(" OFFSET " + n)
		}
	}
	p.body = b.String()
	return p, nil
}

func intLiteral(e ast.Expr) (string, error) {
	v, ok := e.(*ast.SQLVal)
	if !ok || v.Type != ast.IntVal {
		return "", noRoute("LIMIT is not an integer literal")
	}
	if _, err := strconv.ParseUint(string(v.Val), 10, 63); err != nil {
		return "", noRoute("LIMIT out of range")
	}
	return string(v.Val), nil
}

// runDuck runs a routed SELECT over the sink's last committed version.
func (e *Engine) runDuck(ctx context.Context, gctx *gms.Context, p *duckPlan) (*Result, error) {
	scan, err := scanSQL(ctx, p.sink, e.db)
	if err != nil {
		return nil, fmt.Errorf("sink %s: %w", p.h.rec.Name, err)
	}
	q := "WITH " + sinkCTE + " AS (" + scan + ") " + p.body
	rows, err := e.db.QueryContext(ctx, q)
	if err != nil {
		return nil, duckFailed(ctx, err)
	}
	defer rows.Close()
	res := &Result{Columns: p.columns}
	for rows.Next() {
		vals := make([]any, len(p.columns))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i, v := range vals {
			if v == nil {
				continue
			}
			switch d := v.(type) {
			case duckdb.Decimal:
				v = d.String()
			case *big.Int: // HUGEINT: SUM of integers
				v = d.String()
			}
			if b, ok := v.(bool); ok {
				v = int8(0)
				if b {
					v = int8(1)
				}
			}
			cv, _, err := p.types[i].Convert(gctx, v)
			if err != nil {
				return nil, fmt.Errorf("sink %s: column %s: %w", p.h.rec.Name, p.columns[i], err)
			}
			vals[i] = cv
		}
		res.Rows = append(res.Rows, vals)
	}
	if err := rows.Err(); err != nil {
		return nil, duckFailed(ctx, err)
	}
	return res, nil
}

// duckFailed is the error of a routed query DuckDB failed: interrupted
// when the statement's context was cancelled (duckdb-go interrupts the
// query then), else DuckDB's own.
func duckFailed(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%w (%w)", errInterrupted, cerr)
	}
	return errDuckQuery{err}
}

// errDuckQuery is DuckDB failing on a routed query: the caller runs the
// query through go-mysql-server instead, which answers or gives its own,
// MySQL-style error.
type errDuckQuery struct{ err error }

func (e errDuckQuery) Error() string { return "DuckDB: " + e.err.Error() }
func (e errDuckQuery) Unwrap() error { return e.err }
