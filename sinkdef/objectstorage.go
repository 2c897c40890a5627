package sinkdef

// Delta sinks on object storage: s3://, gs:// and azblob:// locations,
// configured by the WITH storage.* options (tableformat/objectstore).

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/lakesql/lakesql/catalogadapter/deltalake"
	"github.com/lakesql/lakesql/internal/storageloc"
	"github.com/lakesql/lakesql/tableformat/objectstore"
)

// storagePrefix starts the WITH keys that configure object storage.
const storagePrefix = "storage."

// deltaProvider returns the Delta provider for the storage options, made
// on first use (b.objectStores, one per set of options: each keeps its
// stores' circuit breakers; local sinks share b.provider). Options are checked when the sink is defined
// (parseOptions).
func (b *Backends) deltaProvider(storage map[string]string) (*deltalake.Provider, error) {
	// Nothing here does I/O: no context to heed while another opens.
	return b.objectStores.get(context.Background(), catalogKey(storage), func() (*deltalake.Provider, error) {
		opts, err := objectstore.FromProperties(storage)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrOption, err)
		}
		opts.CacheDir = filepath.Join(b.opts.DataDir, "cache")
		return deltalake.New(b.db, deltalake.Options{ObjectStorage: opts, BackgroundCheckpoints: true, AllowedRoots: b.opts.AllowedRoots}), nil
	})
}

// resolveObjectLocation canonicalises an object storage location. With
// object storage roots among the allowed roots, it must be inside one of
// them; with none, any bucket the credentials reach is allowed (the
// store's own permissions confine it).
func resolveObjectLocation(roots []string, loc string) (string, error) {
	l, err := storageloc.ParseLocation(loc)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrLocation, err)
	}
	if l.Prefix == "" {
		return "", fmt.Errorf("%w: location %q is a bucket root; name a folder in it", ErrLocation, loc)
	}
	p := l.String()
	return p, withinObjectRoots(roots, p)
}

// withinObjectRoots checks a canonical object storage location (p) against
// the object storage roots among roots; with none, anything is allowed.
func withinObjectRoots(roots []string, p string) error {
	var objectRoots []string
	for _, r := range roots {
		if storageloc.IsLocation(r) {
			objectRoots = append(objectRoots, r)
		}
	}
	if len(objectRoots) == 0 {
		return nil
	}
	for _, r := range objectRoots {
		if r = strings.TrimSuffix(r, "/"); p == r || strings.HasPrefix(p, r+"/") {
			return nil
		}
	}
	return fmt.Errorf("%w: location %q is outside the allowed roots (%s)", ErrLocation, p, strings.Join(objectRoots, ", "))
}

// maskStorageSecret returns the value SHOW CREATE SINK shows for a
// storage.* option: secrets masked, and a password inside the endpoint's
// URL; masked says the value changed.
func maskStorageSecret(key, value string) (shown string, masked bool) {
	if !strings.HasPrefix(key, storagePrefix) {
		return value, false
	}
	shown = storageloc.ShownValue(key, value)
	return shown, shown != value
}
