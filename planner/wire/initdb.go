package wire

import (
	"errors"

	"github.com/dolthub/vitess/go/mysql"

	"github.com/lakesql/lakesql/planner"
)

// ComInitDB gives a refused USE, or the database a client names in its
// handshake, MySQL's code: go-mysql-server sends 1105 where MySQL sends
// 1044 (no privilege on the database) or 1049 (no such database).
func (h *handler) ComInitDB(c *mysql.Conn, schemaName string) error {
	err := h.Handler.ComInitDB(c, schemaName)
	var se *mysql.SQLError
	if errors.As(err, &se) {
		return planner.ClassifyMessage(se)
	}
	return err
}
