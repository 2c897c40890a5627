package main

// The three ways the scenario reaches lakesql: go-sql-driver/mysql and the
// mariadb client against a real `lakesql serve` process, and the embedded
// database/sql driver.

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
)

const scenarioPassword = "scenario-pw"

// servedData is a data directory served by a `lakesql serve` process.
type servedData struct {
	bin  string
	dir  string
	proc *serveProcess
	// tableRoot is where relative Delta locations go ("": the data
	// directory); args and env are the flags and environment that say so.
	tableRoot string
	args      []string
	env       []string
}

// newServedData serves a fresh data directory whose relative Delta
// locations go to the data directory itself.
func newServedData(t *testing.T) *servedData {
	dir := filepath.Join(t.TempDir(), "data")
	return startServedData(t, &servedData{dir: dir, args: []string{"--allowed-roots", dir}})
}

// newServedLake serves a fresh data directory whose relative Delta
// locations go to a prefix of the shared versitygw. With credentials
// they are given by --storage flags, and the allowed roots by
// --allowed-roots (a directory and an s3:// location); without, the
// credentials come from the environment and the allowed roots are the
// default ones (the data directory and the table root).
func newServedLake(t *testing.T, credentials bool) *servedData {
	dir := filepath.Join(t.TempDir(), "data")
	root := lake.URL(lakePrefix(t) + "/tables")
	sd := &servedData{dir: dir, tableRoot: root, args: append([]string{"--table-root", root}, lakeStorageFlags(credentials)...)}
	if credentials {
		sd.args = append(sd.args, "--allowed-roots", dir+","+root)
	} else {
		sd.env = lake.Env()
	}
	return startServedData(t, sd)
}

func startServedData(t *testing.T, sd *servedData) *servedData {
	sd.bin = sharedLakesql(t)
	sd.start(t)
	return sd
}

func (sd *servedData) start(t *testing.T) {
	t.Helper()
	sd.proc = startServe(t, sd.bin, append([]string{"LAKESQL_ROOT_PASSWORD=" + scenarioPassword}, sd.env...),
		append([]string{"--listen", "127.0.0.1:0", "--data", sd.dir}, sd.args...)...)
}

func (sd *servedData) TableRoot() string { return sd.tableRoot }

// restart stops the server with SIGTERM (it must exit cleanly) and starts
// it again. What the server printed must not show the storage secret.
func (sd *servedData) restart(t *testing.T) {
	t.Helper()
	code, rest := sd.proc.stop(t)
	if code != 0 {
		t.Errorf("lakesql serve exited with %d on SIGTERM\nstderr:\n%s", code, sd.proc.stderr)
	}
	if sd.tableRoot != "" && strings.Contains(rest+sd.proc.stderr.String(), lake.SecretKey) {
		t.Errorf("lakesql serve printed the storage secret:\n%s\n%s", rest, sd.proc.stderr)
	}
	sd.start(t)
}

func (sd *servedData) dsn(user, password string) string {
	return fmt.Sprintf("%s:%s@tcp(%s)/lakesql?timeout=30s", user, password, sd.proc.addr)
}

// mysqlDriverPath: go-sql-driver/mysql over lakesql serve.
type mysqlDriverPath struct{ *servedData }

func (p mysqlDriverPath) Name() string    { return "go-sql-driver" }
func (p mysqlDriverPath) DataDir() string { return p.dir }

func (p mysqlDriverPath) Open(t *testing.T) session {
	t.Helper()
	s, err := p.OpenAs(t, "root", scenarioPassword)
	if err != nil {
		t.Fatalf("open a session: %v", err)
	}
	return s
}

func (p mysqlDriverPath) OpenAs(t *testing.T, user, password string) (session, error) {
	return openDBSession(t, "mysql", p.dsn(user, password))
}

func (p mysqlDriverPath) OpenKillable(t *testing.T) killable {
	t.Helper()
	c, err := startChildSession(t, "mysql", p.dsn("root", scenarioPassword))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (p mysqlDriverPath) Restart(t *testing.T) { p.restart(t) }

// dbSession is a session with a *sql.DB of its own, closed with it.
type dbSession struct {
	*sqlSession
	db *sql.DB
}

func (s dbSession) Close() error {
	err := s.sqlSession.Close()
	if cerr := s.db.Close(); err == nil {
		err = cerr
	}
	return err
}

func openDBSession(t *testing.T, driverName, dsn string) (session, error) {
	db, err := sql.Open(driverName, dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxIdleConns(0)
	s, err := openSQLSession(t.Context(), db)
	if err != nil {
		db.Close()
		return nil, err
	}
	return dbSession{sqlSession: s, db: db}, nil
}

// mariadbPath: the mariadb command-line client over lakesql serve.
type mariadbPath struct{ *servedData }

func (p mariadbPath) Name() string    { return "mariadb" }
func (p mariadbPath) DataDir() string { return p.dir }

func (p mariadbPath) Open(t *testing.T) session {
	t.Helper()
	s, err := p.OpenAs(t, "root", scenarioPassword)
	if err != nil {
		t.Fatalf("open a session: %v", err)
	}
	return s
}

func (p mariadbPath) OpenAs(t *testing.T, user, password string) (session, error) {
	s, err := startMariadb(t, p.proc.addr, user, password)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (p mariadbPath) OpenKillable(t *testing.T) killable {
	t.Helper()
	s, err := startMariadb(t, p.proc.addr, "root", scenarioPassword)
	if err != nil {
		t.Fatalf("open a session: %v", err)
	}
	return s
}

func (p mariadbPath) Restart(t *testing.T) { p.restart(t) }

// embeddedPath: lakesql's database/sql driver in this process. Like a
// program using it, the path keeps one *sql.DB; the engine lives as long as
// it (and its connections).
type embeddedPath struct {
	dir       string
	tableRoot string // "": the data directory
	db        *sql.DB
}

func newEmbeddedPath(t *testing.T) *embeddedPath {
	return openEmbeddedPath(t, &embeddedPath{dir: filepath.Join(t.TempDir(), "data")})
}

// newEmbeddedLake opens an embedded path whose relative Delta locations go
// to a prefix of the shared versitygw (DSN options table_root and
// storage.*).
func newEmbeddedLake(t *testing.T) *embeddedPath {
	return openEmbeddedPath(t, &embeddedPath{dir: filepath.Join(t.TempDir(), "data"), tableRoot: lake.URL(lakePrefix(t) + "/tables")})
}

func openEmbeddedPath(t *testing.T, p *embeddedPath) *embeddedPath {
	p.open(t)
	t.Cleanup(func() { p.db.Close() })
	return p
}

func (p *embeddedPath) dsn() string {
	v := url.Values{"allowed_roots": {p.dir}}
	if p.tableRoot != "" {
		v.Add("allowed_roots", p.tableRoot)
		v.Set("table_root", p.tableRoot)
		for k, val := range lake.Options() {
			v.Set(k, val)
		}
	}
	return p.dir + "?" + v.Encode()
}

func (p *embeddedPath) TableRoot() string { return p.tableRoot }

func (p *embeddedPath) open(t *testing.T) {
	t.Helper()
	db, err := sql.Open("lakesql", p.dsn())
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxIdleConns(0)
	p.db = db
}

func (p *embeddedPath) Name() string    { return "embedded" }
func (p *embeddedPath) DataDir() string { return p.dir }

func (p *embeddedPath) Open(t *testing.T) session {
	t.Helper()
	s, err := openSQLSession(context.Background(), p.db)
	if err != nil {
		t.Fatalf("open a session: %v", err)
	}
	return s
}

func (p *embeddedPath) OpenAs(*testing.T, string, string) (session, error) {
	return nil, errNotApplicable
}

// OpenKillable runs the embedded driver in a child process of its own:
// killing it kills an engine mid-transaction. A data directory serves one
// process (the engine locks it), so the child's is its own, with the
// parent's sinks defined again on the same tables (its table root is the
// parent's, so their relative locations name the same tables).
func (p *embeddedPath) OpenKillable(t *testing.T) killable {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "child")
	root := p.tableRoot
	if root == "" {
		root = p.dir
	}
	v := url.Values{"allowed_roots": {dir, p.dir}, "table_root": {root}}
	if p.tableRoot != "" {
		v.Add("allowed_roots", p.tableRoot)
		for k, val := range lake.Options() {
			v.Set(k, val)
		}
	}
	c, err := startChildSession(t, "lakesql", dir+"?"+v.Encode())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var names []string
	rows, err := p.db.QueryContext(ctx, "SHOW SINKS")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		var name string
		vals[0] = &name
		for i := 1; i < len(vals); i++ {
			vals[i] = new(sql.RawBytes)
		}
		if err := rows.Scan(vals...); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	rows.Close()
	for _, name := range names {
		var sink, create string
		if err := p.db.QueryRowContext(ctx, "SHOW CREATE SINK "+name).Scan(&sink, &create); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(ctx, create); err != nil {
			t.Fatalf("define sink %s in the child: %s: %v", name, create, err)
		}
	}
	return c
}

// Restart closes the *sql.DB, which closes the engine (its sessions are
// closed), and opens the data directory again.
func (p *embeddedPath) Restart(t *testing.T) {
	t.Helper()
	if err := p.db.Close(); err != nil {
		t.Errorf("close the engine: %v", err)
	}
	p.open(t)
}
