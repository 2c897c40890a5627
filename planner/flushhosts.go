package planner

// FLUSH HOSTS: MySQL's statement that unblocks the client addresses
// blocked for too many connection errors (max_connect_errors) and clears
// every address's count. go-mysql-server parses it and refuses it ("hosts
// not supported"); the server that keeps the counts passes its flush as
// Options.FlushHosts. Without a server (the REPL, the driver) there is
// nothing to flush and the statement does nothing.

import (
	"context"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/lakesql/lakesql/internal/sqlword"
)

// injectFlushHosts returns the injected statement for FLUSH [LOCAL |
// NO_WRITE_TO_BINLOG] HOSTS; ok is false for any other query.
func (p *gmsParser) injectFlushHosts(_ context.Context, query string) (ast.Statement, bool) {
	if w, _ := sqlword.Leading(query, 0); !sqlword.Is(w, "FLUSH") {
		return nil, false
	}
	st, err := p.mysql.ParseSimple(query)
	f, ok := st.(*ast.Flush)
	if err != nil || !ok || f.Option == nil || !strings.EqualFold(f.Option.Name, "hosts") {
		return nil, false
	}
	// The parsed statement's authorization: RELOAD, as MySQL asks.
	return ast.InjectedStatement{Auth: f.Auth, Statement: &flushHostsNode{flush: p.engine.opts.FlushHosts}}, true
}

// flushHostsNode runs FLUSH HOSTS.
type flushHostsNode struct{ flush func() }

var (
	_ gms.ExecSourceRel = (*flushHostsNode)(nil)
	_ ast.Injectable    = (*flushHostsNode)(nil)
)

func (n *flushHostsNode) WithResolvedChildren([]any) (any, error) { return n, nil }
func (n *flushHostsNode) Resolved() bool                          { return true }
func (n *flushHostsNode) String() string                          { return "FLUSH HOSTS" }
func (n *flushHostsNode) Children() []gms.Node                    { return nil }
func (n *flushHostsNode) IsReadOnly() bool                        { return true }
func (n *flushHostsNode) Schema() gms.Schema                      { return types.OkResultSchema }
func (n *flushHostsNode) WithChildren(children ...gms.Node) (gms.Node, error) {
	if len(children) != 0 {
		return nil, gms.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

func (n *flushHostsNode) RowIter(*gms.Context, gms.Row) (gms.RowIter, error) {
	if n.flush != nil {
		n.flush()
	}
	return gms.RowsToRowIter(gms.NewRow(types.NewOkResult(0))), nil
}
