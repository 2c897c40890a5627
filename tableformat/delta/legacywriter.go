package delta

import (
	"strings"
)

// Writer versions 3 to 6 (PROTOCOL.md, "Table Features": legacy protocol
// versions) imply features without listing them. A writer must honour each,
// but a feature the table does not use asks nothing of a writer: with no
// CHECK constraint there is nothing to check, with no generation expression
// nothing to generate. So such a table is writable when every implied
// feature is either honoured (writerFeatures) or unused. Spark makes
// column-mapped tables reader 2 / writer 5, so this is what lets us write
// them.

// legacyWritable refuses writer version v when a feature it implies is
// neither honoured nor provably unused; conf nil means the configuration
// is unknown, so check constraints may be in use.
func legacyWritable(v int, schema *StructType, conf map[string]string) error {
	for _, f := range legacyImplied[v] { // tablefeatures.go
		if writerFeatures[f] {
			continue
		}
		if use := featureUse(f, schema, conf); use != "" {
			return unsupported("writing a table with writer version %d (%s): %s", v,
				strings.Join(legacyWriterFeatures[:v-2], ", "), use)
		}
	}
	return nil
}

// featureUse says how the table uses feature f, "" when it does not.
func featureUse(f string, schema *StructType, conf map[string]string) string {
	switch f {
	case "checkConstraints":
		if conf == nil {
			return "check constraints may be in use"
		}
		for k := range conf {
			if strings.HasPrefix(k, "delta.constraints.") {
				return "the table has CHECK constraint " + strings.TrimPrefix(k, "delta.constraints.")
			}
		}
	case "generatedColumns":
		if col := columnWithMetadata(schema, "", "delta.generationExpression"); col != "" {
			return "column " + col + " is generated"
		}
	case "identityColumns":
		if col := columnWithMetadata(schema, "", "delta.identity."); col != "" {
			return "column " + col + " is an identity column"
		}
	default:
		return f + " is not implemented"
	}
	return ""
}

// columnWithMetadata returns the dotted path of the first field, nested
// ones included, with a metadata key starting with prefix, or "".
func columnWithMetadata(t DataType, path, prefix string) string {
	switch t := t.(type) {
	case *StructType:
		if t == nil {
			return ""
		}
		for _, f := range t.Fields {
			p := childPath(path, f.Name)
			for k := range f.Metadata {
				if strings.HasPrefix(k, prefix) {
					return p
				}
			}
			if col := columnWithMetadata(f.Type, p, prefix); col != "" {
				return col
			}
		}
	case *ArrayType:
		return columnWithMetadata(t.ElementType, childPath(path, "element"), prefix)
	case *MapType:
		if col := columnWithMetadata(t.KeyType, childPath(path, "key"), prefix); col != "" {
			return col
		}
		return columnWithMetadata(t.ValueType, childPath(path, "value"), prefix)
	}
	return ""
}
