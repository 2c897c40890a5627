package planner

// lakesql's statements as stored procedures, for clients that prepare every
// statement (COM_STMT_PREPARE: JDBC with useServerPrepStmts, go-sql-driver
// with arguments and interpolateParams=false). Such clients cannot send
// CREATE SINK and the other text forms at all: the MySQL connection layer
// parses a statement to prepare with the MySQL grammar, which has no SINK,
// before lakesql sees it. CALL is MySQL grammar, its arguments may be '?'
// placeholders, and go-mysql-server resolves the procedure through the
// provider (sql.ExternalStoredProcedureProvider).
//
// Each procedure writes the statement it stands for, with the names quoted
// and the strings escaped, and runs it through the same parser and the same
// execution as the text form, so results, errors and their codes are the
// same. The arguments that are lists (columns, partition_by, options) are
// first parsed on their own, as exactly one list each, so that no argument
// can end its list and add a clause of its own.
//
// Arguments are strings; SQL NULL reaches the procedure as the empty
// string, so NULL and '' both mean "not given" (and a name not given is an
// error).

import (
	"strconv"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/internal/sqlword"
	"github.com/lakesql/lakesql/sinkddl"
)

// The procedures' names.
const (
	procCreateSink            = "lakesql_create_sink"
	procCreateSinkIfNotExists = "lakesql_create_sink_if_not_exists"
	procDropSink              = "lakesql_drop_sink"
	procShowSinks             = "lakesql_show_sinks"
	procShowCreateSink        = "lakesql_show_create_sink"
	procSinkStatus            = "lakesql_sink_status"
	procOptimizeSink          = "lakesql_optimize_sink"
	procVacuumSink            = "lakesql_vacuum_sink"
	procSinkHistory           = "lakesql_sink_history"
	procAlterSink             = "lakesql_alter_sink"
)

// erSPWrongNoOfArgs is MySQL's ER_SP_WRONG_NO_OF_ARGS, which vitess does not name.
const erSPWrongNoOfArgs = 1318

// procedure is one CALL form of a lakesql statement.
type procedure struct {
	name     string
	params   []string // the parameters' names, for the usage text
	required int      // how many of params must be passed
	// build turns the arguments (len(params) of them, the ones not passed
	// empty) into the statement the procedure runs.
	build func(args []string) (sinkddl.Statement, error)
	// sample is a statement of the kind build returns: it gives the result
	// columns, the same as the text form's.
	sample sinkddl.Statement
}

var procedures = []*procedure{
	{name: procCreateSink, params: []string{"name", "format", "location", "columns", "partition_by", "options"},
		required: 3, sample: &sinkddl.CreateSink{},
		build: func(a []string) (sinkddl.Statement, error) { return buildCreateSink(procCreateSink, false, a) }},
	{name: procCreateSinkIfNotExists, params: []string{"name", "format", "location", "columns", "partition_by", "options"},
		required: 3, sample: &sinkddl.CreateSink{},
		build: func(a []string) (sinkddl.Statement, error) {
			return buildCreateSink(procCreateSinkIfNotExists, true, a)
		}},
	{name: procDropSink, params: []string{"name", "if_exists"}, required: 1, sample: &sinkddl.DropSink{},
		build: buildDropSink},
	{name: procShowSinks, sample: &sinkddl.ShowSinks{},
		build: func([]string) (sinkddl.Statement, error) { return &sinkddl.ShowSinks{}, nil }},
	{name: procShowCreateSink, params: []string{"name"}, required: 1, sample: &sinkddl.ShowCreateSink{},
		build: func(a []string) (sinkddl.Statement, error) {
			if a[0] == "" {
				return nil, argError(procShowCreateSink, "name", "the sink name must be given (not NULL or empty)")
			}
			return reparse(procShowCreateSink, (&sinkddl.ShowCreateSink{Name: a[0]}).String())
		}},
	{name: procSinkStatus, params: []string{"name"}, sample: &sinkddl.ShowSinkStatus{},
		build: func(a []string) (sinkddl.Statement, error) {
			return reparse(procSinkStatus, (&sinkddl.ShowSinkStatus{Name: a[0]}).String())
		}},
	{name: procOptimizeSink, params: []string{"name", "where"}, required: 1, sample: &sinkddl.OptimizeSink{},
		build: buildOptimizeSink},
	{name: procVacuumSink, params: []string{"name", "retain_hours", "dry_run"}, required: 1, sample: &sinkddl.VacuumSink{},
		build: buildVacuumSink},
	{name: procSinkHistory, params: []string{"name", "limit"}, required: 1, sample: &sinkddl.ShowSinkHistory{},
		build: buildSinkHistory},
	{name: procAlterSink, params: []string{"name", "change"}, required: 2, sample: &sinkddl.AlterSink{},
		build: buildAlterSink},
}

// usage renders the call as the documentation writes it, optional
// parameters in brackets.
func (pr *procedure) usage() string {
	var b strings.Builder
	b.WriteString(pr.name + "(")
	for i, p := range pr.params {
		switch {
		case i < pr.required && i > 0:
			b.WriteString(", ")
		case i >= pr.required && i > 0:
			b.WriteString(" [, ")
		case i >= pr.required:
			b.WriteString("[")
		}
		b.WriteString(p)
	}
	if n := len(pr.params) - pr.required; n > 0 {
		b.WriteString(strings.Repeat("]", n))
	}
	return b.String() + ")"
}

func procedureNames() string {
	names := make([]string, len(procedures))
	for i, pr := range procedures {
		names[i] = pr.name
	}
	return strings.Join(names, ", ")
}

func lookupProcedure(name string) *procedure {
	for _, pr := range procedures {
		// ASCII case only, as keywords: Unicode folding would let
		// "lakeſql_show_sinks" pass.
		if sqlword.LowerASCII(name) == pr.name {
			return pr
		}
	}
	return nil
}

// details is what go-mysql-server needs to plan and run the procedure.
// The function is variadic so that one definition takes every number of
// arguments; the count was checked when the CALL was planned.
func (pr *procedure) details(e *Engine) gms.ExternalStoredProcedureDetails {
	n := &lakesqlNode{engine: e, st: pr.sample}
	d := gms.ExternalStoredProcedureDetails{
		Name:     pr.name,
		Schema:   n.Schema(),
		ReadOnly: n.IsReadOnly(),
	}
	if len(pr.params) == 0 {
		d.Function = func(ctx *gms.Context) (gms.RowIter, error) { return pr.run(ctx, e, nil) }
	} else {
		d.Function = func(ctx *gms.Context, args ...string) (gms.RowIter, error) { return pr.run(ctx, e, args) }
	}
	return d
}

// run builds the statement and runs it as the text form runs; its error
// is the statement's original one (Session.fail).
func (pr *procedure) run(ctx *gms.Context, e *Engine, args []string) (gms.RowIter, error) {
	iter, err := pr.runStatement(ctx, e, args)
	return iter, failed(ctx, err)
}

func (pr *procedure) runStatement(ctx *gms.Context, e *Engine, args []string) (gms.RowIter, error) {
	if err := pr.checkCount(len(args)); err != nil {
		return nil, err
	}
	full := make([]string, len(pr.params))
	copy(full, args)
	st, err := pr.build(full)
	if err != nil {
		return nil, err
	}
	if v, ok := st.(*sinkddl.VacuumSink); ok && v.DryRun {
		return vacuumDryRunCall(ctx, e, v)
	}
	return (&lakesqlNode{engine: e, st: st}).RowIter(ctx, nil)
}

func (pr *procedure) checkCount(n int) error {
	if n >= pr.required && n <= len(pr.params) {
		return nil
	}
	want := strconv.Itoa(pr.required)
	if pr.required != len(pr.params) {
		want += " to " + strconv.Itoa(len(pr.params))
	}
	return mysql.NewSQLError(erSPWrongNoOfArgs, "42000",
		"Incorrect number of arguments for PROCEDURE %s.%s; expected %s, got %d (usage: CALL %s)",
		DatabaseName, pr.name, want, n, pr.usage())
}

// argError reports a wrong argument as ER_WRONG_ARGUMENTS.
func argError(proc, param, msg string) error {
	return mysql.NewSQLError(mysql.ERWrongArguments, mysql.SSUnknownSQLState, "%s: argument %s: %s", proc, param, msg)
}

// reparse parses the statement a procedure wrote.
func reparse(proc, text string) (sinkddl.Statement, error) {
	st, err := sinkddl.Parse(text)
	if err != nil {
		return nil, &procStatementError{proc: proc, text: text, err: err}
	}
	return st, nil
}

// procStatementError is an error of the statement a procedure wrote: its
// positions count in that text, which the message shows. It unwraps to the
// parser's error, so it keeps the text form's code.
type procStatementError struct {
	proc, text string
	err        error
}

func (e *procStatementError) Error() string {
	return e.proc + ": " + e.err.Error() + " (in " + e.text + ")"
}

func (e *procStatementError) Unwrap() error { return e.err }

func buildDropSink(a []string) (sinkddl.Statement, error) {
	if a[0] == "" {
		return nil, argError(procDropSink, "name", "the sink name must be given (not NULL or empty)")
	}
	ifExists, err := flagArgument(procDropSink, "if_exists", a[1])
	if err != nil {
		return nil, err
	}
	return reparse(procDropSink, (&sinkddl.DropSink{Name: a[0], IfExists: ifExists}).String())
}

// flagArgument reads a true/false argument: 1, 0, TRUE, FALSE (as MySQL
// passes TRUE and FALSE to a string parameter: '1' and '0'), or not given.
func flagArgument(proc, param, v string) (bool, error) {
	switch sqlword.LowerASCII(strings.TrimSpace(v)) {
	case "", "0", "false":
		return false, nil
	case "1", "true":
		return true, nil
	}
	return false, argError(proc, param, "expected 1, 0, TRUE or FALSE, got "+sqlquote.MySQLString(v))
}

// buildCreateSink writes CREATE SINK from the procedure's arguments: name,
// format, location, then the text inside the parentheses of the column
// list, of PARTITION BY and of WITH, each optional.
func buildCreateSink(proc string, ifNotExists bool, a []string) (sinkddl.Statement, error) {
	name, format, location := a[0], a[1], a[2]
	if name == "" {
		return nil, argError(proc, "name", "the sink name must be given (not NULL or empty)")
	}
	var b strings.Builder
	b.WriteString("CREATE SINK ")
	if ifNotExists {
		b.WriteString("IF NOT EXISTS ")
	}
	b.WriteString(sqlquote.MySQLIdent(name))
	switch sqlword.LowerASCII(strings.TrimSpace(format)) {
	case sinkddl.FormatDelta:
		b.WriteString(" INTO DELTA ")
	case sinkddl.FormatIceberg:
		b.WriteString(" INTO ICEBERG ")
	default:
		return nil, argError(proc, "format", "expected 'delta' or 'iceberg', got "+sqlquote.MySQLString(format))
	}
	if location == "" {
		return nil, argError(proc, "location", "the table location must be given (not NULL or empty)")
	}
	b.WriteString(sqlquote.MySQLString(location))
	for i, l := range []sinkddl.List{sinkddl.ColumnList, sinkddl.PartitionList, sinkddl.OptionList} {
		text := a[3+i]
		if strings.TrimSpace(text) == "" {
			continue
		}
		clause, err := sinkddl.ListClause(l, text)
		if err != nil {
			return nil, &procArgumentError{proc: proc, param: l.Param(), err: err}
		}
		b.WriteString(clause)
	}
	return reparse(proc, b.String())
}

// procArgumentError is an error in one list argument; its positions count
// in that argument. It unwraps to the parser's error, for its code.
type procArgumentError struct {
	proc, param string
	err         error
}

func (e *procArgumentError) Error() string {
	return e.proc + ": argument " + e.param + ": " + e.err.Error()
}

func (e *procArgumentError) Unwrap() error { return e.err }

// ExternalStoredProcedure implements sql.ExternalStoredProcedureProvider:
// go-mysql-server asks it for every CALL. A wrong number of arguments is
// refused here, when the CALL is planned (or prepared); numOfParams < 0
// asks whether the procedure exists at all.
func (p *provider) ExternalStoredProcedure(_ *gms.Context, name string, numOfParams int) (*gms.ExternalStoredProcedureDetails, error) {
	pr := lookupProcedure(name)
	if pr == nil {
		if numOfParams >= 0 {
			// The database has no stored procedures of its own, so
			// go-mysql-server would only say that it does not support them.
			return nil, mysql.NewSQLError(mysql.ERSPDoesNotExist, "42000",
				"PROCEDURE %s does not exist (lakesql's procedures: %s)", name, procedureNames())
		}
		return nil, nil
	}
	if numOfParams >= 0 {
		if err := pr.checkCount(numOfParams); err != nil {
			return nil, err
		}
	}
	d := pr.details(p.engine)
	return &d, nil
}

// ExternalStoredProcedures implements sql.ExternalStoredProcedureProvider
// (SHOW CREATE PROCEDURE): one definition per name.
func (p *provider) ExternalStoredProcedures(_ *gms.Context, name string) ([]gms.ExternalStoredProcedureDetails, error) {
	pr := lookupProcedure(name)
	if pr == nil {
		return nil, nil
	}
	return []gms.ExternalStoredProcedureDetails{pr.details(p.engine)}, nil
}

var _ gms.ExternalStoredProcedureProvider = (*provider)(nil)
