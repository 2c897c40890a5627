package planner

// information_schema.SCHEMATA gives information_schema itself MySQL 8's
// utf8mb3 / utf8mb3_general_ci: go-mysql-server reports its server default
// (utf8mb4_0900_bin), yet its information_schema columns are utf8mb3, and
// MySQL Connector/J 9 applies that collation to them (getColumns sends
// `IS_NULLABLE COLLATE <it>`), which then fails with "COLLATION ... is not
// valid for CHARACTER SET 'utf8mb3'".

import (
	"fmt"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/information_schema"
)

// SCHEMATA row columns (information_schema schemata_table.go).
const (
	schemataNameCol      = 1
	schemataCharsetCol   = 2
	schemataCollationCol = 3
)

// infoSchemaOwnCollation makes SCHEMATA's information_schema row carry the
// collation of information_schema's own columns.
func (e *Engine) infoSchemaOwnCollation() error {
	ctx := gms.NewEmptyContext()
	t, ok, err := e.gms.Analyzer.Catalog.InfoSchema.GetTableInsensitive(ctx, information_schema.SchemataTableName)
	if err != nil || !ok {
		return fmt.Errorf("information_schema.SCHEMATA: %v %w", ok, err)
	}
	ist, ok := t.(*information_schema.InformationSchemaTable)
	if !ok {
		return fmt.Errorf("information_schema.SCHEMATA is a %T", t)
	}
	read := ist.Reader
	coll := gms.Collation_Information_Schema_Default
	ist.Reader = func(ctx *gms.Context, cat gms.Catalog) (gms.RowIter, error) {
		iter, err := read(ctx, cat)
		if err != nil {
			return nil, err
		}
		rows, err := gms.RowIterToRows(ctx, iter)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if s, _ := r[schemataNameCol].(string); strings.EqualFold(s, gms.InformationSchemaDatabaseName) {
				r[schemataCharsetCol], r[schemataCollationCol] = coll.CharacterSet().String(), coll.String()
			}
		}
		return gms.RowsToRowIter(rows...), nil
	}
	return nil
}
