package delta

// DuckDB type names for Delta types, for the CASTs of SQL run in DuckDB.

import (
	"fmt"
	"strings"

	"github.com/lakesql/lakesql/internal/sqlquote"
)

// DuckDBType returns the DuckDB SQL type for t, for CASTs of columns and
// partition values: timestamp is TIMESTAMPTZ (an instant), timestamp_ntz is
// TIMESTAMP (a wall clock). Struct field names are double-quoted. A struct
// without fields, or a nested field with an empty name, has no DuckDB
// spelling and is refused with ErrUnsupportedFeature.
func DuckDBType(t DataType) (string, error) {
	var b strings.Builder
	if err := writeDuckDBType(&b, t, ""); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeDuckDBType(b *strings.Builder, t DataType, col string) error {
	switch t := t.(type) {
	case nil:
		return fmt.Errorf("delta schema: column %q has no type", col)
	case PrimitiveType:
		name, ok := duckDBPrimitiveNames[t]
		if !ok {
			return unsupported("column %q has type %s", col, string(t))
		}
		b.WriteString(name)
		return nil
	case DecimalType:
		if !t.valid() {
			return unsupported("column %q has type %s", col, t)
		}
		fmt.Fprintf(b, "DECIMAL(%d,%d)", t.Precision, t.Scale)
		return nil
	case *StructType:
		if t == nil {
			return fmt.Errorf("delta schema: column %q has a nil struct type", col)
		}
		if len(t.Fields) == 0 {
			return unsupported("column %q is a struct without fields, which DuckDB cannot represent", structLabel(col))
		}
		if err := checkFieldNames(t.Fields, col); err != nil {
			return fmt.Errorf("delta schema: %w", err)
		}
		b.WriteString("STRUCT(")
		for i, f := range t.Fields {
			if f == nil {
				return fmt.Errorf("delta schema: nil field in %q", structLabel(col))
			}
			if f.Name == "" {
				return unsupported("column %q has a field with an empty name, which DuckDB cannot represent", structLabel(col))
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(sqlquote.Ident(f.Name))
			b.WriteByte(' ')
			if err := writeDuckDBType(b, f.Type, childPath(col, f.Name)); err != nil {
				return err
			}
		}
		b.WriteByte(')')
		return nil
	case *ArrayType:
		if t == nil {
			return fmt.Errorf("delta schema: column %q has a nil array type", col)
		}
		if err := writeDuckDBType(b, t.ElementType, childPath(col, "element")); err != nil {
			return err
		}
		b.WriteString("[]")
		return nil
	case *MapType:
		if t == nil {
			return fmt.Errorf("delta schema: column %q has a nil map type", col)
		}
		b.WriteString("MAP(")
		if err := writeDuckDBType(b, t.KeyType, childPath(col, "key")); err != nil {
			return err
		}
		b.WriteString(", ")
		if err := writeDuckDBType(b, t.ValueType, childPath(col, "value")); err != nil {
			return err
		}
		b.WriteByte(')')
		return nil
	}
	return unsupported("column %q has type %T", col, t)
}

// duckDBPrimitiveNames maps each Delta primitive to its DuckDB type.
var duckDBPrimitiveNames = map[PrimitiveType]string{
	TypeByte:         "TINYINT",
	TypeShort:        "SMALLINT",
	TypeInteger:      "INTEGER",
	TypeLong:         "BIGINT",
	TypeFloat:        "FLOAT",
	TypeDouble:       "DOUBLE",
	TypeBoolean:      "BOOLEAN",
	TypeString:       "VARCHAR",
	TypeBinary:       "BLOB",
	TypeDate:         "DATE",
	TypeTimestamp:    "TIMESTAMPTZ",
	TypeTimestampNTZ: "TIMESTAMP",
}
