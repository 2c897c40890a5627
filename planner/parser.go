package planner

// The parser go-mysql-server runs (Engine.Parser is replaceable): it wraps
// the MySQL parser and turns lakesql's own statements, and the SELECTs that
// take the DuckDB route, into injected statements: ast.InjectedStatement
// whose Statement resolves to a node implementing sql.ExecSourceRel, which
// go-mysql-server's executor runs through its RowIter method. Everything
// else is the MySQL parser's. Going through go-mysql-server for every
// statement keeps one behaviour for Engine.Exec and for the MySQL server
// (which calls the engine's parser the same way), transactions included.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/lakesql/lakesql/internal/sqlword"
	"github.com/lakesql/lakesql/sinkddl"
)

type gmsParser struct {
	engine *Engine
	mysql  *gms.MysqlParser
}

var _ gms.Parser = (*gmsParser)(nil)

func (p *gmsParser) ParseSimple(query string) (ast.Statement, error) {
	if st, ok, err := p.inject(nil, query); ok {
		return st, err
	}
	st, err := p.mysql.ParseSimple(query)
	return p.bounded(st), err
}

func (p *gmsParser) Parse(ctx *gms.Context, query string, multi bool) (ast.Statement, string, string, error) {
	return p.ParseWithOptions(ctx, query, ';', multi, gms.LoadSqlMode(ctx).ParserOptions())
}

func (p *gmsParser) ParseWithOptions(ctx context.Context, query string, delimiter rune, multi bool, options ast.ParserOptions) (ast.Statement, string, string, error) {
	s := gms.RemoveSpaceAndDelimiter(query, delimiter)
	if st, ok, err := p.inject(ctx, s); ok {
		// A lakesql statement is the whole query: it does not take part
		// in multi-statement splitting.
		return st, s, "", err
	}
	st, parsed, rest, err := p.mysql.ParseWithOptions(ctx, query, delimiter, multi, options)
	return p.bounded(st), parsed, rest, recordSyntaxError(ctx, err)
}

func (p *gmsParser) ParseOneWithOptions(ctx context.Context, query string, options ast.ParserOptions) (ast.Statement, int, error) {
	if st, ok, err := p.inject(ctx, query); ok {
		return st, len(query), err
	}
	st, n, err := p.mysql.ParseOneWithOptions(ctx, query, options)
	return p.bounded(st), n, recordSyntaxError(ctx, err)
}

// recordSyntaxError records the MySQL parser's error as the statement's
// original error (Session.fail), typed as go-mysql-server's planner types
// it, a syntax error: its message alone ("max nesting level reached")
// does not say so. It returns err.
func recordSyntaxError(ctx context.Context, err error) error {
	if gctx, ok := ctx.(*gms.Context); ok && err != nil && !errors.Is(err, ast.ErrEmpty) {
		failed(gctx, gms.ErrSyntaxError.New(err.Error()))
	}
	return err
}

// bounded returns a parsed statement, or in its place one that fails with
// the error of a statement too costly to analyse (stmtcost.go): an error
// returned by the parser would become a syntax error.
func (p *gmsParser) bounded(st ast.Statement) ast.Statement {
	if st == nil {
		return nil
	}
	if err := CheckCost(st); err != nil {
		return ast.InjectedStatement{Auth: injectedAuth, Statement: &lakesqlNode{engine: p.engine, err: err}}
	}
	return st
}

// inject returns the injected statement for a lakesql statement or a
// routed SELECT; ok is false when the MySQL parser must parse query.
func (p *gmsParser) inject(ctx context.Context, query string) (ast.Statement, bool, error) {
	if sinkddl.IsLakesqlStatement(query) {
		st, err := sinkddl.Parse(query)
		// go-mysql-server turns a parser's error into a plain syntax
		// error; a node that fails when run keeps lakesql's typed
		// *SyntaxError or *DefinitionError for the caller.
		return ast.InjectedStatement{Auth: injectedAuth, Statement: &lakesqlNode{engine: p.engine, st: st, err: err}}, true, nil
	}
	if st, ok := p.injectDo(query); ok {
		return st, true, nil
	}
	if st, ok := p.injectShowGrants(ctx, query); ok {
		return st, true, nil
	}
	if st, ok := p.injectFlushHosts(ctx, query); ok {
		return st, true, nil
	}
	if err := p.engine.checkAccountStatement(query); err != nil {
		return ast.InjectedStatement{Auth: injectedAuth, Statement: &lakesqlNode{engine: p.engine, err: err}}, true, nil
	}
	gctx, isGMS := ctx.(*gms.Context)
	if !isGMS {
		return nil, false, nil
	}
	if err := p.engine.checkFileWrite(gctx, query); err != nil {
		return ast.InjectedStatement{Auth: injectedAuth, Statement: &lakesqlNode{engine: p.engine, err: err}}, true, nil
	}
	if err := refuseOnDuplicate(query); err != nil {
		return ast.InjectedStatement{Auth: injectedAuth, Statement: &lakesqlNode{engine: p.engine, err: err}}, true, nil
	}
	if w, _ := sqlword.Leading(query, 0); sqlword.Is(w, "SELECT") && !p.engine.noRoute(gctx) {
		plan, err := p.engine.planDuck(gctx, query)
		if err == nil && !p.engine.has(gctx, plan.h.rec.Name, gms.PrivilegeType_Select) {
			// go-mysql-server's planner refuses it.
			return nil, false, nil
		}
		if err != nil {
			// Not routed, or the sink cannot be used: go-mysql-server
			// plans it and reports that error itself, unwrapped (an
			// error returned from here would become a syntax error).
			return nil, false, nil
		}
		return ast.InjectedStatement{Auth: injectedAuth, Statement: &duckNode{engine: p.engine, plan: plan, query: query}}, true, nil
	}
	return nil, false, nil
}

// refuseOnDuplicate refuses INSERT ... ON DUPLICATE KEY UPDATE: a sink
// holds no index to find the duplicate by, and go-mysql-server would
// insert the row as written, silently.
func refuseOnDuplicate(query string) error {
	if w, _ := sqlword.Leading(query, 0); !sqlword.Is(w, "INSERT") || !strings.Contains(strings.ToUpper(query), "DUPLICATE") {
		return nil
	}
	st, err := gms.GlobalParser.ParseSimple(query)
	if err != nil {
		return nil
	}
	if ins, ok := st.(*ast.Insert); ok && len(ins.OnDup) > 0 {
		return fmt.Errorf("%w: INSERT ... ON DUPLICATE KEY UPDATE (an upsert sink's INSERT replaces rows by key; use the _op column to change them)", ErrNotSupported)
	}
	return nil
}

// lakesqlNode runs one of lakesql's own statements.
type lakesqlNode struct {
	engine *Engine
	st     sinkddl.Statement
	err    error // the statement did not parse, or is refused
}

var (
	_ gms.ExecSourceRel = (*lakesqlNode)(nil)
	_ ast.Injectable    = (*lakesqlNode)(nil)
)

func (n *lakesqlNode) WithResolvedChildren([]any) (any, error) { return n, nil }
func (n *lakesqlNode) Resolved() bool                          { return true }
func (n *lakesqlNode) String() string {
	if n.err != nil {
		return "lakesql statement with error: " + n.err.Error()
	}
	return n.st.String()
}
func (n *lakesqlNode) Children() []gms.Node { return nil }
func (n *lakesqlNode) WithChildren(children ...gms.Node) (gms.Node, error) {
	if len(children) != 0 {
		return nil, gms.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

func (n *lakesqlNode) IsReadOnly() bool {
	switch n.st.(type) {
	case *sinkddl.ShowSinks, *sinkddl.ShowCreateSink, *sinkddl.ShowSinkStatus, *sinkddl.ShowSinkHistory, nil:
		return true
	case *sinkddl.VacuumSink:
		return n.st.(*sinkddl.VacuumSink).DryRun
	}
	return false
}

// Schema is the result schema: OK for CREATE and DROP, columns for SHOW.
func (n *lakesqlNode) Schema() gms.Schema {
	text := func(names ...string) gms.Schema {
		var s gms.Schema
		for _, name := range names {
			s = append(s, &gms.Column{Name: name, Type: types.LongText, Nullable: true})
		}
		return s
	}
	switch n.st.(type) {
	case *sinkddl.ShowSinks:
		return text("Sink", "Format", "Location", "Mode")
	case *sinkddl.ShowCreateSink:
		return text("Sink", "Create Sink")
	case *sinkddl.ShowSinkStatus:
		s := text("Sink", "Health", "Last_epoch", "Table_version", "Commits", "Rows", "Error")
		for _, i := range []int{2, 3, 4, 5} {
			s[i].Type = types.Int64
		}
		return append(s, maintenanceStatusSchema()...)
	}
	if s := maintenanceSchema(n.st); s != nil {
		return s
	}
	return types.OkResultSchema
}

// RowIter runs the statement; its error is the statement's original one
// (Session.fail).
func (n *lakesqlNode) RowIter(ctx *gms.Context, _ gms.Row) (gms.RowIter, error) {
	iter, err := n.run(ctx)
	return iter, failed(ctx, err)
}

func (n *lakesqlNode) run(ctx *gms.Context) (gms.RowIter, error) {
	if n.err != nil {
		return nil, n.err
	}
	if err := gateStatement(ctx, n.st); err != nil {
		return nil, err
	}
	sess, _ := ctx.Session.(*Session)
	res, err := n.engine.execLakesql(ctx, sess, n.st)
	if err != nil {
		return nil, err
	}
	for _, w := range res.Warnings {
		ctx.Session.Warn(&gms.Warning{Level: w.Level, Code: w.Code, Message: w.Message})
	}
	if res.Columns == nil {
		return gms.RowsToRowIter(gms.NewRow(types.NewOkResult(int(res.RowsAffected)))), nil
	}
	rows := make([]gms.Row, len(res.Rows))
	for i, r := range res.Rows {
		rows[i] = gms.NewRow(r...)
	}
	return gms.RowsToRowIter(rows...), nil
}

// duckNode runs a SELECT that takes the DuckDB route (see select.go).
type duckNode struct {
	engine *Engine
	plan   *duckPlan
	query  string
}

var (
	_ gms.ExecSourceRel = (*duckNode)(nil)
	_ ast.Injectable    = (*duckNode)(nil)
)

func (n *duckNode) WithResolvedChildren([]any) (any, error) { return n, nil }
func (n *duckNode) Resolved() bool                          { return true }
func (n *duckNode) String() string                          { return "DuckDB(" + n.query + ")" }
func (n *duckNode) Children() []gms.Node                    { return nil }
func (n *duckNode) IsReadOnly() bool                        { return true }
func (n *duckNode) WithChildren(children ...gms.Node) (gms.Node, error) {
	if len(children) != 0 {
		return nil, gms.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

func (n *duckNode) Schema() gms.Schema {
	s := make(gms.Schema, len(n.plan.columns))
	for i, c := range n.plan.columns {
		s[i] = &gms.Column{Name: c, Type: n.plan.types[i], Nullable: true, Source: n.plan.h.rec.Name}
	}
	return s
}

func (n *duckNode) RowIter(ctx *gms.Context, _ gms.Row) (gms.RowIter, error) {
	res, err := n.engine.runDuck(ctx, ctx, n.plan)
	if err != nil {
		if _, isQuery := err.(errDuckQuery); isQuery {
			return nil, failed(ctx, fmt.Errorf("sink %s: %w", n.plan.h.rec.Name, err))
		}
		return nil, failed(ctx, err)
	}
	if sess, ok := ctx.Session.(*Session); ok {
		sess.routed.Add(1)
	}
	return &sliceIter{rows: res.Rows}, nil
}

type sliceIter struct {
	rows [][]any
	i    int
}

func (it *sliceIter) Next(*gms.Context) (gms.Row, error) {
	if it.i >= len(it.rows) {
		return nil, io.EOF
	}
	it.i++
	return gms.NewRow(it.rows[it.i-1]...), nil
}

func (it *sliceIter) Close(*gms.Context) error { return nil }

// noRoute reports whether the session turned the DuckDB route off.
func (e *Engine) noRoute(ctx *gms.Context) bool {
	s, ok := ctx.Session.(*Session)
	return ok && s.noRoute.Load()
}
