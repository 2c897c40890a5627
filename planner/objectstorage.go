package planner

// Delta sinks on object storage: s3://, gs:// and azblob:// locations,
// configured by the WITH storage.* options (tableformat/objectstore).

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/lakesql/lakesql/catalogadapter/deltalake"
	"github.com/lakesql/lakesql/tableformat/objectstore"
)

// storagePrefix starts the WITH keys that configure object storage.
const storagePrefix = "storage."

// deltaProviders are the Delta providers of an engine's object storage
// sinks, one per set of storage options (each keeps its stores' circuit
// breakers); local sinks share the engine's own provider.
type deltaProviders struct {
	mu     sync.Mutex
	open   map[string]*deltalake.Provider
	closed bool
}

// deltaProvider returns the provider for the storage options, made on
// first use. Options are checked when the sink is defined (parseOptions).
func (e *Engine) deltaProvider(storage map[string]string) (*deltalake.Provider, error) {
	c := &e.objectStores
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("lakesql: the engine is closed")
	}
	key := catalogKey(storage)
	if p, ok := c.open[key]; ok {
		return p, nil
	}
	opts, err := objectstore.FromProperties(storage)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOption, err)
	}
	opts.CacheDir = filepath.Join(e.opts.DataDir, "cache")
	p := deltalake.New(e.db, deltalake.Options{ObjectStorage: opts})
	if c.open == nil {
		c.open = map[string]*deltalake.Provider{}
	}
	c.open[key] = p
	return p, nil
}

// close closes the providers' stores, after the sinks that used them.
func (c *deltaProviders) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	var errs []error
	for _, p := range c.open {
		errs = append(errs, p.Close())
	}
	c.open = nil
	return errors.Join(errs...)
}

// resolveObjectLocation canonicalises an object storage location. With
// object storage roots among the allowed roots, it must be inside one of
// them; with none, any bucket the credentials reach is allowed (the
// store's own permissions confine it).
func resolveObjectLocation(roots []string, loc string) (string, error) {
	l, err := objectstore.ParseLocation(loc)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrLocation, err)
	}
	if l.Prefix == "" {
		return "", fmt.Errorf("%w: location %q is a bucket root; name a folder in it", ErrLocation, loc)
	}
	p := l.String()
	var objectRoots []string
	for _, r := range roots {
		if objectstore.IsLocation(r) {
			objectRoots = append(objectRoots, r)
		}
	}
	if len(objectRoots) == 0 {
		return p, nil
	}
	for _, r := range objectRoots {
		if strings.HasPrefix(p, strings.TrimSuffix(r, "/")+"/") {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: location %q is outside the allowed roots (%s)", ErrLocation, p, strings.Join(objectRoots, ", "))
}

// maskStorageSecret returns the value SHOW CREATE SINK shows for a
// storage.* option: secrets masked.
func maskStorageSecret(key, value string) (string, bool) {
	if objectstore.IsSecret(key) {
		return objectstore.Mask, true
	}
	return value, false
}
