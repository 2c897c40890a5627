package iceberg

import (
	"fmt"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// emptyStringPartition refuses (ErrUnsupported) files whose partition value
// is an empty string (an identity or truncate partition of an empty string). iceberg-go
// writes such a value as the manifest list's lower bound of the field, and
// an empty string's bytes reach its Avro encoder as a nil slice, which it
// writes as null. Readers take a null lower bound for "every value is
// null": Spark and pyiceberg then skip the whole manifest for any filter
// on the column and miss every row it holds, not just the empty ones.
func emptyStringPartition(meta table.Metadata, files []ice.DataFile) error {
	for _, f := range files {
		spec := meta.PartitionSpecByID(int(f.SpecID()))
		if spec == nil {
			continue
		}
		part := f.Partition()
		for _, pf := range spec.Fields() {
			v := part[pf.FieldID]
			if l, ok := v.(ice.StringLiteral); ok {
				v = string(l)
			}
			if s, ok := v.(string); ok && s == "" {
				col, _ := meta.CurrentSchema().FindColumnName(pf.SourceID())
				return fmt.Errorf("%w: an empty string as a partition value (column %q, partition field %s): "+
					"iceberg-go writes its manifest bound as null, and Spark and pyiceberg would then skip the manifest's rows in filtered reads",
					ErrUnsupported, col, pf.Name)
			}
		}
	}
	return nil
}
