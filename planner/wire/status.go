package wire

import (
	"context"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
)

// The status flags of the greeting and of every OK and EOF packet tell
// the client whether the session is in autocommit mode and inside a
// transaction. Clients act on them: PyMySQL and mysqlclient send
// SET autocommit=0 only when the flags say autocommit is on, and their
// commit() and rollback() do nothing otherwise. vitess sends the flags it
// is given (0 until go-mysql-server's first statement sets them), and
// go-mysql-server counts every statement's own transaction as one; here
// they come from the planner session (planner.Session.TransactionStatus).

const transactionFlags = uint16(mysql.ServerStatusAutocommit | mysql.ServerInTransaction)

// withStatus returns flags with the autocommit and in-transaction bits set
// as given, the other bits (cursor state) kept.
func withStatus(flags uint16, autocommit, inTransaction bool) uint16 {
	flags &^= transactionFlags
	if autocommit {
		flags |= mysql.ServerStatusAutocommit
	}
	if inTransaction {
		flags |= mysql.ServerInTransaction
	}
	return flags
}

// initialStatus sets the flags of a connection whose session has not
// started: a new session takes the global autocommit and is in no
// transaction.
func initialStatus(c *mysql.Conn) {
	auto := true
	if _, v, ok := gms.SystemVariables.GetGlobal(gms.AutoCommitSessionVar); ok {
		if b, err := gms.ConvertToBool(gms.NewEmptyContext(), v); err == nil {
			auto = b
		}
	}
	c.StatusFlags = withStatus(c.StatusFlags, auto, false)
}

// syncStatus sets c's flags from its session, before vitess writes the
// packet that carries them.
func (h *handler) syncStatus(ctx context.Context, c *mysql.Conn) {
	sess := h.session(c)
	if sess == nil {
		initialStatus(c)
		return
	}
	auto, inTx := sess.TransactionStatus(context.WithoutCancel(ctx))
	c.StatusFlags = withStatus(c.StatusFlags, auto, inTx)
}

// ComResetConnection starts the connection's session again: it is back in
// the global autocommit mode, in no transaction.
func (h *handler) ComResetConnection(c *mysql.Conn) error {
	err := h.Handler.ComResetConnection(c)
	initialStatus(c)
	return err
}
