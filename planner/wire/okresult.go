package wire

import "github.com/dolthub/vitess/go/sqltypes"

// noColumnRows makes a result without columns an OK with 0 rows affected.
// go-mysql-server counts the row its SET (a node whose schema is empty)
// returns as one row affected; MySQL reports 0 for SET, and a statement
// that returns no columns has no rows to count.
func noColumnRows(r *sqltypes.Result) {
	if r != nil && len(r.Fields) == 0 && len(r.Rows) > 0 {
		r.Rows = nil
		r.RowsAffected = 0
	}
}
