package planner

// A COMMIT over several sinks commits them one after the other (txn.commit):
// when one fails, the sinks before it have committed and stay so, and it
// and the sinks after it are rolled back. The error says which is which
// and how to finish the transaction. Making it atomic is later work.

import (
	"fmt"
	"strings"
)

// LandedSink is a sink a partial COMMIT committed.
type LandedSink struct {
	Name  string
	Epoch int64
	// Version is the table version the commit made (an Iceberg snapshot
	// id); Replayed: the table already held the epoch, nothing was written.
	Version  int64
	Replayed bool
}

// PartialCommitError is a COMMIT of a transaction that wrote several
// sinks and did not commit all of them. It unwraps to the failure, whose
// MySQL error code it keeps.
type PartialCommitError struct {
	// Landed are the sinks that committed, in commit order; NotCommitted
	// the sinks rolled back: the one that failed and the ones after it.
	Landed       []LandedSink
	NotCommitted []string
	// Epoch is the transaction's lakesql_epoch, or -1 when each sink
	// numbered its own.
	Epoch int64
	// ReplaySafe: replaying the whole transaction with SET lakesql_epoch
	// = Epoch finishes it (every landed sink skips a replayed epoch).
	ReplaySafe bool
	Err        error
}

func (e *PartialCommitError) Unwrap() error { return e.Err }

func (e *PartialCommitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "COMMIT did not finish: %v. ", e.Err)
	if len(e.Landed) == 0 {
		b.WriteString("No sink committed")
	} else {
		b.WriteString("Committed: ")
		for i, l := range e.Landed {
			if i > 0 {
				b.WriteString(", ")
			}
			if l.Replayed {
				fmt.Fprintf(&b, "%s (already held epoch %d)", l.Name, l.Epoch)
			} else {
				fmt.Fprintf(&b, "%s (table version %d, epoch %d)", l.Name, l.Version, l.Epoch)
			}
		}
	}
	fmt.Fprintf(&b, "; not committed (rolled back): %s. ", strings.Join(e.NotCommitted, ", "))
	switch {
	case len(e.Landed) == 0:
		b.WriteString("The transaction wrote nothing: run it again")
	case e.ReplaySafe:
		fmt.Fprintf(&b, "To finish, run the same transaction again after SET %s = %d: the sinks that hold epoch %d skip it, the others commit it",
			EpochVariable, e.Epoch, e.Epoch)
	default:
		fmt.Fprintf(&b, "To finish, run again only the statements that wrote to %s (running the whole transaction again would write the committed sinks twice: set %s before BEGIN to make a transaction replayable)",
			strings.Join(e.NotCommitted, ", "), EpochVariable)
	}
	return b.String()
}
