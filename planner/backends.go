package planner

import (
	"errors"
	"sync"
)

// backends holds what an engine opens once per configuration and shares
// between its sinks (an Iceberg catalog, a Delta provider for one set of
// storage options), by a key naming that configuration; Close closes them
// all, after the sinks that used them.
type backends[T interface{ Close() error }] struct {
	mu     sync.Mutex
	open   map[string]T
	closed bool
}

// get returns the backend of key, made by open on first use. One that
// fails to open is tried again by the next caller.
func (b *backends[T]) get(key string, open func() (T, error)) (T, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var zero T
	if b.closed {
		return zero, errors.New("lakesql: the engine is closed")
	}
	if v, ok := b.open[key]; ok {
		return v, nil
	}
	v, err := open()
	if err != nil {
		return zero, err
	}
	if b.open == nil {
		b.open = map[string]T{}
	}
	b.open[key] = v
	return v, nil
}

// close closes every backend.
func (b *backends[T]) close() error {
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
