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
	// routed counts the SELECTs that ran in DuckDB; noRoute sends every
	// SELECT to go-mysql-server (for tests that compare the two).
	routed  atomic.Int64
	noRoute atomic.Bool
	// failure is the last error one of the session's hooks raised (rows
	// reaching a sink, a COMMIT): see TakeError.
	failure atomic.Pointer[error]
	// targets are the sinks the running statement changes through UPDATE
	// or DELETE (guarded by mu): see addTarget.
	targets statementTargets
}

// fail records err as the session's last failure and returns it.
func (s *Session) fail(err error) error {
	if err != nil {
		s.failure.Store(&err)
	}
	return err
}

// TakeError returns and forgets the last error that lakesql raised inside
// go-mysql-server while a statement's rows streamed or a transaction
// committed. go-mysql-server's server turns such errors into MySQL errors
// with sql.CastSQLError, which knows nothing of lakesql's errors (code
// 1105), and does not log them: the wire layer classifies them again from
// the original, with MySQLError.
func (s *Session) TakeError() error {
	if p := s.failure.Swap(nil); p != nil {
		return *p
	}
	return nil
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

// dropLeakedEpochs runs when a statement is parsed. In autocommit mode,
// outside BEGIN, no epoch is open between statements: every statement
// commits its own. Epochs found open are a failed statement's, whose
// transaction go-mysql-server's server path leaves open after an error
// (only Engine.Exec cleans up after itself); they are rolled back so
// their rows cannot reach the next statement's commit. go-mysql-server's
// own transaction object is left alone: at parse time it already belongs
// to the statement being parsed.
func (s *Session) dropLeakedEpochs(ctx *gms.Context) {
	if ctx.GetIgnoreAutoCommit() {
		return
	}
	if auto, err := isAutocommit(ctx); err != nil || !auto {
		return
	}
	s.mu.Lock()
	t := s.tx
	if t != nil && t.busy() {
		s.tx = nil
	} else {
		t = nil
	}
	s.mu.Unlock()
	if t != nil {
		if len(t.order) > 0 {
			s.resetEpoch(ctx)
		}
		_ = t.rollback(ctx)
	}
}

// StatementFailed ends what a failed statement leaves open in autocommit
// mode: go-mysql-server's server keeps the statement's transaction after
// an error, and with it the sinks the statement locked (an UPDATE locks
// its sink before reading) until the connection's next statement. The
// wire layer calls it when a statement fails, so an idle connection holds
// no sink. Inside BEGIN ... COMMIT nothing changes: the transaction's
// earlier statements stand, and it keeps its locks until it ends.
func (s *Session) StatementFailed(ctx context.Context) {
	s.abortAutocommit(s.engine.gmsContext(ctx, s, ""))
}

// abortAutocommit rolls back the transaction of a failed autocommit
// statement, in lakesql and in go-mysql-server.
func (s *Session) abortAutocommit(ctx *gms.Context) {
	if ctx.GetIgnoreAutoCommit() {
		return
	}
	if auto, err := isAutocommit(ctx); err != nil || !auto {
		return
	}
	_ = s.Rollback(ctx, ctx.GetTransaction())
	ctx.SetTransaction(nil)
}

// TakeReplayed reports whether the commits since it was last called were
// all replays: every sink the statement committed already held its epoch,
// so the statement wrote nothing, and its client must be told 0 rows
// affected. It forgets them, so the next statement starts afresh.
// Engine.Exec applies it itself; the wire layer asks after each statement
// (go-mysql-server counts the rows before the commit).
func (s *Session) TakeReplayed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	replayed := s.skipped > 0 && s.committed == 0
	s.skipped, s.committed = 0, 0
	return replayed
}

// execGMS runs a statement through go-mysql-server and drains its rows.
func (s *Session) execGMS(ctx context.Context, query string) (*Result, error) {
	gctx := s.engine.gmsContext(ctx, s, query)
	s.mu.Lock()
	s.skipped, s.committed = 0, 0
	s.mu.Unlock()
	res, err := s.runGMS(gctx, query)
	if err != nil {
		// A failed autocommit statement leaves its transaction open in
		// go-mysql-server: roll it back so its rows go nowhere.
		s.abortAutocommit(gctx)
		return nil, err
	}
	if s.TakeReplayed() {
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
