package deltalake

import (
	"context"
	"sync"

	"github.com/lakesql/lakesql/tableformat/delta"
)

// checkpointer writes the checkpoints commits are due for off the commit
// path, one at a time per table. A checkpoint rewrites the whole table
// state (every live file); the commit that made it due has landed and need
// not wait, and readers replay a few more log entries until it is there.
type checkpointer struct {
	mu      sync.Mutex
	running map[string]bool // table paths with a checkpoint being written
	closed  bool
	wg      sync.WaitGroup
	// lastErr is the last checkpoint failure, for tests and diagnosis: a
	// failed checkpoint costs readers time, never rows.
	lastErr error
}

// start writes the checkpoint of version in the background, unless one of
// the same table is still being written (a later commit will be due again)
// or the provider is closing.
func (c *checkpointer) start(path string, t *delta.Table, version int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.running[path] {
		return
	}
	if c.running == nil {
		c.running = map[string]bool{}
	}
	c.running[path] = true
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		err := t.Checkpoint(context.Background(), version)
		c.mu.Lock()
		delete(c.running, path)
		if err != nil {
			c.lastErr = err
		}
		c.mu.Unlock()
	}()
}

// wait returns once the checkpoints being written are done, and the last
// error any of them met.
func (c *checkpointer) wait() error {
	c.wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr
}

// close waits for the checkpoints being written and starts no more.
func (c *checkpointer) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.wg.Wait()
}
