package planner

// SHOW GRANTS, answered by lakesql rather than by go-mysql-server, which
// names the column after the client's address instead of the account, and
// refuses a user without privileges on the mysql database even their own
// grants. With accounts (the MySQL server, privileges.go) the rows are
// go-mysql-server's, read from its mysql database: one GRANT per level,
// printed the way MySQL 8 prints them. SHOW GRANTS FOR another account
// needs SELECT on the mysql database, as in MySQL (1044).
//
// Without accounts (the REPL, the database/sql driver) a session runs as
// the owner of the data directory, may run every statement, and is shown
// as `root`@`localhost` with ALL PRIVILEGES ON *.*.

import (
	"context"
	"fmt"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/internal/sqlword"
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
	first, i := sqlword.Leading(query, 0)
	second, _ := sqlword.Leading(query, i)
	if !sqlword.Is(first, "SHOW") || !sqlword.Is(second, "GRANTS") {
		return nil, false
	}
	st, err := p.mysql.ParseSimple(query)
	sg, ok := st.(*ast.ShowGrants)
	if err != nil || !ok {
		return nil, false
	}
	n := &showGrantsNode{user: "root", host: "localhost"}
	gctx, _ := ctx.(*gms.Context)
	if gctx != nil && p.engine.privileges(gctx) != nil {
		return ast.InjectedStatement{Auth: injectedAuth, Statement: p.engine.accountGrants(gctx, sg)}, true
	}
	switch {
	case len(sg.Using) > 0:
		n.err = fmt.Errorf("%w: SHOW GRANTS ... USING (lakesql has no roles)", ErrNotSupported)
	case sg.For != nil && !sg.CurrentUser:
		user, host := sg.For.Name, sg.For.Host
		if sg.For.AnyHost || host == "" {
			host = "%"
		}
		if user != n.user || host != n.host {
			n.err = errNoGrant{user: user, host: host}
		}
		n.user, n.host = user, host
	}
	return ast.InjectedStatement{Auth: injectedAuth, Statement: n}, true
}

// accountGrants is SHOW GRANTS [FOR account] of the mysql database.
func (e *Engine) accountGrants(ctx *gms.Context, sg *ast.ShowGrants) *showGrantsNode {
	db := e.privileges(ctx)
	rd := db.Reader()
	defer rd.Close()
	self := db.GetUser(rd, ctx.Session.Client().User, ctx.Session.Client().Address, false)
	n := &showGrantsNode{db: db}
	if self != nil {
		n.user, n.host = self.User, self.Host
	}
	switch {
	case len(sg.Using) > 0:
		n.err = fmt.Errorf("%w: SHOW GRANTS ... USING", ErrNotSupported)
	case sg.For != nil && !sg.CurrentUser:
		n.user, n.host = sg.For.Name, sg.For.Host
		if sg.For.AnyHost || n.host == "" {
			n.host = "%"
		}
		other := self == nil || n.user != self.User || n.host != self.Host
		if other && !db.UserHasPrivileges(ctx, gms.NewPrivilegedOperation(gms.PrivilegeCheckSubject{Database: "mysql"}, gms.PrivilegeType_Select)) {
			n.err = databaseDenied(ctx, "mysql")
		} else if _, ok := rd.GetUser(mysql_db.UserPrimaryKey{User: n.user, Host: n.host}); !ok {
			n.err = errNoGrant{user: n.user, host: n.host}
		}
	}
	return n
}

// showGrantsNode answers SHOW GRANTS [FOR account] for one account.
type showGrantsNode struct {
	user, host string
	err        error // the account does not exist, or USING
	// db, when set, holds the account's grants.
	db *mysql_db.MySQLDb
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

func (n *showGrantsNode) RowIter(ctx *gms.Context, _ gms.Row) (gms.RowIter, error) {
	if n.err != nil {
		return nil, n.err
	}
	if n.db != nil {
		return rowexec.DefaultBuilder.Build(ctx, &plan.ShowGrants{For: &plan.UserName{Name: n.user, Host: n.host}, MySQLDb: n.db}, nil)
	}
	grant := "GRANT ALL PRIVILEGES ON *.* TO " + sqlquote.MySQLIdent(n.user) + "@" + sqlquote.MySQLIdent(n.host)
	return gms.RowsToRowIter(gms.NewRow(grant)), nil
}
