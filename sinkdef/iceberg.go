package sinkdef

// Iceberg sinks. Their location is a table of an Iceberg catalog,
// 'namespace.table', not a path, so the allowed roots do not apply to it;
// they confine the catalog.warehouse (local, or on object storage when
// they list object storage roots) and a local SQLite catalog file instead.
// The catalog is the one the WITH catalog.* options describe (the prefix
// removed), by default iceberg-go's SQL catalog on DATA/iceberg/
// catalog.db with tables under DATA/iceberg/warehouse. Catalogs open on the
// first sink that needs them, one per set of properties, and serve every
// sink that names the same set.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/apacheiceberg"
	"github.com/lakesql/lakesql/internal/bytesize"
	"github.com/lakesql/lakesql/internal/storageloc"
	"github.com/lakesql/lakesql/sinkddl"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// catalogPrefix starts the WITH keys that are Iceberg catalog properties.
const catalogPrefix = "catalog."

// icebergBackend is one open catalog and the provider over it.
type icebergBackend struct {
	cat      *icetable.Catalog
	provider *apacheiceberg.Provider
}

// Close closes the catalog.
func (b *icebergBackend) Close() error { return b.cat.Close() }

// catalogKey names a set of catalog properties; the values stay in memory
// (they may be secrets).
func catalogKey(props map[string]string) string {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + props[k] + "\x00")
	}
	return b.String()
}

// catalogIdentity tells catalogs apart for "one table, one sink": the
// type and uri (for a SQLite catalog its file, canonical, however the uri
// spells it, the default one's when it has none) and, beyond SQL catalogs,
// the warehouse, by which a REST server, say, names one of its catalogs.
// A SQL catalog's warehouse only says where new tables go: two sinks with
// different warehouses share its tables. props are resolved
// (catalogProperties).
func (b *Backends) catalogIdentity(props map[string]string) string {
	typ := strings.ToLower(props["type"])
	if typ == "" || typ == "sql" {
		if props["uri"] == "" {
			return "sql\x00file\x00" + canonicalLocation(filepath.Join(b.opts.DataDir, "iceberg", "catalog.db"))
		}
		if f, err := sqliteCatalogFile(props); err == nil && f != "" {
			return "sql\x00file\x00" + f
		}
		return "sql\x00" + props["uri"]
	}
	return typ + "\x00" + props["uri"] + "\x00" + props["warehouse"]
}

// icebergProvider returns the provider of the catalog props describe,
// opening the catalog on first use (b.iceberg, by catalogKey).
func (b *Backends) icebergProvider(ctx context.Context, props map[string]string) (*apacheiceberg.Provider, error) {
	ib, err := b.iceberg.get(ctx, catalogKey(props), func() (*icebergBackend, error) {
		if file, err := sqliteCatalogFile(props); err == nil && file != "" {
			// SQLite creates the file, not its folder.
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrCatalog, err)
			}
		}
		// The engine's storage.cache_max_bytes bounds Iceberg's cache too
		// (checked when the engine opened).
		maxBytes, _ := bytesize.Parse(b.opts.Storage[storageloc.KeyCacheMaxBytes])
		cat, err := icetable.OpenCatalog(ctx, icetable.CatalogConfig{DataDir: b.opts.DataDir, Properties: props,
			CacheMaxBytes: maxBytes, Timeout: b.opts.CatalogTimeout})
		if errors.Is(err, icetable.ErrTimeout) {
			return nil, fmt.Errorf("%w: %w", catalogadapter.ErrTimeout, err)
		}
		if err != nil {
			// The catalog's own errors never show its secrets.
			return nil, fmt.Errorf("%w: %w", ErrCatalog, err)
		}
		return &icebergBackend{cat: cat, provider: apacheiceberg.New(cat, apacheiceberg.Options{AllowedRoots: b.opts.AllowedRoots})}, nil
	})
	if err != nil {
		return nil, err
	}
	return ib.provider, nil
}

// ErrCatalog marks an Iceberg catalog that cannot be opened with the
// sink's catalog.* options: a sink that cannot be configured (1210).
var ErrCatalog = errors.New("Iceberg catalog unavailable")

// icebergTable reads an Iceberg location, 'namespace.table' (or
// 'ns1.ns2.table'), and returns its identifier and canonical spelling.
func icebergTable(loc string) (catalogadapter.TableIdent, string, error) {
	id, err := apacheiceberg.ParseIdent(loc)
	if err != nil {
		return id, "", fmt.Errorf("%w: %w", ErrLocation, err)
	}
	// Catalogs keep namespaces and tables as folders of the warehouse.
	for _, part := range append(slices.Clone(id.Namespace), id.Name) {
		if strings.ContainsAny(part, `/\`) {
			return id, "", fmt.Errorf("%w: Iceberg table %q: %q holds a path separator", ErrLocation, loc, part)
		}
		if len(part) > maxNameBytes {
			return id, "", fmt.Errorf("%w: Iceberg table %q: a part is %d bytes long, more than %d", ErrLocation, loc, len(part), maxNameBytes)
		}
	}
	return id, id.String(), nil
}

// catalogProperties resolves the catalog.* options (prefix removed) for
// the catalog: a relative local warehouse or SQLite file resolves under
// the data directory. With confine, a local one outside the allowed roots
// is refused, as a Delta location would be: CREATE SINK checks it, while a
// definition read back from the registry keeps what was accepted then.
func (b *Backends) catalogProperties(so sinkOptions, confine bool) (map[string]string, error) {
	props := make(map[string]string, len(so.catalog))
	for k, v := range so.catalog {
		props[k] = v
	}
	if w, ok := props["warehouse"]; ok {
		p, local, err := b.localPath(w, confine)
		if err != nil {
			return nil, fmt.Errorf("option catalog.warehouse: %w", err)
		}
		if local {
			props["warehouse"] = (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
		}
	}
	if err := b.confineCatalogPaths(props, confine); err != nil {
		return nil, err
	}
	return props, nil
}

// localPath resolves a path or file: URI against the data directory; other
// URIs (s3://, http://, ...) are not local and are returned unchanged,
// after an object storage one is checked, with confine, against the object
// storage roots among the allowed roots.
func (b *Backends) localPath(s string, confine bool) (string, bool, error) {
	p := s
	if u, err := url.Parse(s); err == nil && len(u.Scheme) > 1 {
		if u.Scheme != "file" {
			if confine && storageloc.IsLocation(s) {
				l, err := storageloc.ParseLocation(s)
				if err != nil {
					return "", false, fmt.Errorf("%w: %w", ErrLocation, err)
				}
				return s, false, withinObjectRoots(b.opts.AllowedRoots, l.String())
			}
			return s, false, nil
		}
		p = u.Path
	}
	if !confine {
		if !filepath.IsAbs(p) {
			p = filepath.Join(b.opts.DataDir, p)
		}
		return canonicalLocation(filepath.Clean(p)), true, nil
	}
	r, err := resolveLocation(b.opts.DataDir, b.opts.AllowedRoots, p)
	return r, true, err
}

// icebergSchema is the sink's schema as an Iceberg table stores it (small
// integers widened, see apacheiceberg.StoredSchema), so that a sink that
// creates its table matches it; column comments become the fields' docs.
func icebergSchema(cols []sinkddl.ColumnDef) (*arrow.Schema, error) {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.Name, Type: c.Type, Nullable: !c.NotNull}
		if c.Comment != "" {
			fields[i].Metadata = arrow.NewMetadata([]string{"comment"}, []string{c.Comment})
		}
	}
	s, err := apacheiceberg.StoredSchema(arrow.NewSchema(fields, nil))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", sinkddl.ErrUnsupportedType, err)
	}
	return s, nil
}

// Shown is the definition as SHOW CREATE SINK shows it: the
// storage.* secrets and the secrets among catalog.* values masked (tableformat/iceberg decides what
// a secret is: tokens, passwords, keys, credentials, passwords in URIs).
// The registry keeps the real values, to open the catalog again.
func Shown(def *sinkddl.CreateSink) string {
	c := *def
	c.IfNotExists = false
	c.Options = slices.Clone(def.Options)
	for i, o := range c.Options {
		if v, masked := maskStorageSecret(o.Key, o.Value); masked {
			c.Options[i].Value, c.Options[i].Kind = v, sinkddl.OptionString
			continue
		}
		k, ok := strings.CutPrefix(o.Key, catalogPrefix)
		if !ok {
			continue
		}
		if v := icetable.RedactProperties(map[string]string{k: o.Value})[k]; v != o.Value {
			c.Options[i].Value, c.Options[i].Kind = v, sinkddl.OptionString
		}
	}
	return c.String()
}
