package planner

// The DuckDB route's renderer of a SELECT's parts (select.go decides the
// route): columns, the whitelisted aggregates, conditions and literals,
// each rendered only where DuckDB gives what go-mysql-server gives.

import (
	"strconv"
	"strings"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/lakesql/lakesql/internal/sqlquote"
)

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
// or DOUBLE, and MySQL's exact DECIMAL for SUM of an integer or DECIMAL
// (exactsum.go; DuckDB's HUGEINT or DECIMAL(38,s)). AVG of an integer or
// DECIMAL, a DOUBLE in DuckDB, is left to go-mysql-server.
func (r *duckRenderer) sum(name, distinct, col string, t gms.Type) (string, gms.Type, error) {
	call := name + "(" + distinct + col + ")"
	if types.IsFloat(t) {
		return call, types.Float64, nil
	}
	if dt, ok := exactResult(t, false); ok && name == "sum" && !duckMayOverflow(t) {
		return call, dt, nil
	}
	return "", nil, noRoute("%s of %s", name, t)
}

// duckMayOverflow says DuckDB's SUM of t may overflow its 128 bits: a DECIMAL
// of more than 18 digits (a SUM of BIGINTs or narrower DECIMALs would need
// 2^64 rows).
func duckMayOverflow(t gms.Type) bool {
	dt, ok := t.(gms.DecimalType)
	return ok && dt.Precision() > 18
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
