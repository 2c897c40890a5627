package delta

import (
	"fmt"
	"strings"

	"github.com/lakesql/lakesql/internal/sqlquote"
)

// fileLayout is how a data file of the table names its columns.
type fileLayout struct {
	// schema is the table schema under the files' column names: the
	// physical names under column mapping, else the logical ones.
	schema *StructType
	// partitionColumns are the partition columns under those names, the
	// keys of partitionValues.
	partitionColumns []string
	// fieldIDs is COPY's FIELD_IDS option under column mapping: the
	// column mapping id of every data column. Empty without mapping.
	fieldIDs string
}

// fileLayout returns the layout WriteFiles writes. Under column mapping
// (PROTOCOL.md, writer requirements) files name their columns by physical
// name and carry the column ids as Parquet field ids, and partition values
// and statistics are keyed by physical name. Nested struct fields have
// physical names too, which our writes do not rename: such a table is
// refused.
func (s *Snapshot) fileLayout(schema *StructType) (fileLayout, error) {
	mode := s.Metadata.Configuration["delta.columnMapping.mode"]
	if mode == "" || mode == "none" {
		return fileLayout{schema: schema, partitionColumns: s.Metadata.PartitionColumns}, nil
	}
	if mode != "name" && mode != "id" {
		return fileLayout{}, unsupported("writing a table with column mapping mode %q", mode)
	}
	parts := map[string]bool{}
	for _, c := range s.Metadata.PartitionColumns {
		parts[c] = true
	}
	out := fileLayout{schema: &StructType{}}
	var ids []string
	for _, f := range schema.Fields {
		if hasStruct(f.Type) {
			return fileLayout{}, unsupported("writing nested struct column %q under column mapping", f.Name)
		}
		phys, ok := f.Metadata["delta.columnMapping.physicalName"].(string)
		id, okID := fieldID(f)
		if !ok || phys == "" || !okID {
			return fileLayout{}, corrupt("column %q has no column mapping physical name or id", f.Name)
		}
		g := *f
		g.Name = phys
		out.schema.Fields = append(out.schema.Fields, &g)
		if parts[f.Name] {
			out.partitionColumns = append(out.partitionColumns, phys)
			continue
		}
		ids = append(ids, fmt.Sprintf("%s: %d", sqlquote.Ident(phys), id))
	}
	out.fieldIDs = "{" + strings.Join(ids, ", ") + "}"
	return out, nil
}
