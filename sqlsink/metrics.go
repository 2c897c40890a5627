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
	BufferedRows      int64 // rows of the open epoch not yet staged
	BufferedBytes     int64 // their Arrow size
	// CommitSeconds are the durations of the epochs that landed (replays
	// skipped included), by CommitSecondsBuckets; Sum is in seconds.
	CommitSeconds Histogram
	// GroupSizes are the epochs each table version made holds (a group
	// commit's transactions), by GroupSizeBuckets.
	GroupSizes Histogram
}

// CommitSecondsBuckets are the upper bounds, in seconds, of the commit
// durations' buckets: a local Delta commit takes milliseconds, an
// object-store or catalog commit up to seconds.
var CommitSecondsBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// GroupSizeBuckets are the upper bounds of the group sizes' buckets.
var GroupSizeBuckets = []float64{1, 2, 4, 8, 16, 32, 64}

// Histogram counts observations by upper bound.
type Histogram struct {
	Count uint64
	Sum   float64
	// Cumulative[i] counts the observations of at most the i-th bound.
	Cumulative []uint64
}

// The bounds of the live histograms, in the unit they observe.
var (
	commitBucketsNanos = [...]int64{1e6, 2.5e6, 5e6, 1e7, 2.5e7, 5e7, 1e8, 2.5e8, 5e8, 1e9, 2.5e9, 5e9, 1e10, 3e10}
	groupSizeBounds    = [...]int64{1, 2, 4, 8, 16, 32, 64}
)

// histogram is the live, concurrency-safe form of Histogram, over at most
// 16 bounds, which its caller passes.
type histogram struct {
	count, sum atomic.Int64
	buckets    [16]atomic.Int64 // not cumulative
}

func (h *histogram) observe(bounds []int64, v int64) {
	for i, b := range bounds {
		if v <= b {
			h.buckets[i].Add(1)
			break
		}
	}
	h.sum.Add(v)
	h.count.Add(1) // last: a scrape never sees more in the buckets than in the count
}

// snapshot returns the histogram, its sum times unit.
func (h *histogram) snapshot(bounds []int64, unit float64) Histogram {
	out := Histogram{Count: uint64(h.count.Load()), Sum: float64(h.sum.Load()) * unit,
		Cumulative: make([]uint64, len(bounds))}
	var run uint64
	for i := range bounds {
		run += uint64(h.buckets[i].Load())
		out.Cumulative[i] = min(run, out.Count)
	}
	return out
}

// counters is the live, concurrency-safe form of Metrics.
type counters struct {
	rows, bytes, commits, committed, rolledBack, skipped atomic.Int64
	flushes, conflicts, retries, lastVersion             atomic.Int64
	lastCommitNanos                                      atomic.Int64
	bufRows, bufBytes                                    atomic.Int64 // mirrored by the buffer (buffer.publish)
	commitDurations, groupSizes                          histogram
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
		BufferedRows:      c.bufRows.Load(),
		BufferedBytes:     c.bufBytes.Load(),
		CommitSeconds:     c.commitDurations.snapshot(commitBucketsNanos[:], 1e-9),
		GroupSizes:        c.groupSizes.snapshot(groupSizeBounds[:], 1),
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
