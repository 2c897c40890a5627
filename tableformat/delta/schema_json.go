package delta

// The schemaString, Delta's JSON form of a table schema (PROTOCOL.md,
// "Schema Serialization Format"): parsing it into the types of schema.go,
// and writing them back in the key order Spark writes.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

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

// MarshalJSON writes the decimal as Delta does: the string "decimal(p,s)".
func (d DecimalType) MarshalJSON() ([]byte, error) { return marshalDeltaType(d) }

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
