package planner

// LOAD_FILE needs the FILE privilege, as in MySQL, which returns NULL to an
// account without it; go-mysql-server checks nothing (it confines the
// file to secure_file_priv only). The provider (sql.FunctionProvider)
// answers go-mysql-server's lookup of the function before its built-ins.

import (
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
)

var _ gms.FunctionProvider = (*provider)(nil)

// Function implements sql.FunctionProvider: LOAD_FILE alone.
func (p *provider) Function(_ *gms.Context, name string) (gms.Function, bool) {
	if !strings.EqualFold(name, "load_file") {
		return nil, false
	}
	return gms.Function1{Name: "load_file", Fn: func(e gms.Expression) gms.Expression {
		return &fileGated{Expression: function.NewLoadFile(e), engine: p.engine}
	}}, true
}

// fileGated is LOAD_FILE, NULL for a session without the FILE privilege.
type fileGated struct {
	gms.Expression
	engine *Engine
}

func (f *fileGated) Eval(ctx *gms.Context, row gms.Row) (any, error) {
	if db := f.engine.privileges(ctx); db != nil &&
		!db.UserHasPrivileges(ctx, gms.NewPrivilegedOperation(gms.PrivilegeCheckSubject{}, gms.PrivilegeType_File)) {
		return nil, nil
	}
	return f.Expression.Eval(ctx, row)
}

func (f *fileGated) WithChildren(children ...gms.Expression) (gms.Expression, error) {
	e, err := f.Expression.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &fileGated{Expression: e, engine: f.engine}, nil
}

// IsNullable implements sql.Expression: NULL without the privilege.
func (f *fileGated) IsNullable() bool { return true }
