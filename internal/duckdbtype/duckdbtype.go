// Package duckdbtype spells Arrow types as DuckDB SQL types: the one
// spelling the sink's buffer, the Delta casts and the Iceberg casts share.
// The table formats map their own types to Arrow first and keep in
// themselves only what they spell otherwise.
package duckdbtype

import (
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesql/lakesql/internal/sqlquote"
)

// Of spells an Arrow type as a DuckDB SQL type: timestamps with a time
// zone are TIMESTAMPTZ, without one TIMESTAMP; struct field names are
// double-quoted. A type it cannot spell (an empty struct, or one DuckDB
// has no type for) is an error naming it, which callers wrap in their own
// sentinel.
func Of(t arrow.DataType) (string, error) {
	switch tt := t.(type) {
	case *arrow.Int8Type:
		return "TINYINT", nil
	case *arrow.Int16Type:
		return "SMALLINT", nil
	case *arrow.Int32Type:
		return "INTEGER", nil
	case *arrow.Int64Type:
		return "BIGINT", nil
	case *arrow.Uint8Type:
		return "UTINYINT", nil
	case *arrow.Uint16Type:
		return "USMALLINT", nil
	case *arrow.Uint32Type:
		return "UINTEGER", nil
	case *arrow.Uint64Type:
		return "UBIGINT", nil
	case *arrow.Float32Type:
		return "FLOAT", nil
	case *arrow.Float64Type:
		return "DOUBLE", nil
	case *arrow.BooleanType:
		return "BOOLEAN", nil
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType:
		return "VARCHAR", nil
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.BinaryViewType, *arrow.FixedSizeBinaryType:
		return "BLOB", nil
	case *arrow.Date32Type, *arrow.Date64Type:
		return "DATE", nil
	case *arrow.TimestampType:
		if tt.TimeZone != "" {
			return "TIMESTAMPTZ", nil
		}
		return "TIMESTAMP", nil
	case *arrow.Decimal128Type:
		return fmt.Sprintf("DECIMAL(%d,%d)", tt.Precision, tt.Scale), nil
	case *arrow.StructType:
		if tt.NumFields() == 0 {
			return "", errors.New("empty struct")
		}
		parts := make([]string, tt.NumFields())
		for i, f := range tt.Fields() {
			ft, err := Of(f.Type)
			if err != nil {
				return "", err
			}
			parts[i] = sqlquote.Ident(f.Name) + " " + ft
		}
		return "STRUCT(" + strings.Join(parts, ", ") + ")", nil
	case *arrow.MapType:
		k, err := Of(tt.KeyType())
		if err != nil {
			return "", err
		}
		v, err := Of(tt.ItemType())
		if err != nil {
			return "", err
		}
		return "MAP(" + k + ", " + v + ")", nil
	case arrow.ListLikeType:
		e, err := Of(tt.Elem())
		if err != nil {
			return "", err
		}
		return e + "[]", nil
	}
	return "", fmt.Errorf("Arrow type %s", t)
}
