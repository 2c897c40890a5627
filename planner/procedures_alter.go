package planner

// The CALL form of ALTER SINK (procedures.go).

import (
	"strings"

	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/sinkddl"
)

// buildAlterSink: lakesql_alter_sink(name, change), where change is what
// follows the name in ALTER SINK ('ADD COLUMN c BIGINT', 'SET (flush_rows
// = 1000)'). The change is the rest of the statement, parsed as one
// statement: it cannot add a second one.
func buildAlterSink(a []string) (sinkddl.Statement, error) {
	if a[0] == "" {
		return nil, argError(procAlterSink, "name", "the sink name must be given (not NULL or empty)")
	}
	if strings.TrimSpace(a[1]) == "" {
		return nil, argError(procAlterSink, "change", "the change must be given (not NULL or empty), such as 'ADD COLUMN c BIGINT'")
	}
	return reparse(procAlterSink, "ALTER SINK "+sqlquote.MySQLIdent(a[0])+" "+a[1])
}
