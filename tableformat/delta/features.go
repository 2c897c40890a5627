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
	"appendOnly": true, // we never remove rows from such a table: checked on commit
	// Invariants, CHECK constraints and generation expressions are Spark
	// SQL that the writer of rows evaluates (Rules; lakesql's sink does it
	// with DuckDB); invariants on nested fields are refused below.
	"invariants":       true,
	"checkConstraints": true,
	"generatedColumns": true,
	"timestampNtz":     true,
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
	// Upserts and deletes write deletion vectors where the table has them
	// on (dvwrite.go); a remove carries the file's vector, and a
	// copy-on-write rewrite reads through it (ScanFilesSQL).
	"deletionVectors": true,
	// Files are written in the column's current type and delta.typeChanges
	// is kept when the schema changes (evolve.go).
	"typeWidening": true,
	// Files are written under physical names with field ids (fileLayout);
	// added columns get fresh ids and physical names (evolve.go, MapNewColumn).
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
// are always on, and an invariant on a nested field, which we do not
// evaluate, makes the table read-only for us. A legacy writer version (3
// to 6) is written when each feature it implies is honoured or unused
// (legacyWritable).
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

// refuseInvariants refuses a schema whose nested fields carry invariants,
// where the protocol has them on (writer 2 to 6, or a writer 7 table
// listing the feature): we evaluate those of top-level columns only.
func refuseInvariants(schema *StructType) error {
	if schema == nil {
		return nil
	}
	if col := nestedKey(schema, invariantKey); col != "" {
		return unsupported("writing a table with column invariants on nested fields (delta.invariants on %q)", col)
	}
	return nil
}

// invariantKey is the column metadata key holding a column invariant.
const invariantKey = "delta.invariants"

// CheckWritable refuses a snapshot whose table we cannot write: VACUUM
// asks it before it deletes anything, as vacuumProtocolCheck requires of
// every table.
func (s *Snapshot) CheckWritable() error { return s.checkWritable() }
