package wire

import (
	"strings"
	"unicode"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// errEmptyQuery is MySQL's answer to a COM_QUERY that holds no statement,
// only blanks and comments; go-mysql-server would answer OK with a warning.
// Only a single-statement COM_QUERY is checked: with multi-statements on,
// what follows the last ';' reaches the handler as a statement of its own.
var errEmptyQuery = mysql.NewSQLError(mysql.EREmptyQuery, mysql.SSClientError, "Query was empty")

// emptyQuery reports that query holds nothing but blanks and comments
// (`/* */`, `-- `, `#`); `/*! ... */` is MySQL code, not a comment.
func emptyQuery(query string) bool {
	for {
		query = sqlparser.StripLeadingComments(query)
		if !strings.HasPrefix(query, "#") {
			return query == ""
		}
		nl := strings.IndexByte(query, '\n')
		if nl < 0 {
			return true
		}
		query = strings.TrimLeftFunc(query[nl+1:], unicode.IsSpace)
	}
}
