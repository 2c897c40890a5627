package benchmark

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// MariaDB is a reference some workloads measure beside their own: a
// MariaDB server (InnoDB, every commit flushed and synced to the redo log,
// no binary log) the bench starts in a folder of its own on a free
// loopback port and stops by its pid. It is the row store a MySQL client
// would otherwise write to, so its commits/s say what "fast" means to
// that client. It runs only where mariadbd is installed; elsewhere the
// workloads report its figures absent and still run.

// mariadbServer is one mariadbd process and the database "bench" in it.
type mariadbServer struct {
	cmd     *exec.Cmd
	exited  chan error
	sockDir string
	dsn     string
	db      *sql.DB
}

// errNoMariaDB says mariadbd is not installed; the workloads then leave
// the MariaDB figures out and say so.
var errNoMariaDB = errors.New("mariadbd not found in PATH, /usr/sbin or /usr/bin")

// mariadbDirs are where findMariaDB looks beyond PATH (Debian puts
// mariadbd in /usr/sbin, often not in a user's PATH); a variable so that a
// test can make MariaDB absent.
var mariadbDirs = []string{"/usr/sbin", "/usr/bin"}

// findMariaDB returns the paths of mariadbd and mariadb-install-db, or
// errNoMariaDB.
func findMariaDB() (server, install string, err error) {
	look := func(name string) string {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		for _, dir := range mariadbDirs {
			if p := filepath.Join(dir, name); isExecutable(p) {
				return p
			}
		}
		return ""
	}
	if server = look("mariadbd"); server == "" {
		return "", "", errNoMariaDB
	}
	if install = look("mariadb-install-db"); install == "" {
		return "", "", fmt.Errorf("%s is installed but mariadb-install-db is not", server)
	}
	return server, install, nil
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// startMariaDB initialises a data directory under dir and starts mariadbd
// on it, with a database "bench"; errNoMariaDB when it is not installed.
// The log is dir/mariadb.err; it is quoted when the server does not come
// up.
func startMariaDB(ctx context.Context, dir string) (*mariadbServer, error) {
	server, install, err := findMariaDB()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "mariadb-data")
	errLog := filepath.Join(dir, "mariadb.err")
	// mariadbd refuses to run as root unless told to.
	var user []string
	if os.Geteuid() == 0 {
		user = []string{"--user=root"}
	}
	initCmd := exec.CommandContext(ctx, install, append([]string{"--no-defaults", "--datadir=" + data,
		"--auth-root-authentication-method=normal", "--skip-test-db"}, user...)...)
	if out, err := initCmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mariadb-install-db: %w\n%s", err, logTail(out, 2000))
	}
	// A Unix socket path is limited to about 100 bytes; the workload's
	// folder may be deeper than that, so the socket gets a short one.
	sockDir, err := os.MkdirTemp("", "lakesql-mdb-")
	if err != nil {
		return nil, fmt.Errorf("mariadb socket dir: %w", err)
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(sockDir)
		return nil, err
	}
	args := append([]string{"--no-defaults", "--datadir=" + data,
		"--socket=" + filepath.Join(sockDir, "mysqld.sock"), "--pid-file=" + filepath.Join(dir, "mariadb.pid"),
		fmt.Sprintf("--port=%d", port), "--bind-address=127.0.0.1", "--skip-grant-tables",
		"--log-error=" + errLog, "--skip-log-bin", "--innodb-flush-log-at-trx-commit=1",
		"--default-storage-engine=InnoDB", "--max-connections=200"}, user...)
	// Not CommandContext: the server outlives Setup's context, and Close
	// stops it by its pid.
	cmd := exec.Command(server, args...)
	if err := cmd.Start(); err != nil {
		os.RemoveAll(sockDir)
		return nil, fmt.Errorf("start mariadbd: %w", err)
	}
	m := &mariadbServer{cmd: cmd, exited: make(chan error, 1), sockDir: sockDir,
		dsn: fmt.Sprintf("root@tcp(127.0.0.1:%d)/bench?timeout=30s", port)}
	go func() { m.exited <- cmd.Wait() }()
	if err := m.waitReady(ctx, port); err != nil {
		log, _ := os.ReadFile(errLog)
		return nil, errors.Join(fmt.Errorf("mariadbd on port %d: %w\n%s", port, err, logTail(log, 2000)), m.Close())
	}
	return m, nil
}

// waitReady creates the database "bench" as soon as the server accepts
// connections, for at most a minute, and opens the pool on it.
func (m *mariadbServer) waitReady(ctx context.Context, port int) error {
	admin, err := sql.Open("mysql", fmt.Sprintf("root@tcp(127.0.0.1:%d)/?timeout=5s", port))
	if err != nil {
		return err
	}
	defer admin.Close()
	deadline := time.Now().Add(time.Minute)
	for {
		err = admin.PingContext(ctx)
		if err == nil {
			break
		}
		select {
		case werr := <-m.exited:
			m.exited <- werr // Close waits on it too
			return fmt.Errorf("exited before accepting connections: %v", werr)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not accepting connections after a minute: %w", err)
		}
	}
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE bench"); err != nil {
		return fmt.Errorf("CREATE DATABASE bench: %w", err)
	}
	if m.db, err = sql.Open("mysql", m.dsn); err != nil {
		return err
	}
	m.db.SetMaxIdleConns(64)
	return nil
}

// conns opens n connections to the database "bench".
func (m *mariadbServer) conns(ctx context.Context, n int) ([]*sql.Conn, error) {
	return openConns(ctx, m.db, n)
}

// Close stops the server by its pid (SIGTERM, SIGKILL after 30 s) and
// removes its socket folder; the data directory goes with the workload's.
func (m *mariadbServer) Close() error {
	var errs []error
	if m.db != nil {
		errs = append(errs, m.db.Close())
	}
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		errs = append(errs, fmt.Errorf("stop mariadbd: %w", err))
	}
	select {
	case <-m.exited:
	case <-time.After(30 * time.Second):
		errs = append(errs, m.cmd.Process.Kill(), errors.New("mariadbd did not stop in 30 s; killed"))
		<-m.exited
	}
	errs = append(errs, os.RemoveAll(m.sockDir))
	return errors.Join(errs...)
}

// mariadbTableSQL is rowColumnsSQL for InnoDB: DATETIME(6), since a
// TIMESTAMP column means a time zone conversion (and, in older defaults,
// an automatic update) in MariaDB.
const mariadbTableSQL = "(id BIGINT NOT NULL, amount DOUBLE, region VARCHAR(16), ts DATETIME(6)) ENGINE=InnoDB"

// freePort asks the kernel for a free loopback port. Another process may
// take it before mariadbd binds it; the server then fails to start, and
// the workload with it.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// logTail is the end of a log, for an error message.
func logTail(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	return s
}

// startMariaDBReference starts MariaDB for a workload's further
// reference, or returns nil and a note saying why its figures will be
// absent: not installed, or installed and failing to start (the note
// quotes the error). Either way the workload runs on without it.
func startMariaDBReference(ctx context.Context, env Env, figures string) (*mariadbServer, string) {
	dir := filepath.Join(env.Dir, "mariadb")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Sprintf("MariaDB reference: %s not measured: %v", figures, err)
	}
	m, err := startMariaDB(ctx, dir)
	switch {
	case errors.Is(err, errNoMariaDB):
		note := fmt.Sprintf("MariaDB reference absent (%v): %s not measured", err, figures)
		fmt.Fprintln(env.Log, note)
		return nil, note
	case err != nil:
		note := fmt.Sprintf("MariaDB reference did not start: %s not measured: %v", figures, err)
		fmt.Fprintln(env.Log, note)
		return nil, note
	}
	return m, ""
}
