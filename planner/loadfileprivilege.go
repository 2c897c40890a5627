package planner

// LOAD_FILE needs the FILE privilege, as in MySQL, which returns NULL to an
// account without it; go-mysql-server checks nothing. The provider's
// LOAD_FILE (loadfile.go) is wrapped in fileGated.

import (
	gms "github.com/dolthub/go-mysql-server/sql"
)

// fileGated is LOAD_FILE, NULL for a session without the FILE privilege.
type fileGated struct {
	*loadFile
	engine *Engine
}

var _ gms.FunctionExpression = (*fileGated)(nil)
var _ gms.CollationCoercible = (*fileGated)(nil)

func (f *fileGated) Eval(ctx *gms.Context, row gms.Row) (any, error) {
	if db := f.engine.privileges(ctx); db != nil &&
		!db.UserHasPrivileges(ctx, gms.NewPrivilegedOperation(gms.PrivilegeCheckSubject{}, gms.PrivilegeType_File)) {
		return nil, nil
	}
	return f.loadFile.Eval(ctx, row)
}

func (f *fileGated) WithChildren(children ...gms.Expression) (gms.Expression, error) {
	e, err := f.loadFile.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &fileGated{loadFile: e.(*loadFile), engine: f.engine}, nil
}
