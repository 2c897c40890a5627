package planner

// The write gate: which statements write, and whether the session may
// write now. go-mysql-server refuses INSERT, UPDATE and DELETE in a READ
// ONLY transaction, and nothing else; lakesql's writes go further: CREATE
// and DROP SINK (text and CALL forms), SET lakesql_epoch (it names the
// epoch the next write commits as), SELECT ... INTO OUTFILE or DUMPFILE
// (a file written), CREATE and DROP VIEW. Two switches stop them:
//
//   - a READ ONLY transaction (START TRANSACTION READ ONLY, or
//     transaction_read_only = 1): 1792, as MySQL;
//   - SET GLOBAL read_only = 1: 1290 for every account without SUPER
//     (root has it), as MySQL; super_read_only = 1 spares no one.
//
// The checks run when a statement is built to run (strictBuilder) and
// when a lakesql statement runs (lakesqlNode), so prepared statements and
// the CALL forms meet them too.

import (
	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/lakesql/lakesql/internal/intconv"
	"github.com/lakesql/lakesql/internal/sqlword"
	"github.com/lakesql/lakesql/sinkddl"
)

// superSession reports whether read_only spares the session, as MySQL
// spares SUPER: an account with SUPER (root has every privilege), or a
// session of the embedded engine, which has no account and owns the data
// directory.
func superSession(ctx *gms.Context) bool {
	s, ok := ctx.Session.(*Session)
	if !ok || s.engine == nil {
		return ctx.Session.Client().User == ""
	}
	db := s.engine.privileges(ctx)
	return db == nil || db.UserActivePrivilegeSet(ctx).Has(gms.PrivilegeType_Super)
}

// nodeWrites names what a plan node writes, or "" for a node that writes
// nothing. Only the node itself is looked at: the exec builder meets
// every node of a plan.
func nodeWrites(n gms.Node) string {
	switch n := n.(type) {
	case *plan.InsertInto:
		if n.IsReplace {
			return "REPLACE"
		}
		return "INSERT"
	case *plan.Update:
		return "UPDATE"
	case *plan.DeleteFrom:
		return "DELETE"
	case *plan.Truncate:
		return "TRUNCATE"
	case *plan.CreateView:
		return "CREATE VIEW"
	case *plan.DropView:
		return "DROP VIEW"
	case *plan.Into:
		switch {
		case n.Outfile != "":
			return "SELECT ... INTO OUTFILE"
		case n.Dumpfile != "":
			return "SELECT ... INTO DUMPFILE"
		}
	case *plan.Set:
		for _, e := range n.Exprs {
			sf, ok := e.(*expression.SetField)
			if !ok {
				continue
			}
			if v, ok := sf.LeftChild.(*expression.SystemVar); ok && sqlword.LowerASCII(v.Name) == EpochVariable {
				return "SET " + EpochVariable
			}
		}
	}
	return ""
}

// statementWrites names what a lakesql statement writes, or "".
func statementWrites(st sinkddl.Statement) string {
	switch st := st.(type) {
	case *sinkddl.CreateSink:
		return "CREATE SINK"
	case *sinkddl.DropSink:
		return "DROP SINK"
	case *sinkddl.OptimizeSink:
		return "OPTIMIZE SINK"
	case *sinkddl.AlterSink:
		return "ALTER SINK"
	case *sinkddl.VacuumSink:
		if !st.DryRun {
			return "VACUUM SINK"
		}
	}
	return ""
}

// checkWrite refuses the write what ("" passes) when the session's
// transaction is read-only or the server is.
func checkWrite(ctx *gms.Context, what string) error {
	if what == "" {
		return nil
	}
	if tx := ctx.GetTransaction(); tx != nil && tx.IsReadOnly() {
		return mysql.NewSQLError(erReadOnlyTransaction, "25006",
			"Cannot execute statement in a READ ONLY transaction: %s writes (START TRANSACTION READ ONLY, or transaction_read_only = 1)", what)
	}
	switch {
	case globalOn("super_read_only"):
		return mysql.NewSQLError(mysql.EROptionPreventsStatement, mysql.SSUnknownSQLState,
			"The MySQL server is running with the --super-read-only option so it cannot execute this statement: %s writes (SET GLOBAL super_read_only = 0 allows it)", what)
	case globalOn("read_only") && !superSession(ctx):
		return mysql.NewSQLError(mysql.EROptionPreventsStatement, mysql.SSUnknownSQLState,
			"The MySQL server is running with the --read-only option so it cannot execute this statement: %s writes, and only accounts with SUPER write while read_only = 1", what)
	}
	return nil
}

// globalOn reports whether a global boolean system variable is set.
func globalOn(name string) bool {
	_, v, ok := gms.SystemVariables.GetGlobal(name)
	if !ok {
		return false
	}
	n, ok := intconv.ToInt64(v)
	return ok && n != 0
}

// gateNode is checkWrite for the plan node the exec builder builds; it
// also keeps read_only and super_read_only to accounts with SUPER, as
// MySQL does: a user they stop could otherwise lift them.
func gateNode(ctx *gms.Context, n gms.Node) error {
	if v := setsReadOnly(n); v != "" {
		if !superSession(ctx) {
			return mysql.NewSQLError(mysql.ERSpecifiedAccessDenied, "42000",
				"Access denied; you need (at least one of) the SUPER or SYSTEM_VARIABLES_ADMIN privilege(s) for this operation: only an account with SUPER sets %s", v)
		}
	}
	return checkWrite(ctx, nodeWrites(n))
}

// setsReadOnly names the server's read-only switch a SET changes, or "".
func setsReadOnly(n gms.Node) string {
	set, ok := n.(*plan.Set)
	if !ok {
		return ""
	}
	for _, e := range set.Exprs {
		if sf, ok := e.(*expression.SetField); ok {
			if v, ok := sf.LeftChild.(*expression.SystemVar); ok {
				if name := sqlword.LowerASCII(v.Name); name == "read_only" || name == "super_read_only" {
					return name
				}
			}
		}
	}
	return ""
}

// gateStatement is checkWrite for a lakesql statement about to run.
func gateStatement(ctx *gms.Context, st sinkddl.Statement) error {
	return checkWrite(ctx, statementWrites(st))
}
