package delta

// DuckDB type names for Delta types, for the CASTs of SQL run in DuckDB.

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesql/lakesql/internal/duckdbtype"
)

// DuckDBType returns the DuckDB SQL type for t, for CASTs of columns and
// partition values: t's Arrow type (ToArrowSchema's mapping: timestamp is
// an instant, TIMESTAMPTZ; timestamp_ntz a wall clock, TIMESTAMP) spelled
// by duckdbtype.Of. Struct field names are double-quoted. A struct
// without fields, or a nested field with an empty name, has no DuckDB
// spelling and is refused with ErrUnsupportedFeature.
func DuckDBType(t DataType) (string, error) {
	at, err := arrowType(t, "")
	if err != nil {
		return "", err
	}
	if err := checkDuckDBNames(at, ""); err != nil {
		return "", err
	}
	return duckdbtype.Of(at)
}

// checkDuckDBNames refuses, naming the column, the structs that Delta and
// Arrow hold and DuckDB cannot: without fields, or with a field without a
// name. (duckdbtype.Of refuses the first too, without the column; the
// sink's Arrow spelling lets the second through.)
func checkDuckDBNames(t arrow.DataType, col string) error {
	switch t := t.(type) {
	case *arrow.StructType:
		if t.NumFields() == 0 {
			return unsupported("column %q is a struct without fields, which DuckDB cannot represent", structLabel(col))
		}
		for _, f := range t.Fields() {
			if f.Name == "" {
				return unsupported("column %q has a field with an empty name, which DuckDB cannot represent", structLabel(col))
			}
			if err := checkDuckDBNames(f.Type, childPath(col, f.Name)); err != nil {
				return err
			}
		}
	case *arrow.MapType:
		if err := checkDuckDBNames(t.KeyType(), childPath(col, "key")); err != nil {
			return err
		}
		return checkDuckDBNames(t.ItemType(), childPath(col, "value"))
	case *arrow.ListType:
		return checkDuckDBNames(t.Elem(), childPath(col, arrowListElementName))
	}
	return nil
}
