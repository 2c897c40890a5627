package wire

import (
	"context"
	"errors"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/lakesql/lakesql/planner"
)

// prepareSyntax returns the error of a COM_STMT_PREPARE text that does
// not parse, or nil when vitess is to take it. vitess parses the text
// itself, before the handler sees it, and sends a parse failure as 1105
// ("unknown error: syntax error ..."); the command guard answers such a
// text with this error in its place, the one the same text gets through
// COM_QUERY (1064, 42000). It parses as vitess then will: with the
// connection's parser options, after the same split into statements.
func (h *handler) prepareSyntax(c *mysql.Conn, query string) *mysql.SQLError {
	opts, err := h.ParserOptionsForConnection(c)
	if err != nil {
		return nil // vitess fails the same way, and ends the connection
	}
	if !c.DisableClientMultiStatements && c.Capabilities&mysql.CapabilityClientMultiStatements != 0 {
		if pieces, err := sqlparser.SplitStatementToPieces(query); err == nil && len(pieces) != 1 {
			return nil // vitess's "cannot prepare multiple statements"
		}
	}
	_, err = sqlparser.ParseWithOptions(context.Background(), query, opts)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sqlparser.ErrEmpty):
		return mysql.NewSQLError(mysql.EREmptyQuery, mysql.SSClientError, "Query was empty")
	}
	// go-mysql-server's COM_QUERY parse error, classified as lakesql
	// classifies it there.
	return planner.MySQLError(gms.ErrSyntaxError.New(err.Error()))
}

// prepareCost refuses a text to prepare whose statement is too costly to
// analyse (planner.CheckCost), as it is refused when sent as a query:
// go-mysql-server analyses a statement when it is prepared. A text that
// does not parse is left to the handler.
func (h *handler) prepareCost(c *mysql.Conn, query string) error {
	opts, err := h.ParserOptionsForConnection(c)
	if err != nil {
		return nil
	}
	st, err := sqlparser.ParseWithOptions(context.Background(), query, opts)
	if err != nil {
		return nil
	}
	if err := planner.CheckCost(st); err != nil {
		return planner.MySQLError(err)
	}
	return nil
}
