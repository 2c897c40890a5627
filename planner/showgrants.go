package planner

// SHOW GRANTS. lakesql's users have no privileges of their own: every user
// the server lets in may run every statement, so each one's grant is ALL
// PRIVILEGES ON *.*, printed the way MySQL 8 prints it. Users are not
// bound to a host, so the account is `name`@`%`. A REPL or driver session
// has no user: it runs as the owner of the data directory, shown as
// `root`@`localhost`. go-mysql-server's own SHOW GRANTS reads its mysql
// database, which lakesql does not have (1049).

import (
	"context"
	"fmt"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// errNoGrant is MySQL's 1141 for SHOW GRANTS FOR an account that does not exist.
type errNoGrant struct{ user, host string }

func (e errNoGrant) Error() string {
	return fmt.Sprintf("There is no such grant defined for user '%s' on host '%s'", e.user, e.host)
}

// injectShowGrants returns the injected statement for SHOW GRANTS; ok is
// false for any other query. The account is found here, where the session
// is known, since the result's column is named after it.
func (p *gmsParser) injectShowGrants(ctx context.Context, query string) (ast.Statement, bool) {
	first, i := leadingWord(query, 0)
	second, _ := leadingWord(query, i)
	if !keywordIs(first, "SHOW") || !keywordIs(second, "GRANTS") {
		return nil, false
	}
	st, err := p.mysql.ParseSimple(query)
	sg, ok := st.(*ast.ShowGrants)
	if err != nil || !ok {
		return nil, false
	}
	n := &showGrantsNode{user: "root", host: "localhost"}
	if gctx, ok := ctx.(*gms.Context); ok && gctx.Session.Client().User != "" {
		n.user, n.host = gctx.Session.Client().User, "%"
	}
	switch {
	case len(sg.Using) > 0:
		n.err = fmt.Errorf("%w: SHOW GRANTS ... USING (lakesql has no roles)", ErrNotSupported)
	case sg.For != nil && !sg.CurrentUser:
		user, host := sg.For.Name, sg.For.Host
		if sg.For.AnyHost || host == "" {
			host = "%"
		}
		known := user == n.user && host == n.host ||
			host == "%" && p.engine.opts.KnownUser != nil && p.engine.opts.KnownUser(user)
		if !known {
			n.err = errNoGrant{user: user, host: host}
		}
		n.user, n.host = user, host
	}
	return ast.InjectedStatement{Statement: n}, true
}

// showGrantsNode answers SHOW GRANTS [FOR account] for one account.
type showGrantsNode struct {
	user, host string
	err        error // the account does not exist, or USING
}

var (
	_ gms.ExecSourceRel = (*showGrantsNode)(nil)
	_ ast.Injectable    = (*showGrantsNode)(nil)
)

func (n *showGrantsNode) WithResolvedChildren([]any) (any, error) { return n, nil }
func (n *showGrantsNode) Resolved() bool                          { return true }
func (n *showGrantsNode) String() string                          { return "SHOW GRANTS" }
func (n *showGrantsNode) Children() []gms.Node                    { return nil }
func (n *showGrantsNode) IsReadOnly() bool                        { return true }
func (n *showGrantsNode) WithChildren(children ...gms.Node) (gms.Node, error) {
	if len(children) != 0 {
		return nil, gms.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

// Schema names the column after the account, as MySQL does.
func (n *showGrantsNode) Schema() gms.Schema {
	return gms.Schema{{Name: "Grants for " + n.user + "@" + n.host, Type: types.LongText}}
}

func (n *showGrantsNode) RowIter(*gms.Context, gms.Row) (gms.RowIter, error) {
	if n.err != nil {
		return nil, n.err
	}
	grant := "GRANT ALL PRIVILEGES ON *.* TO " + quoteAccountPart(n.user) + "@" + quoteAccountPart(n.host)
	return gms.RowsToRowIter(gms.NewRow(grant)), nil
}

// quoteAccountPart quotes a user or host name the way MySQL 8 prints it.
func quoteAccountPart(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}
