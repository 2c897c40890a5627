package planner

// Struct, list and map columns as MySQL clients see them: JSON text. MySQL
// has no nested types, so such a column is a LONGTEXT holding JSON, read
// and written as text. Not go-mysql-server's JSON type: it parses numbers
// into float64, and the table keeps int64 and decimal values exactly.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/lakesql/lakesql/sinkddl"
	"github.com/lakesql/lakesql/sqlsink"
)

// isNested reports whether t is a struct, list or map type.
func isNested(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.STRUCT, arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.MAP:
		return true
	}
	return false
}

// nestedText renders a nested value, as DuckDB's Go driver returns it
// (map[string]any for a struct, []any for a list, duckdb.Map for a map),
// as JSON text: struct fields in the table's order, map keys sorted,
// binary as base64, dates and timestamps as MySQL writes them (timestamps
// in UTC), NaN and infinities as the strings Spark's JSON uses.
func nestedText(v any, t arrow.DataType) (string, error) {
	var b bytes.Buffer
	if err := writeNested(&b, v, t); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeNested(b *bytes.Buffer, v any, t arrow.DataType) error {
	if v == nil {
		b.WriteString("null")
		return nil
	}
	switch t := t.(type) {
	case *arrow.StructType:
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("struct value %T", v)
		}
		b.WriteByte('{')
		for i, f := range t.Fields() {
			fv, ok := m[f.Name]
			if !ok {
				// Never read a field as NULL that the file may hold under
				// another name.
				return fmt.Errorf("struct field %q missing from the row", f.Name)
			}
			if i > 0 {
				b.WriteString(", ")
			}
			writeJSONString(b, f.Name)
			b.WriteString(": ")
			if err := writeNested(b, fv, f.Type); err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
		}
		b.WriteByte('}')
		return nil
	case *arrow.MapType:
		m, ok := v.(duckdb.OrderedMap)
		if !ok {
			return fmt.Errorf("map value %T", v)
		}
		keys, vals := m.Keys(), m.Values()
		b.WriteByte('{')
		for i, k := range keys {
			key, isString := k.(string)
			if !isString {
				var kb bytes.Buffer
				if err := writeNested(&kb, k, t.KeyType()); err != nil {
					return fmt.Errorf("map key: %w", err)
				}
				key = strings.Trim(kb.String(), `"`)
			}
			if i > 0 {
				b.WriteString(", ")
			}
			writeJSONString(b, key)
			b.WriteString(": ")
			if err := writeNested(b, vals[i], t.ItemType()); err != nil {
				return fmt.Errorf("map value of %q: %w", key, err)
			}
		}
		b.WriteByte('}')
		return nil
	case arrow.ListLikeType:
		s, ok := v.([]any)
		if !ok {
			return fmt.Errorf("list value %T", v)
		}
		b.WriteByte('[')
		for i, e := range s {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := writeNested(b, e, t.Elem()); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
		b.WriteByte(']')
		return nil
	}
	return writeLeaf(b, v, t)
}

func writeLeaf(b *bytes.Buffer, v any, t arrow.DataType) error {
	switch x := v.(type) {
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int8, int16, int32, int64, uint8, uint16, uint32, uint64, int, uint:
		fmt.Fprint(b, x)
	case *big.Int:
		b.WriteString(x.String())
	case float32:
		writeFloat(b, float64(x), 32)
	case float64:
		writeFloat(b, x, 64)
	case duckdb.Decimal:
		b.WriteString(x.String())
	case string:
		writeJSONString(b, x)
	case []byte:
		writeJSONString(b, base64.StdEncoding.EncodeToString(x))
	case time.Time:
		layout := "2006-01-02 15:04:05.999999"
		if t.ID() == arrow.DATE32 || t.ID() == arrow.DATE64 {
			layout = time.DateOnly
		}
		writeJSONString(b, x.UTC().Format(layout))
	default:
		return fmt.Errorf("%w: a %s value (%T) inside a nested column", sinkddl.ErrUnsupportedType, t, v)
	}
	return nil
}

func writeFloat(b *bytes.Buffer, f float64, bits int) {
	switch {
	case math.IsNaN(f):
		b.WriteString(`"NaN"`)
	case math.IsInf(f, 1):
		b.WriteString(`"Infinity"`)
	case math.IsInf(f, -1):
		b.WriteString(`"-Infinity"`)
	default:
		// "1.0", not "1": a double stays one in the text (and as a map
		// key, which is text), as DuckDB and Spark write it.
		t := strconv.FormatFloat(f, 'g', -1, bits)
		if !strings.ContainsAny(t, ".e") {
			t += ".0"
		}
		b.WriteString(t)
	}
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b.Truncate(b.Len() - 1)
}

// appendNested appends the JSON text v to a nested column's builder, in the
// form nestedText writes: an object for a struct (every key a field; a
// field left out is NULL), an array for a list, an object for a map. A key
// the struct does not have, or a value that does not convert, refuses the
// row rather than be dropped.
func appendNested(fb array.Builder, t arrow.DataType, v any) error {
	var text string
	switch x := v.(type) {
	case string:
		text = x
	case []byte:
		text = string(x)
	default:
		return fmt.Errorf("%w: a %s column takes JSON text, not %T", sqlsink.ErrBadRow, t, v)
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	doc, err := decodeOrdered(dec)
	if err != nil {
		return fmt.Errorf("%w: not JSON: %v", sqlsink.ErrBadRow, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: not JSON: text after the value", sqlsink.ErrBadRow)
	}
	if err := appendJSON(fb, t, doc); err != nil {
		return fmt.Errorf("%w: %v", sqlsink.ErrBadRow, err)
	}
	return nil
}

func appendJSON(fb array.Builder, t arrow.DataType, v any) error {
	if v == nil {
		fb.AppendNull()
		return nil
	}
	switch t := t.(type) {
	case *arrow.StructType:
		o, ok := v.(*jsonObject)
		if !ok {
			return fmt.Errorf("a struct takes a JSON object, not %s", jsonKind(v))
		}
		for _, k := range o.keys {
			if _, known := t.FieldIdx(k); !known {
				return fmt.Errorf("the struct has no field %q", k)
			}
		}
		m := o.vals
		sb := fb.(*array.StructBuilder)
		sb.Append(true)
		for i, f := range t.Fields() {
			fv := m[f.Name]
			if fv == nil && !f.Nullable {
				return fmt.Errorf("field %s is NOT NULL", f.Name)
			}
			if err := appendJSON(sb.FieldBuilder(i), f.Type, fv); err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
		}
		return nil
	case *arrow.MapType:
		o, ok := v.(*jsonObject)
		if !ok {
			return fmt.Errorf("a map takes a JSON object, not %s", jsonKind(v))
		}
		mb := fb.(*array.MapBuilder)
		mb.Append(true)
		for _, k := range o.keys {
			if err := appendJSON(mb.KeyBuilder(), t.KeyType(), k); err != nil {
				return fmt.Errorf("map key %q: %w", k, err)
			}
			if o.vals[k] == nil && !t.ItemField().Nullable {
				return fmt.Errorf("map value of %q is NOT NULL", k)
			}
			if err := appendJSON(mb.ItemBuilder(), t.ItemType(), o.vals[k]); err != nil {
				return fmt.Errorf("map value of %q: %w", k, err)
			}
		}
		return nil
	case arrow.ListLikeType:
		s, ok := v.([]any)
		if !ok {
			return fmt.Errorf("a list takes a JSON array, not %s", jsonKind(v))
		}
		if fs, fixed := t.(*arrow.FixedSizeListType); fixed && int32(len(s)) != fs.Len() {
			return fmt.Errorf("the list holds exactly %d elements, not %d", fs.Len(), len(s))
		}
		lb := fb.(array.ListLikeBuilder)
		lb.Append(true)
		for i, e := range s {
			if e == nil && !t.ElemField().Nullable {
				return fmt.Errorf("element %d is NOT NULL", i)
			}
			if err := appendJSON(lb.ValueBuilder(), t.Elem(), e); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
		return nil
	}
	var text string
	switch x := v.(type) {
	case json.Number:
		text = x.String()
	case string:
		text = x
	case bool:
		text = strconv.FormatBool(x)
	default:
		return fmt.Errorf("a %s takes a JSON scalar, not %s", t, jsonKind(v))
	}
	if tt, ok := t.(*arrow.TimestampType); ok {
		// A time without a zone is UTC, as nestedText writes it; arrow's
		// own parser insists on a zone for a timestamp with one.
		ts, _, err := arrow.TimestampFromStringInLocation(text, tt.Unit, time.UTC)
		if err != nil {
			return fmt.Errorf("%q is not a %s", text, t)
		}
		fb.(*array.TimestampBuilder).Append(ts)
		return nil
	}
	if err := fb.AppendValueFromString(text); err != nil {
		return fmt.Errorf("%q is not a %s", text, t)
	}
	return nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case *jsonObject:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}

// jsonObject is a JSON object with its keys in the order written, so that
// a map keeps the order its text gives.
type jsonObject struct {
	keys []string
	vals map[string]any
}

// decodeOrdered reads one JSON value: objects as *jsonObject, arrays as
// []any, numbers as json.Number. A key written twice is refused.
func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &jsonObject{vals: map[string]any{}}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k := kt.(string) // the decoder only gives strings as keys
			if _, dup := o.vals[k]; dup {
				return nil, fmt.Errorf("key %q written twice", k)
			}
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			o.keys = append(o.keys, k)
			o.vals[k] = v
		}
		_, err := dec.Token() // }
		return o, err
	case json.Delim('['):
		s := []any{}
		for dec.More() {
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		_, err := dec.Token() // ]
		return s, err
	}
	return tok, nil
}
