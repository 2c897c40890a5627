package wire

// Parameters of the binary protocol that go-mysql-server cannot bind. A
// DOUBLE or FLOAT parameter of NaN or ±infinity reaches its binder as the
// text "NaN" or "+Inf", which it cannot parse and panics on, dropping the
// connection. MySQL has neither value, and lakesql's SQL refuses them as
// MySQL's strict mode does (planner/valuecheck.go): NaN is not a number
// (1366), an infinity is out of range (1264).

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/proto/query"
)

// checkFloatParams refuses a statement whose parameters hold NaN or an
// infinity, with the error MySQL gives such a value.
func checkFloatParams(p *mysql.PrepareData) error {
	for i := 1; i <= int(p.ParamsCount); i++ {
		bv, ok := p.BindVars[fmt.Sprintf("v%d", i)]
		if !ok || bv == nil || (bv.Type != query.Type_FLOAT64 && bv.Type != query.Type_FLOAT32) {
			continue
		}
		f, err := strconv.ParseFloat(string(bv.Value), 64)
		switch {
		case err != nil:
			// Not a number vitess would write: go-mysql-server's binder refuses it.
		case math.IsNaN(f):
			return mysql.NewSQLError(mysql.ERTruncatedWrongValueForField, mysql.SSUnknownSQLState,
				"incorrect value: parameter %d is NaN, which MySQL has no value for", i)
		case math.IsInf(f, 0):
			return mysql.NewSQLError(mysql.ERWarnDataOutOfRange, mysql.SSDataOutOfRange,
				"out of range value: parameter %d is %s, which MySQL has no value for", i, bv.Value)
		}
	}
	return nil
}
