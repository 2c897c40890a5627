package delta

import (
	"fmt"
	"strings"

	"github.com/lakesql/lakesql/internal/sqlquote"
)

// fileLayout is how a data file of the table names its columns.
type fileLayout struct {
	// schema is the table schema under the files' column names: the
	// physical names under column mapping, nested fields included, else
	// the logical ones.
	schema *StructType
	// partitionColumns are the partition columns under those names, the
	// keys of partitionValues.
	partitionColumns []string
	// fieldIDs is COPY's FIELD_IDS option under column mapping: the
	// column id of every data column and nested field. Empty without
	// mapping.
	fieldIDs string
	// mapped tells that column mapping is on, so values of nested types
	// are renamed to physical field names (physicalExpr).
	mapped bool
}

// fileLayout returns the layout WriteFiles writes. Under column mapping
// (PROTOCOL.md, "Writer Requirements for Column Mapping") files name their
// columns, nested fields too, by physical name and carry the column ids as
// Parquet field ids (id mode reads by them; name mode readers ignore them,
// as Spark writes them in both), and partition values and statistics are
// keyed by physical name.
func (s *Snapshot) fileLayout(schema *StructType) (fileLayout, error) {
	mode := ColumnMappingMode(s.Metadata.Configuration)
	if mode == "none" {
		return fileLayout{schema: schema, partitionColumns: s.Metadata.PartitionColumns}, nil
	}
	if mode != "name" && mode != "id" {
		return fileLayout{}, unsupported("writing a table with column mapping mode %q", mode)
	}
	if err := CheckColumnMapping(s.Protocol, schema, s.Metadata.Configuration); err != nil {
		return fileLayout{}, corrupt("%v", err)
	}
	parts := map[string]bool{}
	for _, c := range s.Metadata.PartitionColumns {
		parts[c] = true
	}
	out := fileLayout{schema: physicalType(schema).(*StructType), mapped: true}
	var ids []string
	for _, f := range schema.Fields {
		phys := physicalName(f, true)
		if parts[f.Name] {
			out.partitionColumns = append(out.partitionColumns, phys)
			continue
		}
		ids = append(ids, sqlquote.Ident(phys)+": "+fieldIDSpec(f))
	}
	out.fieldIDs = "{" + strings.Join(ids, ", ") + "}"
	return out, nil
}

// fieldIDSpec is one column's entry of COPY's FIELD_IDS: its id, and for
// a nested type the ids of the struct fields inside, through the element
// of a list and the key and value of a map, as DuckDB names them.
func fieldIDSpec(f *StructField) string {
	id, _ := fieldID(f) // CheckColumnMapping made sure of it
	inner := nestedIDSpec(f.Type)
	if inner == "" {
		return fmt.Sprint(id)
	}
	return fmt.Sprintf("{__duckdb_field_id: %d, %s}", id, inner)
}

// nestedIDSpec is the FIELD_IDS entries inside a value of type t, "" when
// it holds no struct field.
func nestedIDSpec(t DataType) string {
	switch t := t.(type) {
	case *StructType:
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			parts[i] = sqlquote.Ident(physicalName(f, true)) + ": " + fieldIDSpec(f)
		}
		return strings.Join(parts, ", ")
	case *ArrayType:
		if inner := nestedIDSpec(t.ElementType); inner != "" {
			return "element: {" + inner + "}"
		}
	case *MapType:
		var parts []string
		if inner := nestedIDSpec(t.KeyType); inner != "" {
			parts = append(parts, "key: {"+inner+"}")
		}
		if inner := nestedIDSpec(t.ValueType); inner != "" {
			parts = append(parts, "value: {"+inner+"}")
		}
		return strings.Join(parts, ", ")
	}
	return ""
}

// physicalExpr renames the struct fields of a value of logical type t,
// read from src, to their physical names: the inverse of mappedExpr.
// depth keeps lambda parameter names distinct in nested lists and maps.
func physicalExpr(t DataType, src string, depth int) string {
	if !hasStruct(t) {
		return src
	}
	switch tt := t.(type) {
	case *StructType:
		fields := make([]string, len(tt.Fields))
		for i, f := range tt.Fields {
			inner := physicalExpr(f.Type, src+"."+sqlquote.Ident(f.Name), depth)
			fields[i] = sqlquote.Ident(physicalName(f, true)) + " := " + inner
		}
		return fmt.Sprintf("CASE WHEN %s IS NULL THEN NULL ELSE struct_pack(%s) END", src, strings.Join(fields, ", "))
	case *ArrayType:
		x := fmt.Sprintf("w%d", depth)
		return fmt.Sprintf("list_transform(%s, %s -> %s)", src, x, physicalExpr(tt.ElementType, x, depth+1))
	case *MapType:
		e := fmt.Sprintf("m%d", depth)
		k := physicalExpr(tt.KeyType, e+".key", depth+1)
		v := physicalExpr(tt.ValueType, e+".value", depth+1)
		return fmt.Sprintf("map_from_entries(list_transform(map_entries(%s), %s -> struct_pack(key := %s, value := %s)))",
			src, e, k, v)
	}
	return src
}
