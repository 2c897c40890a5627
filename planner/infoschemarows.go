package planner

// Where lakesql corrects rows of go-mysql-server's information_schema
// (schematacollation.go, tablerows.go, textcharlength.go): the table's
// reader is wrapped, its rows read whole and each one fixed in place.

import (
	"fmt"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/information_schema"
)

// fixRows reads iter whole and returns its rows after fix has changed
// each of them; err is the reader's own.
func fixRows(ctx *gms.Context, iter gms.RowIter, err error, fix func(*gms.Context, gms.Row)) (gms.RowIter, error) {
	if err != nil {
		return nil, err
	}
	rows, err := gms.RowIterToRows(ctx, iter)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		fix(ctx, r)
	}
	return gms.RowsToRowIter(rows...), nil
}

// fixInfoSchemaTable wraps the reader of the engine's information_schema
// table name with fix.
func (e *Engine) fixInfoSchemaTable(name string, fix func(*gms.Context, gms.Row)) error {
	t, ok, err := e.gms.Analyzer.Catalog.InfoSchema.GetTableInsensitive(gms.NewEmptyContext(), name)
	if err != nil || !ok {
		return fmt.Errorf("information_schema.%s: %v %w", name, ok, err)
	}
	ist, ok := t.(*information_schema.InformationSchemaTable)
	if !ok {
		return fmt.Errorf("information_schema.%s is a %T", name, t)
	}
	read := ist.Reader
	ist.Reader = func(ctx *gms.Context, cat gms.Catalog) (gms.RowIter, error) {
		iter, err := read(ctx, cat)
		return fixRows(ctx, iter, err, fix)
	}
	return nil
}
