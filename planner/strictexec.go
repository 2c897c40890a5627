package planner

// Where valuecheck.go's checks run: go-mysql-server converts an INSERT's
// values in its insert iterator, and an UPDATE's in its SET expressions,
// before a sink sees them. lakesql's exec builder puts its checks in
// front of both when the target is a sink: each row an INSERT's source
// produces, and each SET value, is checked as it was given. Integer
// arithmetic in those values is made exact too: go-mysql-server wraps
// 9223372036854775807 + 1 to -2^63, which no later check could tell from
// a value given as -2^63.

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// strictBuilder is the override of go-mysql-server's exec builder (see
// rowexec.NewOverrideBuilder): it returns nil, nil for every node it leaves
// to the default builder.
type strictBuilder struct {
	build gms.NodeExecBuilder // the whole builder, override included
}

func newStrictBuilder() gms.NodeExecBuilder {
	s := &strictBuilder{}
	s.build = rowexec.NewOverrideBuilder(s)
	return s.build
}

// Build builds n's iterator where lakesql builds it; its error is the
// statement's original one (Session.fail).
func (s *strictBuilder) Build(ctx *gms.Context, n gms.Node, row gms.Row) (gms.RowIter, error) {
	iter, err := s.buildNode(ctx, n, row)
	return iter, failed(ctx, err)
}

func (s *strictBuilder) buildNode(ctx *gms.Context, n gms.Node, row gms.Row) (gms.RowIter, error) {
	if err := gateNode(ctx, n); err != nil {
		return nil, err
	}
	switch n := n.(type) {
	case *plan.Into:
		return s.buildInto(ctx, n, row)
	case *plan.LoadData:
		return s.buildLoadData(ctx, n, row)
	case *plan.InsertInto:
		if _, done := n.Source.(*checkedSource); done {
			return nil, nil
		}
		t := sinkTable(n.Destination)
		if t == nil {
			return nil, nil
		}
		src, _, err := transform.NodeExprs(n.Source, exactArithmetic)
		if err != nil {
			return nil, err
		}
		checked := n.WithSource(&checkedSource{child: src, t: t, build: s.build})
		return s.build.Build(ctx, checked, row)
	case *plan.UpdateSource:
		if len(n.UpdateExprs) == 0 {
			return nil, nil
		}
		if sf, ok := n.UpdateExprs[0].(*expression.SetField); ok {
			if _, done := sf.RightChild.(*checkedValue); done {
				return nil, nil
			}
		}
		tables := sinkTables(n.Child)
		if len(tables) == 0 {
			return nil, nil
		}
		exprs := make([]gms.Expression, len(n.UpdateExprs))
		for i, e := range n.UpdateExprs {
			exprs[i] = e
			sf, ok := e.(*expression.SetField)
			if !ok {
				continue
			}
			gf, ok := sf.LeftChild.(*expression.GetField)
			if !ok {
				continue
			}
			t := tables[strings.ToLower(gf.Table())]
			if t == nil {
				continue
			}
			c := t.schema.IndexOfColName(gf.Name())
			if c < 0 {
				continue
			}
			right, _, err := transform.Expr(sf.RightChild, exactArithmetic)
			if err != nil {
				return nil, err
			}
			exprs[i] = expression.NewSetField(sf.LeftChild, &checkedValue{Expression: right, t: t, column: c})
		}
		checked, err := n.WithExpressions(exprs...)
		if err != nil {
			return nil, err
		}
		return s.build.Build(ctx, checked, row)
	}
	return nil, nil
}

// sinkTable returns the sink an INSERT writes to, or nil.
func sinkTable(n gms.Node) *table {
	for _, t := range sinkTables(n) {
		return t
	}
	return nil
}

// sinkTables returns the sinks a node reads, by lower-case name and alias
// (an UPDATE's SET names its column by either).
func sinkTables(n gms.Node) map[string]*table {
	out := map[string]*table{}
	alias := ""
	transform.Inspect(n, func(n gms.Node) bool {
		switch n := n.(type) {
		case *plan.TableAlias:
			alias = n.Name()
		case *plan.ResolvedTable:
			if t, ok := gms.GetUnderlyingTable(n.Table).(*table); ok {
				out[strings.ToLower(t.Name())] = t
				if alias != "" {
					out[strings.ToLower(alias)] = t
				}
			}
			alias = ""
			return false
		default:
			alias = ""
		}
		return true
	})
	return out
}

// checkValue checks the value of column c at the statement's row n and
// returns the value go-mysql-server is to convert (valueRule.normal); the
// error is recorded with the session for its MySQL code.
func (t *table) checkValue(ctx *gms.Context, c int, v any, n int) (any, error) {
	if c >= len(t.values) {
		return v, nil
	}
	if err := t.values[c].check(ctx, v, t.schema[c].Name, n); err != nil {
		return nil, failed(ctx, fmt.Errorf("sink %s: %w", t.h.rec.Name, err))
	}
	return t.values[c].normal(v), nil
}

// checkedSource is an INSERT's source with every row checked.
type checkedSource struct {
	child gms.Node
	t     *table
	build gms.NodeExecBuilder
}

var _ gms.ExecSourceRel = (*checkedSource)(nil)

func (c *checkedSource) Resolved() bool       { return c.child.Resolved() }
func (c *checkedSource) String() string       { return c.child.String() }
func (c *checkedSource) Schema() gms.Schema   { return c.child.Schema() }
func (c *checkedSource) Children() []gms.Node { return []gms.Node{c.child} }
func (c *checkedSource) IsReadOnly() bool     { return c.child.IsReadOnly() }
func (c *checkedSource) CheckPrivileges(*gms.Context, gms.PrivilegedOperationChecker) bool {
	return true
}

func (c *checkedSource) WithChildren(children ...gms.Node) (gms.Node, error) {
	if len(children) != 1 {
		return nil, gms.ErrInvalidChildrenNumber.New(c, len(children), 1)
	}
	out := *c
	out.child = children[0]
	return &out, nil
}

// RowIter implements sql.ExecSourceRel.
func (c *checkedSource) RowIter(ctx *gms.Context, row gms.Row) (gms.RowIter, error) {
	it, err := c.build.Build(ctx, c.child, row)
	if err != nil {
		return nil, err
	}
	return &checkedRows{RowIter: it, t: c.t}, nil
}

type checkedRows struct {
	gms.RowIter
	t *table
	n int
}

func (it *checkedRows) Next(ctx *gms.Context) (gms.Row, error) {
	row, err := it.RowIter.Next(ctx)
	if err != nil {
		return row, err
	}
	it.n++
	// An outer scope's values come first, as in the insert iterator.
	vals := row
	if len(vals) > len(it.t.schema) {
		vals = vals[len(vals)-len(it.t.schema):]
	}
	for c, v := range vals {
		nv, err := it.t.checkValue(ctx, c, v, it.n)
		if err != nil {
			return nil, err
		}
		vals[c] = nv
	}
	return row, nil
}

// checkedValue is an UPDATE's SET value for column c, checked. A new one
// is built for each statement, so n counts the statement's rows.
type checkedValue struct {
	gms.Expression
	t      *table
	column int
	n      int
}

func (e *checkedValue) Eval(ctx *gms.Context, row gms.Row) (any, error) {
	v, err := e.Expression.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	e.n++
	return e.t.checkValue(ctx, e.column, v, e.n)
}

func (e *checkedValue) Children() []gms.Expression { return []gms.Expression{e.Expression} }

func (e *checkedValue) WithChildren(children ...gms.Expression) (gms.Expression, error) {
	if len(children) != 1 {
		return nil, gms.ErrInvalidChildrenNumber.New(e, len(children), 1)
	}
	out := *e
	out.Expression = children[0]
	return &out, nil
}

// exactArithmetic makes integer +, - and * exact (transform.ExprFunc).
func exactArithmetic(e gms.Expression) (gms.Expression, transform.TreeIdentity, error) {
	if a, ok := e.(*expression.Arithmetic); ok && types.IsInteger(a.Type()) {
		return &exactArith{Arithmetic: a}, transform.NewTree, nil
	}
	return e, transform.SameTree, nil
}

// exactArith is an integer +, - or *: when its exact result does not fit
// the 64 bits go-mysql-server computes in, it is a DECIMAL of that result,
// which the column's check then refuses as out of range, instead of the
// wrapped value.
type exactArith struct {
	*expression.Arithmetic
}

func (e *exactArith) Eval(ctx *gms.Context, row gms.Row) (any, error) {
	l, err := e.LeftChild.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	r, err := e.RightChild.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	if l == nil || r == nil {
		return nil, nil
	}
	lb, lok := exactInt(l)
	rb, rok := exactInt(r)
	if !lok || !rok {
		a, err := e.Arithmetic.WithChildren(expression.NewLiteral(l, e.LeftChild.Type()), expression.NewLiteral(r, e.RightChild.Type()))
		if err != nil {
			return nil, err
		}
		return a.Eval(ctx, row)
	}
	var out big.Int
	switch e.Op {
	case "+":
		out.Add(lb, rb)
	case "-":
		out.Sub(lb, rb)
	case "*":
		out.Mul(lb, rb)
	default:
		return e.Arithmetic.Eval(ctx, row)
	}
	if types.IsUnsigned(e.Type()) && out.IsUint64() {
		return out.Uint64(), nil
	}
	if out.IsInt64() {
		return out.Int64(), nil
	}
	return decimal.NewFromBigInt(&out, 0), nil
}

func (e *exactArith) Children() []gms.Expression {
	return []gms.Expression{e.LeftChild, e.RightChild}
}

func (e *exactArith) WithChildren(children ...gms.Expression) (gms.Expression, error) {
	a, err := e.Arithmetic.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &exactArith{Arithmetic: a.(*expression.Arithmetic)}, nil
}

// exactInt returns an integer value (a DECIMAL without fraction included)
// as a big.Int.
func exactInt(v any) (*big.Int, bool) {
	switch x := v.(type) {
	case int:
		return big.NewInt(int64(x)), true
	case int8:
		return big.NewInt(int64(x)), true
	case int16:
		return big.NewInt(int64(x)), true
	case int32:
		return big.NewInt(int64(x)), true
	case int64:
		return big.NewInt(x), true
	case uint:
		return new(big.Int).SetUint64(uint64(x)), true
	case uint8:
		return big.NewInt(int64(x)), true
	case uint16:
		return big.NewInt(int64(x)), true
	case uint32:
		return big.NewInt(int64(x)), true
	case uint64:
		return new(big.Int).SetUint64(x), true
	case decimal.Decimal:
		if x.Exponent() >= 0 && x.Exponent() < math.MaxInt16 {
			return x.BigInt(), true
		}
	}
	return nil, false
}
