package sinkdef

// A sink's definition, resolved once: its location, its WITH options
// read, the table it names and the places it writes to; and opening the
// sink it defines.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/internal/storageloc"
	"github.com/lakesql/lakesql/sinkddl"
	"github.com/lakesql/lakesql/sqlsink"
)

// Definition is a CREATE SINK resolved against the backends, kept with
// the sink: its WITH options are read once, here.
type Definition struct {
	cs *sinkddl.CreateSink
	// Path is the resolved location of the table: a Delta table's
	// absolute path, an Iceberg table's namespace.table.
	Path string
	// Table names the table with its format and, for Iceberg, its
	// catalog: one table has at most one sink.
	Table string
	// areas are the canonical places it writes to (sinkAreas), which a
	// new sink must keep clear of.
	areas []sinkArea
	// so is WITH (...) as read, soErr why it does not read: a stored
	// definition that cannot be read fails when it is opened.
	so    sinkOptions
	soErr error
}

// Define resolves a stored definition, whose location path was resolved
// (and its catalog's paths confined) when it was created.
func (b *Backends) Define(cs *sinkddl.CreateSink, path string) *Definition {
	so, err := parseOptions(cs.Format, cs.Options)
	return b.define(cs, path, so, err)
}

// Resolve resolves a new definition: its WITH options must read, its
// location and its catalog's local paths must lie within the allowed
// roots.
func (b *Backends) Resolve(cs *sinkddl.CreateSink) (*Definition, error) {
	so, err := parseOptions(cs.Format, cs.Options)
	if err != nil {
		return nil, err
	}
	path, err := b.resolveTarget(cs, so)
	if err != nil {
		return nil, err
	}
	return b.define(cs, path, so, nil), nil
}

func (b *Backends) define(cs *sinkddl.CreateSink, path string, so sinkOptions, soErr error) *Definition {
	return &Definition{cs: cs, Path: path, Table: b.tableKey(cs, path, so),
		areas: b.sinkAreas(cs, path, so, soErr), so: so, soErr: soErr}
}

// Mode is the WITH mode, "" when it is not set; the error says why the
// options do not read.
func (d *Definition) Mode() (sqlsink.Mode, error) { return d.so.mode, d.soErr }

// Delivery is the WITH delivery, "" when it is not set; the error says
// why the options do not read.
func (d *Definition) Delivery() (sqlsink.Delivery, error) { return d.so.delivery, d.soErr }

// CatalogProperties are an Iceberg definition's catalog properties,
// resolved (catalogProperties) but not confined.
func (b *Backends) CatalogProperties(d *Definition) (map[string]string, error) {
	if d.soErr != nil {
		return nil, d.soErr
	}
	return b.catalogProperties(d.so, false)
}

// tableKey names the table a definition writes to, with its format and,
// for Iceberg, its catalog; path is the resolved location.
func (b *Backends) tableKey(cs *sinkddl.CreateSink, path string, so sinkOptions) string {
	if cs.Format != sinkddl.FormatIceberg {
		// A stored location may predate canonical ones: compare resolved.
		return sinkddl.FormatDelta + "\x00" + canonicalLocation(path)
	}
	props, err := b.catalogProperties(so, false)
	if err != nil {
		props = so.catalog
	}
	return sinkddl.FormatIceberg + "\x00" + b.catalogIdentity(props) + "\x00" + path
}

// resolveTarget resolves a definition's location: a Delta location to an
// absolute path within the allowed roots, an Iceberg one to its canonical
// namespace.table, its catalog's local paths checked against the roots.
func (b *Backends) resolveTarget(cs *sinkddl.CreateSink, so sinkOptions) (string, error) {
	if cs.Format != sinkddl.FormatIceberg {
		p, err := resolveLocation(b.opts.TableRoot, b.opts.AllowedRoots, cs.Location)
		if err != nil || storageloc.IsLocation(p) {
			return p, err
		}
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return "", fmt.Errorf("%w: location %q resolves to %s, which is a file, not a folder", ErrLocation, cs.Location, p)
		}
		return p, nil
	}
	_, path, err := icebergTable(cs.Location)
	if err != nil {
		return "", err
	}
	if _, err := b.catalogProperties(so, true); err != nil {
		return "", err
	}
	return path, nil
}

// Open opens the sink d defines. existing says the definition comes from
// the registry: its table must be there already, or the sink was dropped
// underneath, and a new empty table must not silently replace it.
func (b *Backends) Open(ctx context.Context, d *Definition, existing bool) (*sqlsink.Sink, error) {
	cs, path := d.cs, d.Path
	cfg, err := b.sinkConfig(ctx, d)
	if err != nil {
		return nil, fmt.Errorf("sink %s: %w", cs.Name, err)
	}
	if existing {
		if _, err := cfg.Provider.TableSpec(ctx, cfg.Table); err != nil {
			if errors.Is(err, catalogadapter.ErrNoTable) {
				return nil, fmt.Errorf("sink %s: its table at %s is gone (DROP SINK %s forgets the definition): %w",
					cs.Name, path, sqlquote.MySQLIdent(cs.Name), err)
			}
			return nil, fmt.Errorf("sink %s: %w", cs.Name, err)
		}
	}
	cfg.TempDir = filepath.Join(b.opts.DataDir, "tmp", dirName(cs.Name))
	for _, dir := range []string{cfg.TempDir, cfg.StateDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	s, err := sqlsink.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("sink %s: %w", cs.Name, err)
	}
	if err := s.Open(ctx); err != nil {
		s.Close()
		return nil, err
	}
	if !existing && len(cs.PartitionBy) > 0 {
		spec, err := cfg.Provider.TableSpec(ctx, cfg.Table)
		if err == nil {
			err = samePartitioning(cs.PartitionBy, spec.PartitionSpec)
		}
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("sink %s: %s: %w", cs.Name, path, err)
		}
	}
	return s, nil
}

// dirName names a sink's folder: its lower-cased name when that is plain
// ASCII letters, digits, '_' and '-', else those characters followed by a
// hash of the name, so that no two sinks share a folder and no quote or
// separator reaches a path (DuckDB settings refuse quotes in paths).
func dirName(name string) string {
	lower := strings.ToLower(name)
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, lower)
	if safe == lower {
		return safe
	}
	sum := sha256.Sum256([]byte(lower))
	return safe + "-" + hex.EncodeToString(sum[:4])
}
