package planner

// One statement of a session, between BeginStatement and EndStatement: the
// MySQL server calls the two around each command, Engine.Exec around each
// statement it runs. go-mysql-server's server turns a statement's error
// into a MySQL error with sql.CastSQLError, which knows nothing of
// lakesql's errors (code 1105), after its row iteration may have wrapped
// or re-created them. So where lakesql raises an error inside
// go-mysql-server (a lakesql statement, a sink's rows read or written, a
// COMMIT), the session records it (fail), and EndStatement gives the client
// the code of that original.

import (
	"context"
	"errors"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
)

// BeginStatement starts a statement of the session: it forgets what the
// previous statement left (its error, its replayed commits) and rolls
// back the epochs a failed autocommit statement left open.
func (s *Session) BeginStatement(ctx context.Context) {
	s.beginStatement(s.engine.gmsContext(ctx, s, ""))
}

func (s *Session) beginStatement(ctx *gms.Context) {
	s.failure.Store(nil)
	s.mu.Lock()
	s.skipped, s.committed = 0, 0
	s.mu.Unlock()
	s.dropLeakedEpochs(ctx)
}

// EndStatement ends the statement BeginStatement started. err is its
// error as go-mysql-server's handler returned it, nil when it succeeded.
// It returns the error the client gets (nil when err is nil), with the
// code MySQL gives the statement's original error, and replayed: every
// sink the statement committed already held its epoch, so it wrote
// nothing, and its client must be told 0 rows affected (go-mysql-server
// counts the rows before the commit).
//
// A failed statement in autocommit mode ends what it left open:
// go-mysql-server's server keeps its transaction after an error, and with
// it the sinks it locked (an UPDATE locks its sink before reading), so
// that an idle connection would hold a sink. Inside BEGIN ... COMMIT
// nothing changes: the transaction's earlier statements stand, and it
// keeps its locks until it ends.
//
// On a nil session (a connection whose session go-mysql-server has not
// built) it only gives err its MySQL code.
func (s *Session) EndStatement(ctx context.Context, err error) (sqlErr *mysql.SQLError, replayed bool) {
	var orig error
	if s != nil {
		orig, replayed = s.endStatement(s.engine.gmsContext(context.WithoutCancel(ctx), s, ""), err)
	}
	if err == nil {
		return nil, replayed
	}
	return statementError(err, orig), replayed
}

// endStatement returns the statement's original error, as recorded, and
// whether its commits were all replays; when err says it failed, it rolls
// back what an autocommit statement left open.
func (s *Session) endStatement(ctx *gms.Context, err error) (orig error, replayed bool) {
	if p := s.failure.Swap(nil); p != nil {
		orig = *p
	}
	s.mu.Lock()
	replayed = s.skipped > 0 && s.committed == 0
	s.skipped, s.committed = 0, 0
	s.mu.Unlock()
	if err != nil {
		s.abortAutocommit(ctx)
	}
	return orig, replayed
}

// statementError is the MySQL error of a statement that failed with err:
// where go-mysql-server left it at 1105, the code of orig, the error
// lakesql raised, if it has one; else MySQL's code for err (ClassifyMessage
// knows go-mysql-server's errors that CastSQLError leaves at 1105).
func statementError(err, orig error) *mysql.SQLError {
	var se *mysql.SQLError
	if !errors.As(err, &se) {
		se = mysql.NewSQLErrorFromError(err).(*mysql.SQLError)
	}
	if se.Num == mysql.ERUnknownError && orig != nil {
		if m := MySQLError(orig); m.Num != mysql.ERUnknownError {
			m.Query = se.Query
			return m
		}
	}
	return MySQLError(ClassifyMessage(se))
}

// fail records err, when not nil, as the running statement's original
// error, and returns it.
func (s *Session) fail(err error) error {
	if err != nil {
		s.failure.Store(&err)
	}
	return err
}

// failed records err with the statement's session (see fail) and returns it.
func failed(ctx *gms.Context, err error) error {
	if s, ok := ctx.Session.(*Session); ok {
		return s.fail(err)
	}
	return err
}

// dropLeakedEpochs runs when a statement begins. In autocommit mode,
// outside BEGIN, no epoch is open between statements: every statement
// commits its own. Epochs found open are a failed statement's, whose
// transaction go-mysql-server's server path leaves open after an error;
// they are rolled back so their rows cannot reach the next statement's
// commit. go-mysql-server's own transaction object is left alone.
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
