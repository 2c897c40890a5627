package delta

import (
	"sort"
	"strings"
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
	"appendOnly":   true, // we never remove rows from such a table: checked on commit
	"invariants":   true, // NOT NULL only: a column with delta.invariants is refused below
	"timestampNtz": true,
	// Checkpoints follow the V2 spec, UUID-named (checkpoint_v2.go).
	"v2Checkpoint": true,
	// VACUUM checks the write protocol before it deletes (PlanVacuum).
	"vacuumProtocolCheck": true,
	// Carried through checkpoints; a commit that writes a domain conflicts
	// with a concurrent one on the same domain (domainmeta.go).
	"domainMetadata": true,
	// Every commit's commitInfo carries inCommitTimestamp (incommit.go).
	"inCommitTimestamp": true,
	// Adds get baseRowId and defaultRowCommitVersion, the high-water mark
	// moves in the same commit (rowtracking.go).
	"rowTracking": true,
	// The delta.clustering domain is kept; appends carry stats for every
	// column, and OPTIMIZE leaves clustered files alone (clustering.go).
	"clustering": true,
	// Log cleanup keeps the protected checkpoints (logcleanup.go).
	"checkpointProtection": true,
	// Appends need no cdc files (readers take added files as inserts); a
	// commit that removes rows from a table with the feed on is refused.
	"changeDataFeed": true,
	// We write no deletion vectors; a remove carries the file's vector and a
	// copy-on-write rewrite reads through it (ScanFilesSQL).
	"deletionVectors": true,
	// Files are written in the column's current type and delta.typeChanges
	// is kept when the schema changes (evolve.go).
	"typeWidening": true,
	// Files are written under physical names with field ids (fileLayout);
	// added columns get new ones (evolve.go).
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
func CheckWritable(p Protocol, schema *StructType) error {
	if p.MinWriterVersion > maxWriterVersion || p.MinWriterVersion < 1 {
		return unsupported("writer version %d", p.MinWriterVersion)
	}
	if p.MinWriterVersion < 7 {
		// Legacy versions imply features: 2 invariants, 3 check constraints,
		// 4 change data feed and generated columns, 5 column mapping, 6 identity columns.
		if p.MinWriterVersion > 2 {
			return unsupported("writing a table with writer version %d (%s)", p.MinWriterVersion,
				strings.Join(legacyWriterFeatures[:p.MinWriterVersion-2], ", "))
		}
		if p.MinWriterVersion == 2 {
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
