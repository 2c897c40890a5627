package wire

import (
	"errors"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/dolthub/vitess/go/mysql"

	"github.com/lakesql/lakesql/internal/sqlword"
)

// Stats are the server's counters since it started, for a monitoring
// exporter to read at scrape time.
type Stats struct {
	ConnectionsOpen  int64
	ConnectionsTotal int64
	// Statements counts statements by kind: their first keyword, lower
	// case, from statementKinds, else "other".
	Statements map[string]int64
	// Errors counts the statements that failed, by the MySQL error code
	// the client got.
	Errors map[int]int64
}

// statementKinds bound the kinds Stats counts by, so that no client can
// make a label value per statement.
var statementKinds = map[string]bool{
	"select": true, "insert": true, "replace": true, "update": true, "delete": true,
	"begin": true, "start": true, "commit": true, "rollback": true, "savepoint": true, "release": true,
	"set": true, "show": true, "use": true, "create": true, "drop": true, "alter": true, "truncate": true,
	"call": true, "prepare": true, "execute": true, "deallocate": true, "explain": true, "describe": true,
	"desc": true, "optimize": true, "vacuum": true, "flush": true, "kill": true, "grant": true,
	"revoke": true, "with": true, "load": true, "do": true, "analyze": true, "lock": true, "unlock": true,
}

// serverStats is the live form of Stats.
type serverStats struct {
	open, total atomic.Int64
	mu          sync.Mutex
	statements  map[string]int64
	errors      map[int]int64
}

// statementKind is the kind Stats counts query under.
func statementKind(query string) string {
	w, _ := sqlword.Leading(query, 0)
	if k := sqlword.LowerASCII(w); statementKinds[k] {
		return k
	}
	return "other"
}

// statement counts one statement of query's kind and, when it failed,
// its error code as the client gets it.
func (st *serverStats) statement(query string, err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.statements == nil {
		st.statements, st.errors = map[string]int64{}, map[int]int64{}
	}
	if query != "" {
		st.statements[statementKind(query)]++
	}
	if err != nil {
		st.errors[errorCode(err)]++
	}
}

// errorCode is the MySQL code vitess sends the client for err.
func errorCode(err error) int {
	var se *mysql.SQLError
	if errors.As(mysql.NewSQLErrorFromError(err), &se) {
		return se.Number()
	}
	return mysql.ERUnknownError
}

func (st *serverStats) snapshot() Stats {
	st.mu.Lock()
	defer st.mu.Unlock()
	return Stats{ConnectionsOpen: st.open.Load(), ConnectionsTotal: st.total.Load(),
		Statements: maps.Clone(st.statements), Errors: maps.Clone(st.errors)}
}

// Stats reports the server's counters now.
func (s *Server) Stats() Stats { return s.stats.snapshot() }
