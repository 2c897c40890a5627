package planner

// Sessions. A Session is one connection's go-mysql-server session; it is
// also a sql.TransactionSession, so go-mysql-server's BEGIN, COMMIT,
// ROLLBACK and autocommit drive lakesql's epochs (transaction.go).

import (
	"context"
	"io"
	"sync"
	"sync/atomic"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Session is one connection's state: its go-mysql-server session and its
// open transaction.
type Session struct {
	*gms.BaseSession
	engine *Engine

	mu sync.Mutex
	tx *txn
	// skipped counts commits of the last transaction that were replays.
	skipped, committed int
	// opShown remembers the last statement text opColumnShown parsed.
	opShown struct {
		query string
		shown bool
	}
	// evolveParse is the last INSERT evolvingInsert parsed (guarded by mu).
	evolveParse struct {
		query string
		ins   *ast.Insert
	}
	// routed counts the SELECTs that ran in DuckDB; noRoute sends every
	// SELECT to go-mysql-server (for tests that compare the two).
	routed  atomic.Int64
	noRoute atomic.Bool
	// failure is the running statement's original error, as lakesql
	// raised it (see fail).
	failure atomic.Pointer[error]
	// targets are the sinks the running statement changes through UPDATE
	// or DELETE (guarded by mu): see addTarget.
	targets statementTargets
}

var _ gms.TransactionSession = (*Session)(nil)

// NewSession starts a session on the engine, in database lakesql.
func (e *Engine) NewSession() *Session { return e.NewSessionWith(gms.NewBaseSession()) }

// NewSessionWith starts a session on a go-mysql-server base session, such
// as the server's gms.NewBaseSessionWithClientServer for a connection.
func (e *Engine) NewSessionWith(base *gms.BaseSession) *Session {
	s := &Session{BaseSession: base, engine: e}
	s.SetCurrentDatabase(DatabaseName)
	return s
}

// Close ends the session, rolling back an open transaction.
func (s *Session) Close() error {
	s.mu.Lock()
	tx := s.tx
	s.tx = nil
	s.mu.Unlock()
	s.engine.gms.CloseSession(s.ID())
	if tx != nil {
		return tx.rollback(context.Background())
	}
	return nil
}

// execGMS runs a statement through go-mysql-server and drains its rows.
func (s *Session) execGMS(ctx context.Context, query string) (*Result, error) {
	gctx := s.engine.gmsContext(ctx, s, query)
	s.beginStatement(gctx)
	res, err := s.runGMS(gctx, query)
	_, replayed := s.endStatement(gctx, err)
	if err != nil {
		return nil, err
	}
	if replayed {
		res.RowsAffected = 0
	}
	if s.WarningCount() > 0 { // zero after SHOW WARNINGS, which lists them as rows
		for _, w := range s.Warnings() {
			res.Warnings = append(res.Warnings, Warning{Level: w.Level, Code: w.Code, Message: w.Message})
		}
	}
	return res, nil
}

func isAutocommit(ctx *gms.Context) (bool, error) { return plan.IsSessionAutocommit(ctx) }

func (s *Session) runGMS(ctx *gms.Context, query string) (*Result, error) {
	schema, iter, _, err := s.engine.gms.QueryWithBindings(ctx, query, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	ok := types.IsOkResultSchema(schema)
	if !ok {
		for _, c := range schema {
			res.Columns = append(res.Columns, c.Name)
			res.Types = append(res.Types, columnType(c.Type))
		}
	}
	for {
		row, err := iter.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			iter.Close(ctx)
			return nil, err
		}
		if ok {
			if r, isOk := row[0].(types.OkResult); isOk {
				res.RowsAffected += r.RowsAffected
			}
			continue
		}
		out := make([]any, len(row))
		copy(out, row)
		res.Rows = append(res.Rows, out)
	}
	if err := iter.Close(ctx); err != nil {
		return nil, err
	}
	return res, nil
}
