package planner

// go-mysql-server errors that sql.CastSQLError leaves at 1105 ("unknown
// error") although MySQL has a code for them. Some are raised while an
// INSERT's rows stream, where go-mysql-server's server neither logs the
// error nor lets lakesql see it: only the message reaches the wire layer,
// so each kind is also recognised by its message, matched against the
// kind's own format.

import (
	"regexp"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	goerrors "gopkg.in/src-d/go-errors.v1"
)

type gmsKind struct {
	kind  *goerrors.Kind
	code  int
	state string
	// msg matches the kind's messages; nil when its format has too little
	// text of its own to tell it from other errors (ErrSyntaxError is
	// just "%s"): such a kind is recognised by Is only.
	msg *regexp.Regexp
}

var gmsKinds = []*gmsKind{
	{kind: gms.ErrInsertIntoNonNullableDefaultNullColumn, code: mysql.ERNoDefaultForField, state: mysql.SSUnknownSQLState},
	{kind: gms.ErrSyntaxError, code: mysql.ERParseError, state: mysql.SSClientError},
}

// minLiteral is how many characters of its own a kind's format needs for
// its messages to be recognised by text.
const minLiteral = 12

func init() {
	verb := regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)
	for _, k := range gmsKinds {
		parts := verb.Split(k.kind.Message, -1)
		literal := 0
		for i, p := range parts {
			literal += len(strings.TrimSpace(p))
			parts[i] = regexp.QuoteMeta(p)
		}
		if literal >= minLiteral {
			k.msg = regexp.MustCompile(`^` + strings.Join(parts, `.*`) + `$`)
		}
	}
}

// gmsCode returns the code and SQLSTATE MySQL gives err, when err is one
// of the kinds above.
func gmsCode(err error) (code int, state string, ok bool) {
	for _, k := range gmsKinds {
		if k.kind.Is(err) {
			return k.code, k.state, true
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
	for _, k := range gmsKinds {
		if k.msg != nil && k.msg.MatchString(e.Message) {
			c := *e
			c.Num, c.State = k.code, k.state
			return &c
		}
	}
	return e
}
