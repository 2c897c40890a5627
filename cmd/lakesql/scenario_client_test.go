package main

// The scenario suite's view of a client: whatever carries the statements
// (database/sql over the MySQL wire, the mariadb command-line client, the
// embedded driver), a session runs one statement at a time and reports
// what a user of that client sees, reduced to strings and MySQL codes so
// that the paths can be compared with each other.

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// sqlError is a statement's failure as the client reports it.
type sqlError struct {
	Code    int
	State   string
	Message string
}

func (e *sqlError) Error() string {
	return fmt.Sprintf("ERROR %d (%s): %s", e.Code, e.State, e.Message)
}

// errorCode is the MySQL code of err, 0 when it carries none.
func errorCode(err error) int {
	var se *sqlError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

// session is one connection. Values come back as the text a MySQL client
// shows: NULL as "NULL", numbers as the server formats them.
type session interface {
	// Exec runs a statement and returns the rows it affected.
	Exec(ctx context.Context, query string) (int64, error)
	// Query runs a statement and returns its rows.
	Query(ctx context.Context, query string) ([][]string, error)
	// Close ends the session the polite way.
	Close() error
}

// killable is a session in a process of its own, which Kill ends with
// SIGKILL: nothing of the client gets to say goodbye.
type killable interface {
	session
	Kill() error
}

// errNotApplicable marks a step that has no meaning on a path.
var errNotApplicable = errors.New("not applicable on this path")

// scenarioPath is one way of reaching lakesql: a data directory and the
// means to open sessions on it.
type scenarioPath interface {
	// Name names the path in test output.
	Name() string
	// DataDir is the path's data directory.
	DataDir() string
	// TableRoot is where the path's relative Delta locations go: "" for
	// the data directory, or an s3:// location in the shared versitygw.
	TableRoot() string
	// Open opens a session as root.
	Open(t *testing.T) session
	// OpenAs opens a session as user with password; errNotApplicable
	// where there are no users (the embedded driver).
	OpenAs(t *testing.T, user, password string) (session, error)
	// OpenKillable opens a session in a child process.
	OpenKillable(t *testing.T) killable
	// Restart stops lakesql (the server, or the embedded engine) and
	// starts it again on the same data directory. Sessions opened before
	// must be closed first.
	Restart(t *testing.T)
}
