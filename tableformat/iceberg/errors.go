// Package iceberg is lakesql's Apache Iceberg table format layer, on
// github.com/apache/iceberg-go: opening catalogs (an embedded SQLite file
// by default), Arrow ⇄ Iceberg schemas and partition specs, staging data
// and equality-delete files without committing them, committing them as
// one snapshot pinned to the snapshot it was built on, the exactly-once
// record in snapshot summaries, and DuckDB queries over a snapshot's files
// with its delete files applied.
package iceberg

import "errors"

// Sentinel errors callers branch on. Wrapped errors keep context; test
// with errors.Is.
var (
	// ErrConflict: the table's main branch moved since the commit was
	// built (another writer won the race). Reload and rebuild.
	ErrConflict = errors.New("Iceberg commit conflict")
	// ErrUnsupported: the table or request uses something we do not
	// implement; we refuse rather than write or read wrongly.
	ErrUnsupported = errors.New("unsupported Iceberg feature")
	// ErrNoTable: the catalog has no such table.
	ErrNoTable = errors.New("Iceberg table does not exist")
	// ErrTableExists: CreateTable found the table already there.
	ErrTableExists = errors.New("Iceberg table already exists")
	// ErrInvalid: the request itself is malformed.
	ErrInvalid = errors.New("invalid Iceberg request")
	// ErrPathOutsideTable: a manifest names a data or delete file outside
	// the table's location and the allowed roots (ScanOptions), directly
	// or through a symlink; the scan is refused rather than read it.
	ErrPathOutsideTable = errors.New("path outside the table")
	// ErrTimeout: the catalog did not answer within the catalog's timeout
	// (CatalogConfig.Timeout).
	ErrTimeout = errors.New("Iceberg catalog timed out")
)
