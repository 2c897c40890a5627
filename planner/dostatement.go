package planner

// DO expr [, expr ...]: MySQL evaluates the expressions for their effects
// (SLEEP, a user variable assigned with :=, RELEASE_LOCK) and returns OK.
// The MySQL parser go-mysql-server uses has no DO, so lakesql parses the
// expressions as a SELECT list and hands them to go-mysql-server as the
// children of an injected statement: they are resolved like any others
// and evaluated once, without a row.

import (
	"fmt"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/lakesql/lakesql/internal/sqlword"
)

// injectDo returns the injected statement for DO; ok is false when query
// is not a DO, or when its expressions do not parse (then the MySQL
// parser reports the syntax error of the whole query).
func (p *gmsParser) injectDo(query string) (ast.Statement, bool) {
	w, end := sqlword.Leading(query, 0)
	if !sqlword.Is(w, "DO") {
		return nil, false
	}
	st, err := p.mysql.ParseSimple("SELECT " + strings.TrimSpace(query[end:]))
	sel, isSelect := st.(*ast.Select)
	if err != nil || !isSelect || sel.Where != nil || sel.GroupBy != nil || sel.Having != nil ||
		sel.OrderBy != nil || sel.Limit != nil || sel.Into != nil || sel.From != nil {
		return nil, false
	}
	exprs := make(ast.Exprs, 0, len(sel.SelectExprs))
	for _, se := range sel.SelectExprs {
		ae, ok := se.(*ast.AliasedExpr)
		if !ok || !ae.As.IsEmpty() {
			return nil, false
		}
		exprs = append(exprs, ae.Expr)
	}
	// go-mysql-server's analyzer prepares the subqueries of the nodes it
	// knows only; one here would fail as "uninitialized subquery" (1105).
	subquery := false
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		_, is := n.(*ast.Subquery)
		subquery = subquery || is
		return !subquery, nil
	}, exprs)
	if subquery {
		return ast.InjectedStatement{Auth: injectedAuth, Statement: &lakesqlNode{engine: p.engine,
			err: fmt.Errorf("%w: a subquery in DO (use SELECT)", ErrNotSupported)}}, true
	}
	return ast.InjectedStatement{Auth: injectedAuth, Statement: &doNode{}, Children: exprs}, true
}

// doNode evaluates its expressions and returns OK, 0 rows affected.
type doNode struct {
	exprs []gms.Expression
}

var (
	_ gms.ExecSourceRel = (*doNode)(nil)
	_ ast.Injectable    = (*doNode)(nil)
)

func (n *doNode) WithResolvedChildren(children []any) (any, error) {
	exprs := make([]gms.Expression, len(children))
	for i, c := range children {
		e, ok := c.(gms.Expression)
		if !ok {
			return nil, fmt.Errorf("DO: expression %d is a %T", i+1, c)
		}
		exprs[i] = e
	}
	return &doNode{exprs: exprs}, nil
}

func (n *doNode) Resolved() bool {
	for _, e := range n.exprs {
		if !e.Resolved() {
			return false
		}
	}
	return true
}

func (n *doNode) String() string       { return "DO" }
func (n *doNode) Children() []gms.Node { return nil }
func (n *doNode) IsReadOnly() bool     { return true }
func (n *doNode) Schema() gms.Schema   { return types.OkResultSchema }
func (n *doNode) WithChildren(children ...gms.Node) (gms.Node, error) {
	if len(children) != 0 {
		return nil, gms.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

func (n *doNode) RowIter(ctx *gms.Context, row gms.Row) (gms.RowIter, error) {
	for _, e := range n.exprs {
		if _, err := e.Eval(ctx, row); err != nil {
			return nil, err
		}
	}
	return gms.RowsToRowIter(gms.NewRow(types.NewOkResult(0))), nil
}
