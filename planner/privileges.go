package planner

// Privileges. The MySQL server enables go-mysql-server's mysql database
// (sql/mysql_db: accounts, GRANT, REVOKE, roles); go-mysql-server then
// checks its own statements (SELECT, INSERT, UPDATE, DELETE, CREATE VIEW,
// LOAD DATA, CREATE USER, ...) while it plans them. What it does not know
// is checked here against the same accounts:
//
//   - lakesql's own statements and their CALL forms: CREATE SINK needs
//     CREATE on the sink (lakesql.* or lakesql.sink), DROP SINK needs DROP,
//     SHOW CREATE SINK and SHOW SINK STATUS of a sink need a privilege on
//     it, and SHOW SINKS and SHOW SINK STATUS list only such sinks;
//   - SET lakesql_epoch names the epoch of the session's next writes: it
//     needs INSERT on lakesql;
//   - SELECT ... INTO OUTFILE / DUMPFILE writes a file: it needs the global
//     FILE privilege (go-mysql-server checks FILE for LOAD DATA only);
//   - a SELECT the DuckDB route would run never reaches go-mysql-server's
//     planner: without SELECT on its sink it goes to go-mysql-server, which
//     refuses it.
//
// go-mysql-server's refusals say "command denied to user 'u'@'%'"; they
// are rewritten with what was refused, in MySQL's words and codes: 1142
// (a table), 1044 (a database), 1227 (a global privilege) and 1045 (FILE,
// as MySQL answers INTO OUTFILE without it, and a GRANT ON *.* by a user
// who may not grant). A session without an account
// (the REPL, the database/sql driver) or an engine whose mysql database is
// off (the default) is never refused.

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/go-mysql-server/sql/plan"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	goerrors "gopkg.in/src-d/go-errors.v1"

	"github.com/lakesql/lakesql/internal/sqlword"
	"github.com/lakesql/lakesql/sinkddl"
)

// The refusals, in MySQL's words; gmserrors.go gives them their codes
// (by kind, or by message where only the message reaches the wire layer).
var (
	// ErrTableAccessDenied is 1142: command, account, table.
	ErrTableAccessDenied = goerrors.NewKind("%s command denied to user %s for table '%s'")
	// ErrGlobalAccessDenied is 1227: the privilege needed.
	ErrGlobalAccessDenied = goerrors.NewKind("Access denied; you need (at least one of) the %s privilege(s) for this operation")
	// ErrFileAccessDenied is 1045, MySQL's answer to INTO OUTFILE, LOAD
	// DATA and a global GRANT without the privilege: the account.
	ErrFileAccessDenied = goerrors.NewKind("Access denied for user %s (using password: YES)")
)

// account is how MySQL names the session's user in its refusals.
func account(ctx *gms.Context) string {
	c := ctx.Session.Client()
	host := c.Address
	if host == "127.0.0.1" || host == "::1" || host == "" {
		host = "localhost"
	}
	return "'" + c.User + "'@'" + host + "'"
}

func tableDenied(ctx *gms.Context, command, table string) error {
	return ErrTableAccessDenied.New(command, account(ctx), table)
}

// databaseDenied is 1044, go-mysql-server's own kind.
func databaseDenied(ctx *gms.Context, db string) error {
	return gms.ErrDatabaseAccessDeniedForUser.New(account(ctx), db)
}

func globalDenied(privilege string) error { return ErrGlobalAccessDenied.New(privilege) }

func fileDenied(ctx *gms.Context) error { return ErrFileAccessDenied.New(account(ctx)) }

// privileges returns the engine's mysql database when it is on and the
// session has an account; nil means nothing is refused.
func (e *Engine) privileges(ctx *gms.Context) *mysql_db.MySQLDb {
	db := e.gms.Analyzer.Catalog.MySQLDb
	if db == nil || !db.Enabled() || ctx == nil || ctx.Session == nil || ctx.Session.Client().User == "" {
		return nil
	}
	return db
}

// EnablePrivileges turns go-mysql-server's mysql database on: from then on
// every session with an account is held to its privileges. The MySQL
// server calls it once its accounts are loaded.
func (e *Engine) EnablePrivileges() *mysql_db.MySQLDb {
	db := e.gms.Analyzer.Catalog.MySQLDb
	db.SetEnabled(true)
	return db
}

// has reports whether the session may do priv on lakesql.table (table ""
// is the database itself).
func (e *Engine) has(ctx *gms.Context, table string, priv gms.PrivilegeType) bool {
	db := e.privileges(ctx)
	if db == nil {
		return true
	}
	return db.UserHasPrivileges(ctx, gms.NewPrivilegedOperation(gms.PrivilegeCheckSubject{Database: DatabaseName, Table: table}, priv))
}

// visible reports whether the session holds any privilege on lakesql.table,
// which is what MySQL asks of SHOW CREATE TABLE and SHOW TABLES.
func (e *Engine) visible(ctx *gms.Context, table string) bool {
	db := e.privileges(ctx)
	if db == nil {
		return true
	}
	ps := db.UserActivePrivilegeSet(ctx)
	dbSet := ps.Database(DatabaseName)
	return ps.Count() > 0 || dbSet.Count() > 0 || dbSet.Table(table).HasPrivileges()
}

// checkLakesql refuses one of lakesql's own statements the session may
// not run.
func (e *Engine) checkLakesql(ctx context.Context, st sinkddl.Statement) error {
	gctx, ok := ctx.(*gms.Context)
	if !ok || e.privileges(gctx) == nil {
		return nil
	}
	switch st := st.(type) {
	case *sinkddl.CreateSink:
		if !e.has(gctx, st.Name, gms.PrivilegeType_Create) {
			return tableDenied(gctx, "CREATE", st.Name)
		}
	case *sinkddl.DropSink:
		if !e.has(gctx, st.Name, gms.PrivilegeType_Drop) {
			return tableDenied(gctx, "DROP", st.Name)
		}
	case *sinkddl.AlterSink:
		if !e.has(gctx, st.Name, gms.PrivilegeType_Alter) {
			return tableDenied(gctx, "ALTER", st.Name)
		}
	case *sinkddl.ShowCreateSink:
		if !e.visible(gctx, st.Name) {
			return tableDenied(gctx, "SHOW", st.Name)
		}
	case *sinkddl.ShowSinkStatus:
		if st.Name != "" && !e.visible(gctx, st.Name) {
			return tableDenied(gctx, "SHOW", st.Name)
		}
	case *sinkddl.ShowSinkHistory:
		if !e.visible(gctx, st.Name) {
			return tableDenied(gctx, "SHOW", st.Name)
		}
	case *sinkddl.OptimizeSink:
		// MySQL's OPTIMIZE TABLE takes SELECT and INSERT.
		if !e.has(gctx, st.Name, gms.PrivilegeType_Insert) || !e.has(gctx, st.Name, gms.PrivilegeType_Select) {
			return tableDenied(gctx, "OPTIMIZE", st.Name)
		}
	case *sinkddl.VacuumSink:
		// It deletes files (DRY RUN only lists them).
		if !e.has(gctx, st.Name, gms.PrivilegeType_Select) || !st.DryRun && !e.has(gctx, st.Name, gms.PrivilegeType_Delete) {
			return tableDenied(gctx, "VACUUM", st.Name)
		}
	}
	return nil
}

// visibleRows keeps the rows of SHOW SINKS or SHOW SINK STATUS (the sink's
// name first) whose sink the session may see.
func (e *Engine) visibleRows(ctx context.Context, res *Result) *Result {
	gctx, ok := ctx.(*gms.Context)
	if !ok || res == nil || e.privileges(gctx) == nil {
		return res
	}
	kept := res.Rows[:0:0]
	for _, r := range res.Rows {
		if name, ok := r[0].(string); ok && e.visible(gctx, name) {
			kept = append(kept, r)
		}
	}
	res.Rows = kept
	return res
}

// checkEpochVariable refuses SET lakesql_epoch without INSERT on lakesql:
// the epoch decides what the session's next commits write (a replay is
// skipped). Unsetting it (-1) writes nothing and is always allowed.
func (e *Engine) checkEpochVariable(ctx *gms.Context, name string, value any) error {
	if !strings.EqualFold(name, EpochVariable) || e.privileges(ctx) == nil {
		return nil
	}
	if n, ok := value.(int64); ok && n == -1 {
		return nil
	}
	if !e.has(ctx, "", gms.PrivilegeType_Insert) {
		return databaseDenied(ctx, DatabaseName)
	}
	return nil
}

// SetSessionVariable implements sql.Session: lakesql_epoch needs a
// privilege (checkEpochVariable).
func (s *Session) SetSessionVariable(ctx *gms.Context, name string, value any) error {
	if s.engine != nil {
		if err := s.engine.checkEpochVariable(ctx, name, value); err != nil {
			return err
		}
	}
	return s.BaseSession.SetSessionVariable(ctx, name, value)
}

// checkFileWrite refuses SELECT ... INTO OUTFILE or DUMPFILE without the
// global FILE privilege.
func (e *Engine) checkFileWrite(ctx *gms.Context, query string) error {
	if e.privileges(ctx) == nil {
		return nil
	}
	upper := strings.ToUpper(query)
	if !strings.Contains(upper, "OUTFILE") && !strings.Contains(upper, "DUMPFILE") {
		return nil
	}
	st, err := gms.GlobalParser.ParseSimple(query)
	if err != nil {
		return nil // go-mysql-server reports the syntax error
	}
	sel, ok := st.(ast.SelectStatement)
	if !ok {
		return nil
	}
	if into := sel.GetInto(); into != nil && (into.Outfile != "" || into.Dumpfile != "") {
		if db := e.privileges(ctx); !db.UserHasPrivileges(ctx, gms.NewPrivilegedOperation(gms.PrivilegeCheckSubject{}, gms.PrivilegeType_File)) {
			return fileDenied(ctx)
		}
	}
	return nil
}

// injectedAuth is the authorization of the statements lakesql's parser
// injects (parser.go): go-mysql-server's handler leaves them alone, they
// are checked where they run (checkLakesql, the DuckDB route, SHOW
// GRANTS), and the expressions of DO are planned, and checked, by
// go-mysql-server.
var injectedAuth = ast.AuthInformation{AuthType: ast.AuthType_IGNORE}

// privilegeHandlerFactory wraps go-mysql-server's authorization handler
// (the one its planner calls for every statement it plans) to leave the
// CALLs of lakesql's procedures to checkLakesql, and to give refusals
// MySQL's codes and words.
type privilegeHandlerFactory struct {
	next gms.AuthorizationHandlerFactory
}

func (f privilegeHandlerFactory) CreateHandler(cat gms.Catalog) gms.AuthorizationHandler {
	return privilegeHandler{AuthorizationHandler: f.next.CreateHandler(cat), cat: cat}
}

type privilegeHandler struct {
	gms.AuthorizationHandler
	cat gms.Catalog
}

func init() {
	// Before any engine is made: a catalog takes its handler when created.
	gms.SetAuthorizationHandlerFactory(privilegeHandlerFactory{next: gms.GetAuthorizationHandlerFactory()})
}

// authPrivileges are the privileges go-mysql-server checks for an AuthType
// on tables (the ones a message names).
var authPrivileges = map[string][]gms.PrivilegeType{
	ast.AuthType_SELECT:      {gms.PrivilegeType_Select},
	ast.AuthType_INSERT:      {gms.PrivilegeType_Insert},
	ast.AuthType_UPDATE:      {gms.PrivilegeType_Update},
	ast.AuthType_DELETE:      {gms.PrivilegeType_Delete},
	ast.AuthType_REPLACE:     {gms.PrivilegeType_Insert, gms.PrivilegeType_Delete},
	ast.AuthType_CREATE:      {gms.PrivilegeType_Create},
	ast.AuthType_DROP:        {gms.PrivilegeType_Drop},
	ast.AuthType_ALTER:       {gms.PrivilegeType_Alter},
	ast.AuthType_INDEX:       {gms.PrivilegeType_Index},
	ast.AuthType_CREATE_VIEW: {gms.PrivilegeType_CreateView},
	ast.AuthType_TRIGGER:     {gms.PrivilegeType_Trigger},
}

func (h privilegeHandler) HandleAuth(ctx *gms.Context, state gms.AuthorizationQueryState, auth ast.AuthInformation) error {
	if auth.AuthType == ast.AuthType_CALL && len(auth.TargetNames) >= 2 && lookupProcedure(auth.TargetNames[1]) != nil {
		return nil // checkLakesql checks the statement the procedure runs
	}
	err := h.AuthorizationHandler.HandleAuth(ctx, state, auth)
	if err == nil {
		return nil
	}
	if auth.AuthType == ast.AuthType_SUPER && gms.ErrPrivilegeCheckFailed.Is(err) {
		if id, ok := killTarget(ctx); ok {
			// go-mysql-server asks SUPER of every KILL; MySQL lets an
			// account end its own connections and statements.
			if ownsConnection(ctx, id) {
				return nil
			}
			return ErrKillDenied.New(id)
		}
	}
	return h.reword(ctx, auth, err)
}

// ErrKillDenied is 1095 (ER_KILL_DENIED_ERROR): KILL of another account's
// connection without SUPER.
var ErrKillDenied = goerrors.NewKind("You are not owner of thread %v")

// erKillDenied is MySQL's ER_KILL_DENIED_ERROR, which vitess does not name.
const erKillDenied = 1095

// killTarget is the connection the statement, a KILL, names.
func killTarget(ctx *gms.Context) (uint64, bool) {
	st, err := gms.GlobalParser.ParseSimple(ctx.Query())
	k, ok := st.(*ast.Kill)
	if err != nil || !ok {
		return 0, false
	}
	v, ok := k.ConnID.(*ast.SQLVal)
	if !ok || v.Type != ast.IntVal {
		return 0, false
	}
	id, err := strconv.ParseUint(string(v.Val), 10, 32)
	return id, err == nil
}

// ownsConnection reports whether connection id is the session's account's
// (an id that is no connection is the session's to fail on: KILL says so).
func ownsConnection(ctx *gms.Context, id uint64) bool {
	if ctx.ProcessList == nil {
		return false
	}
	for _, p := range ctx.ProcessList.Processes() {
		if uint64(p.Connection) == id {
			return p.User == ctx.Session.Client().User
		}
	}
	return true
}

// reword gives a refusal of go-mysql-server's MySQL's code and message.
func (h privilegeHandler) reword(ctx *gms.Context, auth ast.AuthInformation, err error) error {
	command := strings.ReplaceAll(auth.AuthType, "_", " ")
	onTables := auth.TargetType == ast.AuthTargetType_SingleTableIdentifier ||
		auth.TargetType == ast.AuthTargetType_MultipleTableIdentifiers ||
		auth.TargetType == ast.AuthTargetType_TableColumn
	switch {
	case gms.ErrDatabaseAccessDeniedForUser.Is(err) && !onTables:
		db := ctx.GetCurrentDatabase()
		if len(auth.TargetNames) > 0 && auth.TargetNames[0] != "" {
			db = auth.TargetNames[0]
		}
		return databaseDenied(ctx, db)
	case gms.ErrDatabaseAccessDeniedForUser.Is(err), gms.ErrTableAccessDeniedForUser.Is(err):
		// MySQL names the table, also to a user without any privilege
		// on its database.
		return tableDenied(ctx, command, h.deniedTable(ctx, auth))
	case !gms.ErrPrivilegeCheckFailed.Is(err):
		return err
	}
	switch {
	case auth.AuthType == ast.AuthType_FILE:
		return fileDenied(ctx)
	case auth.AuthType == ast.AuthType_CREATE_VIEW:
		if view := viewName(ctx); view != "" {
			return tableDenied(ctx, command, view)
		}
		return databaseDenied(ctx, ctx.GetCurrentDatabase())
	case auth.Extra != nil:
		if level, ok := grantLevel(auth.Extra); ok {
			switch {
			case level.Database == "*":
				return fileDenied(ctx)
			case level.TableRoutine == "*":
				db := level.Database
				if db == "" {
					db = ctx.GetCurrentDatabase()
				}
				return databaseDenied(ctx, db)
			default:
				return tableDenied(ctx, "GRANT", level.TableRoutine)
			}
		}
		return globalDenied(command)
	case auth.TargetType == ast.AuthTargetType_DatabaseIdentifiers:
		db := ctx.GetCurrentDatabase()
		if len(auth.TargetNames) > 0 && auth.TargetNames[0] != "" {
			db = auth.TargetNames[0]
		}
		return databaseDenied(ctx, db)
	case onTables:
		return tableDenied(ctx, command, h.deniedTable(ctx, auth))
	}
	if p, ok := globalPrivilegeNames[auth.AuthType]; ok {
		command = p
	}
	return globalDenied(command)
}

// globalPrivilegeNames name the privilege MySQL's 1227 asks for where it is
// not the statement's AuthType.
var globalPrivilegeNames = map[string]string{
	ast.AuthType_ALTER_USER:  "CREATE USER",
	ast.AuthType_CREATE_ROLE: "CREATE ROLE, CREATE USER",
	ast.AuthType_DROP_ROLE:   "DROP ROLE, CREATE USER",
	ast.AuthType_REPLICATION: "REPLICATION_SLAVE_ADMIN",
}

// grantLevel is the level (db.table) of a GRANT or REVOKE.
func grantLevel(n any) (plan.PrivilegeLevel, bool) {
	switch n := n.(type) {
	case *plan.Grant:
		return n.PrivilegeLevel, true
	case *plan.Revoke:
		return n.PrivilegeLevel, true
	}
	return plan.PrivilegeLevel{}, false
}

// viewName is the view the statement creates, which go-mysql-server's
// check of CREATE VIEW does not name.
func viewName(ctx *gms.Context) string {
	st, err := gms.GlobalParser.ParseSimple(ctx.Query())
	if ddl, ok := st.(*ast.DDL); err == nil && ok && ddl.ViewSpec != nil {
		return ddl.ViewSpec.ViewName.Name.String()
	}
	return ""
}

// deniedTable names the first table of auth the session lacks the
// privilege on (the first one when that cannot be told).
func (h privilegeHandler) deniedTable(ctx *gms.Context, auth ast.AuthInformation) string {
	names := auth.TargetNames
	if len(names) < 2 {
		return ""
	}
	privs, ok := authPrivileges[auth.AuthType]
	d, err := h.cat.Database(ctx, "mysql")
	mdb, isMySQLDb := d.(*mysql_db.MySQLDb)
	if !ok || err != nil || !isMySQLDb || auth.TargetType != ast.AuthTargetType_MultipleTableIdentifiers {
		return names[1]
	}
	for i := 0; i+1 < len(names); i += 2 {
		db := names[i]
		if db == "" {
			db = ctx.GetCurrentDatabase()
		}
		if !mdb.UserHasPrivileges(ctx, gms.NewPrivilegedOperation(gms.PrivilegeCheckSubject{Database: db, Table: names[i+1]}, privs...)) {
			return names[i+1]
		}
	}
	return names[1]
}

// erTableAccessDenied is MySQL's ER_TABLEACCESS_DENIED_ERROR, which vitess does not name.
const erTableAccessDenied = 1142

// erSpecificAccessDenied is MySQL's ER_SPECIFIC_ACCESS_DENIED_ERROR.
const erSpecificAccessDenied = 1227

// erCannotUser is MySQL's ER_CANNOT_USER, which vitess does not name.
const erCannotUser = 1396

// checkAccountStatement refuses the statements about accounts (CREATE,
// ALTER, DROP and RENAME USER or ROLE, GRANT, REVOKE, SET PASSWORD, SET
// ROLE) on an engine without accounts (the REPL, the database/sql driver),
// where go-mysql-server would accept them and nothing would hold them.
func (e *Engine) checkAccountStatement(query string) error {
	if e.gms.Analyzer.Catalog.MySQLDb.Enabled() {
		return nil
	}
	first, i := sqlword.Leading(query, 0)
	second, _ := sqlword.Leading(query, i)
	isAny := func(w string, keywords ...string) bool {
		for _, k := range keywords {
			if sqlword.Is(w, k) {
				return true
			}
		}
		return false
	}
	if isAny(first, "GRANT", "REVOKE") ||
		isAny(first, "CREATE", "ALTER", "DROP", "RENAME") && isAny(second, "USER", "ROLE") ||
		isAny(first, "SET") && isAny(second, "PASSWORD", "ROLE", "DEFAULT") {
		return fmt.Errorf("%w: %s here: accounts and privileges exist in lakesql serve only; this session runs as the owner of the data directory",
			ErrNotSupported, strings.ToUpper(strings.TrimSpace(first+" "+second)))
	}
	return nil
}
