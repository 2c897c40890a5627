package sqlsink

import (
	"sync/atomic"
	"time"
)

// Metrics are a sink's counters since it was opened.
type Metrics struct {
	RowsWritten       int64 // rows committed to the table
	BytesWritten      int64 // bytes of data files committed
	Commits           int64 // table versions made
	EpochsCommitted   int64
	EpochsRolledBack  int64
	EpochsSkipped     int64
	Flushes           int64 // staging runs before commit
	Conflicts         int64 // commits that had to redo their merge
	Retries           int64 // lost commit races retried by the backend
	LastVersion       int64
	LastCommitSeconds float64
}

// counters is the live, concurrency-safe form of Metrics.
type counters struct {
	rows, bytes, commits, committed, rolledBack, skipped atomic.Int64
	flushes, conflicts, retries, lastVersion             atomic.Int64
	lastCommitNanos                                      atomic.Int64
}

func (c *counters) snapshot() Metrics {
	return Metrics{
		RowsWritten:       c.rows.Load(),
		BytesWritten:      c.bytes.Load(),
		Commits:           c.commits.Load(),
		EpochsCommitted:   c.committed.Load(),
		EpochsRolledBack:  c.rolledBack.Load(),
		EpochsSkipped:     c.skipped.Load(),
		Flushes:           c.flushes.Load(),
		Conflicts:         c.conflicts.Load(),
		Retries:           c.retries.Load(),
		LastVersion:       c.lastVersion.Load(),
		LastCommitSeconds: time.Duration(c.lastCommitNanos.Load()).Seconds(),
	}
}

// Capabilities say what a sink, as configured, does.
type Capabilities struct {
	ExactlyOnce     bool
	TwoPhaseCommit  bool // PreCommit stages invisibly, CommitEpoch publishes
	Upsert          bool
	Changelog       bool // accepts _op rows (deletes need upsert mode)
	Partitioned     bool
	SchemaEvolution bool
}
