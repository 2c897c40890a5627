package delta

// Table schema: the Go model of a Delta schemaString (PROTOCOL.md, "Schema
// Serialization Format"). Its other forms have files of their own: the JSON
// of the log in schema_json.go, Arrow in schema_arrow.go, DuckDB type names
// in duckdbtype.go, and the string form of partition values
// ("Partition Value Serialization") in partitionvalue.go.

import (
	"fmt"
	"strings"
)

// DataType is the type of a Delta column: a PrimitiveType, a DecimalType, or
// a *StructType, *ArrayType or *MapType. The set is closed (the interface has
// an unexported method) so a type switch over these five cases is complete.
type DataType interface {
	// String renders the type in Spark's short form ("long",
	// "decimal(10,2)", "array<long>"), for messages.
	String() string
	deltaDataType()
}

// PrimitiveType is a Delta primitive type, spelled as in a schemaString.
// Decimals are not primitives here: they carry parameters, see DecimalType.
type PrimitiveType string

// The primitive types of PROTOCOL.md.
const (
	TypeByte         PrimitiveType = "byte"
	TypeShort        PrimitiveType = "short"
	TypeInteger      PrimitiveType = "integer"
	TypeLong         PrimitiveType = "long"
	TypeFloat        PrimitiveType = "float"
	TypeDouble       PrimitiveType = "double"
	TypeBoolean      PrimitiveType = "boolean"
	TypeString       PrimitiveType = "string"
	TypeBinary       PrimitiveType = "binary"
	TypeDate         PrimitiveType = "date"
	TypeTimestamp    PrimitiveType = "timestamp"
	TypeTimestampNTZ PrimitiveType = "timestamp_ntz"
)

// MaxDecimalPrecision is the largest decimal precision Delta allows.
const MaxDecimalPrecision = 38

// String returns the type name as written in a schemaString.
func (p PrimitiveType) String() string { return string(p) }
func (PrimitiveType) deltaDataType()   {}

// known reports whether p is one of the primitive types above; a
// PrimitiveType built by hand from any other string is refused on use.
func (p PrimitiveType) known() bool {
	switch p {
	case TypeByte, TypeShort, TypeInteger, TypeLong, TypeFloat, TypeDouble,
		TypeBoolean, TypeString, TypeBinary, TypeDate, TypeTimestamp, TypeTimestampNTZ:
		return true
	}
	return false
}

// DecimalType is decimal(Precision,Scale); a value type so that two decimal
// types compare equal with ==.
type DecimalType struct {
	Precision int
	Scale     int
}

// String returns "decimal(p,s)", the schemaString spelling.
func (d DecimalType) String() string { return fmt.Sprintf("decimal(%d,%d)", d.Precision, d.Scale) }
func (DecimalType) deltaDataType()   {}

// valid checks the bounds of PROTOCOL.md: 1 <= precision <= 38, 0 <= scale <= precision.
func (d DecimalType) valid() bool {
	return d.Precision >= 1 && d.Precision <= MaxDecimalPrecision && d.Scale >= 0 && d.Scale <= d.Precision
}

// StructType is a struct column, and also the table schema itself.
type StructType struct {
	Fields []*StructField
}

// StructField is one column of a struct (or of the table).
type StructField struct {
	Name     string
	Type     DataType
	Nullable bool
	// Metadata holds the column metadata (column mapping, identity,
	// generation expressions, type changes, ...) as decoded JSON: numbers are
	// json.Number so that large ids and exact spellings survive a round trip.
	// An absent or empty metadata object decodes to nil.
	Metadata map[string]any
}

// ArrayType is an array column.
type ArrayType struct {
	ElementType  DataType
	ContainsNull bool
}

// MapType is a map column. Delta map keys are never null.
type MapType struct {
	KeyType           DataType
	ValueType         DataType
	ValueContainsNull bool
}

func (*StructType) deltaDataType() {}
func (*ArrayType) deltaDataType()  {}
func (*MapType) deltaDataType()    {}

// String renders the struct as "struct<name:type,...>", for messages.
func (s *StructType) String() string {
	if s == nil {
		return "<nil>"
	}
	var b strings.Builder
	b.WriteString("struct<")
	for i, f := range s.Fields {
		if i > 0 {
			b.WriteByte(',')
		}
		if f == nil {
			b.WriteString("<nil>")
			continue
		}
		b.WriteString(f.Name)
		b.WriteByte(':')
		b.WriteString(typeString(f.Type))
	}
	b.WriteByte('>')
	return b.String()
}

// String renders the array as "array<type>", for messages.
func (a *ArrayType) String() string {
	if a == nil {
		return "<nil>"
	}
	return "array<" + typeString(a.ElementType) + ">"
}

// String renders the map as "map<key,value>", for messages.
func (m *MapType) String() string {
	if m == nil {
		return "<nil>"
	}
	return "map<" + typeString(m.KeyType) + "," + typeString(m.ValueType) + ">"
}

// typeString is String that tolerates a nil interface.
func typeString(t DataType) string {
	if t == nil {
		return "<nil>"
	}
	return t.String()
}

// Field returns the field called exactly name, or nil.
func (s *StructType) Field(name string) *StructField {
	if s == nil {
		return nil
	}
	for _, f := range s.Fields {
		if f != nil && f.Name == name {
			return f
		}
	}
	return nil
}

// FieldNames returns the names of the fields, in order.
func (s *StructType) FieldNames() []string {
	if s == nil {
		return nil
	}
	names := make([]string, 0, len(s.Fields))
	for _, f := range s.Fields {
		if f != nil {
			names = append(names, f.Name)
		}
	}
	return names
}
