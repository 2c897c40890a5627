package delta

import (
	"context"
	"fmt"
	"runtime"
	"sync"
)

// replayWindow is how many commit files, per worker, may be read and
// decoded ahead of the one being applied: it bounds what waits in memory.
const replayWindow = 4

// decodedCommit is one commit file as a worker read and decoded it.
type decodedCommit struct {
	data    []byte
	actions []Action
	keys    []string // fileKeys of actions
	err     error
	done    chan struct{}
}

// replayCommits reads and decodes the commit files on up to GOMAXPROCS
// workers and applies them to st one by one in version order, so that
// replay, and the error it stops at (the first failing commit by
// version), are what reading them one after another would give. It
// returns the entry of the last commit.
func (t *Table) replayCommits(ctx context.Context, commits []logFile, st *logState) ([]byte, error) {
	workers := min(runtime.GOMAXPROCS(0), len(commits))
	if workers <= 1 {
		var last []byte
		for _, c := range commits {
			data, actions, err := t.decodeCommit(ctx, c)
			if err != nil {
				return nil, err
			}
			if err := st.apply(c.version, actions, false); err != nil {
				return nil, err
			}
			last = data
		}
		return last, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	results := make([]decodedCommit, len(commits))
	for i := range results {
		results[i].done = make(chan struct{})
	}
	ahead := make(chan struct{}, replayWindow*workers) // a slot per commit decoded and not yet applied
	next := make(chan int)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(next)
		for i := range commits {
			select {
			case ahead <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	})
	for range workers {
		wg.Go(func() {
			for i := range next {
				r := &results[i]
				r.data, r.actions, r.err = t.decodeCommit(ctx, commits[i])
				if r.err == nil {
					r.keys = fileKeys(st.root, r.actions)
				}
				close(r.done)
			}
		})
	}
	defer func() {
		cancel() // stops the feeder, so the workers end
		wg.Wait()
	}()
	var last []byte
	for i, c := range commits {
		r := &results[i]
		select {
		case <-r.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if r.err != nil {
			return nil, r.err
		}
		if err := st.applyKeyed(c.version, r.actions, r.keys, false); err != nil {
			return nil, err
		}
		last = r.data
		results[i] = decodedCommit{} // the state holds what it needs
		<-ahead
	}
	return last, nil
}

// decodeCommit reads a commit file, unless the listing brought it, and
// decodes its actions.
func (t *Table) decodeCommit(ctx context.Context, c logFile) ([]byte, []Action, error) {
	data := c.data
	if data == nil {
		var err error
		if data, err = t.store.Get(ctx, c.key); err != nil {
			return nil, nil, fmt.Errorf("read commit %d: %w", c.version, err)
		}
	}
	actions, err := parseCommit(c.version, data)
	return data, actions, err
}
