package planner

// The process list (SHOW PROCESSLIST, information_schema.PROCESSLIST)
// shows every session the statement each connection runs. A CREATE SINK
// or CALL lakesql_create_sink carries storage and catalog secrets in its
// text, so the list keeps each statement with its secrets masked
// (secret.MaskSQL), for every viewer.

import (
	gms "github.com/dolthub/go-mysql-server/sql"

	"github.com/lakesql/lakesql/internal/secret"
)

// maskedProcessList is go-mysql-server's process list, given statements
// whose secrets are masked.
type maskedProcessList struct{ gms.ProcessList }

// BeginQuery records the running statement, masked; the statement itself
// runs from ctx, which keeps the real text.
func (p maskedProcessList) BeginQuery(ctx *gms.Context, query string) (*gms.Context, error) {
	return p.ProcessList.BeginQuery(ctx, secret.MaskSQL(query))
}
