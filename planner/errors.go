package planner

// MySQL error codes for lakesql's errors, for the REPL and the server.

import (
	"errors"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/sqlsink"
)

// MySQLError gives err the MySQL error code and SQLSTATE a client sees.
// lakesql's own errors are classified here; everything else the way
// go-mysql-server classifies it (sql.CastSQLError), with MySQL's SQLSTATE.
func MySQLError(err error) *mysql.SQLError {
	if err == nil {
		return nil
	}
	// go-mysql-server wraps an insert's errors without Unwrap.
	var wrapped gms.WrappedInsertError
	if errors.As(err, &wrapped) && wrapped.Cause != nil {
		err = wrapped.Cause
	}
	code, state := 0, mysql.SSUnknownSQLState
	var syn *SyntaxError
	switch {
	case errors.As(err, &syn):
		code, state = mysql.ERParseError, mysql.SSClientError
	case errors.Is(err, ErrUnsupportedType), errors.Is(err, ErrUnsupported), errors.Is(err, ErrNotSupported),
		errors.Is(err, catalogadapter.ErrUnsupported):
		code, state = mysql.ERNotSupportedYet, mysql.SSClientError
	case errors.Is(err, ErrNoSink), errors.Is(err, catalogadapter.ErrNoTable):
		code, state = mysql.ERNoSuchTable, mysql.SSUnknownTable
	case errors.Is(err, ErrSinkExists):
		code, state = mysql.ERTableExists, "42S01"
	case errors.Is(err, ErrOption), errors.Is(err, ErrLocation), errors.Is(err, ErrInvalidDefinition),
		errors.Is(err, sqlsink.ErrConfig), errors.Is(err, errCatalog), errors.Is(err, catalogadapter.ErrInvalid):
		code, state = mysql.ERWrongArguments, mysql.SSUnknownSQLState
	case errors.Is(err, sqlsink.ErrBadOp), errors.Is(err, sqlsink.ErrBadRow):
		code, state = mysql.ERTruncatedWrongValueForField, mysql.SSUnknownSQLState
	case errors.Is(err, ErrTooBigScale):
		code, state = erTooBigScale, mysql.SSClientError
	case errors.Is(err, ErrDataTooLong):
		code, state = mysql.ERDataTooLong, mysql.SSDataTooLong
	case errors.Is(err, ErrOutOfRange):
		code, state = mysql.ERWarnDataOutOfRange, mysql.SSDataOutOfRange
	case errors.Is(err, ErrInvalidJSON):
		code, state = erInvalidJSONText, "22032"
	case errors.Is(err, errSinkBusy):
		code, state = mysql.ERLockWaitTimeout, mysql.SSUnknownSQLState
	default:
		if c, st, ok := gmsCode(err); ok {
			code, state = c, st
			break
		}
		return withMySQLState(gms.CastSQLError(err))
	}
	return mysql.NewSQLError(code, state, "%s", err.Error())
}

// erTooBigScale is MySQL's ER_TOO_BIG_SCALE, which vitess does not name.
const erTooBigScale = 1425

// erInvalidJSONText is MySQL's ER_INVALID_JSON_TEXT, which vitess does not name.
const erInvalidJSONText = 3140

// errSinkBusy marks a sink that another transaction held too long.
var errSinkBusy = errors.New("sink is in use by another transaction")
