package delta

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors callers branch on. Wrapped errors keep context; test with errors.Is.
var (
	// ErrUnsupportedFeature marks a table that uses a protocol feature, type or
	// encoding this reader does not implement. We refuse such a table rather
	// than return rows that might be wrong.
	ErrUnsupportedFeature = errors.New("unsupported Delta feature")
	// ErrNotATable is returned when a location holds no _delta_log.
	ErrNotATable = errors.New("not a Delta table")
	// ErrCorruptLog marks a log that cannot be replayed: a bad JSON line, a gap
	// in the versions, a checkpoint that is missing or unreadable.
	ErrCorruptLog = errors.New("corrupt Delta log")
	// ErrVersionExists is returned by Storage.PutIfAbsent when the object is
	// already there: someone else won the race for that name.
	ErrVersionExists = errors.New("object already exists")
	// ErrNotFound is returned by Storage when an object does not exist.
	ErrNotFound = errors.New("object not found")
	// ErrCommitUnknown is returned by Commit when writing a log entry failed
	// in a way that may hide success (a timeout after the object landed) and
	// reading the entry back failed too. The commit may or may not be in the
	// log: the caller must read the table again before anything else, and
	// must not delete the commit's files.
	ErrCommitUnknown = errors.New("Delta commit state unknown")
	// ErrTableExists is returned by Create when the location already holds a table.
	ErrTableExists = errors.New("Delta table already exists")
	// ErrPathOutsideTable marks a log that names a data file, change data
	// file or deletion vector outside the table's location and the allowed
	// roots it was opened with (OpenTable), directly, through ".." or
	// through a symlink. The table is refused rather than read.
	// *OutsidePathError carries the path and the version.
	ErrPathOutsideTable = errors.New("path outside the table")
)

// UnsupportedError names the feature that made us refuse a table.
type UnsupportedError struct {
	Feature string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%v: %s", ErrUnsupportedFeature, e.Feature)
}

// Unwrap lets errors.Is(err, ErrUnsupportedFeature) match.
func (e *UnsupportedError) Unwrap() error { return ErrUnsupportedFeature }

func unsupported(format string, args ...any) error {
	return &UnsupportedError{Feature: fmt.Sprintf(format, args...)}
}

// ConflictError reports a lost commit race: the version we tried to write was
// taken. Winners lists the commits that landed since our read version, so the
// caller can inspect them (txn, touched files) before it retries.
type ConflictError struct {
	Version int64 // the version we tried to write
	Winners []Commit
}

func (e *ConflictError) Error() string {
	vs := make([]string, len(e.Winners))
	for i, w := range e.Winners {
		vs[i] = fmt.Sprint(w.Version)
	}
	return fmt.Sprintf("Delta commit conflict at version %d: won by version(s) [%s]", e.Version, strings.Join(vs, ", "))
}

// ErrConflict is matched by errors.Is for every *ConflictError.
var ErrConflict = errors.New("Delta commit conflict")

// Is makes errors.Is(err, ErrConflict) true for a *ConflictError.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorruptLog, fmt.Sprintf(format, args...))
}

// ErrVersionExpired marks a version whose log entries are gone (log
// cleanup removed them): the log cannot rebuild it any more, though it
// existed. *VersionExpiredError names the oldest version it can rebuild.
var ErrVersionExpired = errors.New("Delta version expired from the log")

// VersionExpiredError reports a version older than the oldest the log can
// still rebuild. It matches ErrVersionExpired.
type VersionExpiredError struct {
	Version, Oldest int64
}

func (e *VersionExpiredError) Error() string {
	return fmt.Sprintf("version %d is no longer in the Delta log (cleaned up); the oldest version it can rebuild is %d", e.Version, e.Oldest)
}

// Is makes errors.Is(err, ErrVersionExpired) hold.
func (e *VersionExpiredError) Is(target error) bool { return target == ErrVersionExpired }
