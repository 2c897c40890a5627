package catalogadapter

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
)

// The interfaces below are optional: a backend implements the ones it can
// serve, and a caller type-asserts them and falls back or refuses when one
// is missing. The sink creates a missing table only through a Creator,
// runs an upsert only on a Scanner (its merge reads the table), and stages
// an upsert as a row delta only through a RowDeltaStager.

// Creator creates tables.
type Creator interface {
	// CreateTable creates an empty table. It fails with an error wrapping
	// ErrTableExists when the table is already there.
	CreateTable(ctx context.Context, id TableIdent, def TableDef) error
}

// TableDef is what a new table is made of.
type TableDef struct {
	Schema *arrow.Schema
	// PartitionSpec names source columns by name in PartitionField.Name
	// (SourceID is ignored on create).
	PartitionSpec PartitionSpec
	// Properties are the format's own table properties, passed through.
	Properties map[string]string
	// TargetFileSize is the size (bytes) data files written to the table
	// aim at, kept with the table so every writer honours it; 0 leaves the
	// backend's default. Each backend records it as its format spells it.
	TargetFileSize int64
	// CheckpointInterval is how many commits a format with a log writes
	// between checkpoints (0: its default); a format without one ignores it.
	CheckpointInterval int
}

// Scanner reads a table's committed state with DuckDB.
type Scanner interface {
	// Files lists the live data files at the current version, with stats.
	Files(ctx context.Context, id TableIdent) (version int64, files []DataFile, err error)
	// ScanSQL returns a DuckDB query over the rows of the table at version,
	// restricted to the files named in paths unless paths is nil.
	ScanSQL(ctx context.Context, id TableIdent, q Querier, version int64, paths []string) (string, error)
}

// DataFile is one live data file, as a Scanner reports it.
type DataFile struct {
	// Path identifies the file in CommitOptions.Removes.
	Path string
	Rows int64 // -1 when unknown
	// Min and Max are per top-level column bounds, where the format keeps
	// them (values as decoded from JSON: float64, string, ...). Absent
	// columns have no bound.
	Min, Max map[string]any
	// Partition holds typed partition values by column (nil for null).
	Partition map[string]any
}

// RowDeltaStager stages an upsert epoch as a row delta: equality deletes
// on the key columns plus the new rows, committed together, instead of
// rewriting the files that hold the keys (Iceberg).
type RowDeltaStager interface {
	// StageRowDelta stages the rows of keysQuery (the key columns of every
	// row the epoch upserts or deletes) as equality deletes, and the rows
	// of rowsQuery as data, both run on q. It fails with an error wrapping
	// ErrUnsupported when the table cannot take equality deletes on key;
	// the caller then rewrites files instead.
	StageRowDelta(ctx context.Context, id TableIdent, q Querier, key []string, keysQuery, rowsQuery string) ([]Receipt, error)
}

// HealthChecker reports trouble of a table's storage that the sink cannot
// see in its own state: a storage circuit breaker that is open, say.
type HealthChecker interface {
	// Health tells whether the table's storage is degraded, and why.
	Health(id TableIdent) (degraded bool, reason string)
}

// RowCounter reports a table's row count from its metadata alone, without
// reading a data file: what information_schema.TABLES.TABLE_ROWS shows.
type RowCounter interface {
	// RowCount returns the rows of the current version. known is false
	// when the metadata does not tell (a Delta file without numRecords
	// stats, an Iceberg snapshot with delete files): a guess would be a
	// wrong number.
	RowCount(ctx context.Context, id TableIdent) (rows int64, known bool, err error)
}

// ArrowStager stages an Arrow record directly, for callers that hold rows
// in Arrow rather than in DuckDB. The sink uses SmallStager instead, for
// a backend that gives it StageSQL's guarantees.
type ArrowStager interface {
	// WriteBatch stages the rows as data files that stay invisible until
	// Commit makes them part of the table.
	WriteBatch(ctx context.Context, id TableIdent, rec arrow.RecordBatch) (Receipt, error)
}

// SmallStager stages a small batch held in Arrow, written by the backend
// itself rather than by DuckDB, whose fixed cost per query (planning a
// COPY: 1.5 to 2 ms) dominates a batch of a few rows. The files, their
// statistics and their durability are those StageSQL gives: synced before
// it returns, named with the stage time. The sink stages through it an
// append epoch of at most SmallBatchRows rows and SmallBatchBytes bytes
// that is still in Arrow.
type SmallStager interface {
	// StageSmall stages rec's rows like WriteBatch, or returns
	// ErrNotSmall, having written nothing, where StageSQL serves the
	// table better.
	StageSmall(ctx context.Context, id TableIdent, rec arrow.RecordBatch) (Receipt, error)
}

// ErrNotSmall is StageSmall's answer for a table whose small batches go
// through StageSQL after all (an Iceberg table on object storage, whose
// StageSQL keeps a copy of what it uploads in the read cache).
var ErrNotSmall = errors.New("the batch is staged through StageSQL")

// The bounds of a small batch (SmallStager). Writing one row group with
// arrow-go beats DuckDB's COPY up to far more rows than this; past it the
// rows are better off in DuckDB's buffer, which spills and splits files.
const (
	SmallBatchRows  = 10_000
	SmallBatchBytes = 8 << 20
)

// CredentialVendor hands out a table's encryption and a short-lived
// credential, for a caller that reads or writes the table's files itself.
// The sink's writes go through the backend, which holds its own.
type CredentialVendor interface {
	// SecurityContext returns the encryption level and a credential that
	// is valid now; a credential is never served past its expiry.
	SecurityContext(ctx context.Context, id TableIdent) (SecurityContext, error)
}
