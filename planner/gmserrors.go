package planner

// go-mysql-server errors that sql.CastSQLError leaves at 1105 ("unknown
// error") although MySQL has a code for them. Some are raised while an
// INSERT's rows stream, where go-mysql-server's server neither logs the
// error nor lets lakesql see it: only the message reaches the wire layer,
// so each kind is also recognised by its message, matched against the
// kind's own format.

import (
	"context"
	"errors"
	"regexp"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	goerrors "gopkg.in/src-d/go-errors.v1"
)

type gmsKind struct {
	kind  *goerrors.Kind
	code  int
	state string
	// pattern, when set, is the kind's message pattern, written by hand
	// where the format's verbs would match too much (a bare "%v" matches
	// any text, spaces and colons included).
	pattern string
	// refine, when set, picks the code from the message, for a kind
	// go-mysql-server raises for what MySQL tells apart.
	refine func(msg string) (code int, state string)
	// msg matches the kind's messages; nil when its format has too little
	// text of its own to tell it from other errors (ErrSyntaxError is
	// just "%s"): such a kind is recognised by Is only.
	msg *regexp.Regexp
}

var gmsKinds = []*gmsKind{
	{kind: gms.ErrInsertIntoNonNullableDefaultNullColumn, code: mysql.ERNoDefaultForField, state: mysql.SSUnknownSQLState},
	{kind: gms.ErrSyntaxError, code: mysql.ERParseError, state: mysql.SSClientError},

	// A value out of its column's range: 1264, ER_WARN_DATA_OUT_OF_RANGE
	// (an error in strict mode). The message is "300 out of range for
	// tinyint": a value (a number) and a go-mysql-server type name.
	{kind: gms.ErrValueOutOfRange, code: mysql.ERWarnDataOutOfRange, state: mysql.SSDataOutOfRange,
		pattern: `^\S+ out of range for [a-z]+(?: ?\([^()]*\))?(?: unsigned)?$`},
	{kind: types.ErrConvertToDecimalLimit, code: mysql.ERWarnDataOutOfRange, state: mysql.SSDataOutOfRange},
	// A value longer than its VARCHAR(n), VARBINARY(n), TEXT, ... column
	// (go-mysql-server checks the declared type before lakesql's rules
	// do): 1406, ER_DATA_TOO_LONG.
	{kind: types.ErrLengthBeyondLimit, code: mysql.ERDataTooLong, state: "22001"},
	// A date or time that is not one, or out of TIMESTAMP's range: 1292,
	// ER_TRUNCATED_WRONG_VALUE ("Incorrect date value").
	{kind: types.ErrConvertingToTime, code: mysql.ERTruncatedWrongValue, state: "22007"},
	{kind: types.ErrConvertingToTimeOutOfRange, code: mysql.ERTruncatedWrongValue, state: "22007"},
	// Bytes that are not text in the column's character set (not UTF-8
	// for a VARCHAR): 1366, ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
	// ("Incorrect string value").
	{kind: types.ErrBadCharsetString, code: mysql.ERTruncatedWrongValueForField, state: mysql.SSUnknownSQLState},
	// A VALUES row or SELECT with too many or too few values: 1136.
	{kind: gms.ErrInsertIntoMismatchValueCount, code: mysql.ERWrongValueCountOnRow, state: mysql.SSWrongValueCountOnRow},
	// An unknown column: 1054.
	{kind: gms.ErrColumnNotFound, code: mysql.ERBadFieldError, state: mysql.SSBadFieldError},
	{kind: gms.ErrTableColumnNotFound, code: mysql.ERBadFieldError, state: mysql.SSBadFieldError},

	// What the lakesql database does not implement (it is not a
	// TableCreator, TableDropper, TableRenamer, TriggerDatabase, ...; a
	// sink is not Truncateable, AlterableTable, ReplaceableTable, ...): a
	// statement lakesql does not support, 1235.
	{kind: gms.ErrCreateTableNotSupported, code: mysql.ERNotSupportedYet, state: mysql.SSClientError},
	{kind: gms.ErrDropTableNotSupported, code: mysql.ERNotSupportedYet, state: mysql.SSClientError},
	{kind: gms.ErrRenameTableNotSupported, code: mysql.ERNotSupportedYet, state: mysql.SSClientError},
	{kind: gms.ErrAlterTableNotSupported, code: mysql.ERNotSupportedYet, state: mysql.SSClientError},
	{kind: gms.ErrAlterTableCollationNotSupported, code: mysql.ERNotSupportedYet, state: mysql.SSClientError},
	{kind: gms.ErrTemporaryTableNotSupported, code: mysql.ERNotSupportedYet, state: mysql.SSClientError},
	{kind: gms.ErrTriggersNotSupported, code: mysql.ERNotSupportedYet, state: mysql.SSClientError},
	{kind: gms.ErrStoredProceduresNotSupported, code: mysql.ERNotSupportedYet, state: mysql.SSClientError},
	{kind: gms.ErrEventsNotSupported, code: mysql.ERNotSupportedYet, state: mysql.SSClientError},
	{kind: gms.ErrViewsNotSupported, code: mysql.ERNotSupportedYet, state: mysql.SSClientError},
	{kind: gms.ErrImmutableDatabaseProvider, code: mysql.ERNotSupportedYet, state: mysql.SSClientError},
	{kind: plan.ErrTruncateNotSupported, code: mysql.ERNotSupportedYet, state: mysql.SSClientError},
	{kind: plan.ErrReplaceIntoNotSupported, code: mysql.ERNotSupportedYet, state: mysql.SSClientError},
	{kind: plan.ErrInsertIntoNotSupported, code: mysql.ERNotSupportedYet, state: mysql.SSClientError},
	{kind: plan.ErrOnDuplicateKeyUpdateNotSupported, code: mysql.ERNotSupportedYet, state: mysql.SSClientError},
	{kind: plan.ErrAutoIncrementNotSupported, code: mysql.ERNotSupportedYet, state: mysql.SSClientError},
	{kind: plan.ErrDeleteFromNotSupported, code: mysql.ERNotSupportedYet, state: mysql.SSClientError},
	{kind: plan.ErrUpdateNotSupported, code: mysql.ERNotSupportedYet, state: mysql.SSClientError},
	{kind: plan.ErrNotIndexable, code: mysql.ERNotSupportedYet, state: mysql.SSClientError},

	// SQL-level prepared statements: EXECUTE or DEALLOCATE of a name not
	// prepared is 1243, ER_UNKNOWN_STMT_HANDLER; a PREPARE whose text
	// does not parse gets the MySQL parser's plain error, which is 1064.
	{kind: gms.ErrUnknownPreparedStatement, code: erUnknownStmtHandler, state: mysql.SSUnknownSQLState},
	{kind: parserSyntaxError, code: mysql.ERParseError, state: mysql.SSClientError,
		pattern: `^syntax error at position \S+(?: near '(?s:.*)')?$`},

	// Privileges (privileges.go): a table, 1142; a database, 1044; a
	// global privilege, 1227; FILE, 1045. go-mysql-server's own refusals
	// outside its planner's checks (which privileges.go rewords) too.
	{kind: ErrTableAccessDenied, code: erTableAccessDenied, state: mysql.SSClientError},
	{kind: ErrGlobalAccessDenied, code: erSpecificAccessDenied, state: mysql.SSClientError},
	{kind: ErrFileAccessDenied, code: mysql.ERAccessDeniedError, state: mysql.SSAccessDeniedError},
	{kind: ErrKillDenied, code: erKillDenied, state: mysql.SSUnknownSQLState},
	{kind: gms.ErrDatabaseAccessDeniedForUser, code: mysql.ERDBAccessDenied, state: mysql.SSClientError},
	{kind: gms.ErrTableAccessDeniedForUser, code: erTableAccessDenied, state: mysql.SSClientError},
	{kind: gms.ErrPrivilegeCheckFailed, code: erTableAccessDenied, state: mysql.SSClientError},
	// Accounts: CREATE USER of one that exists, DROP USER of one that
	// does not, 1396 (ER_CANNOT_USER).
	{kind: gms.ErrUserCreationFailure, code: erCannotUser, state: mysql.SSUnknownSQLState},
	{kind: gms.ErrUserDeletionFailure, code: erCannotUser, state: mysql.SSUnknownSQLState},
	{kind: gms.ErrUserAlterFailure, code: erCannotUser, state: mysql.SSUnknownSQLState},
	// SELECT ... INTO of more than one row into variables or a DUMPFILE:
	// 1172, ER_TOO_MANY_ROWS.
	{kind: gms.ErrMoreThanOneRow, code: mysql.ERTooManyRows, state: "42000"},

	// System variables.
	{kind: gms.ErrInvalidSystemVariableValue, code: mysql.ERWrongValueForVar, state: mysql.SSClientError,
		refine: wrongValueForVar},
	{kind: gms.ErrSystemVariableSessionOnly, code: mysql.ERLocalVariable, state: mysql.SSUnknownSQLState},
	{kind: gms.ErrSystemVariableGlobalOnly, code: mysql.ERGlobalVariable, state: mysql.SSUnknownSQLState},
	{kind: gms.ErrSystemVariableReadOnly, code: mysql.ERIncorrectGlobalLocalVar, state: mysql.SSUnknownSQLState},
	{kind: gms.ErrUnknownSystemVariable, code: mysql.ERUnknownSystemVariable, state: mysql.SSUnknownSQLState},
}

// erUnknownStmtHandler is MySQL's ER_UNKNOWN_STMT_HANDLER, which vitess does not name.
const erUnknownStmtHandler = 1243

// parserSyntaxError stands for the MySQL parser's syntax errors, which are
// not a go-mysql-server kind: only their message is matched.
var parserSyntaxError = goerrors.NewKind("syntax error at position %s")

// minLiteral is how many characters of its own a kind's format needs for
// its messages to be recognised by text.
const minLiteral = 12

// verbPatterns is what a format's verb matches in its messages: %q a
// quoted string, %d a number, any other verb (anyVerb) any text without
// ": ", the separator of wrapped errors, so that "tables cannot be created
// on database %s" does not take in "tables cannot be created on database
// x: <another error>".
var verbPatterns = map[byte]string{
	'q': `"(?:[^"\\]|\\.)*"`,
	'd': `-?[0-9]+`,
}

const anyVerb = `(?:[^:]|:[^ ]|:$)*`

func init() {
	verb := regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)
	for _, k := range gmsKinds {
		if k.pattern != "" {
			k.msg = regexp.MustCompile(k.pattern)
			continue
		}
		format := k.kind.Message
		parts := verb.Split(format, -1)
		verbs := verb.FindAllString(format, -1)
		literal := 0
		var re strings.Builder
		re.WriteString(`^`)
		for i, p := range parts {
			literal += len(strings.TrimSpace(p))
			re.WriteString(regexp.QuoteMeta(p))
			if i < len(verbs) {
				v := verbs[i]
				if s, ok := verbPatterns[v[len(v)-1]]; ok {
					re.WriteString(s)
				} else {
					re.WriteString(anyVerb)
				}
			}
		}
		re.WriteString(`$`)
		if literal >= minLiteral {
			k.msg = regexp.MustCompile(re.String())
		}
	}
}

// gmsCode returns the code and SQLSTATE MySQL gives err, when err (or an
// error it wraps) is one of the kinds above.
func gmsCode(err error) (code int, state string, ok bool) {
	for e := err; e != nil; e = errors.Unwrap(e) {
		u := gms.UnwrapError(e)
		for _, k := range gmsKinds {
			if k.kind.Is(u) {
				code, state = k.code, k.state
				if k.refine != nil {
					code, state = k.refine(u.Error())
				}
				return code, state, true
			}
		}
	}
	return 0, "", false
}

// ClassifyMessage gives an error that reached a client as 1105 the code
// MySQL would give it, recognising go-mysql-server's errors by message;
// any other error is returned as it is.
func ClassifyMessage(e *mysql.SQLError) *mysql.SQLError {
	if e == nil || e.Num != mysql.ERUnknownError {
		return e
	}
	if e.Message == context.Canceled.Error() {
		// The statement's context, cancelled by KILL QUERY, KILL or a
		// client gone, ended it while its rows were read.
		c := *e
		c.Num, c.State, c.Message = mysql.ERQueryInterrupted, mysql.SSQueryInterrupted, "Query execution was interrupted"
		return &c
	}
	for _, k := range gmsKinds {
		if k.msg != nil && k.msg.MatchString(e.Message) {
			c := *e
			c.Num, c.State = k.code, k.state
			if k.refine != nil {
				c.Num, c.State = k.refine(e.Message)
			}
			return &c
		}
	}
	return e
}

var (
	sysVarValue = regexp.MustCompile(`^Variable '(.*)' can't be set to the value of '(.*)'$`)
	integerText = regexp.MustCompile(`^[-+]?[0-9]+$`)
	numberText  = regexp.MustCompile(`^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$`)
)

// wrongValueForVar tells MySQL's two errors for a value a system variable
// refuses apart, which go-mysql-server gives the one message "Variable 'x'
// can't be set to the value of 'v'": a value of the wrong type for a
// numeric variable (text, NULL, a fraction for an integer) is 1232,
// ER_WRONG_TYPE_FOR_VAR; any other refused value (out of the variable's
// range, not one of its words) is 1231, ER_WRONG_VALUE_FOR_VAR.
func wrongValueForVar(msg string) (code int, state string) {
	code, state = mysql.ERWrongValueForVar, mysql.SSClientError
	m := sysVarValue.FindStringSubmatch(msg)
	if m == nil {
		return code, state
	}
	sv, _, ok := gms.SystemVariables.GetGlobal(m[1])
	if !ok || sv.GetType() == nil {
		return code, state
	}
	var number *regexp.Regexp
	switch sv.GetType().Type() {
	case sqltypes.Int64, sqltypes.Uint64:
		number = integerText
	case sqltypes.Float64:
		number = numberText
	default: // booleans (Int8), enums, sets, strings
		return code, state
	}
	if !number.MatchString(m[2]) {
		return mysql.ERWrongTypeForVar, mysql.SSClientError
	}
	return code, state
}
