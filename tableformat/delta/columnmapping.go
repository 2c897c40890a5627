package delta

// Column mapping (PROTOCOL.md, "Column Mapping"): every field of the
// schema, nested ones included, carries a column id and a physical name;
// data files name their columns by physical name (and in id mode carry the
// ids as Parquet field ids), and partition values and statistics are keyed
// by physical name. The table's delta.columnMapping.maxColumnId is at least
// every id ever given, so a new column never reuses one.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// Column mapping configuration and column metadata keys.
const (
	// ColumnMappingModeKey is the table property naming the mode: none,
	// name or id.
	ColumnMappingModeKey = "delta.columnMapping.mode"
	// ColumnMappingMaxIDKey is the table property holding the largest
	// column id given out.
	ColumnMappingMaxIDKey = "delta.columnMapping.maxColumnId"
	// PhysicalNameKey is the column metadata key of a field's physical name.
	PhysicalNameKey = "delta.columnMapping.physicalName"
	// ColumnIDKey is the column metadata key of a field's column id.
	ColumnIDKey = columnMappingIDKey
)

// ColumnMappingMode returns the mode configured: "none", "name" or "id"
// (or whatever else the table says, which we refuse to write).
func ColumnMappingMode(conf map[string]string) string {
	if m := conf[ColumnMappingModeKey]; m != "" {
		return strings.ToLower(m)
	}
	return "none"
}

// ValidColumnMappingMode tells whether mode is one the protocol defines.
func ValidColumnMappingMode(mode string) bool {
	switch strings.ToLower(mode) {
	case "none", "name", "id":
		return true
	}
	return false
}

// MaxColumnID returns delta.columnMapping.maxColumnId, 0 when unset.
func MaxColumnID(conf map[string]string) (int64, error) {
	v, ok := conf[ColumnMappingMaxIDKey]
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, corrupt("%s is %q, not a column id", ColumnMappingMaxIDKey, v)
	}
	return n, nil
}

// AssignColumnMapping returns schema with a column id above maxID and a
// physical name given to every field, nested ones included, that lacks
// them, and the new largest id. keepNames makes the physical name the
// field's current name, for fields whose data files already hold them so
// (turning mapping on for an existing table, as Spark does); otherwise it
// is a fresh "col-<uuid>", so a later rename or a column dropped and added
// again never meets an old file's column.
//
// Ids start above the larger of maxID and every id the schema holds.
func AssignColumnMapping(schema *StructType, maxID int64, keepNames bool) (*StructType, int64) {
	maxID = max(maxID, largestID(schema))
	out := assignStruct(schema, &maxID, keepNames)
	return out, maxID
}

// largestID is the largest column id in t, 0 when it holds none.
func largestID(t DataType) int64 {
	var m int64
	switch t := t.(type) {
	case *StructType:
		for _, f := range t.Fields {
			if id, ok := fieldID(f); ok {
				m = max(m, id)
			}
			m = max(m, largestID(f.Type))
		}
	case *ArrayType:
		m = largestID(t.ElementType)
	case *MapType:
		m = max(largestID(t.KeyType), largestID(t.ValueType))
	}
	return m
}

// StripColumnMapping returns t without column ids and physical names,
// nested fields included: turning mapping on for a table whose mapping was
// removed (its files rewritten under logical names) must not keep stale
// physical names.
func StripColumnMapping(t *StructType) *StructType {
	return stripColumnMapping(t)
}

func assignStruct(t *StructType, maxID *int64, keepNames bool) *StructType {
	out := &StructType{Fields: make([]*StructField, len(t.Fields))}
	for i, f := range t.Fields {
		g := *f
		g.Metadata = make(map[string]any, len(f.Metadata)+2)
		for k, v := range f.Metadata {
			g.Metadata[k] = v
		}
		if _, ok := fieldID(&g); !ok {
			*maxID++
			g.Metadata[ColumnIDKey] = json.Number(strconv.FormatInt(*maxID, 10))
		}
		if p, _ := g.Metadata[PhysicalNameKey].(string); p == "" {
			if keepNames {
				g.Metadata[PhysicalNameKey] = f.Name
			} else {
				g.Metadata[PhysicalNameKey] = NewPhysicalName()
			}
		}
		g.Type = assignType(f.Type, maxID, keepNames)
		out.Fields[i] = &g
	}
	return out
}

func assignType(t DataType, maxID *int64, keepNames bool) DataType {
	switch t := t.(type) {
	case *StructType:
		return assignStruct(t, maxID, keepNames)
	case *ArrayType:
		return &ArrayType{ElementType: assignType(t.ElementType, maxID, keepNames), ContainsNull: t.ContainsNull}
	case *MapType:
		return &MapType{KeyType: assignType(t.KeyType, maxID, keepNames), ValueType: assignType(t.ValueType, maxID, keepNames),
			ValueContainsNull: t.ValueContainsNull}
	}
	return t
}

// NewPhysicalName returns a physical name for a new column, as Spark
// makes them: "col-" and a random UUID.
func NewPhysicalName() string {
	return "col-" + uuid.NewString()
}

// ColumnMappingProtocol returns p upgraded as the protocol requires for
// column mapping: on a table-features protocol (writer 7) the
// columnMapping feature in both lists, with reader 3 where reader
// features are needed; otherwise at least reader 2 and writer 5.
func ColumnMappingProtocol(p Protocol) Protocol {
	if SupportsColumnMapping(p) {
		return p
	}
	out := Protocol{MinReaderVersion: p.MinReaderVersion, MinWriterVersion: p.MinWriterVersion,
		ReaderFeatures: slices.Clone(p.ReaderFeatures), WriterFeatures: slices.Clone(p.WriterFeatures)}
	if out.MinWriterVersion < 7 {
		out.MinReaderVersion = max(out.MinReaderVersion, 2)
		out.MinWriterVersion = max(out.MinWriterVersion, 5)
		return out
	}
	if out.MinReaderVersion < 3 {
		// Reader 2 implied column mapping; nothing else is lost.
		out.MinReaderVersion = 3
	}
	if !slices.Contains(out.ReaderFeatures, "columnMapping") {
		out.ReaderFeatures = append(out.ReaderFeatures, "columnMapping")
	}
	if !slices.Contains(out.WriterFeatures, "columnMapping") {
		out.WriterFeatures = append(out.WriterFeatures, "columnMapping")
	}
	return out
}

// SupportsColumnMapping tells whether protocol p allows column mapping:
// reader 2 and writer 5 to 6, or reader 3 and writer 7 listing the
// feature in both lists.
func SupportsColumnMapping(p Protocol) bool {
	if p.MinWriterVersion >= 7 {
		return p.MinReaderVersion >= 3 && slices.Contains(p.ReaderFeatures, "columnMapping") &&
			slices.Contains(p.WriterFeatures, "columnMapping")
	}
	return p.MinReaderVersion >= 2 && p.MinWriterVersion >= 5
}

// CheckColumnMapping checks a schema against the column mapping rules of
// its table's configuration and protocol: under mode name or id, the
// protocol supports column mapping, every field has an id and a physical
// name, ids are unique across the schema, physical names unique among
// siblings, and maxColumnId is at least every id. A table failing them
// would be misread by another engine, so we never commit one.
func CheckColumnMapping(p Protocol, schema *StructType, conf map[string]string) error {
	mode := ColumnMappingMode(conf)
	if mode == "none" {
		return nil
	}
	if mode != "name" && mode != "id" {
		return unsupported("column mapping mode %q", conf[ColumnMappingModeKey])
	}
	if !SupportsColumnMapping(p) {
		return fmt.Errorf("column mapping mode %q needs reader 2 / writer 5 or the columnMapping table feature, "+
			"not protocol %d/%d", mode, p.MinReaderVersion, p.MinWriterVersion)
	}
	maxID, err := MaxColumnID(conf)
	if err != nil {
		return err
	}
	ids := map[int64]string{}
	var check func(t DataType, path string) error
	check = func(t DataType, path string) error {
		switch t := t.(type) {
		case *StructType:
			phys := map[string]bool{}
			for _, f := range t.Fields {
				p := childPath(path, f.Name)
				id, ok := fieldID(f)
				name, _ := f.Metadata[PhysicalNameKey].(string)
				switch {
				case !ok:
					return fmt.Errorf("column mapping: field %s has no %s", p, ColumnIDKey)
				case name == "":
					return fmt.Errorf("column mapping: field %s has no %s", p, PhysicalNameKey)
				case ids[id] != "":
					return fmt.Errorf("column mapping: fields %s and %s share column id %d", ids[id], p, id)
				case phys[name]:
					return fmt.Errorf("column mapping: physical name %q is used twice beside field %s", name, p)
				case id > maxID:
					return fmt.Errorf("column mapping: field %s has column id %d above %s %d", p, id, ColumnMappingMaxIDKey, maxID)
				}
				ids[id], phys[name] = p, true
				if err := check(f.Type, p); err != nil {
					return err
				}
			}
		case *ArrayType:
			return check(t.ElementType, childPath(path, "element"))
		case *MapType:
			if err := check(t.KeyType, childPath(path, "key")); err != nil {
				return err
			}
			return check(t.ValueType, childPath(path, "value"))
		}
		return nil
	}
	return check(schema, "")
}

// createColumnMapping maps a new table's schema when its configuration
// turns column mapping on: fresh ids from 1 and fresh physical names, and
// maxColumnId set. Without mapping the schema is returned as is.
func createColumnMapping(schema *StructType, conf map[string]string) (*StructType, error) {
	mode := ColumnMappingMode(conf)
	if mode == "none" {
		return schema, nil
	}
	if mode != "name" && mode != "id" {
		return nil, unsupported("column mapping mode %q", conf[ColumnMappingModeKey])
	}
	start, err := MaxColumnID(conf)
	if err != nil {
		return nil, err
	}
	mapped, maxID := AssignColumnMapping(schema, start, false)
	conf[ColumnMappingModeKey] = mode
	conf[ColumnMappingMaxIDKey] = strconv.FormatInt(maxID, 10)
	return mapped, nil
}
