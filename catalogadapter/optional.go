package catalogadapter

import (
	"context"
	"database/sql"

	"github.com/apache/arrow-go/v18/arrow"
)

// Querier runs SQL on DuckDB; *sql.DB, *sql.Conn and *sql.Tx satisfy it.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// The interfaces below are optional: a backend implements the ones it can
// serve, and the sink falls back or refuses when one is missing.

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
	Properties    map[string]string
}

// Stager stages rows straight from a DuckDB query, without a round trip
// through Arrow: the fast path of a sink whose epoch is buffered in DuckDB.
type Stager interface {
	StageSQL(ctx context.Context, id TableIdent, q Querier, src Source) (Receipt, error)
}

// Source is a DuckDB query whose rows a Stager stages.
type Source struct {
	Query string
	// Columns, when the caller knows them, are the names and DuckDB types
	// Query yields, as DESCRIBE would report them. A stager asks DuckDB
	// when they are nil: a call that costs a small epoch a tenth of its
	// time.
	Columns []SourceColumn
}

// SourceColumn is one column of a Source.
type SourceColumn struct {
	Name       string
	DuckDBType string
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

// EpochRecorder recovers the exactly-once record.
type EpochRecorder interface {
	// LastEpoch returns the last epoch writerID committed to the table.
	LastEpoch(ctx context.Context, id TableIdent, writerID string) (epoch int64, ok bool, err error)
}

// Discarder deletes staged data that will not be committed: the files of a
// rolled-back epoch, or of a merge that must be redone.
type Discarder interface {
	Discard(ctx context.Context, id TableIdent, receipts []Receipt) error
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
