package planner

// MySQL error codes for lakesql's errors, for the REPL and the server.

import (
	"context"
	"errors"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/lakesql/lakesql/sinkddl"
	"github.com/lakesql/lakesql/sinkdef"
	"github.com/lakesql/lakesql/sqlsink"
)

// MySQLError gives err the MySQL error code and SQLSTATE a client sees.
// lakesql's own errors are classified here, with the SQLSTATE MySQL sends
// with their code (sqlstate.go); everything else the way go-mysql-server
// classifies it (sql.CastSQLError), with MySQL's SQLSTATE.
func MySQLError(err error) *mysql.SQLError {
	if err == nil {
		return nil
	}
	// go-mysql-server wraps an insert's errors without Unwrap.
	var wrapped gms.WrappedInsertError
	if errors.As(err, &wrapped) && wrapped.Cause != nil {
		err = wrapped.Cause
	}
	// A partial COMMIT keeps its failure's code, with its own message.
	var partial *PartialCommitError
	if errors.As(err, &partial) {
		e := MySQLError(partial.Err)
		return mysql.NewSQLError(e.Num, e.State, "%s", err.Error())
	}
	code := 0
	var syn *sinkddl.SyntaxError
	var noGrant errNoGrant
	var exists errFileExists
	var notFound errFileNotFound
	var cantCreate errCantCreateFile
	switch {
	case errors.Is(err, ErrFilePriv):
		code = mysql.EROptionPreventsStatement
	case errors.As(err, &exists):
		code = mysql.ERFileExists
	case errors.As(err, &notFound):
		code = erFileNotFound
	case errors.As(err, &cantCreate):
		code = erCantCreateFile
	case errors.As(err, &noGrant):
		code = mysql.ERNonExistingGrant
	case errors.As(err, &syn):
		code = mysql.ERParseError
	case sinkdef.IsPathOutsideTable(err):
		// MySQL's code for a file outside --secure-file-priv: a table's
		// log or manifest named a file outside the table and the allowed
		// roots.
		code = mysql.EROptionPreventsStatement
	case errors.Is(err, sqlsink.ErrCheckViolated):
		code = erCheckConstraintViolated // constraints.go
	case errors.Is(err, sqlsink.ErrGeneratedValue):
		code = erNonDefaultValueForGeneratedColumn
	case errors.Is(err, sqlsink.ErrNoConstraint):
		code = erConstraintNotFound
	case errors.Is(err, sqlsink.ErrConstraintExists):
		code = erCheckConstraintDupName
	case errors.Is(err, sqlsink.ErrSchemaChange), errors.Is(err, sinkdef.ErrAlterRefused):
		code = erAlterOperationNotSupportedReason // altersink.go
	case errors.Is(err, sinkddl.ErrUnsupportedType), errors.Is(err, sinkddl.ErrUnsupported), errors.Is(err, ErrNotSupported),
		errors.Is(err, sqlsink.ErrUnsupported):
		code = mysql.ERNotSupportedYet
	case errors.Is(err, sqlsink.ErrCorrupt):
		code = erTableCorrupt
	case errors.Is(err, ErrNoSink), errors.Is(err, sqlsink.ErrNoTable):
		code = mysql.ERNoSuchTable
	case errors.Is(err, ErrSinkExists):
		code = mysql.ERTableExists
	case errors.Is(err, sqlsink.ErrTimeout):
		// MySQL's code for a remote data source it cannot reach (the
		// FEDERATED engine's): not 1205, which clients retry as a lock
		// wait, nor 3024, the statement's own max_execution_time.
		code = erConnectToForeignDataSource
	case errors.Is(err, sqlsink.ErrVersionUnavailable):
		code = erTableDefChanged // asof.go
	case errors.Is(err, sinkddl.ErrPredicate), errors.Is(err, sqlsink.ErrRetention),
		errors.Is(err, ErrOption), errors.Is(err, ErrLocation), errors.Is(err, sinkddl.ErrInvalidDefinition),
		errors.Is(err, sqlsink.ErrConfig), errors.Is(err, sinkdef.ErrCatalog), errors.Is(err, sqlsink.ErrInvalid):
		code = mysql.ERWrongArguments
	case errors.Is(err, sqlsink.ErrBadOp), errors.Is(err, sqlsink.ErrBadRow):
		code = mysql.ERTruncatedWrongValueForField
	case errors.Is(err, sinkddl.ErrTooBigScale):
		code = erTooBigScale
	case errors.Is(err, ErrDataTooLong):
		code = mysql.ERDataTooLong
	case errors.Is(err, ErrOutOfRange):
		code = mysql.ERWarnDataOutOfRange
	case errors.Is(err, ErrIncorrectValue):
		code = mysql.ERTruncatedWrongValueForField
	case errors.Is(err, ErrIncorrectDate):
		code = mysql.ERTruncatedWrongValue
	case errors.Is(err, ErrInvalidJSON):
		code = erInvalidJSONText
	case errors.Is(err, errSinkBusy):
		code = mysql.ERLockWaitTimeout
	case errors.Is(err, errInterrupted):
		code = mysql.ERQueryInterrupted
	case errors.Is(err, context.Canceled):
		// KILL QUERY, KILL or a client gone cancelled the statement.
		return mysql.NewSQLError(mysql.ERQueryInterrupted, mysql.SSQueryInterrupted, "Query execution was interrupted")
	case errors.Is(err, ErrTooComplex):
		code = erStackOverrun
	case errors.Is(err, ErrSelectNesting):
		code = erTooHighNestSelect
	case errors.Is(err, sqlsink.ErrConflict):
		// Other writers kept winning: MySQL's "try restarting transaction".
		code = mysql.ERLockDeadlock
	default:
		if c, st, ok := gmsCode(err); ok {
			return mysql.NewSQLError(c, st, "%s", err.Error())
		}
		// The message is all that tells some errors apart (the MySQL
		// parser's syntax errors in a PREPARE's text, for one).
		return withMySQLState(ClassifyMessage(gms.CastSQLError(err)))
	}
	return withMySQLState(mysql.NewSQLError(code, mysql.SSUnknownSQLState, "%s", err.Error()))
}

// erConnectToForeignDataSource is MySQL's ER_CONNECT_TO_FOREIGN_DATA_SOURCE.
const erConnectToForeignDataSource = 1429

// erTooBigScale is MySQL's ER_TOO_BIG_SCALE, which vitess does not name.
const erTooBigScale = 1425

// erTableCorrupt is MySQL's ER_TABLE_CORRUPT ("the table is missing,
// corrupt or contains bad data"), which vitess does not name.
const erTableCorrupt = 1877

// erInvalidJSONText is MySQL's ER_INVALID_JSON_TEXT, which vitess does not name.
const erInvalidJSONText = 3140

// erReadOnlyTransaction is MySQL's ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION,
// which vitess does not name (go-mysql-server sends it with HY000).
const erReadOnlyTransaction = 1792

// errSinkBusy marks a sink that another transaction held too long.
var errSinkBusy = errors.New("sink is in use by another transaction")

// errInterrupted marks a statement cancelled while it waited for a sink,
// or for another statement opening a sink's catalog (sinkdef's own).
var errInterrupted = sinkdef.ErrInterrupted

// errEngineClosed marks a statement that finished after the engine closed.
var errEngineClosed = sinkdef.ErrClosed

// ErrLocation marks a location that is refused: outside the allowed roots,
// or not a usable path.
var ErrLocation = sinkdef.ErrLocation

// ErrOption marks an unknown WITH option or a bad value for a known one.
var ErrOption = sinkdef.ErrOption

// ErrNotSupported marks a statement or feature lakesql does not do yet;
// sinkdef's, which refuses the sink features.
var ErrNotSupported = sinkdef.ErrNotSupported
