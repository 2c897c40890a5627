package planner

// Whether a statement shows the changelog column _op: an INSERT or
// REPLACE (or a PREPARE or EXECUTE of one) that names it.

import (
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/lakesql/lakesql/internal/sqlword"
	"github.com/lakesql/lakesql/sqlsink"
)

// opColumnShown reports whether the sinks show the changelog column _op,
// as their last column, to the statement ctx runs: an INSERT or REPLACE
// that names _op in its column list. It is a property of the statement,
// read from its own text, the context's query (COM_QUERY,
// COM_STMT_PREPARE and COM_STMT_EXECUTE all carry it), or, for EXECUTE
// name, from the statement PREPARE cached under that name: a prepared
// statement sees the same columns whatever ran since it was prepared.
func (s *Session) opColumnShown(ctx *gms.Context) bool {
	q := ctx.Query()
	if w, _ := sqlword.Leading(q, 0); sqlword.Is(w, "EXECUTE") {
		return s.preparedNamesOp(q)
	}
	s.mu.Lock()
	if s.opShown.query == q {
		shown := s.opShown.shown
		s.mu.Unlock()
		return shown
	}
	s.mu.Unlock()
	shown := namesOpColumn(ctx, q)
	s.mu.Lock()
	s.opShown.query, s.opShown.shown = q, shown
	s.mu.Unlock()
	return shown
}

// preparedNamesOp reports whether EXECUTE name (query) runs a prepared
// INSERT that names _op.
func (s *Session) preparedNamesOp(query string) bool {
	st, err := gms.GlobalParser.ParseSimple(query)
	ex, ok := st.(*ast.Execute)
	if err != nil || !ok {
		return false
	}
	prepared, ok := s.engine.gms.PreparedDataCache.GetCachedStmt(s.ID(), ex.Name)
	return ok && insertNamesOp(prepared)
}

// namesOpColumn reports whether query is an INSERT or REPLACE whose column
// list names the changelog column _op, or PREPARE of one (whose text is
// bound, and so planned, when it is prepared).
func namesOpColumn(ctx *gms.Context, query string) bool {
	w, _ := sqlword.Leading(query, 0)
	if !sqlword.Is(w, "PREPARE") && !strings.Contains(strings.ToLower(query), sqlsink.OpColumn) {
		return false
	}
	st, err := gms.GlobalParser.ParseSimple(query)
	if err != nil {
		return false
	}
	if p, ok := st.(*ast.Prepare); ok {
		text := p.Expr
		if name, isVar := strings.CutPrefix(text, "@"); isVar {
			_, v, err := ctx.GetUserVariable(ctx, strings.ToLower(name))
			if text, isVar = v.(string); err != nil || !isVar {
				return false
			}
		}
		return namesOpColumn(ctx, text)
	}
	return insertNamesOp(st)
}

// insertNamesOp reports whether st is an INSERT or REPLACE whose column
// list names _op.
func insertNamesOp(st ast.Statement) bool {
	ins, ok := st.(*ast.Insert)
	if !ok {
		return false
	}
	for _, c := range ins.Columns {
		if c.Lowered() == sqlsink.OpColumn {
			return true
		}
	}
	return false
}
