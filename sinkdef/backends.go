package sinkdef

// The backends an engine opens: one Delta provider for local tables, the
// Delta providers of object storage (objectstorage.go) and the Iceberg
// catalogs (iceberg.go) its sinks name, and the roots that confine where
// sinks live.

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/lakesql/lakesql/catalogadapter/deltalake"
	"github.com/lakesql/lakesql/internal/storageloc"
	"github.com/lakesql/lakesql/sqlsink"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// DefaultCatalogTimeout bounds each Iceberg catalog call when
// Options.CatalogTimeout is 0.
const DefaultCatalogTimeout = icetable.DefaultTimeout

// Options configure the backends; Resolve makes them absolute and
// canonical.
type Options struct {
	// DataDir is the data directory, absolute: relative locations,
	// the default Iceberg catalog, the sinks' spill and state files.
	DataDir string
	// AllowedRoots confine sink locations; the default is DataDir alone
	// (and TableRoot when it is on object storage). An entry may be an
	// object storage location (s3://bucket/prefix).
	AllowedRoots []string
	// TableRoot is where relative Delta locations go: DataDir when empty,
	// or an object storage location such as s3://bucket/lake.
	TableRoot string
	// Storage holds storage.* options for Delta sinks on object storage
	// that do not set them in WITH; a sink's own options win, key by key.
	Storage map[string]string
	// CatalogTimeout bounds each call to an Iceberg catalog.
	CatalogTimeout time.Duration
	// ReservedFiles are the data directory's own files, by name, which
	// no sink may take.
	ReservedFiles []string
	// Buffers bounds the sinks' open write buffers.
	Buffers *sqlsink.BufferPool
}

// Resolve checks the storage options and returns the options with the
// table root and the allowed roots absolute and canonical.
func (opts Options) Resolve() (Options, error) {
	dir := opts.DataDir
	var err error
	for k, v := range opts.Storage {
		if err := storageloc.CheckOption(k, v); err != nil {
			return opts, fmt.Errorf("lakesql: %w", err)
		}
	}
	switch {
	case opts.TableRoot == "":
		opts.TableRoot = dir
	case storageloc.IsLocation(opts.TableRoot):
		l, err := storageloc.ParseLocation(opts.TableRoot)
		if err != nil {
			return opts, fmt.Errorf("lakesql: table root: %w", err)
		}
		opts.TableRoot = l.String()
	default:
		if opts.TableRoot, err = filepath.Abs(opts.TableRoot); err != nil {
			return opts, err
		}
	}
	if len(opts.AllowedRoots) == 0 {
		opts.AllowedRoots = []string{dir}
		if opts.TableRoot != dir {
			opts.AllowedRoots = append(opts.AllowedRoots, opts.TableRoot)
		}
	}
	roots := make([]string, len(opts.AllowedRoots))
	for i, r := range opts.AllowedRoots {
		if storageloc.IsLocation(r) {
			l, err := storageloc.ParseLocation(r)
			if err != nil {
				return opts, fmt.Errorf("lakesql: allowed root: %w", err)
			}
			roots[i] = l.String()
			continue
		}
		if roots[i], err = filepath.Abs(r); err != nil {
			return opts, err
		}
		// Locations are compared resolved: so are the roots.
		if roots[i], err = canonicalPath(roots[i]); err != nil {
			return opts, fmt.Errorf("lakesql: allowed root: %w", err)
		}
	}
	opts.AllowedRoots = roots
	return opts, nil
}

// Backends opens sinks from their definitions, over the backends it opens
// once and shares between them: safe for concurrent use.
type Backends struct {
	opts     Options
	db       *sql.DB
	provider *deltalake.Provider
	iceberg  pool[*icebergBackend]
	// objectStores are the Delta providers of sinks on object storage.
	objectStores pool[*deltalake.Provider]
}

// New makes the backends over DuckDB db, with opts as Resolve returns
// them.
func New(db *sql.DB, opts Options) *Backends {
	return &Backends{opts: opts, db: db,
		provider: deltalake.New(db, deltalake.Options{BackgroundCheckpoints: true, AllowedRoots: opts.AllowedRoots})}
}

// Close closes the backends, after the sinks that used them.
func (b *Backends) Close() error {
	return errors.Join(b.provider.Close(), b.iceberg.close(), b.objectStores.close())
}
