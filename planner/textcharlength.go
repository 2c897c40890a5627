package planner

// information_schema.COLUMNS gives a TEXT column MySQL 8's
// CHARACTER_MAXIMUM_LENGTH: its byte limit (TEXT 65535, like its
// CHARACTER_OCTET_LENGTH), where go-mysql-server divides it by the
// charset's 4 bytes (16383). JDBC drivers report it as getColumns'
// COLUMN_SIZE.

import (
	"fmt"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/information_schema"
)

// COLUMNS row columns (information_schema columns_table.go).
const (
	columnsDataTypeCol  = 7
	columnsCharMaxCol   = 8
	columnsCharOctetCol = 9
)

// textCharMaxLength sets COLUMNS.CHARACTER_MAXIMUM_LENGTH of the TEXT
// types to their CHARACTER_OCTET_LENGTH. go-mysql-server makes a new
// COLUMNS table for every query, so the catalog's information_schema
// database is wrapped.
func (e *Engine) textCharMaxLength() error {
	cat := e.gms.Analyzer.Catalog
	if cat.InfoSchema == nil {
		return fmt.Errorf("no information_schema database")
	}
	cat.InfoSchema = infoSchemaDB{cat.InfoSchema}
	return nil
}

// infoSchemaDB is go-mysql-server's information_schema whose COLUMNS gives
// TEXT types their byte limit as CHARACTER_MAXIMUM_LENGTH.
type infoSchemaDB struct{ gms.Database }

// GetTableInsensitive implements gms.Database.
func (d infoSchemaDB) GetTableInsensitive(ctx *gms.Context, name string) (gms.Table, bool, error) {
	t, ok, err := d.Database.GetTableInsensitive(ctx, name)
	if err != nil || !ok {
		return t, ok, err
	}
	if ct, isColumns := t.(*information_schema.ColumnsTable); isColumns {
		read := ct.RowIter
		ct.RowIter = func(ctx *gms.Context, cat gms.Catalog, sch gms.Schema) (gms.RowIter, error) {
			iter, err := read(ctx, cat, sch)
			return fixRows(ctx, iter, err, textByteLimit)
		}
	}
	return t, ok, nil
}

// textByteLimit gives a COLUMNS row of a TEXT type its byte limit as
// CHARACTER_MAXIMUM_LENGTH.
func textByteLimit(_ *gms.Context, r gms.Row) {
	switch dt, _ := r[columnsDataTypeCol].(string); strings.ToLower(dt) {
	case "tinytext", "text", "mediumtext", "longtext":
		if r[columnsCharOctetCol] != nil {
			r[columnsCharMaxCol] = r[columnsCharOctetCol]
		}
	}
}
