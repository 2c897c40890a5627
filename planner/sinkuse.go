package planner

// A sink's metadata lock, as MySQL's: a transaction that keeps rows for a
// group commit (groupcommit.go) holds no write lock on the sink, but it
// shares its metadata lock until it ends, so ALTER SINK and DROP SINK wait
// for it, and the transactions that arrive after such a statement began
// waiting wait behind it rather than starve it.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// sinkUse counts the transactions that share a sink's metadata, and the
// statement that wants it alone.
type sinkUse struct {
	mu        sync.Mutex
	users     int
	exclusive bool
	changed   chan struct{} // closed and replaced at each change
}

// wait waits for the next change, at most until deadline or ctx ends.
// u.mu is held, and is again when it returns.
func (u *sinkUse) wait(ctx context.Context, deadline *time.Timer, what string) error {
	if u.changed == nil {
		u.changed = make(chan struct{})
	}
	ch := u.changed
	u.mu.Unlock()
	defer u.mu.Lock()
	select {
	case <-ch:
		return nil
	case <-deadline.C:
		return fmt.Errorf("%w: sink %s", errSinkBusy, what)
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%w: sink %s (%w)", errSinkBusy, what, ctx.Err())
		}
		return fmt.Errorf("%w while it waited for sink %s (%w)", errInterrupted, what, ctx.Err())
	}
}

// signal wakes the waiters. u.mu is held.
func (u *sinkUse) signal() {
	if u.changed != nil {
		close(u.changed)
		u.changed = nil
	}
}

// share joins the sink's users, waiting for a statement that has it alone.
func (h *sinkHandle) share(ctx context.Context) error {
	u := &h.use
	u.mu.Lock()
	defer u.mu.Unlock()
	var timer *time.Timer
	for u.exclusive {
		if timer == nil {
			timer = time.NewTimer(h.engine.opts.LockWaitTimeout)
			defer timer.Stop()
		}
		if err := u.wait(ctx, timer, h.rec.Name); err != nil {
			return err
		}
	}
	u.users++
	return nil
}

// unshare leaves the sink's users.
func (h *sinkHandle) unshare() {
	u := &h.use
	u.mu.Lock()
	u.users--
	u.signal()
	u.mu.Unlock()
}

// acquireAlone makes the caller the sink's only user and writer, for a
// statement that changes or drops its definition: it waits for the
// transactions that share it to end (none joins meanwhile), then for its
// write lock. release with releaseAlone.
func (h *sinkHandle) acquireAlone(ctx context.Context) error {
	u := &h.use
	u.mu.Lock()
	timer := time.NewTimer(h.engine.opts.LockWaitTimeout)
	defer timer.Stop()
	for u.exclusive {
		if err := u.wait(ctx, timer, h.rec.Name); err != nil {
			u.mu.Unlock()
			return err
		}
	}
	u.exclusive = true
	for u.users > 0 {
		if err := u.wait(ctx, timer, h.rec.Name); err != nil {
			u.exclusive = false
			u.signal()
			u.mu.Unlock()
			return err
		}
	}
	u.mu.Unlock()
	if err := h.acquire(ctx); err != nil {
		h.endAlone()
		return err
	}
	return nil
}

// releaseAlone ends acquireAlone.
func (h *sinkHandle) releaseAlone() {
	h.release()
	h.endAlone()
}

func (h *sinkHandle) endAlone() {
	u := &h.use
	u.mu.Lock()
	u.exclusive = false
	u.signal()
	u.mu.Unlock()
}
