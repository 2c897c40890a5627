package planner

// The embedded engine: one DuckDB, the backends its sinks open (sinkdef),
// the sink registry and a go-mysql-server engine whose database "lakesql"
// shows every sink as a table. Exec runs one statement for a session:
// lakesql's own statements are handled here, everything else by
// go-mysql-server.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	gms "github.com/dolthub/go-mysql-server/sql"
	_ "github.com/duckdb/duckdb-go/v2" // the "duckdb" database/sql driver

	"github.com/lakesql/lakesql/internal/secret"
	"github.com/lakesql/lakesql/sinkddl"
	"github.com/lakesql/lakesql/sinkdef"
	"github.com/lakesql/lakesql/sqlsink"
)

// DatabaseName is the database go-mysql-server shows the sinks in.
const DatabaseName = "lakesql"

// Options configure an Engine.
type Options struct {
	// DataDir holds the sink registry, relative sink locations, the sinks'
	// spill and state files. It is created if missing.
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
	// FlushHosts runs FLUSH HOSTS: the server unblocks the client
	// addresses it blocked for connection errors. Nil: nothing to flush.
	FlushHosts func()
	// MaxOpenSinks bounds the sinks that keep their write buffer (an
	// embedded DuckDB, about 2.6 MB) open; past it the least recently
	// used idle ones release theirs (sinkbuffers.go). 0 is
	// DefaultMaxOpenSinks, negative no bound.
	MaxOpenSinks int
	// SinkIdleTimeout releases the write buffer of a sink unused for that
	// long. 0 is DefaultSinkIdleTimeout, negative never.
	SinkIdleTimeout time.Duration
	// CatalogTimeout bounds each call to an Iceberg catalog (opening it,
	// loading, creating and committing a table). 0 is
	// DefaultCatalogTimeout, negative none.
	CatalogTimeout time.Duration
	// LockWaitTimeout bounds how long a transaction waits for a sink that
	// another transaction writes to. 0 is DefaultLockWaitTimeout.
	LockWaitTimeout time.Duration
}

// DefaultCatalogTimeout bounds each Iceberg catalog call when
// Options.CatalogTimeout is 0.
const DefaultCatalogTimeout = sinkdef.DefaultCatalogTimeout

// Engine is an embedded lakesql: safe for concurrent use by many sessions.
type Engine struct {
	opts Options
	db   *sql.DB
	// backends open the sinks' providers and tables from their
	// definitions.
	backends *sinkdef.Backends
	gms      *sqle.Engine
	// buffers bounds the sinks' open write buffers; stopJanitor ends
	// the goroutine that releases idle ones.
	buffers     *sqlsink.BufferPool
	stopJanitor func()

	mu     sync.Mutex // guards sinks, order and the registry file
	sinks  map[string]*sinkHandle
	closed bool

	// lock is the data directory's, held from Open to Close (LockFile).
	lock *dataDirLock
}

// Open opens (or creates) the data directory and the sinks defined in it.
// Sinks are reached lazily: a definition whose table is gone or changed
// fails when it is used, not here. The engine holds the data directory
// until Close: another Open of it, in this process or another, fails with
// ErrDataDirInUse.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	if opts.DataDir == "" {
		return nil, errors.New("lakesql: a data directory is required")
	}
	dir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return nil, err
	}
	opts.DataDir = dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("lakesql: data directory: %w", err)
	}
	lock, err := lockDataDir(dir)
	if err != nil {
		return nil, err
	}
	e, err := openLocked(ctx, opts)
	if err != nil {
		lock.release()
		return nil, err
	}
	e.lock = lock
	return e, nil
}

// openLocked opens the engine on opts.DataDir, absolute, existing and
// locked.
func openLocked(ctx context.Context, opts Options) (*Engine, error) {
	dir := opts.DataDir
	bopts, err := sinkdef.Options{DataDir: dir, AllowedRoots: opts.AllowedRoots, TableRoot: opts.TableRoot,
		Storage: opts.Storage, CatalogTimeout: opts.CatalogTimeout, ReservedFiles: dataDirFiles}.Resolve()
	if err != nil {
		return nil, err
	}
	if opts.LockWaitTimeout == 0 {
		opts.LockWaitTimeout = DefaultLockWaitTimeout
	}

	records, err := loadRegistry(dir)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, fmt.Errorf("lakesql: open DuckDB: %w", err)
	}
	if _, err := db.ExecContext(ctx, "SET TimeZone = 'UTC'"); err != nil {
		db.Close()
		return nil, fmt.Errorf("lakesql: DuckDB settings: %w", err)
	}
	e := &Engine{opts: opts, db: db, sinks: map[string]*sinkHandle{}}
	e.buffers, e.stopJanitor = startSinkBuffers(opts.MaxOpenSinks, opts.SinkIdleTimeout)
	bopts.Buffers = e.buffers
	e.backends = sinkdef.New(db, bopts)
	for _, r := range records {
		h := &sinkHandle{engine: e, rec: r, lock: make(chan struct{}, 1), persisted: true}
		st, perr := sinkddl.Parse(r.Statement)
		if cs, ok := st.(*sinkddl.CreateSink); perr == nil && ok {
			h.def = cs
			h.spec = e.backends.Define(cs, r.Path)
		} else {
			h.defErr = fmt.Errorf("sink %s: its stored definition does not parse: %v", r.Name, perr)
		}
		e.sinks[strings.ToLower(r.Name)] = h
	}
	if err := e.adoptPending(ctx); err != nil {
		return nil, err
	}
	registerSystemVariables()
	e.gms = sqle.NewDefault(&provider{engine: e})
	e.gms.ProcessList = maskedProcessList{e.gms.ProcessList}
	e.gms.Analyzer.ExecBuilder = newStrictBuilder()
	interruptibleAnalysis(e.gms.Analyzer)
	exactAggregatesAnalysis(e.gms.Analyzer)
	e.gms.Parser = &gmsParser{engine: e, mysql: gms.NewMysqlParser()}
	if err := e.nullUnknownTableRows(); err != nil {
		return nil, err
	}
	if err := e.infoSchemaOwnCollation(); err != nil {
		return nil, err
	}
	if err := e.textCharMaxLength(); err != nil {
		return nil, err
	}
	return e, nil
}

// GMS returns the go-mysql-server engine, for the MySQL server: its
// Parser is lakesql's, its sessions must be *Session (NewSessionWith).
func (e *Engine) GMS() *sqle.Engine { return e.gms }

// Close closes the sinks (discarding open epochs) and DuckDB.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	e.stopJanitor()
	var errs []error
	for _, h := range e.sinks {
		if err := h.close(); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, e.backends.Close())
	// go-mysql-server's Close always reports the cancellation of its
	// background threads' context: that is its normal shutdown.
	if err := e.gms.Close(); err != nil && !errors.Is(err, context.Canceled) {
		errs = append(errs, err)
	}
	errs = append(errs, e.db.Close())
	// Last: the next holder must find the sinks' epochs committed or gone.
	errs = append(errs, e.lock.release())
	return errors.Join(errs...)
}

// sinkHandle is one defined sink; its sqlsink.Sink is opened on first use.
type sinkHandle struct {
	engine    *Engine
	rec       sinkRecord
	def       *sinkddl.CreateSink
	defErr    error
	persisted bool
	// creating: CREATE SINK reserved the name and is still creating the
	// table (guarded by the engine's mu). Such a handle is invisible to
	// every statement but another CREATE SINK of the name or the table.
	creating bool
	// spec is def resolved, WITH options read (nil when def is): its
	// table (one table has at most one sink) and the places it writes to.
	spec *sinkdef.Definition

	// lock is held by the session whose transaction has an open epoch on
	// the sink: an epoch is one sequence of calls on the sink.
	lock chan struct{}
	// group gathers the COMMITs of transactions that only appended to
	// the sink into shared table versions (groupcommit.go).
	group groupCommitter
	// use is the sink's metadata lock (sinkuse.go).
	use sinkUse

	openMu  sync.Mutex
	sink    *sqlsink.Sink
	gschema gms.Schema
	// rules are what gschema's columns' declared types require (columnrules.go).
	rules []columnRule
	// values are what gschema's columns accept before conversion (valuecheck.go).
	values []valueRule
}

// open returns the opened sink, opening it on first use.
func (h *sinkHandle) open(ctx context.Context) (*sqlsink.Sink, error) {
	h.openMu.Lock()
	defer h.openMu.Unlock()
	if h.sink != nil {
		return h.sink, nil
	}
	if h.defErr != nil {
		return nil, h.defErr
	}
	// A failure is not remembered: the next use tries again, so a table
	// that comes back (or a transient error) heals without a restart.
	s, err := h.engine.backends.Open(ctx, h.spec, h.persisted)
	if err != nil {
		return nil, err
	}
	if h.rec.Columns != nil {
		if change := schemaChange(h.rec.Columns, s.Schema()); change != "" {
			s.Close()
			return nil, fmt.Errorf("%w: sink %s: the table at %s changed underneath: %s (DROP SINK and CREATE SINK again to take the new schema)",
				sqlsink.ErrConfig, h.rec.Name, h.rec.Path, change)
		}
	}
	h.sink = s
	return s, nil
}

func (h *sinkHandle) close() error {
	h.openMu.Lock()
	defer h.openMu.Unlock()
	if h.sink == nil {
		return nil
	}
	err := h.sink.Close()
	h.sink = nil
	return err
}

// DefaultLockWaitTimeout is Options.LockWaitTimeout when 0: MySQL's
// innodb_lock_wait_timeout default.
const DefaultLockWaitTimeout = 50 * time.Second

// acquire makes the caller the sink's only writer until release. It waits
// for the transaction that holds the sink, at most Options.LockWaitTimeout.
func (h *sinkHandle) acquire(ctx context.Context) error {
	select {
	case h.lock <- struct{}{}:
		return nil
	default:
	}
	wait := h.engine.opts.LockWaitTimeout
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case h.lock <- struct{}{}:
		return nil
	case <-timer.C:
		return fmt.Errorf("%w: sink %s (waited %v)", errSinkBusy, h.rec.Name, wait)
	case <-ctx.Done():
		// A caller's deadline is a lock wait that timed out (1205); a
		// cancellation (KILL QUERY, a closed connection) interrupts
		// the statement (1317).
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%w: sink %s (%w)", errSinkBusy, h.rec.Name, ctx.Err())
		}
		return fmt.Errorf("%w while it waited for sink %s (%w)", errInterrupted, h.rec.Name, ctx.Err())
	}
}

func (h *sinkHandle) release() { <-h.lock }

// lookup returns the handle of a sink by case-insensitive name.
func (e *Engine) lookup(name string) (*sinkHandle, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	h, ok := e.sinks[strings.ToLower(name)]
	if ok && h.creating {
		return nil, false
	}
	return h, ok
}

// sinkNames returns the sinks' names in sorted order.
func (e *Engine) sinkNames() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, 0, len(e.sinks))
	for _, h := range e.sinks {
		if !h.creating {
			out = append(out, h.rec.Name)
		}
	}
	sort.Strings(out)
	return out
}

// saveLocked writes the registry; e.mu must be held.
func (e *Engine) saveLocked() error {
	recs := make([]sinkRecord, 0, len(e.sinks))
	for _, h := range e.sinks {
		if !h.creating {
			recs = append(recs, h.rec)
		}
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Name < recs[j].Name })
	return saveRegistry(e.opts.DataDir, recs)
}

// Result is what a statement returns: rows with their column names, or a
// count of affected rows, and the warnings it raised.
type Result struct {
	Columns []string
	// Types are the columns' types, when the statement returns rows.
	Types        []ColumnType
	Rows         [][]any
	RowsAffected uint64
	Warnings     []Warning
}

// Warning is a note or warning a statement raised.
type Warning struct {
	Level   string
	Code    int
	Message string
}

// Exec runs one statement for a session, through go-mysql-server with
// lakesql's parser (see parser.go), as the MySQL server will.
func (e *Engine) Exec(ctx context.Context, s *Session, query string) (*Result, error) {
	return s.execGMS(ctx, query)
}

func (e *Engine) execLakesql(ctx context.Context, s *Session, st sinkddl.Statement) (*Result, error) {
	if err := e.checkLakesql(ctx, st); err != nil {
		return nil, err
	}
	switch st := st.(type) {
	case *sinkddl.CreateSink:
		if err := s.commitBeforeDDL(ctx); err != nil {
			return nil, err
		}
		return e.createSink(ctx, st)
	case *sinkddl.DropSink:
		if err := s.commitBeforeDDL(ctx); err != nil {
			return nil, err
		}
		return e.dropSink(ctx, st)
	case *sinkddl.ShowSinks:
		return e.visibleRows(ctx, e.showSinks()), nil
	case *sinkddl.ShowCreateSink:
		h, ok := e.lookup(st.Name)
		if !ok {
			return nil, fmt.Errorf("%w: sink %s", ErrNoSink, st.Name)
		}
		shown := h.rec.Statement
		if h.def != nil {
			shown = sinkdef.Shown(h.def)
		}
		return &Result{Columns: []string{"Sink", "Create Sink"}, Rows: [][]any{{h.rec.Name, shown}}}, nil
	case *sinkddl.ShowSinkStatus:
		res, err := e.showSinkStatus(ctx, st.Name)
		return e.visibleRows(ctx, res), err
	case *sinkddl.OptimizeSink:
		if err := s.commitBeforeDDL(ctx); err != nil {
			return nil, err
		}
		return e.optimizeSink(ctx, st)
	case *sinkddl.VacuumSink:
		if !st.DryRun {
			if err := s.commitBeforeDDL(ctx); err != nil {
				return nil, err
			}
		}
		return e.vacuumSink(ctx, st)
	case *sinkddl.ShowSinkHistory:
		return e.showSinkHistory(ctx, st)
	case *sinkddl.AlterSink:
		return e.alterSink(ctx, s, st)
	}
	return nil, fmt.Errorf("%w: %s", ErrNotSupported, st)
}

// ErrNoSink marks a sink name that is not defined.
var ErrNoSink = errors.New("no such sink")

// ErrSinkExists marks CREATE SINK of a name that is taken.
var ErrSinkExists = errors.New("sink already exists")

// dataDirFiles are the data directory's own files, which no sink may take.
var dataDirFiles = []string{registryFile, "users.json", "users.json.migrated", "privileges.db", LockFile, ".lakesql_history"}

// checkAreasLocked refuses the places a new sink writes to when they
// collide with the data directory's own or with another sink's. e.mu is
// held.
func (e *Engine) checkAreasLocked(spec *sinkdef.Definition) error {
	others := make(map[string]*sinkdef.Definition, len(e.sinks))
	for _, h := range e.sinks {
		if h.spec != nil {
			others[h.rec.Name] = h.spec
		}
	}
	return e.backends.CheckAreas(spec, others)
}

func (e *Engine) createSink(ctx context.Context, cs *sinkddl.CreateSink) (*Result, error) {
	stored := *cs
	stored.IfNotExists = false
	spec, err := e.backends.Resolve(&stored)
	if err != nil {
		return nil, fmt.Errorf("sink %s: %w", cs.Name, err)
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, errors.New("lakesql: the engine is closed")
	}
	if h, ok := e.sinks[strings.ToLower(cs.Name)]; ok {
		e.mu.Unlock()
		if h.creating {
			// Not known to exist yet: IF NOT EXISTS cannot say it does.
			return nil, fmt.Errorf("%w: %s: another statement is creating it (try again when that statement ends)", ErrSinkExists, cs.Name)
		}
		if cs.IfNotExists {
			return &Result{Warnings: []Warning{{Level: "Note", Code: 1050, Message: fmt.Sprintf("sink %s already exists", cs.Name)}}}, nil
		}
		return nil, fmt.Errorf("%w: %s", ErrSinkExists, cs.Name)
	}
	for _, h := range e.sinks {
		if h.spec != nil && h.spec.Table == spec.Table {
			e.mu.Unlock()
			return nil, fmt.Errorf("sink %s: %w: the table at %s is already the sink %s", cs.Name, ErrLocation, spec.Path, h.rec.Name)
		}
	}
	if err := e.checkAreasLocked(spec); err != nil {
		e.mu.Unlock()
		return nil, fmt.Errorf("sink %s: %w", cs.Name, err)
	}
	// Reserve the name and the table while the table is created, which
	// may be network I/O bounded only by the catalog timeout: the engine
	// is not locked meanwhile, so other statements go on.
	h := &sinkHandle{engine: e, rec: sinkRecord{Name: cs.Name, Format: cs.Format, Statement: stored.String(), Path: spec.Path},
		def: &stored, spec: spec, lock: make(chan struct{}, 1), creating: true}
	e.sinks[strings.ToLower(cs.Name)] = h
	e.mu.Unlock()

	s, err := e.backends.Open(ctx, spec, false)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err == nil && e.closed {
		s.Close()
		err = errEngineClosed
	}
	if err == nil {
		h.sink, h.persisted, h.creating = s, true, false
		h.rec.Columns = storedColumns(s.Schema())
		err = e.saveLocked()
		if err != nil {
			s.Close()
			h.sink = nil
		}
	}
	if err != nil {
		delete(e.sinks, strings.ToLower(cs.Name))
		return nil, err
	}
	return &Result{}, nil
}

func (e *Engine) dropSink(ctx context.Context, ds *sinkddl.DropSink) (*Result, error) {
	if ds.Purge {
		return nil, fmt.Errorf("%w: DROP SINK ... PURGE", ErrNotSupported)
	}
	h, ok := e.lookup(ds.Name)
	if !ok {
		if ds.IfExists {
			return &Result{Warnings: []Warning{{Level: "Note", Code: 1051, Message: fmt.Sprintf("unknown sink %s", ds.Name)}}}, nil
		}
		return nil, fmt.Errorf("%w: %s", ErrNoSink, ds.Name)
	}
	// Wait for a transaction writing to it to finish.
	if err := h.acquireAlone(ctx); err != nil {
		return nil, err
	}
	defer h.releaseAlone()
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.sinks, strings.ToLower(ds.Name))
	if err := e.saveLocked(); err != nil {
		e.sinks[strings.ToLower(ds.Name)] = h
		return nil, err
	}
	h.openMu.Lock()
	h.defErr = fmt.Errorf("%w: %s was dropped", ErrNoSink, h.rec.Name)
	h.openMu.Unlock()
	h.close()
	return &Result{}, nil
}

func (e *Engine) showSinks() *Result {
	res := &Result{Columns: []string{"Sink", "Format", "Location", "Mode"}}
	for _, n := range e.sinkNames() {
		h, ok := e.lookup(n)
		if !ok {
			continue
		}
		mode := string(sqlsink.ModeAppend)
		format := ""
		if h.def != nil {
			format = strings.ToUpper(h.def.Format)
			if m, err := h.spec.Mode(); err == nil && m != "" {
				mode = string(m)
			}
		}
		res.Rows = append(res.Rows, []any{h.rec.Name, format, h.rec.Path, mode})
	}
	return res
}

func (e *Engine) showSinkStatus(ctx context.Context, name string) (*Result, error) {
	names := e.sinkNames()
	if name != "" {
		h, ok := e.lookup(name)
		if !ok {
			return nil, fmt.Errorf("%w: %s", ErrNoSink, name)
		}
		names = []string{h.rec.Name}
	}
	res := &Result{Columns: append([]string{"Sink", "Health", "Last_epoch", "Table_version", "Commits", "Rows", "Error"},
		maintenanceStatusColumns...)}
	for _, n := range names {
		h, ok := e.lookup(n)
		if !ok {
			continue
		}
		s, err := h.open(ctx)
		if err != nil {
			// Every session sees it: no URL password or token in it.
			row := []any{h.rec.Name, "unavailable", nil, nil, nil, nil, secret.MaskURI(err.Error())}
			res.Rows = append(res.Rows, append(row, make([]any, len(maintenanceStatusColumns))...))
			continue
		}
		var last any
		if ep, ok := s.LastCommittedEpoch(); ok {
			last = ep
		}
		m := s.Metrics()
		// The Delta version, or the Iceberg table's current snapshot id;
		// NULL for an Iceberg table without snapshots (-1 to the sink).
		var version any
		if m.LastVersion >= 0 {
			version = m.LastVersion
		}
		// A sink that is not healthy says why in Error.
		health := s.Health()
		var reason any
		if health.Reason != "" {
			reason = secret.MaskURI(health.Reason)
		}
		maint, current := maintenanceStatus(ctx, s)
		if current != nil {
			version = current
		}
		row := []any{h.rec.Name, string(health.Status), last, version, m.Commits, m.RowsWritten, reason}
		res.Rows = append(res.Rows, append(row, maint...))
	}
	return res, nil
}

// embeddedPids numbers the statements Engine.Exec runs, as the server's
// session manager numbers its own: a session tells one statement from the
// next by its process id (see statementTargets). The server's numbers
// start at 1; these count down from the top, so the two never meet.
var embeddedPids atomic.Uint64

// gmsContext builds a go-mysql-server context for a session's next
// statement, query, with a process id of its own.
func (e *Engine) gmsContext(ctx context.Context, s *Session, query string) *gms.Context {
	pid := math.MaxUint64 - embeddedPids.Add(1)
	return gms.NewContext(ctx, gms.WithSession(s), gms.WithPid(pid), gms.WithQuery(query))
}
