package wire

import (
	"bufio"
	"context"
	"crypto/tls"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// firstPacket opens a TCP connection to addr and reads the server's first
// packet (a greeting, or an error in its place), leaving the connection
// open and silent. A deadline guards against a server that never answers.
func firstPacket(t *testing.T, addr string, local net.IP) (net.Conn, []byte) {
	t.Helper()
	d := net.Dialer{Timeout: 10 * time.Second}
	if local != nil {
		d.LocalAddr = &net.TCPAddr{IP: local}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		t.Fatalf("first packet: %v", err)
	}
	p := make([]byte, int(hdr[0])|int(hdr[1])<<8|int(hdr[2])<<16)
	if _, err := io.ReadFull(c, p); err != nil {
		t.Fatalf("first packet: %v", err)
	}
	return c, p
}

// errCode is the code of an ERR packet, 0 for any other packet.
func errCode(p []byte) uint16 {
	if len(p) < 3 || p[0] != 0xff {
		return 0
	}
	return binary.LittleEndian.Uint16(p[1:3])
}

// connectFrom logs in once as root from the local address local (nil:
// any), with its own connector so no pool retries, and closes the
// connection. It returns the login's error.
func connectFrom(t *testing.T, addr string, local net.IP, password string) error {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = "root", password, "tcp", addr, "lakesql"
	cfg.Timeout = 10 * time.Second
	if local != nil {
		cfg.DialFunc = func(ctx context.Context, network, a string) (net.Conn, error) {
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: local}}
			return d.DialContext(ctx, network, a)
		}
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := conn.Connect(context.Background())
	if err != nil {
		return err
	}
	return c.(driver.Pinger).Ping(context.Background())
}

func TestDefaultMaxConnectionsCountsSocketsNotLoggedIn(t *testing.T) {
	srv := startServerWith(t, Config{}).srv
	addr := srv.Addr().String()
	var silent []net.Conn
	for i := 0; i < DefaultMaxConnections; i++ {
		c, p := firstPacket(t, addr, nil)
		if errCode(p) != 0 {
			t.Fatalf("connection %d of %d: refused with %d", i+1, DefaultMaxConnections, errCode(p))
		}
		silent = append(silent, c)
	}
	// 151 sockets that never log in fill the default limit.
	_, p := firstPacket(t, addr, nil)
	if errCode(p) != 1040 || !strings.Contains(string(p), "Too many connections") {
		t.Fatalf("connection %d: %q, want ERR 1040 Too many connections", DefaultMaxConnections+1, p)
	}
	if err := connectFrom(t, addr, nil, testPassword); mysqlCode(err) != 1040 {
		t.Fatalf("a client beyond the limit: %v, want 1040", err)
	}
	for _, c := range silent {
		c.Close()
	}
	db := sql.OpenDB(mustConnector(t, dsn(addr, testPassword)))
	defer db.Close()
	var max int
	if err := retryRow(db, "SELECT @@max_connections", &max); err != nil {
		t.Fatal(err)
	}
	if max != DefaultMaxConnections {
		t.Errorf("@@max_connections = %d, want %d", max, DefaultMaxConnections)
	}
}

func mustConnector(t *testing.T, dsn string) driver.Connector {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// retryRow queries one value, trying again while the server still
// refuses with 1040 (the slots of closed sockets come free as the server
// sees them close).
func retryRow(db *sql.DB, q string, dest any) error {
	for {
		err := db.QueryRow(q).Scan(dest)
		if mysqlCode(err) != 1040 {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestConnectTimeoutDropsSilentSockets(t *testing.T) {
	const max = 60
	certFile, keyFile := selfSignedCert(t, t.TempDir())
	srv := startServerWith(t, Config{MaxConnections: max, ConnectTimeout: 2 * time.Second, ReadTimeout: time.Hour,
		TLSCertFile: certFile, TLSKeyFile: keyFile}).srv
	addr := srv.Addr().String()
	// Clients that logged in first, over TCP and over TLS, are not bound
	// by the login clock.
	// (Held connections: a pool would replace one the server closed.)
	ctx := context.Background()
	pool := sql.OpenDB(mustConnector(t, dsn(addr, testPassword)))
	defer pool.Close()
	db, err := pool.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := mysql.RegisterTLSConfig("floods-test", &tls.Config{InsecureSkipVerify: true}); err != nil {
		t.Fatal(err)
	}
	poolTLS := sql.OpenDB(mustConnector(t, dsn(addr, testPassword)+"&tls=floods-test"))
	defer poolTLS.Close()
	dbTLS, err := poolTLS.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer dbTLS.Close()
	var timeout int
	if err := db.QueryRowContext(ctx, "SELECT @@connect_timeout").Scan(&timeout); err != nil {
		t.Fatal(err)
	}
	if timeout != 2 {
		t.Errorf("@@connect_timeout = %d, want 2", timeout)
	}
	var silent []net.Conn
	for i := 2; i < max; i++ {
		c, p := firstPacket(t, addr, nil)
		if errCode(p) != 0 {
			t.Fatalf("connection %d: refused with %d", i+1, errCode(p))
		}
		silent = append(silent, c)
	}
	if err := connectFrom(t, addr, nil, testPassword); mysqlCode(err) != 1040 {
		t.Fatalf("with %d sockets open: %v, want 1040", max, err)
	}
	// Each silent socket is closed by the server (its read ends), long
	// before the read timeout of an hour.
	for i, c := range silent {
		if n, err := c.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("silent socket %d: read %d bytes, %v; want the server to close it", i, n, err)
		}
	}
	if err := connectFrom(t, addr, nil, testPassword); err != nil {
		t.Fatalf("after the silent sockets were dropped: %v", err)
	}
	for name, db := range map[string]*sql.Conn{"TCP": db, "TLS": dbTLS} {
		var one int
		if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("the %s client logged in before: SELECT 1 = %d, %v", name, one, err)
		}
	}
}

var (
	host1 = net.IPv4(127, 0, 0, 1)
	host2 = net.IPv4(127, 0, 0, 2)
)

func TestFailedLoginsBlockTheirAddressOnly(t *testing.T) {
	srv := startServerWith(t, Config{}).srv
	addr := srv.Addr().String()
	var denied, blocked int
	for i := 0; i < 200; i++ {
		switch err := connectFrom(t, addr, host1, "wrong"); mysqlCode(err) {
		case 1045:
			denied++
		case 1129:
			blocked++
			if want := "Host '127.0.0.1' is blocked because of many connection errors"; !strings.Contains(err.Error(), want) {
				t.Fatalf("1129: %v, want %q", err, want)
			}
		default:
			t.Fatalf("failed login %d: %v, want 1045 or 1129", i+1, err)
		}
	}
	if denied != DefaultMaxConnectErrors || blocked != 200-DefaultMaxConnectErrors {
		t.Fatalf("200 failed logins: %d denied (1045), %d blocked (1129); want %d and %d",
			denied, blocked, DefaultMaxConnectErrors, 200-DefaultMaxConnectErrors)
	}
	// Even the right password is refused now, before any handshake.
	if err := connectFrom(t, addr, host1, testPassword); mysqlCode(err) != 1129 {
		t.Fatalf("the right password from the blocked address: %v, want 1129", err)
	}
	_, p := firstPacket(t, addr, host1)
	if errCode(p) != 1129 {
		t.Fatalf("first packet to the blocked address: %q, want ERR 1129", p)
	}
	// Another address is not blocked: a wrong password is 1045, the right one logs in.
	if err := connectFrom(t, addr, host2, "wrong"); mysqlCode(err) != 1045 {
		t.Fatalf("a wrong password from 127.0.0.2: %v, want 1045", err)
	}
	if err := connectFrom(t, addr, host2, testPassword); err != nil {
		t.Fatalf("root from 127.0.0.2: %v", err)
	}
	var errs int
	db2 := openFrom(t, addr, host2)
	if err := db2.QueryRow("SELECT @@max_connect_errors").Scan(&errs); err != nil || errs != DefaultMaxConnectErrors {
		t.Fatalf("@@max_connect_errors = %d, %v; want %d", errs, err, DefaultMaxConnectErrors)
	}
	if _, err := db2.Exec("FLUSH HOSTS"); err != nil {
		t.Fatalf("FLUSH HOSTS: %v", err)
	}
	if err := connectFrom(t, addr, host1, testPassword); err != nil {
		t.Fatalf("after FLUSH HOSTS: %v", err)
	}
}

// openFrom is a pool of root connections from the local address local.
func openFrom(t *testing.T, addr string, local net.IP) *sql.DB {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = "root", testPassword, "tcp", addr, "lakesql"
	cfg.DialFunc = func(ctx context.Context, network, a string) (net.Conn, error) {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: local}}
		return d.DialContext(ctx, network, a)
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	return db
}

func TestSuccessfulLoginResetsConnectErrors(t *testing.T) {
	srv := startServerWith(t, Config{MaxConnectErrors: 3}).srv
	addr := srv.Addr().String()
	for round := 0; round < 3; round++ {
		for i := 0; i < 2; i++ {
			if err := connectFrom(t, addr, nil, "wrong"); mysqlCode(err) != 1045 {
				t.Fatalf("round %d, failed login %d: %v, want 1045", round, i+1, err)
			}
		}
		if err := connectFrom(t, addr, nil, testPassword); err != nil {
			t.Fatalf("round %d, after 2 failed logins of 3 allowed: %v", round, err)
		}
	}
	for i := 0; i < 3; i++ {
		if err := connectFrom(t, addr, nil, "wrong"); mysqlCode(err) != 1045 {
			t.Fatalf("failed login %d: %v, want 1045", i+1, err)
		}
	}
	if err := connectFrom(t, addr, nil, testPassword); mysqlCode(err) != 1129 {
		t.Fatalf("after 3 failed logins in a row: %v, want 1129", err)
	}
}

func TestSetGlobalConnectionSettings(t *testing.T) {
	srv := startServerWith(t, Config{}).srv
	addr := srv.Addr().String()
	db := openFrom(t, addr, host2)
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("SET GLOBAL max_connect_errors = 1"); err != nil {
		t.Fatal(err)
	}
	if err := connectFrom(t, addr, host1, "wrong"); mysqlCode(err) != 1045 {
		t.Fatalf("failed login: %v, want 1045", err)
	}
	if err := connectFrom(t, addr, host1, testPassword); mysqlCode(err) != 1129 {
		t.Fatalf("after 1 failed login with max_connect_errors = 1: %v, want 1129", err)
	}
	if _, err := db.Exec("SET GLOBAL max_connections = 1"); err != nil {
		t.Fatal(err)
	}
	if err := connectFrom(t, addr, host2, testPassword); mysqlCode(err) != 1040 {
		t.Fatalf("a second connection with max_connections = 1: %v, want 1040", err)
	}
}

func TestConfigRefusesOutOfRangeSettings(t *testing.T) {
	for _, cfg := range []Config{
		{ConnectTimeout: time.Second},
		{ConnectTimeout: 2500 * time.Millisecond},
		{MaxConnections: maxMaxConnections + 1},
	} {
		cfg.DataDir = t.TempDir()
		if srv, err := New(context.Background(), cfg); err == nil {
			srv.Shutdown(context.Background())
			t.Errorf("New(%+v) = nil error, want a refusal", cfg)
		}
	}
}

// The descriptor-exhaustion child: a server whose process has almost no
// file descriptors left.
const (
	fdChildEnv      = "LAKESQL_WIRE_FD_CHILD"
	fdChildPassword = "fd-child-secret"
	fdChildFree     = 8 // descriptors left free for connections
)

// fdExhaustionChild runs a server under an open-file limit of 400, takes
// every descriptor but fdChildFree, prints the address and serves until
// stdin closes. It exits 3 when the server stops on its own.
func fdExhaustionChild() int {
	lim := syscall.Rlimit{Cur: 400, Max: 400}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		return 2
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	dir, err := os.MkdirTemp("", "lakesql-fd-child-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(dir)
	srv, err := New(context.Background(), Config{Listener: l, DataDir: dir, RootPassword: fdChildPassword})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	// Warm the engine up (DuckDB opens what it opens) before the
	// descriptors run out.
	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	var hog []*os.File
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			break
		}
		hog = append(hog, f)
	}
	for _, f := range hog[len(hog)-fdChildFree:] {
		f.Close()
	}
	fmt.Println(srv.Addr().String())
	stdin := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(stdin) }()
	select {
	case err := <-served:
		fmt.Fprintln(os.Stderr, "served:", err)
		return 3
	case <-stdin:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "shutdown:", err)
		return 1
	}
	return 0
}

func TestAcceptSurvivesDescriptorExhaustion(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fdChildEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	defer func() {
		stdin.Close()
		<-exited
	}()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	addrLine, err := bufio.NewReader(stdout).ReadString('\n')
	go func() { exited <- cmd.Wait() }()
	if err != nil {
		t.Fatalf("child's address: %v", err)
	}
	addr := strings.TrimSpace(addrLine)

	// More connections than the child has descriptors: the kernel
	// completes them all; the server accepts what it can, then accept
	// fails with EMFILE.
	var flood []net.Conn
	for i := 0; i < 4*fdChildFree; i++ {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		flood = append(flood, c)
	}
	var report string
	for line := range lines {
		if strings.Contains(line, "cannot accept connections") {
			report = line
			break
		}
		if strings.HasPrefix(line, "served:") {
			t.Fatalf("the server stopped: %s", line)
		}
	}
	if report == "" {
		t.Fatalf("the child ended without reporting the accept error: %v", <-exited)
	}
	if !strings.Contains(report, "too many open files") {
		t.Errorf("report %q does not name the error", report)
	}
	if strings.Contains(report, fdChildPassword) {
		t.Errorf("report %q shows root's password", report)
	}
	for _, c := range flood {
		c.Close()
	}
	// Once the flood's sockets are gone, a new client gets in.
	db, err := sql.Open("mysql", dsn(addr, fdChildPassword))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var one int
	if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 after the flood: %d, %v", one, err)
	}
	select {
	case err := <-exited:
		t.Fatalf("the child exited: %v", err)
	default:
	}
}

func TestLoginTimeoutsCountHealthChecksDoNot(t *testing.T) {
	srv := startServerWith(t, Config{MaxConnectErrors: 2, ConnectTimeout: 2 * time.Second}).srv
	addr := srv.Addr().String()
	// Health checks: connect and go away, politely or with a reset.
	for i := 0; i < 10; i++ {
		c, p := firstPacket(t, addr, nil)
		if errCode(p) != 0 {
			t.Fatalf("health check %d: refused with %d", i+1, errCode(p))
		}
		if i%2 == 1 {
			c.(*net.TCPConn).SetLinger(0) // a reset
		}
		c.Close()
	}
	if err := connectFrom(t, addr, nil, testPassword); err != nil {
		t.Fatalf("after 10 health checks with max_connect_errors 2: %v", err)
	}
	// Two logins that time out block the address.
	for i := 0; i < 2; i++ {
		c, _ := firstPacket(t, addr, nil)
		if n, err := c.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("silent socket %d: read %d bytes, %v; want the server to close it", i+1, n, err)
		}
	}
	if err := connectFrom(t, addr, nil, testPassword); mysqlCode(err) != 1129 {
		t.Fatalf("after 2 logins timed out with max_connect_errors 2: %v, want 1129", err)
	}
}
