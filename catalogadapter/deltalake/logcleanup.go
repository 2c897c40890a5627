package deltalake

import (
	"time"

	"github.com/lakesql/lakesql/tableformat/delta"
)

// logCleanupInterval spaces a table's log cleanups: each lists the whole
// log, and entries expire by the day, so after every checkpoint (every 10
// commits by default) would be listing for nothing.
const logCleanupInterval = time.Hour

// afterCommit starts what a landed commit is due for, off the commit path:
// the checkpoint the commit left to the background, and log cleanup once
// a checkpoint is written (delta.CleanupLog: the entries older than
// delta.logRetentionDuration and below a checkpoint go).
func (p *Provider) afterCommit(tpath string, t *delta.Table, on *delta.Snapshot, res delta.CommitResult) {
	if !res.CheckpointDue && !res.Checkpointed {
		return
	}
	conf := on.Metadata.Configuration
	if res.Snapshot != nil {
		conf = res.Snapshot.Metadata.Configuration
	}
	cleanup := p.checkpoints.cleanupDue(tpath, p.opts.Now())
	switch {
	case res.CheckpointDue:
		p.checkpoints.start(tpath, t, res.Version, conf, cleanup)
	case cleanup:
		p.checkpoints.start(tpath, t, -1, conf, true)
	}
}

// cleanupDue tells whether the table's log is due for cleanup at now, and
// if so notes that it is being cleaned.
func (c *checkpointer) cleanupDue(path string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if last, ok := c.cleaned[path]; ok && now.Sub(last) < logCleanupInterval && now.After(last) {
		return false
	}
	if c.cleaned == nil {
		c.cleaned = map[string]time.Time{}
	}
	c.cleaned[path] = now
	return true
}
