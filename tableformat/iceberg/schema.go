package iceberg

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakesql/lakesql/internal/duckdbtype"
	"github.com/lakesql/lakesql/internal/sqlquote"
)

// SchemaFromArrow converts the sink's Arrow schema to an Iceberg schema.
// Iceberg has no 8- or 16-bit integers and no unsigned ones, so small
// integers widen to int and uint32 to long; uint64 is refused, as no
// Iceberg type holds it. Field ids are assigned in order from 1; a
// catalog reassigns them on create anyway.
func SchemaFromArrow(s *arrow.Schema) (*ice.Schema, error) {
	if s == nil || s.NumFields() == 0 {
		return nil, fmt.Errorf("%w: a table needs at least one column", ErrInvalid)
	}
	next := 0
	id := func() int { next++; return next }
	fields := make([]ice.NestedField, s.NumFields())
	ids := make([]int, s.NumFields())
	for i := range fields {
		ids[i] = id()
	}
	for i, f := range s.Fields() {
		t, err := icebergType(f.Type, id)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", f.Name, err)
		}
		fields[i] = ice.NestedField{ID: ids[i], Name: f.Name, Type: t, Required: !f.Nullable, Doc: fieldDoc(f)}
	}
	return ice.NewSchema(0, fields...), nil
}

func fieldDoc(f arrow.Field) string {
	if v, ok := f.Metadata.GetValue("comment"); ok {
		return v
	}
	return ""
}

func icebergType(dt arrow.DataType, id func() int) (ice.Type, error) {
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return ice.PrimitiveTypes.Bool, nil
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Uint8Type, *arrow.Uint16Type:
		return ice.PrimitiveTypes.Int32, nil
	case *arrow.Int64Type, *arrow.Uint32Type:
		return ice.PrimitiveTypes.Int64, nil
	case *arrow.Float32Type:
		return ice.PrimitiveTypes.Float32, nil
	case *arrow.Float64Type:
		return ice.PrimitiveTypes.Float64, nil
	case *arrow.Decimal128Type:
		if t.Precision < 1 || t.Precision > 38 {
			return nil, fmt.Errorf("%w: decimal precision %d (Iceberg allows 1 to 38)", ErrUnsupported, t.Precision)
		}
		return ice.DecimalTypeOf(int(t.Precision), int(t.Scale)), nil
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType:
		return ice.PrimitiveTypes.String, nil
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.BinaryViewType:
		return ice.PrimitiveTypes.Binary, nil
	case *arrow.FixedSizeBinaryType:
		return ice.FixedTypeOf(t.ByteWidth), nil
	case *arrow.Date32Type, *arrow.Date64Type:
		return ice.PrimitiveTypes.Date, nil
	case *arrow.Time64Type:
		return ice.PrimitiveTypes.Time, nil
	case *arrow.TimestampType:
		if t.TimeZone != "" {
			return ice.PrimitiveTypes.TimestampTz, nil
		}
		return ice.PrimitiveTypes.Timestamp, nil
	case *arrow.StructType:
		if t.NumFields() == 0 {
			return nil, fmt.Errorf("%w: empty struct", ErrUnsupported)
		}
		fields := make([]ice.NestedField, t.NumFields())
		for i, f := range t.Fields() {
			fid := id()
			ft, err := icebergType(f.Type, id)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			fields[i] = ice.NestedField{ID: fid, Name: f.Name, Type: ft, Required: !f.Nullable}
		}
		return &ice.StructType{FieldList: fields}, nil
	case *arrow.MapType:
		kid, vid := id(), id()
		k, err := icebergType(t.KeyType(), id)
		if err != nil {
			return nil, fmt.Errorf("map key: %w", err)
		}
		v, err := icebergType(t.ItemType(), id)
		if err != nil {
			return nil, fmt.Errorf("map value: %w", err)
		}
		return &ice.MapType{KeyID: kid, KeyType: k, ValueID: vid, ValueType: v, ValueRequired: !t.ItemField().Nullable}, nil
	case arrow.ListLikeType:
		eid := id()
		e, err := icebergType(t.Elem(), id)
		if err != nil {
			return nil, fmt.Errorf("list element: %w", err)
		}
		return &ice.ListType{ElementID: eid, Element: e, ElementRequired: !t.ElemField().Nullable}, nil
	}
	return nil, fmt.Errorf("%w: Arrow type %s has no Iceberg counterpart", ErrUnsupported, dt)
}

// ArrowSchema is the table schema as the layers above see it: plain Arrow
// types, no field-id metadata, timestamptz as timestamp[us, tz=UTC].
// Iceberg types lakesql has no column type for (time, uuid and fixed),
// at any depth, are refused with ErrUnsupported naming the column and
// the type, before a sink attaches to the table.
func ArrowSchema(s *ice.Schema) (*arrow.Schema, error) {
	for _, f := range s.Fields() {
		if bad := unreadableType(f.Type); bad != nil {
			return nil, fmt.Errorf("%w: column %q: Iceberg type %s has no lakesql column type", ErrUnsupported, f.Name, bad)
		}
	}
	as, err := table.SchemaToArrowSchema(s, nil, false, false)
	if err != nil {
		return nil, fmt.Errorf("%w: schema to Arrow: %w", ErrUnsupported, err)
	}
	fields := make([]arrow.Field, as.NumFields())
	for i, f := range as.Fields() {
		f.Metadata = arrow.Metadata{}
		if doc := s.Field(i).Doc; doc != "" {
			f.Metadata = arrow.NewMetadata([]string{"comment"}, []string{doc})
		}
		fields[i] = f
	}
	return arrow.NewSchema(fields, nil), nil
}

// unreadableType is the first type within t that lakesql cannot show as a
// MySQL column, or nil.
func unreadableType(t ice.Type) ice.Type {
	switch tt := t.(type) {
	case ice.TimeType, ice.UUIDType, ice.FixedType:
		return t
	case *ice.StructType:
		for _, f := range tt.FieldList {
			if bad := unreadableType(f.Type); bad != nil {
				return bad
			}
		}
	case *ice.ListType:
		return unreadableType(tt.Element)
	case *ice.MapType:
		if bad := unreadableType(tt.KeyType); bad != nil {
			return bad
		}
		return unreadableType(tt.ValueType)
	}
	return nil
}

// StoredArrowSchema is the Arrow schema a table created from s reports
// back: what a sink must declare to match an Iceberg table.
func StoredArrowSchema(s *arrow.Schema) (*arrow.Schema, error) {
	is, err := SchemaFromArrow(s)
	if err != nil {
		return nil, err
	}
	return ArrowSchema(is)
}

// DuckDBType spells an Iceberg type in DuckDB SQL, for the casts of a scan:
// the primitives that have an Arrow type of the same values are spelled by
// duckdbtype.Of (which the sink's buffer uses too) from that type. The
// rest is Iceberg's own: time, uuid and nanosecond timestamps, which are
// spelled as DuckDB reads them from Iceberg's files (Arrow's spelling
// knows no TIME, and calls a 16-byte uuid BLOB and any timestamp
// TIMESTAMP), and nested types, because they may hold those and because
// an Iceberg struct may have no fields (STRUCT()), which the Arrow
// spelling refuses.
func DuckDBType(t ice.Type) (string, error) {
	switch tt := t.(type) {
	case ice.BooleanType, ice.Int32Type, ice.Int64Type, ice.Float32Type, ice.Float64Type, ice.DecimalType,
		ice.DateType, ice.TimestampType, ice.TimestampTzType, ice.StringType, ice.BinaryType, ice.FixedType:
		at, err := table.TypeToArrowType(t, false, false)
		if err != nil {
			return "", fmt.Errorf("%w: Iceberg type %s: %w", ErrUnsupported, t, err)
		}
		return duckdbtype.Of(at)
	case ice.TimeType:
		return "TIME", nil
	case ice.TimestampNsType:
		return "TIMESTAMP_NS", nil
	case ice.UUIDType:
		return "UUID", nil
	case *ice.StructType:
		parts := make([]string, len(tt.FieldList))
		for i, f := range tt.FieldList {
			ft, err := DuckDBType(f.Type)
			if err != nil {
				return "", err
			}
			parts[i] = sqlquote.Ident(f.Name) + " " + ft
		}
		return "STRUCT(" + strings.Join(parts, ", ") + ")", nil
	case *ice.ListType:
		e, err := DuckDBType(tt.Element)
		if err != nil {
			return "", err
		}
		return e + "[]", nil
	case *ice.MapType:
		k, err := DuckDBType(tt.KeyType)
		if err != nil {
			return "", err
		}
		v, err := DuckDBType(tt.ValueType)
		if err != nil {
			return "", err
		}
		return "MAP(" + k + ", " + v + ")", nil
	}
	return "", fmt.Errorf("%w: Iceberg type %s cannot be read through DuckDB", ErrUnsupported, t)
}
