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
// # DSN
//
// The DSN is the data directory, optionally followed by '?' and URL query
// options:
//
//	allowed_roots   comma-separated directories (the option may also be
//	                repeated) that sink locations must lie under; the
//	                default is the data directory alone
//
// An unknown option is an error. The data directory is created if missing.
//
// # Engines and connections
//
// One engine is opened per data directory per process, shared by every
// *sql.DB whose DSN names that directory (opening the same directory with
// different allowed_roots is refused), and closed when the last *sql.DB
// using it is closed and its last connection is gone. Each connection is one
// lakesql session.
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
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/dolthub/vitess/go/mysql"

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
	DataDir      string   // absolute
	AllowedRoots []string // absolute; empty means the data directory
}

// ParseDSN parses "DIR[?allowed_roots=A,B]".
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
		return Config{}, fmt.Errorf("lakesql driver: DSN options %q: %w", query, err)
	}
	for k, vs := range vals {
		switch k {
		case "allowed_roots":
			for _, v := range vs {
				for _, r := range strings.Split(v, ",") {
					if r = strings.TrimSpace(r); r == "" {
						continue
					}
					ar, err := filepath.Abs(r)
					if err != nil {
						return Config{}, fmt.Errorf("lakesql driver: allowed root %q: %w", r, err)
					}
					cfg.AllowedRoots = append(cfg.AllowedRoots, ar)
				}
			}
		default:
			return Config{}, fmt.Errorf("lakesql driver: unknown DSN option %q (known: allowed_roots)", k)
		}
	}
	return cfg, nil
}

// shared is an engine shared by the connectors and connections of one data
// directory.
type shared struct {
	engine *planner.Engine
	roots  []string
	refs   int
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
		if !slices.Equal(sh.roots, roots) {
			return nil, fmt.Errorf("lakesql driver: data directory %s is already open in this process with allowed_roots %v, not %v",
				cfg.DataDir, sh.roots, roots)
		}
		sh.refs++
		return sh.engine, nil
	}
	e, err := planner.Open(ctx, planner.Options{DataDir: cfg.DataDir, AllowedRoots: cfg.AllowedRoots})
	if err != nil {
		return nil, wrapErr(err)
	}
	engines[cfg.DataDir] = &shared{engine: e, roots: roots, refs: 1}
	return e, nil
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
