package planner

// The CALL forms of OPTIMIZE SINK, VACUUM SINK and SHOW SINK HISTORY
// (procedures.go): each writes the text form and parses it again.

import (
	"math"
	"strconv"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"

	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/sinkddl"
)

// buildOptimizeSink: lakesql_optimize_sink(name [, where]). The predicate
// is the rest of the statement, so it cannot add a clause: OPTIMIZE SINK
// has none after WHERE, and the parser takes one statement.
func buildOptimizeSink(a []string) (sinkddl.Statement, error) {
	if a[0] == "" {
		return nil, argError(procOptimizeSink, "name", "the sink name must be given (not NULL or empty)")
	}
	text := (&sinkddl.OptimizeSink{Name: a[0]}).String()
	if strings.TrimSpace(a[1]) != "" {
		text += " WHERE " + a[1]
	}
	return reparse(procOptimizeSink, text)
}

// buildVacuumSink: lakesql_vacuum_sink(name [, retain_hours [, dry_run]]).
// retain_hours is a number (a negative one is refused as the text form
// refuses it); not given, the table's retention applies.
func buildVacuumSink(a []string) (sinkddl.Statement, error) {
	if a[0] == "" {
		return nil, argError(procVacuumSink, "name", "the sink name must be given (not NULL or empty)")
	}
	v := &sinkddl.VacuumSink{Name: a[0]}
	if h := strings.TrimSpace(a[1]); h != "" {
		n, err := strconv.ParseFloat(h, 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, argError(procVacuumSink, "retain_hours", "expected a number of hours, got "+sqlquote.MySQLString(a[1]))
		}
		v.RetainHours, v.HasRetain = n, true
	}
	dry, err := flagArgument(procVacuumSink, "dry_run", a[2])
	if err != nil {
		return nil, err
	}
	v.DryRun = dry
	return reparse(procVacuumSink, v.String())
}

// buildSinkHistory: lakesql_sink_history(name [, limit]).
func buildSinkHistory(a []string) (sinkddl.Statement, error) {
	if a[0] == "" {
		return nil, argError(procSinkHistory, "name", "the sink name must be given (not NULL or empty)")
	}
	h := &sinkddl.ShowSinkHistory{Name: a[0]}
	if l := strings.TrimSpace(a[1]); l != "" {
		n, err := strconv.ParseInt(l, 10, 64)
		if err != nil || n < 0 {
			return nil, argError(procSinkHistory, "limit", "expected a number of rows (0 or more), got "+sqlquote.MySQLString(a[1]))
		}
		h.Limit, h.HasLimit = n, true
	}
	return reparse(procSinkHistory, h.String())
}

// vacuumDryRunCall runs lakesql_vacuum_sink(..., dry_run = 1). A
// procedure's result columns are fixed when the CALL is planned, before
// its arguments are known, so the dry run answers in VACUUM's one-row
// shape: the files and bytes it would delete. SELECT-able file lists are
// the text form's (VACUUM SINK ... DRY RUN).
func vacuumDryRunCall(ctx *gms.Context, e *Engine, v *sinkddl.VacuumSink) (gms.RowIter, error) {
	if err := gateStatement(ctx, v); err != nil {
		return nil, err
	}
	if err := e.checkLakesql(ctx, v); err != nil {
		return nil, err
	}
	name, out, err := e.vacuum(ctx, v)
	if err != nil {
		return nil, err
	}
	return gms.RowsToRowIter(gms.NewRow(vacuumSummary(name, out).Rows[0]...)), nil
}
