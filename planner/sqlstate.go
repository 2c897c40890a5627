package planner

import "github.com/dolthub/vitess/go/mysql"

// sqlStates gives the SQLSTATE MySQL sends with an error code, for the
// codes lakesql's clients meet. go-mysql-server sends HY000 ("general
// error") with most codes; clients that branch on the class of an error
// (23000 integrity, 42S02 unknown table, ...) need MySQL's.
var sqlStates = map[int]string{
	mysql.ERParseError:                   mysql.SSClientError,
	mysql.ERSyntaxError:                  mysql.SSClientError,
	mysql.ERNoSuchTable:                  mysql.SSUnknownTable,
	mysql.ERBadTable:                     mysql.SSUnknownTable,
	mysql.ERTableExists:                  "42S01",
	mysql.ERLockDeadlock:                 "40001",
	mysql.ERQueryInterrupted:             mysql.SSQueryInterrupted,
	mysql.ERBadFieldError:                mysql.SSBadFieldError,
	mysql.ERBadDb:                        mysql.SSClientError,
	mysql.ERBadNullError:                 mysql.SSConstraintViolation,
	mysql.ERDupEntry:                     mysql.SSDupKey,
	mysql.ERWrongValueCountOnRow:         "21S01",
	mysql.ERDataTooLong:                  mysql.SSDataTooLong,
	mysql.ERDataOutOfRange:               mysql.SSDataOutOfRange,
	mysql.ERWarnDataOutOfRange:           mysql.SSDataOutOfRange,
	mysql.ERTruncatedWrongValue:          "22007",
	mysql.ERNotSupportedYet:              mysql.SSClientError,
	mysql.ERAccessDeniedError:            "28000",
	erTableAccessDenied:                  mysql.SSClientError,
	mysql.ERDBAccessDenied:               mysql.SSClientError,
	erSpecificAccessDenied:               mysql.SSClientError,
	mysql.ERNonExistingGrant:             mysql.SSClientError,
	mysql.ERSPDoesNotExist:               mysql.SSClientError,
	mysql.ERWrongNumberOfColumnsInSelect: mysql.SSWrongNumberOfColumns,
	mysql.ERWrongValueForVar:             mysql.SSClientError,
	mysql.ERWrongTypeForVar:              mysql.SSClientError,
	erTooBigScale:                        mysql.SSClientError,
	erInvalidJSONText:                    "22032",
	erReadOnlyTransaction:                "25006",
	erAlterOperationNotSupportedReason:   "0A000",
	mysql.ERLockOrActiveTransaction:      "25000",
	mysql.ERDupFieldName:                 "42S21",
	mysql.ERCantRemoveAllFields:          mysql.SSClientError,
}

// withMySQLState gives e MySQL's SQLSTATE for its code when it carries the
// general HY000 and MySQL has a more precise one.
func withMySQLState(e *mysql.SQLError) *mysql.SQLError {
	if e == nil || e.State != mysql.SSUnknownSQLState {
		return e
	}
	if s, ok := sqlStates[e.Num]; ok {
		c := *e
		c.State = s
		return &c
	}
	return e
}
