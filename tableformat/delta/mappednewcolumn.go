package delta

import (
	"maps"
	"strconv"
)

// MapNewColumn prepares a column about to be added to a table (ADD
// COLUMN, automatic schema evolution). Under column mapping (conf's mode
// name or id) the column and every struct field nested in it get fresh
// column ids above delta.columnMapping.maxColumnId and fresh physical names
// ("col-<uuid>", as Spark gives new columns: a name no old data file holds,
// so a column dropped and added again never reads old values), and the
// returned configuration has maxColumnId advanced; commit both in the same
// metaData action. Without column mapping, f and conf are returned as they
// are. To add several columns, pass each call the configuration the
// previous one returned.
func MapNewColumn(f *StructField, conf map[string]string) (*StructField, map[string]string, error) {
	mode := ColumnMappingMode(conf)
	if mode == "none" {
		return f, conf, nil
	}
	if mode != "name" && mode != "id" {
		return nil, nil, unsupported("column mapping mode %q", conf[ColumnMappingModeKey])
	}
	maxID, err := MaxColumnID(conf)
	if err != nil {
		return nil, nil, err
	}
	// The new column must not keep ids or names it came with (a field
	// copied from another table): they could clash with this table's.
	clean := stripColumnMapping(&StructType{Fields: []*StructField{f}})
	mapped, maxID := AssignColumnMapping(clean, maxID, false)
	out := maps.Clone(conf)
	out[ColumnMappingMaxIDKey] = strconv.FormatInt(maxID, 10)
	return mapped.Fields[0], out, nil
}

// stripColumnMapping returns t without column ids and physical names.
func stripColumnMapping(t *StructType) *StructType {
	out := &StructType{Fields: make([]*StructField, len(t.Fields))}
	for i, f := range t.Fields {
		g := *f
		if f.Metadata != nil {
			g.Metadata = maps.Clone(f.Metadata)
			delete(g.Metadata, ColumnIDKey)
			delete(g.Metadata, PhysicalNameKey)
		}
		g.Type = stripType(f.Type)
		out.Fields[i] = &g
	}
	return out
}

func stripType(t DataType) DataType {
	switch t := t.(type) {
	case *StructType:
		return stripColumnMapping(t)
	case *ArrayType:
		return &ArrayType{ElementType: stripType(t.ElementType), ContainsNull: t.ContainsNull}
	case *MapType:
		return &MapType{KeyType: stripType(t.KeyType), ValueType: stripType(t.ValueType), ValueContainsNull: t.ValueContainsNull}
	}
	return t
}
