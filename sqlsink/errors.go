package sqlsink

import "github.com/lakesql/lakesql/catalogadapter"

// The provider's errors, as a sink passes them on: callers above the
// engine classify them without importing the provider contract.
var (
	// ErrConflict: other writers kept winning the commit.
	ErrConflict = catalogadapter.ErrConflict
	// ErrUnsupported: the table or the request uses something the
	// backend does not implement.
	ErrUnsupported = catalogadapter.ErrUnsupported
	// ErrCorrupt: the table's log or metadata cannot be replayed.
	ErrCorrupt = catalogadapter.ErrCorrupt
	// ErrNoTable: the table does not exist.
	ErrNoTable = catalogadapter.ErrNoTable
	// ErrInvalid: the request itself is malformed.
	ErrInvalid = catalogadapter.ErrInvalid
	// ErrTimeout: the catalog or storage did not answer in time.
	ErrTimeout = catalogadapter.ErrTimeout
)
