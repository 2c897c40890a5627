package planner

// information_schema.SCHEMATA gives information_schema itself MySQL 8's
// utf8mb3 / utf8mb3_general_ci: go-mysql-server reports its server default
// (utf8mb4_0900_bin), yet its information_schema columns are utf8mb3, and
// MySQL Connector/J 9 applies that collation to them (getColumns sends
// `IS_NULLABLE COLLATE <it>`), which then fails with "COLLATION ... is not
// valid for CHARACTER SET 'utf8mb3'".

import (
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
	coll := gms.Collation_Information_Schema_Default
	return e.fixInfoSchemaTable(information_schema.SchemataTableName, func(_ *gms.Context, r gms.Row) {
		if s, _ := r[schemataNameCol].(string); strings.EqualFold(s, gms.InformationSchemaDatabaseName) {
			r[schemataCharsetCol], r[schemataCollationCol] = coll.CharacterSet().String(), coll.String()
		}
	})
}
