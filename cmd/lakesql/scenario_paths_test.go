package main

// The three ways the scenario reaches lakesql: go-sql-driver/mysql and the
// mariadb client against a real `lakesql serve` process, and the embedded
// database/sql driver.

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
)

const scenarioPassword = "scenario-pw"

// servedData is a data directory served by a `lakesql serve` process.
type servedData struct {
	bin  string
	dir  string
	proc *serveProcess
}

func newServedData(t *testing.T) *servedData {
	sd := &servedData{bin: sharedLakesql(t), dir: filepath.Join(t.TempDir(), "data")}
	sd.start(t)
	return sd
}

func (sd *servedData) start(t *testing.T) {
	t.Helper()
	sd.proc = startServe(t, sd.bin, []string{"LAKESQL_ROOT_PASSWORD=" + scenarioPassword},
		"--listen", "127.0.0.1:0", "--data", sd.dir, "--allowed-roots", sd.dir)
}

// restart stops the server with SIGTERM (it must exit cleanly) and starts
// it again.
func (sd *servedData) restart(t *testing.T) {
	t.Helper()
	if code, _ := sd.proc.stop(t); code != 0 {
		t.Errorf("lakesql serve exited with %d on SIGTERM\nstderr:\n%s", code, sd.proc.stderr)
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
	dir string
	db  *sql.DB
}

func newEmbeddedPath(t *testing.T) *embeddedPath {
	p := &embeddedPath{dir: filepath.Join(t.TempDir(), "data")}
	p.open(t)
	t.Cleanup(func() { p.db.Close() })
	return p
}

func (p *embeddedPath) dsn() string { return p.dir + "?allowed_roots=" + p.dir }

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

// OpenKillable runs the embedded driver in a child process of its own,
// on the same data directory: killing it kills an engine mid-transaction.
func (p *embeddedPath) OpenKillable(t *testing.T) killable {
	t.Helper()
	c, err := startChildSession(t, "lakesql", p.dsn())
	if err != nil {
		t.Fatal(err)
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
