package sinkdef

// The errors sinkdef returns, and those of the table formats below it
// that callers classify.

import (
	"errors"

	"github.com/lakesql/lakesql/tableformat/delta"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// ErrLocation marks a location that is refused: outside the allowed roots,
// or not a usable path.
var ErrLocation = errors.New("sink location refused")

// ErrOption marks an unknown WITH option or a bad value for a known one.
var ErrOption = errors.New("bad sink option")

// ErrNotSupported marks a statement or feature lakesql does not do yet.
var ErrNotSupported = errors.New("not supported yet")

// IsPathOutsideTable reports whether err is a table format's refusal of a
// file its table's log or manifest names outside the table and the
// allowed roots.
func IsPathOutsideTable(err error) bool {
	return errors.Is(err, delta.ErrPathOutsideTable) || errors.Is(err, icetable.ErrPathOutsideTable)
}
