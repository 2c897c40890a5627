package sinkdef

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// pool holds what an engine opens once per configuration and shares
// between its sinks (an Iceberg catalog, a Delta provider for one set of
// storage options), by a key naming that configuration; Close closes them
// all, after the sinks that used them.
//
// Opening one may be network I/O (a REST catalog's first request) that
// takes as long as its timeout: no lock is held meanwhile, so opening or
// using any other configuration goes on; callers wanting the same key
// wait for the one opening it, each for as long as its own context lets it.
type pool[T interface{ Close() error }] struct {
	mu      sync.Mutex
	open    map[string]T
	opening map[string]*opening[T]
	closed  bool
}

// opening is a backend being opened; done is closed when v or err is set.
type opening[T any] struct {
	done chan struct{}
	v    T
	err  error
}

// ErrClosed marks a backend asked for after Close.
var ErrClosed = errors.New("lakesql: the engine is closed")

// ErrInterrupted marks a statement cancelled while it waited (KILL QUERY,
// a closed connection): MySQL's 1317, which a client that retries on 1205
// must not take for a lock wait timeout.
var ErrInterrupted = errors.New("query execution was interrupted")

// get returns the backend of key, made by open on first use. One that
// fails to open is tried again by the next caller.
func (b *pool[T]) get(ctx context.Context, key string, open func() (T, error)) (T, error) {
	var zero T
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return zero, ErrClosed
	}
	if v, ok := b.open[key]; ok {
		b.mu.Unlock()
		return v, nil
	}
	if o, ok := b.opening[key]; ok {
		b.mu.Unlock()
		select {
		case <-o.done:
			return o.v, o.err
		case <-ctx.Done():
			return zero, fmt.Errorf("%w while it waited for another statement to open the same catalog or storage (%w)", ErrInterrupted, ctx.Err())
		}
	}
	o := &opening[T]{done: make(chan struct{})}
	if b.opening == nil {
		b.opening = map[string]*opening[T]{}
	}
	b.opening[key] = o
	b.mu.Unlock()

	v, err := open()

	b.mu.Lock()
	delete(b.opening, key)
	switch {
	case err != nil:
	case b.closed: // closed meanwhile: nothing else will close it
		v.Close()
		v, err = zero, ErrClosed
	default:
		if b.open == nil {
			b.open = map[string]T{}
		}
		b.open[key] = v
	}
	o.v, o.err = v, err
	close(o.done)
	b.mu.Unlock()
	return v, err
}

// close closes every backend.
func (b *pool[T]) close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	var errs []error
	for _, v := range b.open {
		errs = append(errs, v.Close())
	}
	b.open = nil
	return errors.Join(errs...)
}
