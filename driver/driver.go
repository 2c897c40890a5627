// Package driver is lakesql's embedded database/sql driver, registered as
// "lakesql". It runs the lakesql engine inside the calling process: no
// server, no network.
//
//	import (
//		"database/sql"
//		_ "github.com/lakesql/lakesql/driver"
//	)
//
//	db, err := sql.Open("lakesql", "/var/lib/lakesql?allowed_roots=/var/lib/lakesql,/data/lake")
//
// or, with relative Delta locations in a bucket:
//
//	db, err := sql.Open("lakesql", "/var/lib/lakesql?table_root=s3://bucket/lake&storage.region=eu-west-1")
//
// # DSN
//
// The DSN is the data directory, optionally followed by '?' and URL query
// options (values URL-encoded: url.Values.Encode writes them right; a '+'
// in a secret must be written %2B):
//
//	allowed_roots   comma-separated directories or object storage
//	                locations (s3://bucket/prefix) that sink locations
//	                must lie under (the option may also be repeated); the
//	                default is the data directory, and table_root
//	table_root      where relative Delta sink locations go: a directory or
//	                an object storage location such as s3://bucket/lake;
//	                the default is the data directory
//	storage.KEY     a default storage option of Delta sinks on object
//	                storage (a sink's own WITH options win), for example
//	                storage.endpoint=http://127.0.0.1:7070; the keys are
//	                storage.endpoint, storage.region, storage.path_style,
//	                storage.access_key_id, storage.secret_access_key,
//	                storage.session_token, storage.max_attempts and
//	                storage.max_retry_time. Secrets are never shown in
//	                errors; the environment (AWS_ACCESS_KEY_ID, ...) is
//	                an alternative to credentials in the DSN
//	lock_wait_timeout how long a transaction waits for a sink another
//	                transaction writes to, a Go duration such as 10s;
//	                the default is planner.DefaultLockWaitTimeout
//
// An unknown option is an error. The data directory is created if missing.
//
// # Engines and connections
//
// One engine is opened per data directory per process, shared by every
// *sql.DB whose DSN names that directory (opening the same directory with
// other allowed_roots, table_root, storage or lock_wait_timeout options is
// refused), and
// closed when the last *sql.DB using it is closed and its last connection
// is gone. Each connection is one lakesql session.
//
// # Transactions
//
// Transactions are real: BeginTx runs BEGIN (the start of an epoch),
// Tx.Commit runs COMMIT (one table version per sink written), Tx.Rollback
// runs ROLLBACK (nothing is written). A statement that fails inside a
// transaction discards only its own rows; the transaction stays usable.
// Only the default isolation level is accepted, and read-only transactions
// are refused. SET lakesql_epoch = N on a connection (use db.Conn to keep
// one) sets the epoch of that connection's next transaction.
//
// # Arguments
//
// '?' placeholders are replaced on the client side before the statement
// runs, with values quoted as SQL literals: nil as NULL, integers and
// floats as numbers, bool as TRUE/FALSE, strings as quoted strings with
// quotes and backslashes escaped, []byte as hexadecimal literals X'…', and
// time.Time as a 'YYYY-MM-DD HH:MM:SS.ffffff' string in UTC (lakesql's
// time zone). A '?' inside a string literal, a quoted identifier or a
// comment is not a placeholder. Named arguments are refused.
//
// # Values
//
// Rows carry the column names of the result. Values are int64, float64,
// string, []byte, time.Time, bool or nil; unsigned integers beyond int64
// and decimals are returned as strings.
//
// # Errors
//
// Errors are *Error, which carries the MySQL error code and SQLSTATE (the
// same ones the MySQL server and the REPL report): with
// `var se *mysql.SQLError` (github.com/dolthub/vitess/go/mysql),
// errors.As(err, &se) works, and so does errors.Is against lakesql's own
// error values (planner.ErrNoSink, ...). A connection dropped (closed)
// inside a transaction rolls it back.
package driver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dolthub/vitess/go/mysql"

	"github.com/lakesql/lakesql/internal/storageloc"
	"github.com/lakesql/lakesql/planner"
)

// DriverName is the name the driver is registered under.
const DriverName = "lakesql"

func init() { sql.Register(DriverName, &Driver{}) }

// Driver is the "lakesql" database/sql driver.
type Driver struct{}

var (
	_ driver.Driver        = (*Driver)(nil)
	_ driver.DriverContext = (*Driver)(nil)
)

// Open opens a connection on the DSN's engine (database/sql uses
// OpenConnector instead).
// The connection holds the only reference it needs: the engine closes with
// the last connection.
func (d *Driver) Open(dsn string) (driver.Conn, error) {
	cfg, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return connect(context.Background(), cfg)
}

// connect opens a connection with its own reference to the engine.
func connect(ctx context.Context, cfg Config) (driver.Conn, error) {
	e, err := acquire(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &conn{engine: e, dir: cfg.DataDir, session: e.NewSession()}, nil
}

// OpenConnector parses the DSN; the engine is opened on the first connection.
func (d *Driver) OpenConnector(dsn string) (driver.Connector, error) {
	cfg, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return &Connector{cfg: cfg, drv: d}, nil
}

// Config is a parsed DSN.
type Config struct {
	DataDir string // absolute
	// AllowedRoots are absolute directories and canonical object storage
	// locations; empty means the data directory (and TableRoot).
	AllowedRoots []string
	// TableRoot is an absolute directory or a canonical object storage
	// location; empty means the data directory.
	TableRoot string
	// Storage holds the storage.* options (keys in full). It may hold
	// secrets.
	Storage map[string]string
	// LockWaitTimeout is planner.Options.LockWaitTimeout: 0 is its default.
	LockWaitTimeout time.Duration
}

// knownOptions is what the error for an unknown DSN option lists.
func knownOptions() string {
	return "allowed_roots, table_root, " + strings.Join(storageloc.Keys(), ", ") + ", lock_wait_timeout"
}

// ParseDSN parses "DIR[?allowed_roots=A,B&table_root=LOC&storage.KEY=VALUE...]".
// Its errors never show a secret's value.
func ParseDSN(dsn string) (Config, error) {
	dir, query, _ := strings.Cut(dsn, "?")
	if dir == "" {
		return Config{}, errors.New("lakesql driver: the DSN must name a data directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Config{}, fmt.Errorf("lakesql driver: data directory %q: %w", dir, err)
	}
	cfg := Config{DataDir: abs}
	vals, err := url.ParseQuery(query)
	if err != nil {
		// The query is not repeated: it may hold a secret.
		return Config{}, errors.New("lakesql driver: the DSN options are not a valid URL query " +
			"(encode the values, e.g. with url.Values.Encode)")
	}
	for k, vs := range vals {
		switch {
		case k == "allowed_roots":
			for _, v := range vs {
				for _, r := range strings.Split(v, ",") {
					if r = strings.TrimSpace(r); r == "" {
						continue
					}
					ar, err := canonicalRoot(r)
					if err != nil {
						return Config{}, fmt.Errorf("lakesql driver: allowed root: %w", err)
					}
					cfg.AllowedRoots = append(cfg.AllowedRoots, ar)
				}
			}
		case k == "table_root":
			if len(vs) != 1 || strings.TrimSpace(vs[0]) == "" {
				return Config{}, errors.New("lakesql driver: table_root takes one location")
			}
			if cfg.TableRoot, err = canonicalRoot(strings.TrimSpace(vs[0])); err != nil {
				return Config{}, fmt.Errorf("lakesql driver: table_root: %w", err)
			}
		case k == "lock_wait_timeout":
			d, err := time.ParseDuration(strings.TrimSpace(vs[0]))
			if len(vs) != 1 || err != nil || d <= 0 {
				return Config{}, errors.New("lakesql driver: lock_wait_timeout takes one positive duration, such as 10s")
			}
			cfg.LockWaitTimeout = d
		case strings.HasPrefix(k, "storage."):
			if len(vs) != 1 {
				return Config{}, fmt.Errorf("lakesql driver: DSN option %s given %d times", k, len(vs))
			}
			// CheckOption names unknown keys and masks secrets.
			if err := storageloc.CheckOption(k, vs[0]); err != nil {
				return Config{}, fmt.Errorf("lakesql driver: %w", err)
			}
			if cfg.Storage == nil {
				cfg.Storage = map[string]string{}
			}
			cfg.Storage[k] = vs[0]
		default:
			return Config{}, fmt.Errorf("lakesql driver: unknown DSN option %q (known: %s)", k, knownOptions())
		}
	}
	return cfg, nil
}

// canonicalRoot makes a directory absolute and an object storage location
// canonical, so that DSNs naming the same place compare equal.
func canonicalRoot(r string) (string, error) {
	if storageloc.IsLocation(r) {
		l, err := storageloc.ParseLocation(r) // its errors hide user info
		if err != nil {
			return "", err
		}
		return l.String(), nil
	}
	ar, err := filepath.Abs(r)
	if err != nil {
		return "", fmt.Errorf("%q: %w", r, err)
	}
	return ar, nil
}

// shared is an engine shared by the connectors and connections of one data
// directory, with the options it was opened with.
type shared struct {
	engine    *planner.Engine
	roots     []string // sorted
	tableRoot string
	storage   map[string]string
	lockWait  time.Duration
	refs      int
}

var (
	enginesMu sync.Mutex
	engines   = map[string]*shared{}
)

// acquire returns the data directory's engine, opening it if needed, and
// counts a reference.
func acquire(ctx context.Context, cfg Config) (*planner.Engine, error) {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	roots := slices.Clone(cfg.AllowedRoots)
	slices.Sort(roots)
	if sh, ok := engines[cfg.DataDir]; ok {
		if diff := sh.differences(roots, cfg.TableRoot, cfg.Storage, cfg.LockWaitTimeout); diff != "" {
			return nil, fmt.Errorf("lakesql driver: data directory %s is already open in this process with other options: %s",
				cfg.DataDir, diff)
		}
		sh.refs++
		return sh.engine, nil
	}
	e, err := planner.Open(ctx, planner.Options{
		DataDir: cfg.DataDir, AllowedRoots: cfg.AllowedRoots, TableRoot: cfg.TableRoot, Storage: cfg.Storage,
		LockWaitTimeout: cfg.LockWaitTimeout,
	})
	if err != nil {
		return nil, wrapErr(err)
	}
	engines[cfg.DataDir] = &shared{engine: e, roots: roots, tableRoot: cfg.TableRoot,
		storage: maps.Clone(cfg.Storage), lockWait: cfg.LockWaitTimeout, refs: 1}
	return e, nil
}

// differences describes how a DSN's options differ from those the engine
// was opened with, "" when they are the same. Storage options are named,
// their values never shown (some are secrets).
func (sh *shared) differences(roots []string, tableRoot string, storage map[string]string, lockWait time.Duration) string {
	var diffs []string
	if !slices.Equal(sh.roots, roots) {
		diffs = append(diffs, fmt.Sprintf("allowed_roots %v, not %v", sh.roots, roots))
	}
	if sh.tableRoot != tableRoot {
		diffs = append(diffs, fmt.Sprintf("table_root %q, not %q", sh.tableRoot, tableRoot))
	}
	if sh.lockWait != lockWait {
		diffs = append(diffs, fmt.Sprintf("lock_wait_timeout %v, not %v", sh.lockWait, lockWait))
	}
	var keys []string
	for k := range storage {
		if v, ok := sh.storage[k]; !ok || v != storage[k] {
			keys = append(keys, k)
		}
	}
	for k := range sh.storage {
		if _, ok := storage[k]; !ok {
			keys = append(keys, k)
		}
	}
	if len(keys) > 0 {
		slices.Sort(keys)
		diffs = append(diffs, "other values of "+strings.Join(keys, ", "))
	}
	return strings.Join(diffs, "; ")
}

// release drops a reference; the last one closes the engine.
func release(dir string) error {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	sh, ok := engines[dir]
	if !ok {
		return nil
	}
	sh.refs--
	if sh.refs > 0 {
		return nil
	}
	delete(engines, dir)
	return sh.engine.Close()
}

// Connector opens connections on one data directory. It holds a reference
// to the engine from its first connection until Close (called by
// sql.DB.Close); every open connection holds one too.
type Connector struct {
	cfg Config
	drv *Driver

	mu     sync.Mutex
	held   bool
	closed bool
}

var (
	_ driver.Connector = (*Connector)(nil)
	_ io.Closer        = (*Connector)(nil)
)

// Connect opens a connection: a new session on the shared engine.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("lakesql driver: the connector is closed")
	}
	if !c.held {
		if _, err := acquire(ctx, c.cfg); err != nil {
			return nil, err
		}
		c.held = true
	}
	return connect(ctx, c.cfg)
}

// Driver returns the lakesql driver.
func (c *Connector) Driver() driver.Driver { return c.drv }

// Close releases the connector's reference to the engine.
func (c *Connector) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	if c.held {
		c.held = false
		return release(c.cfg.DataDir)
	}
	return nil
}

// Error is an error of the engine with its MySQL code and SQLSTATE.
// errors.As finds the *mysql.SQLError; errors.Is finds lakesql's own error
// values in the original error.
type Error struct {
	SQL *mysql.SQLError
	Err error
}

func (e *Error) Error() string { return e.SQL.Error() }

// Unwrap returns the MySQL error and the original error.
func (e *Error) Unwrap() []error { return []error{e.SQL, e.Err} }

// Code is the MySQL error number.
func (e *Error) Code() int { return e.SQL.Number() }

func wrapErr(err error) error {
	if err == nil {
		return nil
	}
	var de *Error
	if errors.As(err, &de) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &Error{SQL: planner.MySQLError(err), Err: err}
}
