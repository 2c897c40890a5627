package delta

import (
	"sort"
)

// readerFeatures are the table features whose data we read correctly.
// Anything else makes us refuse the table: better no rows than wrong rows.
var readerFeatures = map[string]bool{
	"timestampNtz":         true,
	"v2Checkpoint":         true,
	"vacuumProtocolCheck":  true, // only restricts VACUUM
	"deletionVectors":      true,
	"columnMapping":        true,
	"typeWidening":         true, // files are cast to the table's type on read
	"typeWidening-preview": true,
}

// writerFeatures are the table features our writer honours. A table that
// declares any other one is read-only for us.
var writerFeatures = map[string]bool{
	"appendOnly":          true, // we never remove rows from such a table: checked on commit
	"invariants":          true, // NOT NULL only: a column with delta.invariants is refused below
	"timestampNtz":        true,
	"v2Checkpoint":        false,
	"vacuumProtocolCheck": true,
	"domainMetadata":      true, // carried through checkpoints untouched
	// Appends need no cdc files (readers take added files as inserts); a
	// commit that removes rows from a table with the feed on is refused.
	"changeDataFeed": true,
	// We write no deletion vectors; a remove carries the file's vector and a
	// copy-on-write rewrite reads through it (ScanFilesSQL).
	"deletionVectors": true,
	// Files are written under physical names with field ids (fileLayout);
	// new columns get fresh ids and physical names (MapNewColumn).
	"columnMapping": true,
}

// legacyWriterFeatures are the features writer versions 3 to 6 add, in
// order: version v implies the first v-2 of them (and 2's appendOnly and
// invariants), so that a refusal names what the version asks for.
var legacyWriterFeatures = [...]string{"checkConstraints", "changeDataFeed, generatedColumns", "columnMapping", "identityColumns"}

// Protocol versions this implementation knows.
const (
	maxReaderVersion = 3
	maxWriterVersion = 7
)

// checkReadable refuses a table whose protocol asks for more than we read.
func checkReadable(p Protocol, m Metadata) error {
	if p.MinReaderVersion > maxReaderVersion || p.MinReaderVersion < 1 {
		return unsupported("reader version %d", p.MinReaderVersion)
	}
	if p.MinReaderVersion == 3 {
		names := append([]string(nil), p.ReaderFeatures...)
		sort.Strings(names)
		for _, f := range names {
			if !readerFeatures[f] {
				return unsupported("reader feature %q", f)
			}
		}
	}
	if m.Format.Provider != "" && m.Format.Provider != "parquet" {
		return unsupported("data file format %q", m.Format.Provider)
	}
	return nil
}

// CheckWritable refuses to write a table whose protocol we cannot honour.
// schema is the table's schema: at writer versions 2 to 6 column invariants
// are always on, and since we do not evaluate them, a table whose columns
// carry any is read-only for us (tables we create carry none).
//
// Without the table's configuration, a legacy writer version that implies
// check constraints (3 to 6) is refused: see checkWritableConf.
func CheckWritable(p Protocol, schema *StructType) error {
	return checkWritableConf(p, schema, nil)
}

// checkWritableConf is CheckWritable knowing the table's configuration
// (nil when unknown), which tells whether the features a legacy writer
// version implies are in use (legacyWritable).
func checkWritableConf(p Protocol, schema *StructType, conf map[string]string) error {
	if p.MinWriterVersion > maxWriterVersion || p.MinWriterVersion < 1 {
		return unsupported("writer version %d", p.MinWriterVersion)
	}
	if p.MinWriterVersion < 7 {
		// Legacy versions imply features: 2 invariants, 3 check constraints,
		// 4 change data feed and generated columns, 5 column mapping, 6 identity columns.
		if p.MinWriterVersion > 2 {
			if err := legacyWritable(p.MinWriterVersion, schema, conf); err != nil {
				return err
			}
		}
		if p.MinWriterVersion >= 2 {
			return refuseInvariants(schema)
		}
		return nil
	}
	names := append([]string(nil), p.WriterFeatures...)
	sort.Strings(names)
	for _, f := range names {
		if !writerFeatures[f] {
			return unsupported("writer feature %q", f)
		}
		if f == "invariants" {
			if err := refuseInvariants(schema); err != nil {
				return err
			}
		}
	}
	return nil
}

// refuseInvariants refuses a schema whose columns carry invariants, where
// the protocol has them on (writer 2, or a writer 7 table listing the
// feature): we do not evaluate them.
func refuseInvariants(schema *StructType) error {
	if col := invariantColumn(schema, ""); col != "" {
		return unsupported("writing a table with column invariants (delta.invariants on column %q)", col)
	}
	return nil
}

// invariantKey is the column metadata key holding a column invariant.
const invariantKey = "delta.invariants"

// invariantColumn returns the dotted path of the first column, nested ones
// included, that carries an invariant, or "" when none does.
func invariantColumn(t DataType, path string) string {
	switch t := t.(type) {
	case *StructType:
		if t == nil {
			return ""
		}
		for _, f := range t.Fields {
			if f == nil {
				continue
			}
			p := childPath(path, f.Name)
			if _, ok := f.Metadata[invariantKey]; ok {
				return p
			}
			if col := invariantColumn(f.Type, p); col != "" {
				return col
			}
		}
	case *ArrayType:
		if t != nil {
			return invariantColumn(t.ElementType, childPath(path, "element"))
		}
	case *MapType:
		if t != nil {
			if col := invariantColumn(t.KeyType, childPath(path, "key")); col != "" {
				return col
			}
			return invariantColumn(t.ValueType, childPath(path, "value"))
		}
	}
	return ""
}
