package planner

import (
	"strings"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/shopspring/decimal"
)

// ColumnType is a result column's type as a MySQL client sees it, so that
// the REPL and the database/sql driver show values the way the MySQL wire
// does (a DATE without a time, a DECIMAL(10,2) with two decimals).
type ColumnType struct {
	// Name is MySQL's name of the type, as database/sql's
	// ColumnTypeDatabaseTypeName gives it: "BIGINT", "UNSIGNED INT",
	// "DECIMAL", "VARCHAR", "TEXT", "DATE", "DATETIME", ...
	Name string
	// Scale is a DECIMAL's fractional digits, or a DATETIME's or
	// TIMESTAMP's fractional-second digits.
	Scale int
}

var typeNames = map[query.Type]string{
	query.Type_INT8: "TINYINT", query.Type_UINT8: "UNSIGNED TINYINT",
	query.Type_INT16: "SMALLINT", query.Type_UINT16: "UNSIGNED SMALLINT",
	query.Type_INT24: "MEDIUMINT", query.Type_UINT24: "UNSIGNED MEDIUMINT",
	query.Type_INT32: "INT", query.Type_UINT32: "UNSIGNED INT",
	query.Type_INT64: "BIGINT", query.Type_UINT64: "UNSIGNED BIGINT",
	query.Type_FLOAT32: "FLOAT", query.Type_FLOAT64: "DOUBLE",
	query.Type_DECIMAL: "DECIMAL",
	query.Type_DATE:    "DATE", query.Type_DATETIME: "DATETIME", query.Type_TIMESTAMP: "TIMESTAMP",
	query.Type_TIME: "TIME", query.Type_YEAR: "YEAR",
	query.Type_CHAR: "CHAR", query.Type_VARCHAR: "VARCHAR", query.Type_TEXT: "TEXT",
	query.Type_BINARY: "BINARY", query.Type_VARBINARY: "VARBINARY", query.Type_BLOB: "BLOB",
	query.Type_JSON: "JSON", query.Type_BIT: "BIT", query.Type_ENUM: "ENUM", query.Type_SET: "SET",
	query.Type_NULL_TYPE: "NULL", query.Type_GEOMETRY: "GEOMETRY",
}

func columnType(t gms.Type) ColumnType {
	ct := ColumnType{Name: typeNames[t.Type()]}
	switch t := t.(type) {
	case gms.DecimalType:
		ct.Scale = int(t.Scale())
	case gms.DatetimeType:
		ct.Scale = t.Precision()
	}
	return ct
}

// Text renders v as MySQL's text protocol shows a value of this type, for
// the types where Go's own rendering differs: a DATE has no time, a
// DATETIME(p) or TIMESTAMP(p) has exactly p fractional digits, a
// DECIMAL(m,s) exactly s decimals. ok is false for any other value.
func (c ColumnType) Text(v any) (s string, ok bool) {
	switch v := v.(type) {
	case time.Time:
		switch c.Name {
		case "DATE":
			return v.Format("2006-01-02"), true
		case "DATETIME", "TIMESTAMP":
			layout := "2006-01-02 15:04:05"
			if c.Scale > 0 {
				layout += "." + strings.Repeat("0", c.Scale)
			}
			return v.Format(layout), true
		}
	case decimal.Decimal:
		if c.Name == "DECIMAL" {
			return v.StringFixed(int32(c.Scale)), true
		}
	}
	return "", false
}
