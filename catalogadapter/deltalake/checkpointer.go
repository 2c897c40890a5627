package deltalake

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lakesql/lakesql/tableformat/delta"
)

// checkpointer writes the checkpoints commits are due for off the commit
// path, one at a time per table. A checkpoint rewrites the whole table
// state (every live file); the commit that made it due has landed and need
// not wait, and readers replay a few more log entries until it is there.
type checkpointer struct {
	mu sync.Mutex
	// running holds the table paths with a checkpoint being written; the
	// channel closes when it is done.
	running map[string]chan struct{}
	// failed holds each table's last checkpoint failure until one of its
	// checkpoints succeeds. A failed checkpoint costs readers time, never
	// rows: the provider reports it as degraded health.
	failed map[string]error
	// cleaned is when each table's log was last cleaned up (logcleanup.go).
	cleaned map[string]time.Time
	closed  bool
	wg      sync.WaitGroup
}

// start writes the checkpoint of version in the background, unless one of
// the same table is still being written (a later commit will be due again)
// or the provider is closing; then, with the checkpoint written, cleans up
// the log when cleanup is due (conf is the table's configuration).
// version < 0 cleans up only: the commit wrote its checkpoint itself.
func (c *checkpointer) start(path string, t *delta.Table, version int64, conf map[string]string, cleanup bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.running[path] != nil {
		return
	}
	if c.running == nil {
		c.running, c.failed = map[string]chan struct{}{}, map[string]error{}
	}
	done := make(chan struct{})
	c.running[path] = done
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		var err error
		if version >= 0 {
			if err = t.Checkpoint(context.Background(), version); err != nil {
				err = fmt.Errorf("checkpoint at version %d: %w", version, err)
			}
		}
		if err == nil && cleanup {
			// Log cleanup costs storage when it fails, never rows; it is
			// reported as the checkpoint's failure is, until one succeeds.
			if _, cerr := t.CleanupLog(context.Background(), conf); cerr != nil {
				err = cerr
			}
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.running, path)
		close(done)
		if err != nil {
			c.failed[path] = err
		} else {
			delete(c.failed, path)
		}
	}()
}

// failure is the table's last checkpoint failure, or nil.
func (c *checkpointer) failure(path string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed[path]
}

// waitFor returns once the table's checkpoint being written, if any, is
// done, or when ctx ends. A report of the table's state waits for it, so
// that what it says does not depend on how fast the background ran.
func (c *checkpointer) waitFor(ctx context.Context, path string) error {
	c.mu.Lock()
	done := c.running[path]
	c.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wait returns once the checkpoints being written are done.
func (c *checkpointer) wait() { c.wg.Wait() }

// close waits for the checkpoints being written and starts no more.
func (c *checkpointer) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.wait()
}
