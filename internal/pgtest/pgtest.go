// Package pgtest starts a PostgreSQL server of a test's own, for the tests
// of the Iceberg SQL catalog on PostgreSQL: initdb into a temporary folder,
// postgres on a free loopback port, stopped when the test ends.
package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/lib/pq" // the postgres driver
)

// BinEnv names the folder of initdb and postgres; default DefaultBin.
const BinEnv = "LAKESQL_PG_BIN"

// DefaultBin is where Debian's postgresql-15 package puts its programs.
const DefaultBin = "/usr/lib/postgresql/15/bin"

// Server is a running PostgreSQL; User is its superuser (trust login).
type Server struct {
	Port int
	User string
	n    atomic.Int64
}

// Start starts a server for t, stopped (and its folder removed) in
// t.Cleanup. The test skips when PostgreSQL's programs are not installed
// (BinEnv, DefaultBin). As root, which initdb refuses, the server runs as
// the postgres user, or nobody.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := os.Getenv(BinEnv)
	if bin == "" {
		bin = DefaultBin
	}
	if _, err := os.Stat(filepath.Join(bin, "initdb")); err != nil {
		t.Skipf("PostgreSQL is not installed (%v); install postgresql or set $%s", err, BinEnv)
	}
	dir, err := os.MkdirTemp("", "lakesql-pgtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		cred, err = unprivileged()
		if err != nil {
			t.Fatal(err)
		}
		// The folder is 0700; the server's user must own it.
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	s := &Server{User: "lakesql"}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", s.User,
		"--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	s.Port, err = freePort()
	if err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		t.Fatal(err)
	}
	pg := exec.Command(filepath.Join(bin, "postgres"), "-D", filepath.Join(dir, "data"), "-k", dir,
		"-p", strconv.Itoa(s.Port), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off")
	pg.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	pg.Stdout, pg.Stderr = logf, logf
	if err := pg.Start(); err != nil {
		t.Fatalf("start postgres: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- pg.Wait(); logf.Close() }()
	t.Cleanup(func() {
		pg.Process.Signal(syscall.SIGINT) // fast shutdown
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			pg.Process.Kill()
			<-exited
		}
	})
	db, err := sql.Open("postgres", s.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Wait for the server to take connections, or to die.
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return s
		}
		select {
		case werr := <-exited:
			exited <- werr
			log, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
			t.Fatalf("postgres exited (%v) before it took connections: %v\n%s", werr, err, log)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// DSN is the lib/pq URL of database name.
func (s *Server) DSN(name string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", s.User, s.Port, name)
}

// NewDatabase creates an empty database and returns its DSN.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	db, err := sql.Open("postgres", s.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	name := fmt.Sprintf("db%d", s.n.Add(1))
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	return s.DSN(name)
}

func unprivileged() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 == nil && err2 == nil {
			return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
		}
	}
	return nil, fmt.Errorf("running as root, and neither a postgres nor a nobody user to run PostgreSQL as")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
