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
// Anything else (joins, arithmetic, SUM/AVG, functions, subqueries, ...)
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
// MAX(col), SUM([DISTINCT] col) of integers, FLOAT and DOUBLE,
// AVG([DISTINCT] col) of FLOAT and DOUBLE, each with an optional alias. cond: comparisons (=, <>, !=, <,
// <=, >, >=) of columns and literals, AND, OR, NOT, IS [NOT] NULL,
// [NOT] BETWEEN, [NOT] IN (literals). ORDER BY keeps MySQL's NULL order
// (NULLs first ascending, last descending).

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
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

type duckRenderer struct {
	schema          gms.Schema
	table, alias    string
	allowAggregates bool
}

func (r *duckRenderer) isTable(tn ast.TableName) bool {
	if db := tn.DbQualifier.String(); db != "" && !strings.EqualFold(db, DatabaseName) {
		return false
	}
	n := strings.ToLower(tn.Name.String())
	if r.alias != "" {
		return n == r.alias
	}
	return n == r.table
}

func (r *duckRenderer) lookup(name string) *gms.Column {
	for _, c := range r.schema {
		if strings.EqualFold(c.Name, name) {
			return c
		}
	}
	return nil
}

func (r *duckRenderer) hasColumn(name string) bool { return r.lookup(name) != nil }

// column renders a column reference.
func (r *duckRenderer) column(c *gms.Column) string {
	return sqlquote.Ident(c.Name)
}

func (r *duckRenderer) colName(cn *ast.ColName) (string, error) {
	if !cn.Qualifier.IsEmpty() && !r.isTable(cn.Qualifier) {
		return "", noRoute("unknown qualifier %s", cn.Qualifier.Name)
	}
	c := r.lookup(cn.Name.String())
	if c == nil {
		return "", noRoute("unknown column %s", cn.Name)
	}
	return r.column(c), nil
}

// selectExpr renders a select-list expression and gives its result type.
func (r *duckRenderer) selectExpr(e ast.Expr) (string, gms.Type, error) {
	switch e := e.(type) {
	case *ast.ColName:
		s, err := r.colName(e)
		if err != nil {
			return "", nil, err
		}
		return s, r.lookup(e.Name.String()).Type, nil
	case *ast.FuncExpr:
		if !e.Qualifier.IsEmpty() || e.Over != nil || len(e.Exprs) != 1 {
			return "", nil, noRoute("function form")
		}
		name := e.Name.Lowered()
		switch arg := e.Exprs[0].(type) {
		case *ast.StarExpr:
			if name != "count" || e.Distinct || !arg.TableName.IsEmpty() {
				return "", nil, noRoute("%s(*)", name)
			}
			return "count(*)", types.Int64, nil
		case *ast.AliasedExpr:
			cn, ok := arg.Expr.(*ast.ColName)
			if !ok {
				return "", nil, noRoute("aggregate of an expression")
			}
			c, err := r.colName(cn)
			if err != nil {
				return "", nil, err
			}
			distinct := ""
			if e.Distinct {
				distinct = "DISTINCT "
			}
			switch name {
			case "count":
				return "count(" + distinct + c + ")", types.Int64, nil
			case "min", "max":
				return name + "(" + c + ")", r.lookup(cn.Name.String()).Type, nil
			case "sum", "avg":
				return r.sum(name, distinct, c, r.lookup(cn.Name.String()).Type)
			}
			return "", nil, noRoute("function %s", name)
		}
		return "", nil, noRoute("function argument")
	}
	return "", nil, noRoute("select expression %T", e)
}

// sum renders SUM and AVG where DuckDB gives what go-mysql-server gives
// (the two routes must never differ): a DOUBLE for SUM and AVG of a FLOAT
// or DOUBLE, and for SUM of an integer (MySQL itself gives a DECIMAL
// there; go-mysql-server a DOUBLE). SUM of a DECIMAL and AVG of an integer
// or DECIMAL are left to go-mysql-server.
func (r *duckRenderer) sum(name, distinct, col string, t gms.Type) (string, gms.Type, error) {
	call := name + "(" + distinct + col + ")"
	switch {
	case types.IsFloat(t):
		return call, types.Float64, nil
	case name == "sum" && types.IsInteger(t):
		return "CAST(" + call + " AS DOUBLE)", types.Float64, nil
	}
	return "", nil, noRoute("%s of %s", name, t)
}

// cond renders a condition.
func (r *duckRenderer) cond(e ast.Expr) (string, error) {
	switch e := e.(type) {
	case *ast.AndExpr:
		return r.binary(e.Left, "AND", e.Right)
	case *ast.OrExpr:
		return r.binary(e.Left, "OR", e.Right)
	case *ast.NotExpr:
		c, err := r.cond(e.Expr)
		if err != nil {
			return "", err
		}
		return "(NOT " + c + ")", nil
	case *ast.ParenExpr:
		return r.cond(e.Expr)
	case *ast.ComparisonExpr:
		if e.Escape != nil {
			return "", noRoute("ESCAPE")
		}
		switch e.Operator {
		case ast.EqualStr, ast.LessThanStr, ast.GreaterThanStr, ast.LessEqualStr, ast.GreaterEqualStr, ast.NotEqualStr:
			if err := r.compatible(e.Left, e.Right); err != nil {
				return "", err
			}
			l, err := r.operand(e.Left)
			if err != nil {
				return "", err
			}
			rt, err := r.operand(e.Right)
			if err != nil {
				return "", err
			}
			return "(" + l + " " + e.Operator + " " + rt + ")", nil
		case ast.InStr, ast.NotInStr:
			l, err := r.operand(e.Left)
			if err != nil {
				return "", err
			}
			tuple, ok := e.Right.(ast.ValTuple)
			if !ok || len(tuple) == 0 {
				return "", noRoute("IN without a list")
			}
			items := make([]string, len(tuple))
			for i, v := range tuple {
				if err := r.compatible(e.Left, v); err != nil {
					return "", err
				}
				if items[i], err = r.literal(v); err != nil {
					return "", err
				}
			}
			op := "IN"
			if e.Operator == ast.NotInStr {
				op = "NOT IN"
			}
			return "(" + l + " " + op + " (" + strings.Join(items, ", ") + "))", nil
		}
		return "", noRoute("operator %s", e.Operator)
	case *ast.IsExpr:
		l, err := r.operand(e.Expr)
		if err != nil {
			return "", err
		}
		switch e.Operator {
		case ast.IsNullStr:
			return "(" + l + " IS NULL)", nil
		case ast.IsNotNullStr:
			return "(" + l + " IS NOT NULL)", nil
		}
		return "", noRoute("IS form %s", e.Operator)
	case *ast.RangeCond:
		if err := r.compatible(e.Left, e.From); err != nil {
			return "", err
		}
		if err := r.compatible(e.Left, e.To); err != nil {
			return "", err
		}
		l, err := r.operand(e.Left)
		if err != nil {
			return "", err
		}
		from, err := r.operand(e.From)
		if err != nil {
			return "", err
		}
		to, err := r.operand(e.To)
		if err != nil {
			return "", err
		}
		op := "BETWEEN"
		if e.Operator == ast.NotBetweenStr {
			op = "NOT BETWEEN"
		}
		return "(" + l + " " + op + " " + from + " AND " + to + ")", nil
	}
	return "", noRoute("condition %T", e)
}

func (r *duckRenderer) binary(l ast.Expr, op string, rt ast.Expr) (string, error) {
	a, err := r.cond(l)
	if err != nil {
		return "", err
	}
	b, err := r.cond(rt)
	if err != nil {
		return "", err
	}
	return "(" + a + " " + op + " " + b + ")", nil
}

// Operand kinds, for compatible.
const (
	kindNum     = "number"
	kindBool    = "boolean"
	kindStr     = "string"
	kindDate    = "date"
	kindDT      = "datetime"
	kindTS      = "timestamp"
	kindOther   = "other"
	kindNumLit  = "number literal"
	kindStrLit  = "string literal"
	kindNullLit = "NULL"
)

func kindOfType(t gms.Type) string {
	switch {
	case t.String() == types.Boolean.String():
		return kindBool
	case types.IsInteger(t), types.IsFloat(t), types.IsDecimal(t):
		return kindNum
	case types.IsTextOnly(t):
		return kindStr
	case types.IsDateType(t):
		return kindDate
	case types.IsTimestampType(t):
		return kindTS
	case types.IsDatetimeType(t):
		return kindDT
	}
	return kindOther
}

// kindOf classifies an operand; val is a literal's text.
func (r *duckRenderer) kindOf(e ast.Expr) (kind, val string) {
	switch e := e.(type) {
	case *ast.ColName:
		if c := r.lookup(e.Name.String()); c != nil {
			return kindOfType(c.Type), ""
		}
	case *ast.FuncExpr:
		if e.Name.Lowered() == "count" {
			return kindNum, ""
		}
		if len(e.Exprs) == 1 {
			if a, ok := e.Exprs[0].(*ast.AliasedExpr); ok {
				return r.kindOf(a.Expr)
			}
		}
	case *ast.SQLVal:
		switch e.Type {
		case ast.IntVal, ast.FloatVal:
			return kindNumLit, string(e.Val)
		case ast.StrVal:
			return kindStrLit, string(e.Val)
		}
	case *ast.UnaryExpr:
		if k, v := r.kindOf(e.Expr); k == kindNumLit && e.Operator == ast.UMinusStr {
			return kindNumLit, "-" + v
		}
	case *ast.NullVal:
		return kindNullLit, ""
	}
	return kindOther, ""
}

// compatible admits a comparison to the DuckDB route only when both
// engines compare the two operands the same way: numbers with numbers,
// strings with strings, dates and times with their own kind or with a
// string literal that is a valid value of it, booleans with 0 and 1. MySQL
// converts everything else (a string to a number, say) where DuckDB would
// fail or convert differently.
func (r *duckRenderer) compatible(a, b ast.Expr) error {
	ka, va := r.kindOf(a)
	kb, vb := r.kindOf(b)
	if ka == kindNullLit || kb == kindNullLit {
		return nil
	}
	if ka == kindNumLit || ka == kindStrLit {
		ka, kb, va, vb = kb, ka, vb, va
	}
	_ = va
	ok := false
	switch ka {
	case kindNum:
		ok = kb == kindNum || kb == kindNumLit
	case kindBool:
		ok = kb == kindBool || kb == kindNumLit && (vb == "0" || vb == "1")
	case kindStr:
		ok = kb == kindStr || kb == kindStrLit
	case kindDate:
		ok = kb == kindDate || kb == kindStrLit && validTime(vb, "2006-01-02")
	case kindDT, kindTS:
		ok = kb == ka || kb == kindStrLit && (validTime(vb, "2006-01-02") || validTime(vb, "2006-01-02 15:04:05.999999"))
	case kindNumLit:
		ok = kb == kindNumLit
	case kindStrLit:
		ok = kb == kindStrLit
	}
	if !ok {
		return noRoute("comparison of %s with %s", ka, kb)
	}
	return nil
}

func validTime(s, layout string) bool {
	_, err := time.Parse(layout, s)
	return err == nil
}

// operand is a column, a literal, or in HAVING an aggregate.
func (r *duckRenderer) operand(e ast.Expr) (string, error) {
	switch e := e.(type) {
	case *ast.ColName:
		return r.colName(e)
	case *ast.FuncExpr:
		if !r.allowAggregates {
			return "", noRoute("function in WHERE")
		}
		s, _, err := r.selectExpr(e)
		return s, err
	}
	return r.literal(e)
}

// literal renders a literal of the whitelist: strings, integers, decimals
// and NULL. A string compared with a number converts in both engines.
func (r *duckRenderer) literal(e ast.Expr) (string, error) {
	switch e := e.(type) {
	case *ast.SQLVal:
		switch e.Type {
		case ast.StrVal:
			return sqlquote.String(string(e.Val)), nil
		case ast.IntVal:
			if _, err := strconv.ParseInt(string(e.Val), 10, 64); err != nil {
				return "", noRoute("integer literal out of range")
			}
			return string(e.Val), nil
		case ast.FloatVal:
			if _, err := strconv.ParseFloat(string(e.Val), 64); err != nil || strings.ContainsAny(string(e.Val), "eE") {
				return "", noRoute("float literal")
			}
			return string(e.Val), nil
		}
		return "", noRoute("literal type %v", e.Type)
	case *ast.NullVal:
		return "NULL", nil
	case *ast.UnaryExpr:
		if e.Operator == ast.UMinusStr {
			if v, ok := e.Expr.(*ast.SQLVal); ok && (v.Type == ast.IntVal || v.Type == ast.FloatVal) {
				s, err := r.literal(v)
				if err != nil {
					return "", err
				}
				return "(-" + s + ")", nil
			}
		}
	}
	return "", noRoute("operand %T", e)
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
			if d, ok := v.(duckdb.Decimal); ok {
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
