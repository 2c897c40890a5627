package iceberg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/glue" // catalog.type = glue
	_ "github.com/apache/iceberg-go/catalog/hadoop"
	_ "github.com/apache/iceberg-go/catalog/hive"
	_ "github.com/apache/iceberg-go/catalog/rest"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	_ "github.com/go-sql-driver/mysql" // sql.driver = mysql
	"github.com/lib/pq"                // sql.driver = postgres
	_ "modernc.org/sqlite"             // the default catalog: pure Go, no cgo
)

// DefaultCatalogName names the catalog when the configuration gives none;
// the SQL catalog keys its rows by it.
const DefaultCatalogName = "lakesql"

// CatalogConfig says which Iceberg catalog to open. With no properties it
// is iceberg-go's SQL catalog on an embedded SQLite file,
// DataDir/iceberg/catalog.db, with tables under DataDir/iceberg/warehouse.
type CatalogConfig struct {
	Name string
	// Properties are iceberg-go's catalog properties: type (sql, rest,
	// glue, hive, hadoop), uri, warehouse, credential, token, sql.driver,
	// sql.dialect, s3.*, glue.*, ... Secrets among them are masked in
	// everything this package prints.
	Properties map[string]string
	// DataDir roots the default SQLite catalog and warehouse.
	DataDir string
	// CacheDir is the local folder for tables on object storage (staged
	// uploads, copies of files read; see remote.go). Default:
	// DataDir/cache/iceberg, or DefaultCacheDir without a DataDir.
	CacheDir string
	// CacheMaxBytes bounds the copies kept in CacheDir (0:
	// filecache.DefaultMaxBytes), unless the folder is in use already.
	CacheMaxBytes int64
	// Timeout bounds each call to the catalog: opening it, loading,
	// creating and committing a table (0: DefaultTimeout; negative: none).
	// A call past it fails with ErrTimeout.
	Timeout time.Duration
}

// Catalog is an open Iceberg catalog.
type Catalog struct {
	cat     catalog.Catalog
	db      *sql.DB // the SQL catalog's handle when we opened it
	typ     string
	shown   map[string]string
	secrets []string
	cache   string
	aws     *aws.Config // shared by the FileIOs of the tables; nil: iceberg-go's own per FileIO
	timeout time.Duration
}

// OpenCatalog opens the catalog cfg describes. Errors never show secrets.
func OpenCatalog(ctx context.Context, cfg CatalogConfig) (*Catalog, error) {
	props := map[string]string{}
	for k, v := range cfg.Properties {
		props[k] = v
	}
	name := cfg.Name
	if name == "" {
		name = DefaultCatalogName
	}
	secrets := secretValues(props)
	typ := strings.ToLower(props["type"])
	if typ == "" {
		typ = "sql"
	}
	c := &Catalog{typ: typ, secrets: secrets, cache: cfg.CacheDir, timeout: callTimeout(cfg.Timeout)}
	if c.cache == "" && cfg.DataDir != "" {
		c.cache = filepath.Join(cfg.DataDir, "cache", "iceberg")
	}
	if c.cache == "" {
		c.cache = DefaultCacheDir()
	}
	if abs, err := filepath.Abs(c.cache); err == nil {
		c.cache = abs
	}
	if cfg.CacheMaxBytes > 0 {
		SetCacheLimit(c.cache, cfg.CacheMaxBytes)
	}
	var err error
	call, cancel := c.Bound(ctx)
	if typ == "sql" {
		err = c.openSQL(call, name, props, cfg.DataDir)
	} else {
		if props["warehouse"] == "" && cfg.DataDir != "" && typ == "hadoop" {
			props["warehouse"] = warehouseURI(cfg.DataDir)
		}
		c.cat, err = catalog.Load(call, name, ice.Properties(props))
	}
	err = c.Timed(call, ctx, err)
	cancel()
	if err != nil {
		return nil, scrub(fmt.Errorf("open Iceberg %s catalog %q: %w", typ, name, err), secrets)
	}
	c.shown = RedactProperties(props)
	c.aws = sharedAWSConfig(ctx, props, c.timeout)
	return c, nil
}

// openSQL opens iceberg-go's SQL catalog. Without a uri it is the embedded
// SQLite file: WAL lets readers run beside the one writer, the busy
// timeout makes a second process wait for the lock instead of failing, and
// _txlock=immediate takes the write lock when a write transaction begins,
// so two writers never deadlock upgrading a read lock.
func (c *Catalog) openSQL(ctx context.Context, name string, props map[string]string, dataDir string) error {
	driver, dialect, dsn := props[sqlcat.DriverKey], props[sqlcat.DialectKey], strings.TrimPrefix(props["uri"], "sql://")
	if dsn == "" {
		if dataDir == "" {
			return fmt.Errorf("%w: the default SQLite catalog needs a data directory", ErrInvalid)
		}
		root := filepath.Join(dataDir, "iceberg")
		if err := os.MkdirAll(filepath.Join(root, "warehouse"), 0o755); err != nil {
			return fmt.Errorf("create catalog directory: %w", err)
		}
		dsn = SQLiteDSN(filepath.Join(root, "catalog.db"))
		driver, dialect = "sqlite", string(sqlcat.SQLite)
		props["uri"] = dsn
		if props["warehouse"] == "" {
			props["warehouse"] = warehouseURI(dataDir)
		}
	}
	if driver == "" {
		driver = guessDriver(dsn)
	}
	if dialect == "" {
		dialect = driver
	}
	if driver == "" {
		return fmt.Errorf("%w: set sql.driver (sqlite, mysql or postgres) for catalog uri %s", ErrInvalid, dsn)
	}
	props[sqlcat.DriverKey], props[sqlcat.DialectKey] = driver, dialect
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return err
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return err
	}
	var cat *sqlcat.Catalog
	// iceberg-go creates the catalog's tables with CREATE TABLE IF NOT
	// EXISTS, which PostgreSQL lets fail when another process runs it at the
	// same moment; by the next try the tables are there.
	for attempt := 0; ; attempt++ {
		cat, err = sqlcat.NewCatalog(name, db, sqlcat.SupportedDialect(dialect), ice.Properties(props))
		if err == nil || attempt == 4 || !duplicateObject(err) {
			break
		}
		select {
		case <-ctx.Done():
			db.Close()
			return fmt.Errorf("%w (retrying after: %w)", ctx.Err(), err)
		case <-time.After(time.Duration(attempt+1) * 20 * time.Millisecond):
		}
	}
	if err != nil {
		db.Close()
		return err
	}
	c.cat, c.db = cat, db
	return nil
}

// duplicateObject tells whether err is PostgreSQL's answer to creating what
// a concurrent transaction just created: duplicate_object (a table's row
// type), duplicate_table, or unique_violation (in the system catalogs).
func duplicateObject(err error) bool {
	var pe *pq.Error
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "42710", "42P07", "23505":
		return true
	}
	return false
}

// SQLiteDSN is the modernc.org/sqlite data source name of a catalog file.
func SQLiteDSN(path string) string {
	return "file:" + filepath.ToSlash(path) +
		"?_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate"
}

func warehouseURI(dataDir string) string {
	abs, err := filepath.Abs(filepath.Join(dataDir, "iceberg", "warehouse"))
	if err != nil {
		abs = filepath.Join(dataDir, "iceberg", "warehouse")
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
}

func guessDriver(dsn string) string {
	switch {
	case strings.HasPrefix(dsn, "file:"), strings.HasSuffix(dsn, ".db"), strings.HasSuffix(dsn, ".sqlite"):
		return "sqlite"
	case strings.Contains(dsn, "@tcp("), strings.HasPrefix(dsn, "mysql://"):
		return "mysql"
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return "postgres"
	}
	return ""
}

// Close releases the catalog and, for the SQL catalog, its database.
func (c *Catalog) Close() error {
	var errs []error
	if cl, ok := c.cat.(catalog.Closer); ok {
		errs = append(errs, cl.Close())
	}
	if c.db != nil {
		errs = append(errs, c.db.Close())
	}
	return errors.Join(errs...)
}

// Iceberg returns iceberg-go's catalog, for callers that need more than
// this package offers (tests read tables back through it).
func (c *Catalog) Iceberg() catalog.Catalog { return c.cat }

// CacheDir is the local folder that stages and caches the files of tables
// on object storage (CopyOptions.CacheDir, ScanOptions.CacheDir).
func (c *Catalog) CacheDir() string { return c.cache }

// Type is the catalog type: sql, rest, glue, hive or hadoop.
func (c *Catalog) Type() string { return c.typ }

// Properties returns the catalog's properties with secrets masked.
func (c *Catalog) Properties() map[string]string {
	out := make(map[string]string, len(c.shown))
	for k, v := range c.shown {
		out[k] = v
	}
	return out
}

// Scrub hides the catalog's secrets in err's text.
func (c *Catalog) Scrub(err error) error { return scrub(err, c.secrets) }

// LoadTable loads a table; a missing one (or a missing namespace) is ErrNoTable.
func (c *Catalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	ctx = c.WithIO(ctx)
	call, cancel := c.Bound(ctx)
	defer cancel()
	t, err := c.cat.LoadTable(call, ident)
	if err = c.Timed(call, ctx, err); err != nil {
		if errors.Is(err, catalog.ErrNoSuchTable) || errors.Is(err, catalog.ErrNoSuchNamespace) {
			return nil, c.Scrub(fmt.Errorf("load Iceberg table %s: %w: %w", strings.Join(ident, "."), ErrNoTable, err))
		}
		return nil, c.Scrub(fmt.Errorf("load Iceberg table %s: %w", strings.Join(ident, "."), err))
	}
	return t, nil
}

// EnsureNamespace creates the namespace when it is missing.
func (c *Catalog) EnsureNamespace(ctx context.Context, ns table.Identifier) error {
	ctx = c.WithIO(ctx)
	call, cancel := c.Bound(ctx)
	defer cancel()
	ok, err := c.cat.CheckNamespaceExists(call, ns)
	if err = c.Timed(call, ctx, err); err != nil {
		return c.Scrub(fmt.Errorf("check namespace %s: %w", strings.Join(ns, "."), err))
	}
	if ok {
		return nil
	}
	err = c.Timed(call, ctx, c.cat.CreateNamespace(call, ns, nil))
	if err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		// A create that lost a race with another process's may fail some
		// other way (Iceberg's REST fixture on a JdbcCatalog answers 500
		// for its key's constraint): the namespace being there now is
		// what the caller needs.
		if ok, cerr := c.cat.CheckNamespaceExists(call, ns); cerr == nil && ok {
			return nil
		}
		return c.Scrub(fmt.Errorf("create namespace %s: %w", strings.Join(ns, "."), err))
	}
	return nil
}
