package delta

// Table schema: the Delta schemaString (PROTOCOL.md, "Schema Serialization
// Format"), its Go model, the Arrow and DuckDB views of it, and the string
// form of partition values ("Partition Value Serialization").

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
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

// UnmarshalJSON accepts only the names of known primitive types, so that
// "decimal(10,2)" or "variant" cannot slip into a PrimitiveType.
func (p *PrimitiveType) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if !PrimitiveType(s).known() {
		return unsupported("type %s", s)
	}
	*p = PrimitiveType(s)
	return nil
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

// MarshalJSON writes the decimal as Delta does: the string "decimal(p,s)".
func (d DecimalType) MarshalJSON() ([]byte, error) { return marshalDeltaType(d) }

// UnmarshalJSON reads "decimal(p,s)" (or the bare legacy "decimal").
func (d *DecimalType) UnmarshalJSON(b []byte) error {
	t, err := unmarshalDeltaType(b)
	if err != nil {
		return err
	}
	dt, ok := t.(DecimalType)
	if !ok {
		return fmt.Errorf("delta schema: %s is not a decimal type", t)
	}
	*d = dt
	return nil
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

// ---------------------------------------------------------------------------
// schemaString: parsing

// ParseSchema parses a metaData schemaString. A string that is not a JSON
// struct schema, or breaks a protocol rule (such as two columns whose names
// differ only in case), is an error wrapping ErrCorruptLog; a column of a
// type this package does not implement (variant, void, geometry, interval,
// user-defined types, ...) is an error wrapping ErrUnsupportedFeature.
//
// The bare legacy type name "decimal" is read as decimal(10,0), Spark's
// default, and written back as "decimal(10,0)". A missing nullable,
// containsNull or valueContainsNull reads as true: assuming nulls is the
// reading that can never yield wrong results.
func ParseSchema(schemaString string) (*StructType, error) {
	v, err := decodeSchemaJSON([]byte(schemaString))
	if err != nil {
		return nil, corrupt("schema: %v", err)
	}
	if o, ok := v.(map[string]any); !ok || o["type"] != "struct" {
		return nil, corrupt("schema: the top level is not a struct type")
	}
	return parseStructObject(v.(map[string]any), "")
}

// unmarshalDeltaType decodes any Delta type from JSON (a string or an object).
func unmarshalDeltaType(b []byte) (DataType, error) {
	v, err := decodeSchemaJSON(b)
	if err != nil {
		return nil, corrupt("schema: %v", err)
	}
	return parseSchemaType(v, "")
}

// decodeSchemaJSON decodes one JSON value, keeping numbers as json.Number
// and refusing trailing data.
func decodeSchemaJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

// parseSchemaType turns a decoded JSON value into a DataType; col names the
// column for messages ("" for the top level).
func parseSchemaType(v any, col string) (DataType, error) {
	switch v := v.(type) {
	case string:
		return parseTypeName(v, col)
	case map[string]any:
		name, ok := v["type"].(string)
		if !ok {
			return nil, corrupt("schema: column %q: type object without a string \"type\"", col)
		}
		switch name {
		case "struct":
			return parseStructObject(v, col)
		case "array":
			elem, ok := v["elementType"]
			if !ok {
				return nil, corrupt("schema: column %q: array without elementType", col)
			}
			et, err := parseSchemaType(elem, childPath(col, "element"))
			if err != nil {
				return nil, err
			}
			cn, err := schemaBool(v, "containsNull", col)
			if err != nil {
				return nil, err
			}
			return &ArrayType{ElementType: et, ContainsNull: cn}, nil
		case "map":
			k, kok := v["keyType"]
			val, vok := v["valueType"]
			if !kok || !vok {
				return nil, corrupt("schema: column %q: map without keyType or valueType", col)
			}
			kt, err := parseSchemaType(k, childPath(col, "key"))
			if err != nil {
				return nil, err
			}
			vt, err := parseSchemaType(val, childPath(col, "value"))
			if err != nil {
				return nil, err
			}
			vcn, err := schemaBool(v, "valueContainsNull", col)
			if err != nil {
				return nil, err
			}
			return &MapType{KeyType: kt, ValueType: vt, ValueContainsNull: vcn}, nil
		default:
			return nil, unsupported("column %q has type %s", col, name)
		}
	default:
		return nil, corrupt("schema: column %q: type is %s, want a string or an object", col, jsonKind(v))
	}
}

// parseTypeName reads a type given as a string: a primitive or a decimal.
func parseTypeName(name, col string) (DataType, error) {
	if p := PrimitiveType(name); p.known() {
		return p, nil
	}
	if name == "decimal" {
		return DecimalType{Precision: 10, Scale: 0}, nil
	}
	if inner, ok := strings.CutPrefix(name, "decimal("); ok {
		if inner, ok = strings.CutSuffix(inner, ")"); ok {
			ps, ss, ok := strings.Cut(inner, ",")
			p, perr := smallUint(strings.TrimSpace(ps))
			s, serr := smallUint(strings.TrimSpace(ss))
			if ok && perr == nil && serr == nil {
				if d := (DecimalType{Precision: p, Scale: s}); d.valid() {
					return d, nil
				}
			}
		}
	}
	return nil, unsupported("column %q has type %s", col, name)
}

// smallUint parses a short run of ASCII digits (no sign, no overflow).
func smallUint(s string) (int, error) {
	if s == "" || len(s) > 4 {
		return 0, errors.New("bad number")
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, errors.New("bad number")
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

func parseStructObject(v map[string]any, col string) (*StructType, error) {
	raw, ok := v["fields"].([]any)
	if !ok {
		return nil, corrupt("schema: column %q: struct without a fields array", col)
	}
	s := &StructType{Fields: make([]*StructField, 0, len(raw))}
	for i, rf := range raw {
		fo, ok := rf.(map[string]any)
		if !ok {
			return nil, corrupt("schema: column %q: field %d is %s, want an object", col, i, jsonKind(rf))
		}
		f, err := parseFieldObject(fo, col)
		if err != nil {
			return nil, err
		}
		s.Fields = append(s.Fields, f)
	}
	if err := checkFieldNames(s.Fields, col); err != nil {
		return nil, corrupt("schema: %v", err)
	}
	return s, nil
}

func parseFieldObject(v map[string]any, parent string) (*StructField, error) {
	name, ok := v["name"].(string)
	if !ok {
		return nil, corrupt("schema: column %q: field without a string name", parent)
	}
	col := childPath(parent, name)
	rt, ok := v["type"]
	if !ok {
		return nil, corrupt("schema: column %q: field without a type", col)
	}
	t, err := parseSchemaType(rt, col)
	if err != nil {
		return nil, err
	}
	nullable, err := schemaBool(v, "nullable", col)
	if err != nil {
		return nil, err
	}
	f := &StructField{Name: name, Type: t, Nullable: nullable}
	switch md := v["metadata"].(type) {
	case nil:
	case map[string]any:
		if len(md) > 0 {
			f.Metadata = md
		}
	default:
		return nil, corrupt("schema: column %q: metadata is %s, want an object", col, jsonKind(md))
	}
	return f, nil
}

// schemaBool reads an optional boolean flag; absent or null means true.
func schemaBool(v map[string]any, key, col string) (bool, error) {
	switch b := v[key].(type) {
	case nil:
		return true, nil
	case bool:
		return b, nil
	default:
		return false, corrupt("schema: column %q: %s is %s, want a boolean", col, key, jsonKind(b))
	}
}

// checkFieldNames enforces "All column names must be unique regardless of
// casing" at one struct level; DuckDB, which resolves names without regard
// to case, depends on it too.
func checkFieldNames(fields []*StructField, col string) error {
	seen := make(map[string]string, len(fields))
	for _, f := range fields {
		if f == nil {
			continue
		}
		key := strings.ToLower(f.Name)
		if prev, dup := seen[key]; dup {
			return fmt.Errorf("column names %q and %q in %q are not unique regardless of case", prev, f.Name, structLabel(col))
		}
		seen[key] = f.Name
	}
	return nil
}

func structLabel(col string) string {
	if col == "" {
		return "<table>"
	}
	return col
}

// childPath names a nested column for messages: parent.child.
func childPath(parent, child string) string {
	if parent == "" {
		return child
	}
	return parent + "." + child
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// UnmarshalJSON reads a struct type in Delta's format, with ParseSchema's rules.
func (s *StructType) UnmarshalJSON(b []byte) error {
	t, err := unmarshalDeltaType(b)
	if err != nil {
		return err
	}
	st, ok := t.(*StructType)
	if !ok {
		return corrupt("schema: %s is not a struct type", t)
	}
	*s = *st
	return nil
}

// UnmarshalJSON reads an array type in Delta's format.
func (a *ArrayType) UnmarshalJSON(b []byte) error {
	t, err := unmarshalDeltaType(b)
	if err != nil {
		return err
	}
	at, ok := t.(*ArrayType)
	if !ok {
		return corrupt("schema: %s is not an array type", t)
	}
	*a = *at
	return nil
}

// UnmarshalJSON reads a map type in Delta's format.
func (m *MapType) UnmarshalJSON(b []byte) error {
	t, err := unmarshalDeltaType(b)
	if err != nil {
		return err
	}
	mt, ok := t.(*MapType)
	if !ok {
		return corrupt("schema: %s is not a map type", t)
	}
	*m = *mt
	return nil
}

// UnmarshalJSON reads one struct field object in Delta's format.
func (f *StructField) UnmarshalJSON(b []byte) error {
	v, err := decodeSchemaJSON(b)
	if err != nil {
		return corrupt("schema: %v", err)
	}
	o, ok := v.(map[string]any)
	if !ok {
		return corrupt("schema: field is %s, want an object", jsonKind(v))
	}
	pf, err := parseFieldObject(o, "")
	if err != nil {
		return err
	}
	*f = *pf
	return nil
}

// ---------------------------------------------------------------------------
// schemaString: writing

// JSON encodes the schema as a schemaString, in the key order Spark writes
// (name, type, nullable, metadata) and without HTML escaping, so that
// expressions such as "a > 0" in metadata stay readable in the log.
func (s *StructType) JSON() (string, error) {
	b, err := marshalDeltaType(s)
	return string(b), err
}

// MarshalJSON encodes the struct type in Delta's format; see JSON.
func (s *StructType) MarshalJSON() ([]byte, error) { return marshalDeltaType(s) }

// MarshalJSON encodes the array type in Delta's format.
func (a *ArrayType) MarshalJSON() ([]byte, error) { return marshalDeltaType(a) }

// MarshalJSON encodes the map type in Delta's format.
func (m *MapType) MarshalJSON() ([]byte, error) { return marshalDeltaType(m) }

// MarshalJSON encodes the field in Delta's format; nil metadata is written as {}.
func (f *StructField) MarshalJSON() ([]byte, error) {
	e := newSchemaEncoder()
	if err := e.field(f, ""); err != nil {
		return nil, err
	}
	return e.buf.Bytes(), nil
}

func marshalDeltaType(t DataType) ([]byte, error) {
	e := newSchemaEncoder()
	if err := e.typ(t, ""); err != nil {
		return nil, err
	}
	return e.buf.Bytes(), nil
}

// schemaEncoder writes Delta schema JSON by hand: Go's encoder would sort
// nothing we care about but would HTML-escape, and DataType is an interface.
type schemaEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

func newSchemaEncoder() *schemaEncoder {
	e := &schemaEncoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}

// value writes one JSON value (a string, the metadata map) without the
// newline json.Encoder appends.
func (e *schemaEncoder) value(v any) error {
	if err := e.enc.Encode(v); err != nil {
		return err
	}
	e.buf.Truncate(e.buf.Len() - 1)
	return nil
}

func (e *schemaEncoder) typ(t DataType, col string) error {
	switch t := t.(type) {
	case nil:
		return fmt.Errorf("delta schema: column %q has no type", col)
	case PrimitiveType:
		if !t.known() {
			return unsupported("column %q has type %s", col, string(t))
		}
		return e.value(string(t))
	case DecimalType:
		if !t.valid() {
			return unsupported("column %q has type %s", col, t)
		}
		return e.value(t.String())
	case *StructType:
		if t == nil {
			return fmt.Errorf("delta schema: column %q has a nil struct type", col)
		}
		if err := checkFieldNames(t.Fields, col); err != nil {
			return fmt.Errorf("delta schema: %w", err)
		}
		e.buf.WriteString(`{"type":"struct","fields":[`)
		for i, f := range t.Fields {
			if i > 0 {
				e.buf.WriteByte(',')
			}
			if err := e.field(f, col); err != nil {
				return err
			}
		}
		e.buf.WriteString(`]}`)
		return nil
	case *ArrayType:
		if t == nil {
			return fmt.Errorf("delta schema: column %q has a nil array type", col)
		}
		e.buf.WriteString(`{"type":"array","elementType":`)
		if err := e.typ(t.ElementType, childPath(col, "element")); err != nil {
			return err
		}
		e.buf.WriteString(`,"containsNull":` + strconv.FormatBool(t.ContainsNull) + `}`)
		return nil
	case *MapType:
		if t == nil {
			return fmt.Errorf("delta schema: column %q has a nil map type", col)
		}
		e.buf.WriteString(`{"type":"map","keyType":`)
		if err := e.typ(t.KeyType, childPath(col, "key")); err != nil {
			return err
		}
		e.buf.WriteString(`,"valueType":`)
		if err := e.typ(t.ValueType, childPath(col, "value")); err != nil {
			return err
		}
		e.buf.WriteString(`,"valueContainsNull":` + strconv.FormatBool(t.ValueContainsNull) + `}`)
		return nil
	}
	return unsupported("column %q has type %T", col, t)
}

func (e *schemaEncoder) field(f *StructField, parent string) error {
	if f == nil {
		return fmt.Errorf("delta schema: nil field in %q", structLabel(parent))
	}
	col := childPath(parent, f.Name)
	e.buf.WriteString(`{"name":`)
	if err := e.value(f.Name); err != nil {
		return err
	}
	e.buf.WriteString(`,"type":`)
	if err := e.typ(f.Type, col); err != nil {
		return err
	}
	e.buf.WriteString(`,"nullable":` + strconv.FormatBool(f.Nullable) + `,"metadata":`)
	if len(f.Metadata) == 0 {
		e.buf.WriteString(`{}`)
	} else if err := e.value(f.Metadata); err != nil {
		return fmt.Errorf("delta schema: column %q metadata: %w", col, err)
	}
	e.buf.WriteByte('}')
	return nil
}

// ---------------------------------------------------------------------------
// Arrow

// arrowListElementName is the name of an Arrow list's child field; Parquet
// and Spark call it "element".
const arrowListElementName = "element"

// ToArrowSchema converts a Delta schema to Arrow. Each Delta field metadata
// entry becomes an Arrow field metadata entry whose value is the JSON
// encoding of the Delta value (keys sorted), so FromArrowSchema can restore
// it exactly. timestamp becomes Timestamp(us, "UTC"), timestamp_ntz
// Timestamp(us, ""), decimal Decimal128, array a List whose element
// ("element") is nullable iff containsNull, map a Map whose value is
// nullable iff valueContainsNull.
func ToArrowSchema(s *StructType) (*arrow.Schema, error) {
	if s == nil {
		return nil, errors.New("delta schema: nil schema")
	}
	fields, err := arrowFields(s, "")
	if err != nil {
		return nil, err
	}
	return arrow.NewSchema(fields, nil), nil
}

func arrowFields(s *StructType, col string) ([]arrow.Field, error) {
	if err := checkFieldNames(s.Fields, col); err != nil {
		return nil, fmt.Errorf("delta schema: %w", err)
	}
	out := make([]arrow.Field, len(s.Fields))
	for i, f := range s.Fields {
		if f == nil {
			return nil, fmt.Errorf("delta schema: nil field in %q", structLabel(col))
		}
		fc := childPath(col, f.Name)
		t, err := arrowType(f.Type, fc)
		if err != nil {
			return nil, err
		}
		md, err := arrowMetadata(f.Metadata, fc)
		if err != nil {
			return nil, err
		}
		out[i] = arrow.Field{Name: f.Name, Type: t, Nullable: f.Nullable, Metadata: md}
	}
	return out, nil
}

func arrowMetadata(md map[string]any, col string) (arrow.Metadata, error) {
	if len(md) == 0 {
		return arrow.Metadata{}, nil
	}
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	vals := make([]string, len(keys))
	e := newSchemaEncoder()
	for i, k := range keys {
		e.buf.Reset()
		if err := e.value(md[k]); err != nil {
			return arrow.Metadata{}, fmt.Errorf("delta schema: column %q metadata %q: %w", col, k, err)
		}
		vals[i] = e.buf.String()
	}
	return arrow.NewMetadata(keys, vals), nil
}

func arrowType(t DataType, col string) (arrow.DataType, error) {
	switch t := t.(type) {
	case nil:
		return nil, fmt.Errorf("delta schema: column %q has no type", col)
	case PrimitiveType:
		switch t {
		case TypeByte:
			return arrow.PrimitiveTypes.Int8, nil
		case TypeShort:
			return arrow.PrimitiveTypes.Int16, nil
		case TypeInteger:
			return arrow.PrimitiveTypes.Int32, nil
		case TypeLong:
			return arrow.PrimitiveTypes.Int64, nil
		case TypeFloat:
			return arrow.PrimitiveTypes.Float32, nil
		case TypeDouble:
			return arrow.PrimitiveTypes.Float64, nil
		case TypeBoolean:
			return arrow.FixedWidthTypes.Boolean, nil
		case TypeString:
			return arrow.BinaryTypes.String, nil
		case TypeBinary:
			return arrow.BinaryTypes.Binary, nil
		case TypeDate:
			return arrow.FixedWidthTypes.Date32, nil
		case TypeTimestamp:
			return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, nil
		case TypeTimestampNTZ:
			return &arrow.TimestampType{Unit: arrow.Microsecond}, nil
		}
		return nil, unsupported("column %q has type %s", col, string(t))
	case DecimalType:
		if !t.valid() {
			return nil, unsupported("column %q has type %s", col, t)
		}
		return &arrow.Decimal128Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}, nil
	case *StructType:
		if t == nil {
			return nil, fmt.Errorf("delta schema: column %q has a nil struct type", col)
		}
		fs, err := arrowFields(t, col)
		if err != nil {
			return nil, err
		}
		return arrow.StructOf(fs...), nil
	case *ArrayType:
		if t == nil {
			return nil, fmt.Errorf("delta schema: column %q has a nil array type", col)
		}
		et, err := arrowType(t.ElementType, childPath(col, "element"))
		if err != nil {
			return nil, err
		}
		return arrow.ListOfField(arrow.Field{Name: arrowListElementName, Type: et, Nullable: t.ContainsNull}), nil
	case *MapType:
		if t == nil {
			return nil, fmt.Errorf("delta schema: column %q has a nil map type", col)
		}
		kt, err := arrowType(t.KeyType, childPath(col, "key"))
		if err != nil {
			return nil, err
		}
		vt, err := arrowType(t.ValueType, childPath(col, "value"))
		if err != nil {
			return nil, err
		}
		return arrow.MapOfFields(
			arrow.Field{Name: "key", Type: kt},
			arrow.Field{Name: "value", Type: vt, Nullable: t.ValueContainsNull},
		), nil
	}
	return nil, unsupported("column %q has type %T", col, t)
}

// FromArrowSchema converts an Arrow schema to Delta. It is the inverse of
// ToArrowSchema, and also accepts the Arrow types that hold the same values:
// LargeString and StringView (string); LargeBinary, BinaryView and
// FixedSizeBinary (binary); Date64 (date); Timestamp of any unit (timestamp
// when it has a time zone, timestamp_ntz when not); Decimal32/64/256 up to
// precision 38; Float16 (float); Uint8/16/32 widened to short/integer/long;
// LargeList, FixedSizeList and list views (array); dictionaries (their value
// type). Uint64 and every other type are refused with ErrUnsupportedFeature.
// Field metadata values that are valid JSON are decoded (numbers as
// json.Number); any other value is kept as a JSON string.
func FromArrowSchema(s *arrow.Schema) (*StructType, error) {
	if s == nil {
		return nil, errors.New("delta schema: nil Arrow schema")
	}
	return deltaStruct(s.Fields(), "")
}

func deltaStruct(fields []arrow.Field, col string) (*StructType, error) {
	st := &StructType{Fields: make([]*StructField, len(fields))}
	for i, af := range fields {
		fc := childPath(col, af.Name)
		t, err := deltaType(af.Type, fc)
		if err != nil {
			return nil, err
		}
		st.Fields[i] = &StructField{Name: af.Name, Type: t, Nullable: af.Nullable, Metadata: deltaMetadata(af.Metadata)}
	}
	if err := checkFieldNames(st.Fields, col); err != nil {
		return nil, fmt.Errorf("delta schema: %w", err)
	}
	return st, nil
}

func deltaMetadata(md arrow.Metadata) map[string]any {
	if md.Len() == 0 {
		return nil
	}
	out := make(map[string]any, md.Len())
	vals := md.Values()
	for i, k := range md.Keys() {
		if v, err := decodeSchemaJSON([]byte(vals[i])); err == nil {
			out[k] = v
		} else {
			out[k] = vals[i]
		}
	}
	return out
}

func deltaType(t arrow.DataType, col string) (DataType, error) {
	if t == nil {
		return nil, fmt.Errorf("delta schema: column %q has no Arrow type", col)
	}
	switch t.ID() {
	case arrow.INT8:
		return TypeByte, nil
	case arrow.INT16, arrow.UINT8:
		return TypeShort, nil
	case arrow.INT32, arrow.UINT16:
		return TypeInteger, nil
	case arrow.INT64, arrow.UINT32:
		return TypeLong, nil
	case arrow.FLOAT16, arrow.FLOAT32:
		return TypeFloat, nil
	case arrow.FLOAT64:
		return TypeDouble, nil
	case arrow.BOOL:
		return TypeBoolean, nil
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return TypeString, nil
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
		return TypeBinary, nil
	case arrow.DATE32, arrow.DATE64:
		return TypeDate, nil
	case arrow.TIMESTAMP:
		if ts, ok := t.(*arrow.TimestampType); ok {
			if ts.TimeZone != "" {
				return TypeTimestamp, nil
			}
			return TypeTimestampNTZ, nil
		}
	case arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256:
		if dt, ok := t.(arrow.DecimalType); ok {
			d := DecimalType{Precision: int(dt.GetPrecision()), Scale: int(dt.GetScale())}
			if d.valid() {
				return d, nil
			}
		}
	case arrow.STRUCT:
		if st, ok := t.(*arrow.StructType); ok {
			return deltaStruct(st.Fields(), col)
		}
	case arrow.MAP:
		if mt, ok := t.(*arrow.MapType); ok {
			kt, err := deltaType(mt.KeyType(), childPath(col, "key"))
			if err != nil {
				return nil, err
			}
			vt, err := deltaType(mt.ItemType(), childPath(col, "value"))
			if err != nil {
				return nil, err
			}
			return &MapType{KeyType: kt, ValueType: vt, ValueContainsNull: mt.ItemField().Nullable}, nil
		}
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.LIST_VIEW, arrow.LARGE_LIST_VIEW:
		if lt, ok := t.(arrow.ListLikeType); ok {
			ef := lt.ElemField()
			et, err := deltaType(ef.Type, childPath(col, "element"))
			if err != nil {
				return nil, err
			}
			return &ArrayType{ElementType: et, ContainsNull: ef.Nullable}, nil
		}
	case arrow.DICTIONARY:
		if dt, ok := t.(*arrow.DictionaryType); ok {
			return deltaType(dt.ValueType, col)
		}
	}
	return nil, unsupported("column %q has Arrow type %s", col, t)
}

// ---------------------------------------------------------------------------
// DuckDB

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
			b.WriteString(duckDBQuoteIdent(f.Name))
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

// duckDBQuoteIdent double-quotes a SQL identifier, doubling inner quotes.
func duckDBQuoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// ---------------------------------------------------------------------------
// Partition values

// Layouts of partition timestamps (PROTOCOL.md, "Partition Value
// Serialization"). Go's parser accepts a fractional second after the seconds
// even when the layout has none, so these also cover ".123456".
var (
	partitionTimestampLayoutsNoZone = []string{"2006-01-02 15:04:05", "2006-01-02T15:04:05"}
	partitionTimestampLayoutsZone   = []string{
		"2006-01-02T15:04:05Z07:00", "2006-01-02 15:04:05Z07:00",
		"2006-01-02T15:04:05Z0700", "2006-01-02 15:04:05Z0700",
	}
)

const (
	partitionDateLayout         = "2006-01-02"
	partitionTimestampLayout    = "2006-01-02T15:04:05.000000Z"
	partitionTimestampNTZLayout = "2006-01-02 15:04:05.000000"
)

// ParsePartitionValue converts a partitionValues entry to a Go value of
// column type t. Per PROTOCOL.md a missing value (nil) and an empty string,
// for every type, are null and return nil.
//
// Results: byte int8, short int16, integer int32, long int64, float float32,
// double float64, boolean bool (case-insensitive "true"/"false"), string
// string, binary []byte (the string's raw bytes), date time.Time at UTC
// midnight, timestamp and timestamp_ntz time.Time in UTC, decimal the
// canonical decimal string with exactly scale fractional digits (checked to
// fit; it is meant to be CAST in SQL). Floats accept NaN, Infinity and
// -Infinity. Timestamps accept "2021-01-01 00:00:00[.ffffff]", the same with
// a "T", and ISO-8601 with "Z" or an offset; a timestamp without a zone is
// taken as UTC (the protocol says "the writer's time zone", which the log
// does not record). timestamp_ntz is a wall clock: it refuses an offset and
// comes back as that wall clock in UTC. A malformed value is an error
// wrapping ErrCorruptLog; a partition column of nested type wraps
// ErrUnsupportedFeature.
func ParsePartitionValue(t DataType, v *string) (any, error) {
	if t == nil {
		return nil, errors.New("delta: partition value of a column without a type")
	}
	if v == nil || *v == "" {
		return nil, nil
	}
	s := *v
	bad := func(err error) error {
		if err != nil {
			return corrupt("partition value %q is not a valid %s: %v", s, t, err)
		}
		return corrupt("partition value %q is not a valid %s", s, t)
	}
	switch t := t.(type) {
	case PrimitiveType:
		switch t {
		case TypeByte:
			n, err := strconv.ParseInt(s, 10, 8)
			if err != nil {
				return nil, bad(nil)
			}
			return int8(n), nil
		case TypeShort:
			n, err := strconv.ParseInt(s, 10, 16)
			if err != nil {
				return nil, bad(nil)
			}
			return int16(n), nil
		case TypeInteger:
			n, err := strconv.ParseInt(s, 10, 32)
			if err != nil {
				return nil, bad(nil)
			}
			return int32(n), nil
		case TypeLong:
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, bad(nil)
			}
			return n, nil
		case TypeFloat:
			f, err := strconv.ParseFloat(s, 32)
			if err != nil {
				return nil, bad(nil)
			}
			return float32(f), nil
		case TypeDouble:
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, bad(nil)
			}
			return f, nil
		case TypeBoolean:
			switch {
			case strings.EqualFold(s, "true"):
				return true, nil
			case strings.EqualFold(s, "false"):
				return false, nil
			}
			return nil, bad(nil)
		case TypeString:
			return s, nil
		case TypeBinary:
			return []byte(s), nil
		case TypeDate:
			d, err := time.Parse(partitionDateLayout, s)
			if err != nil {
				return nil, bad(nil)
			}
			return d, nil
		case TypeTimestamp, TypeTimestampNTZ:
			ts, err := parsePartitionTimestamp(s, t == TypeTimestampNTZ)
			if err != nil {
				return nil, bad(err)
			}
			return ts, nil
		}
	case DecimalType:
		if !t.valid() {
			return nil, unsupported("partition column of type %s", t)
		}
		d, err := normalizeDecimal(s, t)
		if err != nil {
			return nil, bad(err)
		}
		return d, nil
	}
	return nil, unsupported("partition column of type %s", t)
}

func parsePartitionTimestamp(s string, ntz bool) (time.Time, error) {
	for _, layout := range partitionTimestampLayoutsNoZone {
		if ts, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return ts, nil
		}
	}
	for _, layout := range partitionTimestampLayoutsZone {
		if ts, err := time.Parse(layout, s); err == nil {
			if ntz {
				return time.Time{}, errors.New("timestamp_ntz with a time zone")
			}
			return ts.UTC(), nil
		}
	}
	return time.Time{}, errors.New("want YYYY-MM-DD HH:MM:SS[.ffffff] or ISO-8601")
}

// normalizeDecimal checks that s (plain or scientific notation, as Java's
// BigDecimal may print it) fits t and returns it with exactly t.Scale
// fractional digits, no leading zeros, no plus sign and no negative zero.
func normalizeDecimal(s string, t DecimalType) (string, error) {
	rest := s
	neg := false
	if rest != "" && (rest[0] == '+' || rest[0] == '-') {
		neg = rest[0] == '-'
		rest = rest[1:]
	}
	mant, expStr, hasExp := strings.Cut(strings.ReplaceAll(rest, "E", "e"), "e")
	intPart, fracPart, _ := strings.Cut(mant, ".")
	if intPart == "" && fracPart == "" || !allDigits(intPart) || !allDigits(fracPart) {
		return "", errors.New("not a decimal number")
	}
	exp := 0
	if hasExp {
		e, err := strconv.Atoi(expStr)
		if err != nil {
			return "", errors.New("bad exponent")
		}
		if e > 1000 || e < -1000 {
			return "", errors.New("out of range")
		}
		exp = e
	}
	// The number is 0.digits × 10^point, with point = len(intPart) + exp.
	digits := strings.TrimLeft(intPart+fracPart, "0")
	point := len(intPart) + exp - (len(intPart) + len(fracPart) - len(digits))
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		neg, point = false, 0
	}
	// Fractional digits needed: everything past the point.
	if frac := len(digits) - point; frac > t.Scale {
		return "", fmt.Errorf("more than %d fractional digits", t.Scale)
	}
	if point > t.Precision-t.Scale {
		return "", fmt.Errorf("more than %d integer digits", t.Precision-t.Scale)
	}
	var ip, fp string
	switch {
	case point <= 0:
		ip, fp = "0", strings.Repeat("0", -point)+digits
	case point >= len(digits):
		ip, fp = digits+strings.Repeat("0", point-len(digits)), ""
	default:
		ip, fp = digits[:point], digits[point:]
	}
	fp += strings.Repeat("0", t.Scale-len(fp))
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(ip)
	if t.Scale > 0 {
		b.WriteByte('.')
		b.WriteString(fp)
	}
	return b.String(), nil
}

func allDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// FormatPartitionValue is the inverse of ParsePartitionValue, for writers:
// nil gives nil (null). Integers may be any Go integer type that fits the
// column; floats float32 or float64, written with strconv 'g' -1 (NaN,
// Infinity, -Infinity as Spark spells them); booleans "true"/"false"; strings
// as is; binary []byte or string as raw bytes; dates (time.Time, its own
// calendar day) "YYYY-MM-DD"; timestamps as ISO-8601 UTC with microseconds
// ("2021-01-01T00:00:00.000000Z", the form PROTOCOL.md recommends);
// timestamp_ntz as the wall clock "2021-01-01 00:00:00.000000"; decimals
// from a string or a Go integer, in canonical form. Sub-microsecond time is
// truncated. An empty string or byte slice means null in Delta, so it is
// written as nil, as Spark does.
func FormatPartitionValue(t DataType, v any) (*string, error) {
	if t == nil {
		return nil, errors.New("delta: partition value of a column without a type")
	}
	if v == nil {
		return nil, nil
	}
	mismatch := func() error {
		return fmt.Errorf("delta: cannot write %T as a partition value of type %s", v, t)
	}
	ret := func(s string) (*string, error) { return &s, nil }
	switch t := t.(type) {
	case PrimitiveType:
		switch t {
		case TypeByte, TypeShort, TypeInteger, TypeLong:
			n, ok := goInt64(v)
			if !ok {
				return nil, mismatch()
			}
			var lim int64 // exclusive upper bound; 0 for long
			switch t {
			case TypeByte:
				lim = math.MaxInt8 + 1
			case TypeShort:
				lim = math.MaxInt16 + 1
			case TypeInteger:
				lim = math.MaxInt32 + 1
			}
			if lim != 0 && (n < -lim || n >= lim) {
				return nil, fmt.Errorf("delta: %v out of range for a %s partition value", v, t)
			}
			return ret(strconv.FormatInt(n, 10))
		case TypeFloat, TypeDouble:
			var f float64
			switch x := v.(type) {
			case float32:
				f = float64(x)
			case float64:
				f = x
			default:
				return nil, mismatch()
			}
			bits := 64
			if t == TypeFloat {
				bits = 32
				if !math.IsInf(f, 0) && math.Abs(f) > math.MaxFloat32 {
					return nil, fmt.Errorf("delta: %v out of range for a float partition value", v)
				}
			}
			switch {
			case math.IsNaN(f):
				return ret("NaN")
			case math.IsInf(f, 1):
				return ret("Infinity")
			case math.IsInf(f, -1):
				return ret("-Infinity")
			}
			return ret(strconv.FormatFloat(f, 'g', -1, bits))
		case TypeBoolean:
			b, ok := v.(bool)
			if !ok {
				return nil, mismatch()
			}
			return ret(strconv.FormatBool(b))
		case TypeString, TypeBinary:
			var s string
			switch x := v.(type) {
			case string:
				s = x
			case []byte:
				if t != TypeBinary {
					return nil, mismatch()
				}
				s = string(x)
			default:
				return nil, mismatch()
			}
			if s == "" {
				return nil, nil
			}
			return ret(s)
		case TypeDate, TypeTimestamp, TypeTimestampNTZ:
			ts, ok := v.(time.Time)
			if !ok {
				return nil, mismatch()
			}
			if t == TypeTimestamp {
				ts = ts.UTC()
			}
			if y := ts.Year(); y < 1 || y > 9999 {
				return nil, fmt.Errorf("delta: year %d out of range for a %s partition value", y, t)
			}
			switch t {
			case TypeDate:
				return ret(ts.Format(partitionDateLayout))
			case TypeTimestamp:
				return ret(ts.Format(partitionTimestampLayout))
			default:
				return ret(ts.Format(partitionTimestampNTZLayout))
			}
		}
	case DecimalType:
		if !t.valid() {
			return nil, unsupported("partition column of type %s", t)
		}
		var s string
		if x, ok := v.(string); ok {
			s = x
		} else if n, ok := goInt64(v); ok {
			s = strconv.FormatInt(n, 10)
		} else if u, ok := v.(uint64); ok {
			s = strconv.FormatUint(u, 10)
		} else {
			return nil, mismatch()
		}
		d, err := normalizeDecimal(s, t)
		if err != nil {
			return nil, fmt.Errorf("delta: %q is not a valid %s partition value: %w", s, t, err)
		}
		return ret(d)
	}
	return nil, unsupported("partition column of type %s", t)
}

// goInt64 widens any Go integer that fits in an int64.
func goInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint:
		return int64(x), uint64(x) <= math.MaxInt64
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		return int64(x), x <= math.MaxInt64
	}
	return 0, false
}
