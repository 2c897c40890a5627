package wire

import (
	"errors"
	"io"
	"sync"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/sirupsen/logrus"

	"github.com/lakesql/lakesql/planner"
)

// Error codes on the wire. go-mysql-server's handler turns a statement's
// error into a *mysql.SQLError with sql.CastSQLError, which knows nothing
// of lakesql's errors: they would all reach the client as 1105. The
// original error is gone by the time the handler returns, but the handler
// logs it first ("error running query", with the error object and the
// connection id) on the session's logger when the statement fails while
// it is planned and started, which is where lakesql's own statements
// (CREATE SINK, SHOW CREATE SINK, ...) run. errorLog is that logger: its
// hook keeps the last such error per connection, and the connection's
// handler gives it its lakesql code with planner.MySQLError.
//
// Errors raised while rows stream (an INSERT's rows, a COMMIT) are not
// logged by go-mysql-server; the planner session keeps those
// (planner.Session.TakeError), and classify takes them from there.
type errorLog struct {
	logger *logrus.Logger
	mu     sync.Mutex
	last   map[uint32]error
}

func newErrorLog() *errorLog {
	l := &errorLog{logger: logrus.New(), last: map[uint32]error{}}
	// The sessions' own log lines (a warning per failed statement) are
	// not printed: the client has the error.
	l.logger.SetOutput(io.Discard)
	l.logger.SetLevel(logrus.WarnLevel)
	l.logger.AddHook(l)
	return l
}

func (l *errorLog) Levels() []logrus.Level {
	return []logrus.Level{logrus.WarnLevel, logrus.ErrorLevel}
}

func (l *errorLog) Fire(e *logrus.Entry) error {
	err, ok := e.Data[logrus.ErrorKey].(error)
	if !ok {
		return nil
	}
	id, ok := e.Data[gms.ConnectionIdLogField].(uint32)
	if !ok {
		return nil
	}
	l.mu.Lock()
	l.last[id] = err
	l.mu.Unlock()
	return nil
}

func (l *errorLog) take(id uint32) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.last[id]
	delete(l.last, id)
	return err
}

func (l *errorLog) forget(id uint32) { l.take(id) }

// classify returns err with the lakesql code of the statement's original
// error, when the handler reduced it to 1105 and the original is known:
// logged for the connection, or else kept by its session (sess may be nil).
func (l *errorLog) classify(id uint32, sess *planner.Session, err error) error {
	orig := l.take(id)
	if sess != nil {
		if kept := sess.TakeError(); orig == nil {
			orig = kept
		}
	}
	var se *mysql.SQLError
	if err == nil || !errors.As(err, &se) {
		return err
	}
	if se.Num == mysql.ERUnknownError && orig != nil && orig.Error() == se.Message {
		if m := planner.MySQLError(orig); m.Num != mysql.ERUnknownError {
			m.Query = se.Query
			return m
		}
	}
	// MySQL's code where only the message is left, and MySQL's SQLSTATE
	// where go-mysql-server sent the general HY000.
	return planner.MySQLError(planner.ClassifyMessage(se))
}
