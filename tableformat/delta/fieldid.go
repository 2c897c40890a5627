package delta

// Column mapping `id` mode (PROTOCOL.md, "Reader Requirements for Column
// Mapping"): readers resolve columns by the Parquet field_id given in the
// column metadata delta.columnMapping.id, not by name. A data file may hold
// a column under another name than the table's physical name (an Iceberg
// table converted to Delta after a rename, for one); read by name, such a
// column would come back NULL.
//
// DuckDB's read_parquet resolves top-level columns by field id when given a
// `schema` map from field id to {name, type, default_value}, but nested
// fields are still matched by name. So top-level columns go through that
// map, and each file is checked against the table first (checkStructIDs):
// one DuckDB would read wrongly is refused rather than read as NULLs or as
// another field's values.

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/lakesql/lakesql/internal/sqlquote"
)

// columnMappingIDKey is the column metadata key holding a field's id.
const columnMappingIDKey = "delta.columnMapping.id"

// fieldID returns the column mapping id of f, if it has one.
func fieldID(f *StructField) (int64, bool) {
	switch v := f.Metadata[columnMappingIDKey].(type) {
	case json.Number:
		n, err := v.Int64()
		return n, err == nil
	case float64:
		return int64(v), v == float64(int64(v))
	case int:
		return int64(v), true
	case int64:
		return v, true
	}
	return 0, false
}

// fieldIDSchema is the read_parquet `schema` option for id mode: each
// top-level data column by its field id, under its physical name and with
// nested struct fields under theirs, so the select list reads it as it
// reads a name-mode column. A column no file holds reads as NULL.
func fieldIDSchema(schema *StructType, parts map[string]bool) (string, error) {
	var entries []string
	for _, f := range schema.Fields {
		if parts[f.Name] {
			continue
		}
		id, ok := fieldID(f)
		if !ok {
			return "", corrupt("column mapping id mode: column %q has no %s", f.Name, columnMappingIDKey)
		}
		typ, err := DuckDBType(physicalType(f.Type))
		if err != nil {
			return "", fmt.Errorf("column %q: %w", f.Name, err)
		}
		entries = append(entries, fmt.Sprintf("%d: {name: %s, type: %s, default_value: NULL}",
			id, sqlquote.String(physicalName(f, true)), sqlquote.String(typ)))
	}
	return "schema = MAP {" + strings.Join(entries, ", ") + "}", nil
}

// physicalType is t with every nested struct field renamed to its
// physical name, the names the data files use.
func physicalType(t DataType) DataType {
	switch t := t.(type) {
	case *StructType:
		fields := make([]*StructField, len(t.Fields))
		for i, f := range t.Fields {
			c := *f
			c.Name = physicalName(f, true)
			c.Type = physicalType(f.Type)
			fields[i] = &c
		}
		return &StructType{Fields: fields}
	case *ArrayType:
		return &ArrayType{ElementType: physicalType(t.ElementType), ContainsNull: t.ContainsNull}
	case *MapType:
		return &MapType{KeyType: physicalType(t.KeyType), ValueType: physicalType(t.ValueType), ValueContainsNull: t.ValueContainsNull}
	}
	return t
}

// checkFieldIDs refuses files that id mode would read wrongly, before
// DuckDB reads them: see checkStructIDs.
func checkFieldIDs(trees map[string]*parquetNode, schema *StructType, parts map[string]bool) error {
	data := &StructType{}
	for _, f := range schema.Fields {
		if !parts[f.Name] {
			data.Fields = append(data.Fields, f)
		}
	}
	for _, file := range sortedKeys(trees) {
		if err := checkStructIDs(trees[file], data, true); err != nil {
			return unsupported("column mapping id mode: data file %s: %v", file, err)
		}
	}
	return nil
}

// checkStructIDs checks the fields of struct t against the children of
// the file's node for it. Top-level columns are resolved by field id, so
// there the one danger is a column held under its physical name without
// an id: it would read as NULL. Nested fields are resolved by name, so
// there a field id held under another name (it would read as NULL) and the
// physical name held with another id (another field's values) are refused.
func checkStructIDs(node *parquetNode, t *StructType, top bool) error {
	for _, f := range t.Fields {
		id, ok := fieldID(f)
		if !ok {
			continue // nothing to resolve by but the name
		}
		phys := physicalName(f, true)
		byID, byName := childByID(node, id), childByName(node, phys)
		switch {
		case top && byID == nil && byName != nil && !byName.fieldID.Valid:
			return fmt.Errorf("column %q is held without its field id %d", phys, id)
		case !top && byID != nil && byID.name != phys:
			return fmt.Errorf("nested field id %d is held as %q, not %q, and nested fields are read by name", id, byID.name, phys)
		case !top && byName != nil && byName.fieldID.Valid && byName.fieldID.Int64 != id:
			return fmt.Errorf("nested field %q is held with field id %d, not %d", phys, byName.fieldID.Int64, id)
		}
		child := byID
		if child == nil && !top {
			child = byName
		}
		if child == nil {
			continue // not in this file: NULL is right
		}
		if err := checkNestedIDs(child, f.Type); err != nil {
			return err
		}
	}
	return nil
}

// checkNestedIDs finds the structs inside a column of type t in the file's
// node for it, through the standard Parquet list (LIST, repeated group,
// element) and map (MAP, repeated key_value, key and value) levels.
func checkNestedIDs(node *parquetNode, t DataType) error {
	switch t := t.(type) {
	case *StructType:
		return checkStructIDs(node, t, false)
	case *ArrayType:
		if !hasStruct(t.ElementType) || len(node.children) != 1 {
			return nil
		}
		elem := node.children[0]
		if len(elem.children) == 1 {
			elem = elem.children[0]
		}
		return checkNestedIDs(elem, t.ElementType)
	case *MapType:
		if !hasStruct(t) || len(node.children) != 1 || len(node.children[0].children) != 2 {
			return nil
		}
		kv := node.children[0].children
		if err := checkNestedIDs(kv[0], t.KeyType); err != nil {
			return err
		}
		return checkNestedIDs(kv[1], t.ValueType)
	}
	return nil
}

func childByID(n *parquetNode, id int64) *parquetNode {
	for _, c := range n.children {
		if c.fieldID.Valid && c.fieldID.Int64 == id {
			return c
		}
	}
	return nil
}

func childByName(n *parquetNode, name string) *parquetNode {
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

func sortedKeys(m map[string]*parquetNode) []string {
	return slices.Sorted(maps.Keys(m))
}
