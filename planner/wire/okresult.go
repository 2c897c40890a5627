package wire

import "github.com/dolthub/vitess/go/sqltypes"

// okResult corrects what go-mysql-server and vitess would send in an OK
// packet:
//
//   - a result without columns is an OK with 0 rows affected:
//     go-mysql-server counts the row its SET (a node whose schema is
//     empty) returns as one row affected, where MySQL reports 0;
//   - it carries no info text: vitess writes the info as a '#' byte and
//     the text, where a client that tracks session state (the mariadb
//     CLI, Connector/J) reads a length, so PREPARE's "Statement prepared"
//     reached the mariadb CLI as a malformed packet (ERROR 2027). The
//     info is only a message; the counts stay.
func okResult(r *sqltypes.Result) {
	if r == nil || len(r.Fields) != 0 {
		return
	}
	r.Info = ""
	if len(r.Rows) > 0 {
		r.Rows = nil
		r.RowsAffected = 0
	}
}
