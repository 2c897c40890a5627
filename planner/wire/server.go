// Package wire is lakesql's MySQL wire front: a go-mysql-server server over
// the planner's engine, with one planner session per connection (so a
// connection's transactions are lakesql epochs), accounts and privileges
// (go-mysql-server's mysql database, persisted) with mysql_native_password, optional TLS, and a graceful shutdown that
// lets a statement in flight (a COMMIT) finish and rolls back open
// transactions.
package wire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	gmsserver "github.com/dolthub/go-mysql-server/server"
	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/sirupsen/logrus"

	sqle "github.com/dolthub/go-mysql-server"

	"github.com/lakesql/lakesql/planner"
)

// DefaultListen is the address lakesql serve listens on by default.
const DefaultListen = "127.0.0.1:3306"

// SecureFilesDir is the folder of the data directory that file-reading
// and file-writing SQL (LOAD_FILE, LOAD DATA, INTO OUTFILE) is confined to.
const SecureFilesDir = planner.FilesDir

// RootPasswordEnv is the environment variable that sets root's password.
const RootPasswordEnv = "LAKESQL_ROOT_PASSWORD"

// Config configures a Server.
type Config struct {
	// Listen is host:port; DefaultListen when empty. Ignored when Listener is set.
	Listen string
	// Listener, when set, is used instead of listening on Listen.
	Listener net.Listener
	// DataDir, AllowedRoots, TableRoot and Storage open the planner engine
	// (see planner.Options): TableRoot is where relative Delta locations
	// go (the data directory when empty, or e.g. s3://bucket/prefix), and
	// Storage the default storage.* options of Delta sinks on object
	// storage. Storage may hold secrets: it is never logged.
	DataDir      string
	AllowedRoots []string
	TableRoot    string
	Storage      map[string]string
	// RootPassword sets root's password (and stores its hash). When empty,
	// the stored password is kept, or one is generated on first start and
	// returned by Server.GeneratedPassword.
	RootPassword string
	// TLSCertFile and TLSKeyFile enable TLS (both or neither).
	TLSCertFile, TLSKeyFile string
	// MaxConnections limits simultaneous connections, counted from their
	// accept (logged in or not): DefaultMaxConnections when 0, at most
	// 100000. It is lowered, with a warning on Log, when the open-file
	// limit cannot hold it beside the server's own files (fdlimit.go).
	MaxConnections uint64
	// ConnectTimeout bounds a login, from accept to the client's OK:
	// DefaultConnectTimeout when 0, else whole seconds from 2s to
	// 31536000s (connect_timeout's range).
	ConnectTimeout time.Duration
	// MaxConnectErrors blocks a client address after this many connection
	// errors in a row (failed logins, logins timed out) until FLUSH HOSTS:
	// DefaultMaxConnectErrors when 0.
	MaxConnectErrors uint64
	// OpenFilesLimit, when not 0, sets the process's open-file limit
	// (RLIMIT_NOFILE) at start, as MySQL's --open-files-limit does.
	OpenFilesLimit uint64
	// ReadTimeout and WriteTimeout bound each network read and write; 0
	// is none.
	ReadTimeout, WriteTimeout time.Duration
	// Log receives the server's own warnings (connections it cannot
	// accept, an open-file limit too low); os.Stderr when nil. Never a
	// secret.
	Log io.Writer
	// MaxOpenSinks, SinkIdleTimeout and CatalogTimeout are the planner's
	// (planner.Options): 0 takes its default, a negative value is no bound.
	MaxOpenSinks    int
	SinkIdleTimeout time.Duration
	CatalogTimeout  time.Duration
	// LockWaitTimeout is the planner's (planner.Options): 0 takes its default.
	LockWaitTimeout time.Duration
}

// The defaults of Config's connection settings: MySQL's defaults for
// max_connections, connect_timeout and max_connect_errors.
const (
	DefaultMaxConnections   = 151
	DefaultConnectTimeout   = 10 * time.Second
	DefaultMaxConnectErrors = 100
)

// maxMaxConnections is max_connections' largest value.
const maxMaxConnections = 100000

// ErrOpenServer refuses to listen beyond loopback without a password.
var ErrOpenServer = errors.New("lakesql: refusing to listen beyond loopback without a root password: " +
	"set --root-password or " + RootPasswordEnv + " (or listen on 127.0.0.1)")

// Server is a running lakesql MySQL server.
type Server struct {
	engine *planner.Engine
	srv    *gmsserver.Server
	// quiet is the sessions' logger: their own log lines (a warning per
	// failed statement) are not printed, the client has the error.
	quiet     *logrus.Logger
	accounts  *mysql_db.MySQLDb
	hosts     *hostErrors
	addr      net.Addr
	generated string
	stats     serverStats

	mu       sync.Mutex
	conns    map[uint32]*connState
	sessions map[uint32]*planner.Session
	closing  bool
	done     chan struct{} // closed when Serve returns
	connWG   sync.WaitGroup
	shutOnce sync.Once
	shutErr  error
}

type connState struct {
	conn *mysql.Conn
	busy bool
}

// IsLoopback reports whether a listen address is confined to this host.
func IsLoopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// New opens the engine in cfg.DataDir, loads the accounts and listens.
// Serve accepts connections.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("lakesql: a data directory is required (--data DIR)")
	}
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if err := cfg.connectionDefaults(); err != nil {
		return nil, err
	}
	if (cfg.TLSCertFile == "") != (cfg.TLSKeyFile == "") {
		return nil, errors.New("lakesql: --tls-cert and --tls-key go together")
	}
	var tlsCfg *tls.Config
	if cfg.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("lakesql: TLS: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	stored, err := readAccounts(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	listen := cfg.Listen
	if cfg.Listener != nil {
		listen = cfg.Listener.Addr().String()
	}
	if !IsLoopback(listen) && cfg.RootPassword == "" {
		if hasRoot, err := stored.hasRoot(); err != nil {
			return nil, err
		} else if !hasRoot {
			return nil, ErrOpenServer
		}
	}

	// Listen first: a busy port must fail before a password is generated
	// (and stored) that would then never be shown.
	l := cfg.Listener
	if l == nil {
		if l, err = net.Listen("tcp", cfg.Listen); err != nil {
			return nil, fmt.Errorf("lakesql: listen on %s: %w", cfg.Listen, err)
		}
	}
	if cfg.MaxConnections, err = fitOpenFileLimit(cfg.OpenFilesLimit, cfg.MaxConnections, cfg.Log); err != nil {
		l.Close()
		return nil, err
	}
	hosts := newHostErrors()
	// lakesql admits connections itself, to refuse the extra ones with
	// 1040 and blocked addresses with 1129 before the handshake, and to
	// time logins out (see admitListener); vitess's limit stays off.
	l = newAdmitListener(newPatientListener(l, cfg.Log), hosts, admitSettings)
	l = guardListener{l} // answers the packets vitess cannot (commandGuard)

	// Quiet go-mysql-server's per-connection info logging, and keep the
	// literals of the statements it logs (secrets among them) off it.
	logrus.SetLevel(logrus.WarnLevel)
	redactStandardLogger()

	eng, err := planner.Open(ctx, planner.Options{
		DataDir: cfg.DataDir, AllowedRoots: cfg.AllowedRoots, TableRoot: cfg.TableRoot, Storage: cfg.Storage,
		FlushHosts: hosts.flush, MaxOpenSinks: cfg.MaxOpenSinks, SinkIdleTimeout: cfg.SinkIdleTimeout,
		CatalogTimeout: cfg.CatalogTimeout, LockWaitTimeout: cfg.LockWaitTimeout,
	})
	if err != nil {
		l.Close()
		return nil, err
	}
	// The accounts live in the data directory, which Open created. From
	// here on every session with an account is held to its privileges.
	accounts := eng.EnablePrivileges()
	generated, err := stored.load(accounts, cfg.RootPassword)
	if err != nil {
		l.Close()
		eng.Close()
		return nil, err
	}

	// The planner confines LOAD_FILE, LOAD DATA and SELECT ... INTO
	// OUTFILE to DATA/files (planner/filefuncs.go); secure_file_priv says
	// so to clients, and go-mysql-server's own check of LOAD DATA's
	// resolved path, a process-wide setting, needs it resolved too.
	if err := setSecureFilePriv(cfg.DataDir); err != nil {
		l.Close()
		eng.Close()
		return nil, err
	}
	// The connection settings are system variables too, the ones
	// admitListener reads (process-wide, like secure_file_priv).
	if err := assignConnectionSettings(cfg); err != nil {
		l.Close()
		eng.Close()
		return nil, err
	}
	s := &Server{engine: eng, accounts: accounts, generated: generated, hosts: hosts,
		quiet: quietLogger(), conns: map[uint32]*connState{}, sessions: map[uint32]*planner.Session{}, done: make(chan struct{})}
	scfg := gmsserver.Config{
		Protocol:         "tcp",
		Address:          cfg.Listen,
		Listener:         l,
		ConnReadTimeout:  cfg.ReadTimeout,
		ConnWriteTimeout: cfg.WriteTimeout,
		TLSConfig:        tlsCfg,
		Version:          planner.ServerVersion,
		Options: []gmsserver.Option{func(e *sqle.Engine, sm *gmsserver.SessionManager, h mysql.Handler) (*sqle.Engine, *gmsserver.SessionManager, mysql.Handler) {
			return e, sm, &handler{Handler: h, s: s}
		}},
		// go-mysql-server hands vitess its mysql database as the
		// AuthServer, which offers more plugins than lakesql's clients
		// have always been answered with; authServer replaces it.
		ProtocolListenerFactory: func(c gmsserver.Config, lc mysql.ListenerConfig, sel gmsserver.ServerEventListener) (gmsserver.ProtocolListener, error) {
			lc.AuthServer = loginWatch{AuthServer: &authServer{db: accounts}, hosts: hosts}
			return gmsserver.MySQLProtocolListenerFactory(c, lc, sel)
		},
	}
	s.addr = l.Addr()
	srv, err := gmsserver.NewServer(scfg, eng.GMS(), gms.NewContext, s.buildSession, nil)
	if err != nil {
		l.Close()
		eng.Close()
		return nil, fmt.Errorf("lakesql: server: %w", err)
	}
	s.srv = srv
	return s, nil
}

// setSecureFilePriv creates DATA/files and sets secure_file_priv to its
// path with its symlinks resolved.
func setSecureFilePriv(dataDir string) error {
	dir, err := filepath.Abs(filepath.Join(dataDir, SecureFilesDir))
	if err != nil {
		return fmt.Errorf("lakesql: secure_file_priv: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("lakesql: secure_file_priv: %w", err)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if err := gms.SystemVariables.AssignValues(map[string]any{"secure_file_priv": dir}); err != nil {
		return fmt.Errorf("lakesql: secure_file_priv: %w", err)
	}
	return nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.addr }

// GeneratedPassword is root's password when this start generated it (the
// data directory had no user store and none was given), else "".
func (s *Server) GeneratedPassword() string { return s.generated }

// Engine is the planner engine the server runs.
func (s *Server) Engine() *planner.Engine { return s.engine }

// ErrStoppedAccepting reports that the server stopped accepting
// connections while no Shutdown asked it to.
var ErrStoppedAccepting = errors.New("lakesql: the server stopped accepting connections")

// Serve accepts connections until Shutdown.
func (s *Server) Serve() error {
	defer close(s.done)
	err := s.srv.Start()
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	if err == nil && !closing {
		err = ErrStoppedAccepting
	}
	return err
}

// buildSession is the server's SessionBuilder: a planner session per connection.
func (s *Server) buildSession(_ context.Context, conn *mysql.Conn, addr string) (gms.Session, error) {
	host := ""
	if conn.RemoteAddr() != nil {
		host = conn.RemoteAddr().String()
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
	}
	client := gms.Client{Address: host, User: conn.User, Capabilities: conn.Capabilities}
	sess := s.engine.NewSessionWith(gms.NewBaseSessionWithClientServer(addr, client, conn.ConnectionID))
	sess.SetLogger(logrus.NewEntry(s.quiet))
	s.mu.Lock()
	if old := s.sessions[conn.ConnectionID]; old != nil {
		// COM_RESET_CONNECTION or a new session for the same connection:
		// the old one's transaction must not survive.
		go old.Close()
	}
	s.sessions[conn.ConnectionID] = sess
	s.mu.Unlock()
	return sess, nil
}

// quietLogger is a logger that prints nothing.
func quietLogger() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	l.SetLevel(logrus.WarnLevel)
	return l
}

// Shutdown stops accepting connections, lets statements in flight finish,
// closes every connection (which rolls back its open transaction) and
// closes the engine. When ctx ends first, the remaining connections are
// closed at once (their statements are cancelled).
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutOnce.Do(func() { s.shutErr = s.shutdown(ctx) })
	return s.shutErr
}

func (s *Server) shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.srv.Close() // stop accepting
	s.mu.Lock()
	for _, c := range s.conns {
		if !c.busy {
			stopReading(c.conn)
		}
	}
	s.mu.Unlock()

	waited := make(chan struct{})
	go func() { s.connWG.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-ctx.Done():
		s.mu.Lock()
		for _, c := range s.conns {
			c.conn.Close()
		}
		s.mu.Unlock()
		select {
		case <-waited:
		case <-time.After(5 * time.Second):
		}
	}
	// Sessions whose connection never reached ConnectionClosed.
	s.mu.Lock()
	rest := s.sessions
	s.sessions = map[uint32]*planner.Session{}
	s.mu.Unlock()
	var errs []error
	for _, sess := range rest {
		errs = append(errs, sess.Close())
	}
	errs = append(errs, s.engine.Close())
	return errors.Join(errs...)
}

// handler wraps go-mysql-server's handler: it tracks connections and the
// statement each runs (for the shutdown), and closes a connection's planner
// session when it goes away.
type handler struct {
	mysql.Handler
	s *Server
}

func (h *handler) NewConnection(c *mysql.Conn) {
	h.s.mu.Lock()
	h.s.conns[c.ConnectionID] = &connState{conn: c}
	h.s.connWG.Add(1)
	closing := h.s.closing
	h.s.mu.Unlock()
	h.s.stats.open.Add(1)
	h.s.stats.total.Add(1)
	if closing {
		c.Close()
	}
	initialStatus(c)
	guardConnection(c, func() bool { return h.idle(c) }, func(q string) *mysql.SQLError { return h.prepareSyntax(c, q) })
	h.Handler.NewConnection(c)
}

func (h *handler) ConnectionClosed(c *mysql.Conn) {
	h.Handler.ConnectionClosed(c)
	h.s.mu.Lock()
	sess := h.s.sessions[c.ConnectionID]
	delete(h.s.sessions, c.ConnectionID)
	_, known := h.s.conns[c.ConnectionID]
	delete(h.s.conns, c.ConnectionID)
	h.s.mu.Unlock()
	if sess != nil {
		// Rolls back the connection's open transaction, if any.
		_ = sess.Close()
	}
	if known {
		h.s.stats.open.Add(-1)
		h.s.connWG.Done()
	}
}

// begin marks the connection busy; false when the server is shutting down.
func (h *handler) begin(c *mysql.Conn) bool {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	st := h.s.conns[c.ConnectionID]
	if h.s.closing {
		return false
	}
	if st != nil {
		st.busy = true
	}
	return true
}

// idle reports that no statement of the connection runs.
func (h *handler) idle(c *mysql.Conn) bool {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	st := h.s.conns[c.ConnectionID]
	return st != nil && !st.busy
}

// end marks the connection idle, closing it if the server is shutting down.
func (h *handler) end(c *mysql.Conn) {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	if st := h.s.conns[c.ConnectionID]; st != nil {
		st.busy = false
	}
	if h.s.closing {
		stopReading(c)
	}
}

// stopReading ends a connection once the server has written what it is
// writing: the statement that just ended has its last packets to send, so
// only the reading half is shut (the next read sees EOF, the connection
// ends quietly). Without a TCP connection underneath, the read of the next
// command is made to fail at once, and the connection is closed a little
// later in any case (a read timeout re-arms the deadline before each read).
func stopReading(c *mysql.Conn) {
	if tc := tcpConn(c.Conn); tc != nil && tc.CloseRead() == nil {
		return
	}
	_ = c.Conn.SetReadDeadline(time.Now())
	time.AfterFunc(time.Second, c.Close)
}

func (h *handler) session(c *mysql.Conn) *planner.Session {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.s.sessions[c.ConnectionID]
}

// beginStatement starts a statement in the connection's planner session
// (planner.Session.BeginStatement), when go-mysql-server has built it.
func (h *handler) beginStatement(ctx context.Context, c *mysql.Conn) {
	if sess := h.session(c); sess != nil {
		sess.BeginStatement(ctx)
	}
}

// endStatement ends it (planner.Session.EndStatement): it returns the
// error the client gets, with lakesql's code, and whether the statement's
// commits were all replays.
func (h *handler) endStatement(ctx context.Context, c *mysql.Conn, err error) (replayed bool, _ error) {
	se, replayed := h.session(c).EndStatement(ctx, err)
	if se == nil {
		return replayed, nil
	}
	return replayed, se
}

// heldOK is a statement's OK result, which the result callback holds
// until the statement has ended: only then does the session know whether
// its commits were all replays, to be reported as 0 rows affected, as
// Engine.Exec does (go-mysql-server counts the rows before the commit).
type heldOK struct {
	r    *sqltypes.Result
	more bool
}

// send sends the held OK result, if any, once the statement ended with
// err and replayed.
func (o *heldOK) send(ctx context.Context, h *handler, c *mysql.Conn, err error, replayed bool, cb mysql.ResultSpoolFn) error {
	if err != nil || o.r == nil {
		return err
	}
	if replayed {
		o.r.RowsAffected = 0
	}
	h.syncStatus(ctx, c)
	return cb(o.r, o.more)
}

var errShutdown = mysql.NewSQLError(mysql.ERServerShutdown, mysql.SSUnknownSQLState, "lakesql: the server is shutting down")

func (h *handler) ComQuery(ctx context.Context, c *mysql.Conn, query string, cb mysql.ResultSpoolFn) (err error) {
	defer func() { h.s.stats.statement(query, err) }()
	if !h.begin(c) {
		return errShutdown
	}
	defer h.end(c)
	ctx, unwatch := watchPeer(ctx, c)
	defer unwatch()
	h.beginStatement(ctx, c)
	if emptyQuery(query) {
		return errEmptyQuery
	}
	var ok heldOK
	replayed, err := h.endStatement(ctx, c, h.Handler.ComQuery(ctx, c, query, h.spool(ctx, c, cb, &ok)))
	err = ok.send(ctx, h, c, err, replayed, cb)
	h.syncStatus(ctx, c) // for the EOF vitess writes after a result set
	return err
}

func (h *handler) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, cb mysql.ResultSpoolFn) (_ string, err error) {
	defer func() { h.s.stats.statement(query, err) }()
	if !h.begin(c) {
		return "", errShutdown
	}
	defer h.end(c)
	ctx, unwatch := watchPeer(ctx, c)
	defer unwatch()
	h.beginStatement(ctx, c)
	var ok heldOK
	rest, err := h.Handler.ComMultiQuery(ctx, c, query, h.spool(ctx, c, cb, &ok))
	replayed, err := h.endStatement(ctx, c, err)
	err = ok.send(ctx, h, c, err, replayed, cb)
	h.syncStatus(ctx, c)
	return rest, err
}

func (h *handler) ComPrepare(ctx context.Context, c *mysql.Conn, query string, p *mysql.PrepareData) (_ []*querypb.Field, err error) {
	// Counted when executed; a refusal here counts as an error only.
	defer func() { h.s.stats.statement("", err) }()
	if !h.begin(c) {
		return nil, errShutdown
	}
	defer h.end(c)
	ctx, unwatch := watchPeer(ctx, c)
	defer unwatch()
	h.beginStatement(ctx, c)
	if err := checkParamCount(p); err != nil {
		delete(c.PrepareData, p.StatementID)
		return nil, err
	}
	if err := h.prepareCost(c, query); err != nil {
		delete(c.PrepareData, p.StatementID)
		return nil, err
	}
	fields, err := h.Handler.ComPrepare(ctx, c, query, p)
	h.describeFields(fields)
	// A statement refused while it is prepared gets the code it gets
	// when it is sent as a query.
	_, err = h.endStatement(ctx, c, err)
	return fields, err
}

func (h *handler) ComStmtExecute(ctx context.Context, c *mysql.Conn, p *mysql.PrepareData, cb func(*sqltypes.Result) error) (err error) {
	defer func() { h.s.stats.statement(p.PrepareStmt, err) }()
	if !h.begin(c) {
		return errShutdown
	}
	defer h.end(c)
	ctx, unwatch := watchPeer(ctx, c)
	defer unwatch()
	h.beginStatement(ctx, c)
	padBinaryTimes(p)
	err = checkFloatParams(p)
	var ok heldOK
	if err == nil {
		err = h.Handler.ComStmtExecute(ctx, c, p, func(r *sqltypes.Result) error {
			return h.spool(ctx, c, func(r *sqltypes.Result, _ bool) error { return cb(r) }, &ok)(r, false)
		})
	}
	replayed, err := h.endStatement(ctx, c, err)
	err = ok.send(ctx, h, c, err, replayed, func(r *sqltypes.Result, _ bool) error { return cb(r) })
	h.syncStatus(ctx, c)
	return err
}

// spool wraps a statement's result callback: it refuses rows too large,
// holds an OK result until the statement has ended (heldOK), and sets the
// status flags of the packets the callback writes (syncStatus).
func (h *handler) spool(ctx context.Context, c *mysql.Conn, cb mysql.ResultSpoolFn, ok *heldOK) mysql.ResultSpoolFn {
	return func(r *sqltypes.Result, more bool) error {
		if err := h.checkRowSizes(c, r); err != nil {
			return err
		}
		okResult(r)
		if r != nil && len(r.Fields) == 0 {
			ok.r, ok.more = r, more
			return nil
		}
		h.describe(r)
		h.syncStatus(ctx, c)
		return cb(r, more)
	}
}
