// Package deltalake is the Delta Lake backend of catalogadapter for
// path-based tables, on the local file system or on object storage
// (s3://, gs://, azblob:// through tableformat/objectstore). The table log
// is read and written by tableformat/delta; DuckDB writes and reads the
// Parquet files.
package deltalake

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/storageloc"
	"github.com/lakesql/lakesql/tableformat/delta"
	"github.com/lakesql/lakesql/tableformat/objectstore"
)

// Compile-time checks: the contract, and the optional interfaces callers
// look for (RowCounter is checked in rowcount.go).
var (
	_ catalogadapter.Provider         = (*Provider)(nil)
	_ catalogadapter.Creator          = (*Provider)(nil)
	_ catalogadapter.Scanner          = (*Provider)(nil)
	_ catalogadapter.HealthChecker    = (*Provider)(nil)
	_ catalogadapter.ArrowStager      = (*Provider)(nil)
	_ catalogadapter.CredentialVendor = (*Provider)(nil)
)

// Defaults of Options fields left at zero.
const (
	DefaultMaxRetries  = 20
	DefaultBaseBackoff = 10 * time.Millisecond
	DefaultMaxBackoff  = 2 * time.Second
)

// Options tune a Provider. Zero values select the defaults.
type Options struct {
	// Now is the clock for commit times, txn and tombstone timestamps and
	// credential expiry; time.Now when nil. Tests pin it.
	Now func() time.Time
	// MaxRetries bounds the commit retries after lost races (default 20);
	// CommitOptions.MaxRetries overrides it per commit.
	MaxRetries int
	// BaseBackoff and MaxBackoff bound the exponential backoff between
	// retries (defaults 10ms and 2s).
	BaseBackoff, MaxBackoff time.Duration
	// TargetFileSize is the Parquet file size staged writes aim at
	// (0: delta.DefaultTargetFileSize).
	TargetFileSize int64
	// CheckpointInterval is written as delta.checkpointInterval into tables
	// this provider creates, unless their properties set it (0: the table
	// default).
	CheckpointInterval int
	// ObjectStorage configures the tables on object storage; its zero
	// value takes credentials and region from the environment.
	ObjectStorage objectstore.Options
	// WrapStorage, when set, wraps every table's storage: a place for
	// instrumentation, and for tests to inject storage faults.
	WrapStorage func(delta.Storage) delta.Storage
	// BackgroundCheckpoints writes the checkpoints commits are due for
	// after Commit returns, one at a time per table, instead of inside it;
	// Close waits for them. A checkpoint re-reads and rewrites the table's
	// state: for a small commit, several times the commit's own work.
	BackgroundCheckpoints bool
	// AllowedRoots are where, besides a table's own location, the data
	// files and deletion vectors its log names may be: absolute local
	// directories and canonical object storage locations. A table whose
	// log names a file anywhere else is refused (delta.ErrPathOutsideTable).
	AllowedRoots []string
}

// Provider serves Delta tables named by their absolute directory path. Any
// number of providers, in any number of processes, may write the same table:
// the log's put-if-absent commits arbitrate. The only table state it keeps
// is the last snapshot of each table, which is checked against the log
// before every use, so it never answers with an older version than a fresh
// read would.
type Provider struct {
	db    *sql.DB
	opts  Options
	creds *catalogadapter.CredentialCache
	snaps snapshotCache

	// stores holds the open object stores by location: each keeps its
	// circuit breaker, which must outlive a single call.
	storesMu sync.Mutex
	stores   map[string]*objectstore.Store

	checkpoints checkpointer
	// vacuums remembers each table's oldest version after its last VACUUM.
	vacuums vacuumCache

	// noCache makes every read replay the log from its checkpoint, as
	// before the cache; the benchmarks compare the two.
	noCache bool

	// beforeCommit, when set by a test, runs after an attempt has read its
	// snapshot and built its actions, just before it writes the log entry:
	// a hook to force races deterministically.
	beforeCommit func(attempt int)
}

// New returns a provider that writes and reads Parquet through db, a DuckDB
// handle (driver "duckdb", built with the duckdb_arrow tag).
func New(db *sql.DB, opts Options) *Provider {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxRetries <= 0 {
		opts.MaxRetries = DefaultMaxRetries
	}
	if opts.BaseBackoff <= 0 {
		opts.BaseBackoff = DefaultBaseBackoff
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = DefaultMaxBackoff
	}
	if opts.MaxBackoff < opts.BaseBackoff {
		opts.MaxBackoff = opts.BaseBackoff
	}
	p := &Provider{db: db, opts: opts}
	p.creds = catalogadapter.NewLocalCredentialCache(opts.Now)
	return p
}

// tablePath checks that id names a path-based table: an absolute, clean
// directory path, or an object storage location (returned in canonical
// form), and nothing else. Relative paths are refused because they would
// resolve against whatever the process's working directory is.
func tablePath(id catalogadapter.TableIdent) (string, error) {
	if err := id.Validate(); err != nil {
		return "", err
	}
	if id.Catalog != "" || len(id.Namespace) > 0 {
		return "", fmt.Errorf("%w: Delta tables are named by path alone, got catalog %q and namespace %q",
			catalogadapter.ErrInvalid, id.Catalog, id.Namespace)
	}
	p := id.Name
	if storageloc.IsLocation(p) {
		loc, err := storageloc.ParseLocation(p)
		if err != nil {
			return "", fmt.Errorf("%w: %w", catalogadapter.ErrInvalid, err)
		}
		if loc.Prefix == "" {
			return "", fmt.Errorf("%w: table location %q is a bucket root; name a folder in it", catalogadapter.ErrInvalid, p)
		}
		return loc.String(), nil
	}
	switch {
	case !filepath.IsAbs(p):
		return "", fmt.Errorf("%w: table path %q is not absolute", catalogadapter.ErrInvalid, p)
	case filepath.Clean(p) != p:
		return "", fmt.Errorf("%w: table path %q is not clean (want %q)", catalogadapter.ErrInvalid, p, filepath.Clean(p))
	case filepath.Dir(p) == p:
		return "", fmt.Errorf("%w: table path %q is the file system root", catalogadapter.ErrInvalid, p)
	}
	return p, nil
}

// table returns the Delta table at id's location.
func (p *Provider) table(id catalogadapter.TableIdent) (*delta.Table, string, error) {
	path, err := tablePath(id)
	if err != nil {
		return nil, "", err
	}
	var store delta.Storage
	if storageloc.IsLocation(path) {
		if store, err = p.objectStore(path); err != nil {
			return nil, "", err
		}
	} else if store, err = delta.NewLocalStorage(path); err != nil {
		return nil, "", fmt.Errorf("%w: %w", catalogadapter.ErrInvalid, err)
	}
	if p.opts.WrapStorage != nil {
		store = p.opts.WrapStorage(store)
	}
	return delta.OpenTable(store, delta.TableOptions{AllowedRoots: p.opts.AllowedRoots, Now: p.opts.Now}), path, nil
}

// objectStore returns the open store of loc, opening it on first use.
func (p *Provider) objectStore(loc string) (*objectstore.Store, error) {
	p.storesMu.Lock()
	defer p.storesMu.Unlock()
	if s, ok := p.stores[loc]; ok {
		return s, nil
	}
	s, err := objectstore.Open(context.Background(), loc, p.opts.ObjectStorage)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", catalogadapter.ErrInvalid, err)
	}
	if p.stores == nil {
		p.stores = map[string]*objectstore.Store{}
	}
	p.stores[loc] = s
	return s, nil
}

// Health implements catalogadapter.HealthChecker: a table on object
// storage is degraded while its store's circuit breaker is open, and any
// table while its last background checkpoint has failed (its readers
// replay more of the log until one succeeds).
func (p *Provider) Health(id catalogadapter.TableIdent) (degraded bool, reason string) {
	path, err := tablePath(id)
	if err != nil {
		return false, ""
	}
	p.storesMu.Lock()
	s := p.stores[path]
	p.storesMu.Unlock()
	if s != nil {
		if h := s.Health(); h.Degraded {
			return true, h.Reason
		}
	}
	if err := p.checkpoints.failure(path); err != nil {
		return true, err.Error()
	}
	return false, ""
}

// Close waits for the checkpoints being written in the background and
// releases the object stores.
func (p *Provider) Close() error {
	p.checkpoints.close()
	p.storesMu.Lock()
	defer p.storesMu.Unlock()
	var errs []error
	for _, s := range p.stores {
		errs = append(errs, s.Close())
	}
	p.stores = nil
	return errors.Join(errs...)
}

// latest opens the newest snapshot of the table at id.
func (p *Provider) latest(ctx context.Context, id catalogadapter.TableIdent) (*delta.Table, *delta.Snapshot, error) {
	t, path, err := p.table(id)
	if err != nil {
		return nil, nil, err
	}
	snap, err := p.fresh(ctx, t, path)
	if err != nil {
		return nil, nil, readError(path, err)
	}
	return t, snap, nil
}

// fresh returns the newest snapshot of t: the cached one brought up to
// date (Table.Update: two small reads when nothing changed, the new commits
// applied when something did), or a replay from the checkpoint. Errors are
// delta's; callers map them with readError.
func (p *Provider) fresh(ctx context.Context, t *delta.Table, path string) (*delta.Snapshot, error) {
	if p.noCache {
		return t.Latest(ctx)
	}
	prev := p.snaps.get(path)
	snap, err := t.Update(ctx, prev)
	if err != nil {
		p.snaps.drop(path, prev)
		return nil, err
	}
	p.snaps.put(path, prev, snap)
	return snap, nil
}

// maxCachedTables bounds the snapshot cache; past it an arbitrary table's
// snapshot is dropped (and read again from the log when next needed).
const maxCachedTables = 1024

// snapshotCache holds the last snapshot per table path. Snapshots are
// immutable, so they are shared without copying.
type snapshotCache struct {
	mu sync.Mutex
	m  map[string]*delta.Snapshot
}

func (c *snapshotCache) get(path string) *delta.Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[path]
}

// put stores snap, derived from prev, unless another caller meanwhile
// stored a newer version.
func (c *snapshotCache) put(path string, prev, snap *delta.Snapshot) {
	if snap == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cur, ok := c.m[path]
	if ok && cur != prev && cur.Version >= snap.Version {
		return
	}
	if c.m == nil {
		c.m = map[string]*delta.Snapshot{}
	}
	if !ok && len(c.m) >= maxCachedTables {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[path] = snap
}

// set stores snap whatever is cached.
func (c *snapshotCache) set(path string, snap *delta.Snapshot) {
	c.mu.Lock()
	cur := c.m[path]
	c.mu.Unlock()
	c.put(path, cur, snap)
}

// drop forgets path's snapshot if it is still prev.
func (c *snapshotCache) drop(path string, prev *delta.Snapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m[path] == prev {
		delete(c.m, path)
	}
}

// readError maps a delta read error to the catalogadapter sentinels,
// keeping the delta error in the chain.
func readError(path string, err error) error {
	switch {
	case errors.Is(err, delta.ErrNotATable), errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("open Delta table %s: %w: %w", path, catalogadapter.ErrNoTable, err)
	case errors.Is(err, delta.ErrUnsupportedFeature):
		return fmt.Errorf("open Delta table %s: %w: %w", path, catalogadapter.ErrUnsupported, err)
	case errors.Is(err, delta.ErrCorruptLog):
		return fmt.Errorf("open Delta table %s: %w: %w", path, catalogadapter.ErrCorrupt, err)
	}
	return fmt.Errorf("open Delta table %s: %w", path, err)
}

// TableSpec implements catalogadapter.Provider.
func (p *Provider) TableSpec(ctx context.Context, id catalogadapter.TableIdent) (catalogadapter.TableSpec, error) {
	_, snap, err := p.latest(ctx, id)
	if err != nil {
		return catalogadapter.TableSpec{}, err
	}
	return tableSpec(id.Name, snap)
}

func tableSpec(path string, snap *delta.Snapshot) (catalogadapter.TableSpec, error) {
	schema, err := snap.Schema()
	if err != nil {
		return catalogadapter.TableSpec{}, readError(path, err)
	}
	as, err := delta.ToArrowSchema(schema)
	if err != nil {
		return catalogadapter.TableSpec{}, fmt.Errorf("table spec of %s: %w: %w", path, catalogadapter.ErrUnsupported, err)
	}
	spec := catalogadapter.TableSpec{
		Schema:     as,
		SchemaSpec: catalogadapter.SchemaSpec{Version: snap.Version},
		Properties: maps.Clone(snap.Metadata.Configuration),
		Version:    snap.Version,
	}
	if spec.Properties == nil {
		spec.Properties = map[string]string{}
	}
	if ct := snap.Metadata.CreatedTime; ct != nil {
		spec.SchemaSpec.Timestamp = time.UnixMilli(*ct).UTC()
	}
	ids := map[string]int{}
	for i, f := range schema.Fields {
		fs := catalogadapter.FieldSpec{
			ID:       fieldID(f, i),
			Name:     f.Name,
			Type:     f.Type.String(),
			Nullable: f.Nullable,
		}
		if c, ok := f.Metadata["comment"].(string); ok {
			fs.Doc = c
		}
		ids[f.Name] = fs.ID
		spec.SchemaSpec.Fields = append(spec.SchemaSpec.Fields, fs)
	}
	for _, c := range snap.Metadata.PartitionColumns {
		id, ok := ids[c]
		if !ok {
			return catalogadapter.TableSpec{}, fmt.Errorf("table spec of %s: %w: partition column %q is not in the schema",
				path, catalogadapter.ErrUnsupported, c)
		}
		spec.PartitionSpec.Fields = append(spec.PartitionSpec.Fields, catalogadapter.PartitionField{
			SourceID: id, Name: c, Transform: catalogadapter.Transform{Kind: catalogadapter.Identity},
		})
	}
	return spec, nil
}

// fieldID is the column mapping id when the table has one (it is stable
// across renames), else the 1-based position.
func fieldID(f *delta.StructField, pos int) int {
	switch v := f.Metadata["delta.columnMapping.id"].(type) {
	case json.Number:
		if n, err := strconv.ParseInt(string(v), 10, 0); err == nil {
			return int(n)
		}
	case float64:
		if v == float64(int(v)) {
			return int(v)
		}
	}
	return pos + 1
}

// CreateTable implements catalogadapter.Creator.
func (p *Provider) CreateTable(ctx context.Context, id catalogadapter.TableIdent, def catalogadapter.TableDef) error {
	t, path, err := p.table(id)
	if err != nil {
		return err
	}
	if def.Schema == nil {
		return fmt.Errorf("create Delta table %s: %w: no schema", path, catalogadapter.ErrInvalid)
	}
	schema, err := delta.FromArrowSchema(def.Schema)
	if err != nil {
		if errors.Is(err, delta.ErrUnsupportedFeature) {
			return fmt.Errorf("create Delta table %s: %w: %w", path, catalogadapter.ErrUnsupported, err)
		}
		return fmt.Errorf("create Delta table %s: %w: %w", path, catalogadapter.ErrInvalid, err)
	}
	if len(schema.Fields) == 0 {
		return fmt.Errorf("create Delta table %s: %w: the schema has no columns", path, catalogadapter.ErrInvalid)
	}
	parts, err := partitionColumns(schema, def.PartitionSpec)
	if err != nil {
		return fmt.Errorf("create Delta table %s: %w", path, err)
	}
	conf := map[string]string{}
	for k, v := range def.Properties {
		conf[k] = v
	}
	// The definition's own fields win over properties spelling the same.
	if def.CheckpointInterval > 0 {
		conf["delta.checkpointInterval"] = strconv.Itoa(def.CheckpointInterval)
	}
	if def.TargetFileSize > 0 {
		conf["delta.targetFileSize"] = strconv.FormatInt(def.TargetFileSize, 10)
	}
	if _, ok := conf["delta.checkpointInterval"]; !ok && p.opts.CheckpointInterval > 0 {
		conf["delta.checkpointInterval"] = strconv.Itoa(p.opts.CheckpointInterval)
	}
	if v, ok := conf["delta.checkpointInterval"]; ok {
		if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 1 {
			return fmt.Errorf("create Delta table %s: %w: delta.checkpointInterval must be a positive integer, got %q",
				path, catalogadapter.ErrInvalid, v)
		}
	}
	// Create only guards version 0; a table whose early log was cleaned up
	// after a checkpoint has none, and must not get a second version 0.
	if _, err := t.Latest(ctx); err == nil {
		return fmt.Errorf("create Delta table %s: %w", path, catalogadapter.ErrTableExists)
	} else if rerr := readError(path, err); errors.Is(rerr, catalogadapter.ErrUnsupported) || errors.Is(rerr, catalogadapter.ErrCorrupt) {
		// A log we cannot read is still a table: never write over it.
		return fmt.Errorf("create Delta table %s: %w: %w", path, catalogadapter.ErrTableExists, rerr)
	} else if !errors.Is(rerr, catalogadapter.ErrNoTable) {
		return fmt.Errorf("create Delta table %s: %w", path, rerr)
	}
	snap, err := delta.Create(ctx, t.Storage(), delta.CreateOptions{
		Schema:           schema,
		PartitionColumns: parts,
		Configuration:    conf,
		Now:              p.opts.Now,
	})
	switch {
	case err == nil:
		// Whatever was cached for this path belonged to a table since gone.
		p.snaps.set(path, snap)
		return nil
	case errors.Is(err, delta.ErrTableExists):
		return fmt.Errorf("create Delta table %s: %w: %w", path, catalogadapter.ErrTableExists, err)
	case errors.Is(err, delta.ErrUnsupportedFeature):
		return fmt.Errorf("create Delta table %s: %w: %w", path, catalogadapter.ErrUnsupported, err)
	}
	return fmt.Errorf("create Delta table %s: %w", path, err)
}

// partitionColumns checks the partition spec against what Delta can store:
// identity partitions of distinct primitive columns, with at least one
// column left for the data files.
func partitionColumns(schema *delta.StructType, spec catalogadapter.PartitionSpec) ([]string, error) {
	var cols []string
	seen := map[string]bool{}
	for _, pf := range spec.Fields {
		if pf.Transform.Kind != catalogadapter.Identity && pf.Transform.Kind != "" {
			return nil, fmt.Errorf("%w: Delta partitions by column value only, not by %s(%s)",
				catalogadapter.ErrUnsupported, pf.Transform, pf.Name)
		}
		f := schema.Field(pf.Name)
		if f == nil {
			return nil, fmt.Errorf("%w: partition column %q is not in the schema", catalogadapter.ErrInvalid, pf.Name)
		}
		if seen[pf.Name] {
			return nil, fmt.Errorf("%w: partition column %q is given twice", catalogadapter.ErrInvalid, pf.Name)
		}
		seen[pf.Name] = true
		switch f.Type.(type) {
		case *delta.StructType, *delta.ArrayType, *delta.MapType:
			return nil, fmt.Errorf("%w: partition column %q has nested type %s", catalogadapter.ErrInvalid, pf.Name, f.Type)
		}
		if f.Type == delta.TypeBinary {
			return nil, fmt.Errorf("%w: binary partition column %q", catalogadapter.ErrUnsupported, pf.Name)
		}
		cols = append(cols, pf.Name)
	}
	if len(cols) > 0 && len(cols) == len(schema.Fields) {
		return nil, fmt.Errorf("%w: every column is a partition column; data files need at least one", catalogadapter.ErrInvalid)
	}
	return cols, nil
}

// LastEpoch implements catalogadapter.Provider: the epoch is the
// version of the writer's txn action, which checkpoints carry forward.
func (p *Provider) LastEpoch(ctx context.Context, id catalogadapter.TableIdent, writerID string) (int64, bool, error) {
	if writerID == "" {
		return 0, false, fmt.Errorf("last epoch of %s: %w: empty writer id", id.Name, catalogadapter.ErrInvalid)
	}
	_, snap, err := p.latest(ctx, id)
	if err != nil {
		return 0, false, err
	}
	v, ok := snap.TxnVersion(writerID)
	return v, ok, nil
}

// SecurityContext implements catalogadapter.CredentialVendor. Local tables are not
// encrypted; the credential is a local token, minted so callers exercise
// the same renewal path as with a real catalog.
func (p *Provider) SecurityContext(ctx context.Context, id catalogadapter.TableIdent) (catalogadapter.SecurityContext, error) {
	if _, err := tablePath(id); err != nil {
		return catalogadapter.SecurityContext{}, err
	}
	cred, err := p.creds.Get(ctx, id)
	if err != nil {
		return catalogadapter.SecurityContext{}, fmt.Errorf("credential for %s: %w", id.Name, err)
	}
	return catalogadapter.SecurityContext{
		Encryption: catalogadapter.Encryption{Level: catalogadapter.EncryptionNone},
		Credential: cred,
	}, nil
}
