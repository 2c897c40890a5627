package planner

// The bound on open sink buffers. Each sink writes through a buffer, an
// embedded DuckDB database that costs about 2.6 MB of memory however
// little it holds: a thousand sinks took a server from 0.4 to 3 GB. The
// engine's sinks share one sqlsink.BufferPool, which keeps at most
// MaxOpenSinks buffers open and releases those unused for SinkIdleTimeout;
// a sink opens its buffer again when it next begins an epoch. The sink
// itself stays open (its last epoch, counters and health), so nothing is
// recovered and every guarantee holds. MySQL's status variable
// Open_tables counts the open buffers of the process.

import (
	"sync/atomic"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"

	"github.com/lakesql/lakesql/sqlsink"
)

// DefaultMaxOpenSinks is how many sinks keep their write buffer open when
// Options.MaxOpenSinks is 0 (about 330 MB of buffers).
const DefaultMaxOpenSinks = 128

// DefaultSinkIdleTimeout releases the buffer of a sink unused that long,
// when Options.SinkIdleTimeout is 0.
const DefaultSinkIdleTimeout = 10 * time.Minute

// openBuffers counts the open sink buffers of every engine of the process,
// which is what the process-wide status variable Open_tables shows.
var openBuffers atomic.Int64

// openTablesStatus is MySQL's status variable for open tables.
const openTablesStatus = "Open_tables"

func countOpenBuffers(delta int) {
	n := openBuffers.Add(int64(delta))
	if gms.StatusVariables != nil && n >= 0 {
		_ = gms.StatusVariables.SetGlobal(openTablesStatus, uint64(n))
	}
}

// startSinkBuffers makes the engine's buffer pool from its options and
// starts the goroutine that releases idle buffers; stop ends it.
func startSinkBuffers(bound int, idle time.Duration) (pool *sqlsink.BufferPool, stop func()) {
	switch {
	case bound == 0:
		bound = DefaultMaxOpenSinks
	case bound < 0:
		bound = 0
	}
	switch {
	case idle == 0:
		idle = DefaultSinkIdleTimeout
	case idle < 0:
		idle = 0
	}
	pool = sqlsink.NewBufferPool(bound, idle, countOpenBuffers)
	if idle == 0 {
		return pool, func() {}
	}
	// Checking four times per idle period releases a buffer at most a
	// quarter period late.
	every := max(idle/4, 10*time.Millisecond)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				pool.ReleaseIdle()
			}
		}
	}()
	return pool, func() { close(done); <-finished }
}

// OpenSinks returns how many of the engine's sinks hold their write buffer
// open: at most Options.MaxOpenSinks, except while more sinks than that
// are in transactions at once.
func (e *Engine) OpenSinks() int { return e.buffers.Open() }
