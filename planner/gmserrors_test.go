package planner

import (
	"testing"

	"github.com/dolthub/vitess/go/mysql"
)

// Recognising go-mysql-server's errors by message must not catch other
// errors: a kind whose format is all verbs is recognised by Is only.
func TestClassifyMessage(t *testing.T) {
	for msg, want := range map[string]int{
		"Field 'id' doesn't have a default value": mysql.ERNoDefaultForField,
		"sink t: DELETE is not supported yet":     mysql.ERUnknownError,
		"anything at all":                         mysql.ERUnknownError,
	} {
		got := ClassifyMessage(mysql.NewSQLError(mysql.ERUnknownError, mysql.SSUnknownSQLState, "%s", msg))
		if got.Num != want {
			t.Errorf("%q: code %d, want %d", msg, got.Num, want)
		}
	}
}
