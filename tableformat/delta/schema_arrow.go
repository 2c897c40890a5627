package delta

// The Arrow view of a Delta schema, in both directions.

import (
	"errors"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
)

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
