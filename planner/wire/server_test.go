package wire

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/internal/deltatest"
)

const testPassword = "s3cret-pw"

type testServer struct {
	t    *testing.T
	srv  *Server
	dir  string
	addr string
	done chan error
	once sync.Once
}

// startServer runs a server on a free loopback port over dir.
func startServer(t *testing.T, dir, password string) *testServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(context.Background(), Config{Listener: l, DataDir: dir, RootPassword: password})
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	ts := &testServer{t: t, srv: srv, dir: dir, addr: srv.Addr().String(), done: make(chan error, 1)}
	go func() { ts.done <- srv.Serve() }()
	t.Cleanup(ts.stop)
	return ts
}

func (ts *testServer) stop() { ts.once.Do(ts.stopOnce) }

func (ts *testServer) stopOnce() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := ts.srv.Shutdown(ctx); err != nil {
		ts.t.Errorf("Shutdown: %v", err)
	}
	select {
	case <-ts.done:
	case <-time.After(10 * time.Second):
		ts.t.Error("Serve did not return after Shutdown")
	}
}

func dsn(addr, password string) string {
	return fmt.Sprintf("root:%s@tcp(%s)/lakesql?timeout=10s", password, addr)
}

func (ts *testServer) db(password string) *sql.DB {
	ts.t.Helper()
	db, err := sql.Open("mysql", dsn(ts.addr, password))
	if err != nil {
		ts.t.Fatal(err)
	}
	ts.t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t *testing.T, q interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, query string) {
	t.Helper()
	if _, err := q.ExecContext(context.Background(), query); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// ids returns the sorted ids in a sink.
func ids(t *testing.T, db *sql.DB, sink string) []int64 {
	t.Helper()
	rows, err := db.Query("SELECT id FROM " + sink + " ORDER BY id")
	if err != nil {
		t.Fatalf("SELECT from %s: %v", sink, err)
	}
	defer rows.Close()
	out := []int64{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func mysqlCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

const createT = "CREATE SINK t INTO DELTA 'lake/t' (id BIGINT NOT NULL, name VARCHAR(16), PRIMARY KEY (id))"

func TestCreateInsertSelectTransactions(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir, testPassword)
	db := ts.db(testPassword)
	ctx := context.Background()
	table := filepath.Join(dir, "lake", "t")

	mustExec(t, db, createT)
	v0 := deltatest.Versions(t, table)
	mustExec(t, db, "INSERT INTO t VALUES (1, 'a')")
	if got := deltatest.Versions(t, table); got != v0+1 {
		t.Errorf("autocommit INSERT: %d versions, want %d", got, v0+1)
	}
	if diff := cmp.Diff([]int64{1}, ids(t, db, "t")); diff != "" {
		t.Errorf("after autocommit INSERT (-want +got):\n%s", diff)
	}

	// BEGIN/INSERT/INSERT/COMMIT on one connection: one version.
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, conn, "BEGIN")
	mustExec(t, conn, "INSERT INTO t VALUES (2, 'b'), (3, 'c')")
	mustExec(t, conn, "INSERT INTO t VALUES (4, 'd')")
	if got := deltatest.Versions(t, table); got != v0+1 {
		t.Errorf("before COMMIT: %d versions, want %d", got, v0+1)
	}
	mustExec(t, conn, "COMMIT")
	if got := deltatest.Versions(t, table); got != v0+2 {
		t.Errorf("after COMMIT: %d versions, want %d", got, v0+2)
	}
	if diff := cmp.Diff([]int64{1, 2, 3, 4}, ids(t, db, "t")); diff != "" {
		t.Errorf("after COMMIT (-want +got):\n%s", diff)
	}

	// ROLLBACK leaves nothing.
	mustExec(t, conn, "BEGIN")
	mustExec(t, conn, "INSERT INTO t VALUES (5, 'e')")
	mustExec(t, conn, "ROLLBACK")
	conn.Close()
	if got := deltatest.Versions(t, table); got != v0+2 {
		t.Errorf("after ROLLBACK: %d versions, want %d", got, v0+2)
	}
	if diff := cmp.Diff([]int64{1, 2, 3, 4}, ids(t, db, "t")); diff != "" {
		t.Errorf("after ROLLBACK (-want +got):\n%s", diff)
	}

	// database/sql transactions too.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "INSERT INTO t VALUES (6, 'f')")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := deltatest.Versions(t, table); got != v0+3 {
		t.Errorf("after tx.Commit: %d versions, want %d", got, v0+3)
	}
	if diff := cmp.Diff([]int64{1, 2, 3, 4, 6}, ids(t, db, "t")); diff != "" {
		t.Errorf("after tx.Commit (-want +got):\n%s", diff)
	}

	// Prepared statements (COM_STMT_PREPARE/EXECUTE) with arguments.
	if _, err := db.Exec("INSERT INTO t VALUES (?, ?)", 7, "g"); err != nil {
		t.Fatalf("prepared INSERT: %v", err)
	}
	var name string
	if err := db.QueryRow("SELECT name FROM t WHERE id = ?", 7).Scan(&name); err != nil || name != "g" {
		t.Errorf("prepared SELECT: %q, %v", name, err)
	}
	if got := deltatest.Versions(t, table); got != v0+4 {
		t.Errorf("after prepared INSERT: %d versions, want %d", got, v0+4)
	}
}

func TestWrongPasswordRejected(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	for _, d := range []string{
		dsn(ts.addr, "wrong"),
		dsn(ts.addr, ""),
		fmt.Sprintf("nobody:%s@tcp(%s)/lakesql", testPassword, ts.addr),
	} {
		db, err := sql.Open("mysql", d)
		if err != nil {
			t.Fatal(err)
		}
		err = db.Ping()
		db.Close()
		if code := mysqlCode(err); code != 1045 {
			t.Errorf("%s: got %v (code %d), want error 1045", d, err, code)
		}
	}
	if err := ts.db(testPassword).Ping(); err != nil {
		t.Errorf("right password: %v", err)
	}
}

func TestBadStatementKeepsServing(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	mustExec(t, db, createT)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for q, want := range map[string]uint16{
		"SELEC 1":                          1064,
		"SELECT * FROM nosuch":             1146,
		"INSERT INTO t VALUES (NULL, 'x')": 1048,
		"CREATE SINK x INTO PARQUET 'lake/x' (id BIGINT)":                  1064,
		"CREATE SINK x INTO DELTA 'lake/x' (id BIGINT) WITH (a = 1)":       1210,
		"SHOW CREATE SINK nosuch":                                          1146,
		"CREATE SINK x INTO ICEBERG 'nonamespace' (id BIGINT)":             1210,
		"CREATE SINK x INTO DELTA 'lake/x' (d DATE) PARTITION BY (day(d))": 1235,
		// Raised while the rows reach the sink, after go-mysql-server
		// has started the statement.
		"INSERT INTO t (id, name, _op) VALUES (3, 'c', 'X')": 1366,
		"INSERT INTO t VALUES (4, 'seventeen chars!!')":      1406,
		"INSERT INTO t (name) VALUES ('no key')":             1364,
	} {
		_, err := conn.ExecContext(ctx, q)
		if code := mysqlCode(err); code != want {
			t.Errorf("%s: got %v (code %d), want code %d", q, err, code, want)
		}
	}
	// MySQL's SQLSTATE, not go-mysql-server's general HY000.
	for q, want := range map[string]string{
		"SELECT * FROM nosuch":             "42S02",
		"INSERT INTO t VALUES (NULL, 'x')": "23000",
		"SELEC 1":                          "42000",
	} {
		_, err := conn.ExecContext(ctx, q)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || string(me.SQLState[:]) != want {
			t.Errorf("%s: got %v, want SQLSTATE %s", q, err, want)
		}
	}
	// The same connection and another one still work.
	mustExec(t, conn, "INSERT INTO t VALUES (1, 'a')")
	db2 := ts.db(testPassword)
	mustExec(t, db2, "INSERT INTO t VALUES (2, 'b')")
	if diff := cmp.Diff([]int64{1, 2}, ids(t, db2, "t")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestKilledClientLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir, testPassword)
	db := ts.db(testPassword)
	mustExec(t, db, createT)
	table := filepath.Join(dir, "lake", "t")
	v0 := deltatest.Versions(t, table)

	// A raw connection of its own, closed without COMMIT.
	var raw net.Conn
	mysql.RegisterDialContext("killable", func(ctx context.Context, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		raw = c
		return c, err
	})
	kdb, err := sql.Open("mysql", fmt.Sprintf("root:%s@killable(%s)/lakesql", testPassword, ts.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer kdb.Close()
	kdb.SetMaxOpenConns(1)
	tx, err := kdb.Begin()
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
	raw.Close()

	// The sink is released (the rollback ran) once another transaction can
	// write it; that one commits alone.
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := db.Exec("INSERT INTO t VALUES (3, 'c')")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed client's transaction still holds the sink: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if diff := cmp.Diff([]int64{3}, ids(t, db, "t")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := deltatest.Versions(t, table); got != v0+1 {
		t.Errorf("%d versions, want %d", got, v0+1)
	}
}

func TestConcurrentCommits(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir, testPassword)
	db := ts.db(testPassword)
	mustExec(t, db, createT)
	table := filepath.Join(dir, "lake", "t")
	v0 := deltatest.Versions(t, table)

	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			tx, err := db.Begin()
			if err != nil {
				errs <- err
				return
			}
			for i := 0; i < 3; i++ {
				if _, err := tx.Exec(fmt.Sprintf("INSERT INTO t VALUES (%d, 'w%d')", w*10+i, w)); err != nil {
					tx.Rollback()
					errs <- err
					return
				}
			}
			errs <- tx.Commit()
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if diff := cmp.Diff([]int64{0, 1, 2, 10, 11, 12}, ids(t, db, "t")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := deltatest.Versions(t, table); got != v0+2 {
		t.Errorf("%d versions, want %d", got, v0+2)
	}
}

func TestRestartKeepsDataAndPassword(t *testing.T) {
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(context.Background(), Config{Listener: l, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	pw := srv.GeneratedPassword()
	if len(pw) < 16 {
		t.Fatalf("generated password %q", pw)
	}
	go srv.Serve()
	db, err := sql.Open("mysql", dsn(srv.Addr().String(), pw))
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, createT)
	mustExec(t, db, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
	db.Close()
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, PrivilegesFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), pw) || !strings.Contains(string(b), NativePasswordHash(pw)) {
		t.Errorf("%s should hold the hash only:\n%q", PrivilegesFile, b)
	}

	ts := startServer(t, dir, "")
	if got := ts.srv.GeneratedPassword(); got != "" {
		t.Errorf("restart generated a password again: %q", got)
	}
	db2 := ts.db(pw)
	if diff := cmp.Diff([]int64{1, 2}, ids(t, db2, "t")); diff != "" {
		t.Errorf("after restart (-want +got):\n%s", diff)
	}
	mustExec(t, db2, "INSERT INTO t VALUES (3, 'c')")
	if diff := cmp.Diff([]int64{1, 2, 3}, ids(t, db2, "t")); diff != "" {
		t.Errorf("after restart and INSERT (-want +got):\n%s", diff)
	}
}

func TestRootPasswordFlagReplacesStored(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir, "first")
	ts.stop()
	ts2 := startServer(t, dir, "second")
	err := ts2.db("first").Ping()
	if code := mysqlCode(err); code != 1045 {
		t.Errorf("old password: got %v, want 1045", err)
	}
	if err := ts2.db("second").Ping(); err != nil {
		t.Errorf("new password: %v", err)
	}
}

func TestBeyondLoopbackNeedsPassword(t *testing.T) {
	dir := t.TempDir()
	_, err := New(context.Background(), Config{Listen: "0.0.0.0:0", DataDir: dir})
	if !errors.Is(err, ErrOpenServer) {
		t.Fatalf("got %v, want ErrOpenServer", err)
	}
	if _, err := os.Stat(filepath.Join(dir, PrivilegesFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused start wrote the accounts: %v", err)
	}
	for _, a := range []string{"127.0.0.1:3306", "[::1]:3306", "localhost:3306"} {
		if !IsLoopback(a) {
			t.Errorf("IsLoopback(%s) = false", a)
		}
	}
	for _, a := range []string{"0.0.0.0:3306", ":3306", "10.1.2.3:3306", "[::]:3306", "example.com:3306"} {
		if IsLoopback(a) {
			t.Errorf("IsLoopback(%s) = true", a)
		}
	}
}

func TestShutdownRollsBackOpenTransaction(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir, testPassword)
	db := ts.db(testPassword)
	mustExec(t, db, createT)
	table := filepath.Join(dir, "lake", "t")
	v0 := deltatest.Versions(t, table)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "INSERT INTO t VALUES (1, 'a')")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := ts.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("shutdown with an idle open transaction took %v", d)
	}
	if err := tx.Commit(); err == nil {
		t.Error("COMMIT after shutdown succeeded")
	}
	if got := deltatest.Versions(t, table); got != v0 {
		t.Errorf("%d versions after shutdown, want %d", got, v0)
	}
	if _, err := net.DialTimeout("tcp", ts.addr, time.Second); err == nil {
		t.Error("still accepting connections after shutdown")
	}
}

func TestShutdownLetsStatementInFlightFinish(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	type result struct {
		v   int64
		err error
	}
	res := make(chan result, 1)
	go func() {
		var v int64
		err := db.QueryRow("SELECT SLEEP(1) + 7").Scan(&v)
		res <- result{v, err}
	}()
	time.Sleep(300 * time.Millisecond) // the statement is running
	start := time.Now()
	ts.stop()
	r := <-res
	if r.err != nil || r.v != 7 {
		t.Errorf("statement in flight at shutdown: %d, %v; want 7, nil", r.v, r.err)
	}
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Errorf("shutdown returned after %v, before the statement in flight ended", d)
	}
}

// startTLSServer runs a server with a self-signed certificate on a free
// loopback port, shut down when the test ends.
func startTLSServer(t *testing.T) *Server {
	t.Helper()
	dir := t.TempDir()
	certFile, keyFile := selfSignedCert(t, dir)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(context.Background(), Config{Listener: l, DataDir: dir, RootPassword: testPassword,
		TLSCertFile: certFile, TLSKeyFile: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return srv
}

func TestTLS(t *testing.T) {
	srv := startTLSServer(t)

	var handshakes atomic.Int32
	if err := mysql.RegisterTLSConfig("lakesql-test", &tls.Config{
		InsecureSkipVerify: true,
		VerifyConnection: func(tls.ConnectionState) error {
			handshakes.Add(1)
			return nil
		},
	}); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", fmt.Sprintf("root:%s@tcp(%s)/lakesql?tls=lakesql-test", testPassword, srv.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var one int
	if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 over TLS: %d, %v", one, err)
	}
	if handshakes.Load() == 0 {
		t.Error("no TLS handshake took place")
	}

	certFile, _ := selfSignedCert(t, t.TempDir())
	if _, err := New(context.Background(), Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), TLSCertFile: certFile}); err == nil {
		t.Error("a certificate without a key was accepted")
	}
}

func selfSignedCert(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func TestMaxConnectionsAndReadTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(context.Background(), Config{Listener: l, DataDir: t.TempDir(), RootPassword: testPassword,
		MaxConnections: 1, ReadTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Shutdown(context.Background())
	ctx := context.Background()

	db1, _ := sql.Open("mysql", dsn(srv.Addr().String(), testPassword))
	defer db1.Close()
	c1, err := db1.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	if err := c1.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	db2, _ := sql.Open("mysql", dsn(srv.Addr().String(), testPassword)+"&readTimeout=3s")
	defer db2.Close()
	// Refused as MySQL refuses it: 1040, which clients and pools back off on.
	if err := db2.PingContext(ctx); mysqlCode(err) != 1040 {
		t.Errorf("a second connection with --max-connections 1: %v, want 1040 (Too many connections)", err)
	}

	// The idle connection is dropped after the read timeout.
	time.Sleep(1500 * time.Millisecond)
	if err := c1.PingContext(ctx); err == nil {
		t.Error("an idle connection survived the read timeout")
	}
	// Its slot is free again.
	if err := db2.PingContext(ctx); err != nil {
		t.Errorf("after the first connection was dropped: %v", err)
	}
}

func TestFileAccessConfined(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	var got sql.NullString
	err := db.QueryRow("SELECT LOAD_FILE('/etc/hostname')").Scan(&got)
	if err == nil && got.Valid {
		t.Errorf("LOAD_FILE read a file outside the data directory: %q", got.String)
	}
}

func TestBusyPortStoresNoPassword(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dir := t.TempDir()
	if _, err := New(context.Background(), Config{Listen: l.Addr().String(), DataDir: dir}); err == nil {
		t.Fatal("listening on a busy port succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, PrivilegesFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed start stored a password nobody saw: %v", err)
	}
}

// count runs a query that returns one integer.
func count(t *testing.T, db *sql.DB, query string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// shortLockWait makes statements give up on a held sink quickly.
const shortLockWait = 300 * time.Millisecond

// A COMMIT that fails (its Delta log entry cannot be written) ends the
// transaction, as in MySQL: the connection is back in autocommit mode, and
// an INSERT after it commits on its own. go-mysql-server's COMMIT returns
// before it resets the session, which used to leave it ignoring
// autocommit, holding every later INSERT in a transaction nothing commits.
func TestFailedCommitLeavesAutocommit(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir, testPassword)
	db := ts.db(testPassword)
	ctx := context.Background()
	mustExec(t, db, "CREATE SINK fc INTO DELTA 'fc' (id BIGINT NOT NULL, v VARCHAR(10))")
	table := filepath.Join(dir, "fc")
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// BEGIN commits the open transaction first: its failure ends it too.
	for round, failing := range []string{"COMMIT", "BEGIN"} {
		mustExec(t, c, "BEGIN")
		mustExec(t, c, "INSERT INTO fc VALUES (1, 'tx')")
		// The next log entry is taken by a folder.
		next := filepath.Join(table, "_delta_log", fmt.Sprintf("%020d.json", deltatest.Versions(t, table)))
		if err := os.Mkdir(next, 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ExecContext(ctx, failing); err == nil {
			t.Fatalf("%s succeeded although its log entry could not be written", failing)
		}
		if err := os.Remove(next); err != nil {
			t.Fatal(err)
		}
		var auto int
		if err := c.QueryRowContext(ctx, "SELECT @@autocommit").Scan(&auto); err != nil || auto != 1 {
			t.Fatalf("after a failed %s: @@autocommit = %d, %v", failing, auto, err)
		}
		mustExec(t, c, "INSERT INTO fc VALUES (2, 'auto')")
		// Another connection sees the row at once: it was committed.
		if n := count(t, db, "SELECT count(*) FROM fc WHERE id = 2"); n != round+1 {
			t.Errorf("after a failed %s, an autocommit INSERT left %d rows, want %d", failing, n, round+1)
		}
	}
	if n := count(t, db, "SELECT count(*) FROM fc WHERE id = 1"); n != 0 {
		t.Errorf("the failed transactions left %d rows", n)
	}
}

// UPDATE locks its sink before it reads the rows it changes, and reads
// the version committed last: concurrent UPDATE t SET n = n + 1 serialize
// as MySQL's row locks make them, and no increment is lost.
func TestConcurrentUpdatesSerialize(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	mustExec(t, db, "CREATE SINK cnt INTO DELTA 'cnt' (id BIGINT NOT NULL, n BIGINT, PRIMARY KEY (id)) WITH (mode = 'upsert')")
	mustExec(t, db, "INSERT INTO cnt VALUES (1, 0), (2, 100)")
	const workers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				q := "UPDATE cnt SET n = n + 1 WHERE id = 1"
				if w%2 == 1 {
					q = "UPDATE cnt SET n = n + 1 WHERE id = ?" // prepared
				}
				res, err := db.Exec(q, []any{1}[:w%2]...)
				if err == nil {
					if n, _ := res.RowsAffected(); n != 1 {
						err = fmt.Errorf("%s: %d rows affected", q, n)
					}
				}
				if err != nil {
					errs <- err
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := count(t, db, "SELECT n FROM cnt WHERE id = 1"); n != workers*each {
		t.Errorf("after %d concurrent UPDATE cnt SET n = n + 1: n = %d", workers*each, n)
	}
	if n := count(t, db, "SELECT n FROM cnt WHERE id = 2"); n != 100 {
		t.Errorf("a row no UPDATE matched: n = %d, want 100", n)
	}
}

// A statement that changes two sinks (UPDATE a JOIN b SET a.v, b.v) is
// refused with 1235 before it reads or hands over any row: a sink cannot
// take back rows, so a failure on the second sink would have left the
// first sink's rows in the transaction (COMMIT, or the next autocommit
// statement, wrote them) and the first sink locked by an idle connection.
// Whether sent as a query, prepared, or inside BEGIN, nothing of it lands,
// and nothing stays locked.
func TestStatementChangingTwoSinksRefused(t *testing.T) {
	ts := startServerWith(t, Config{LockWaitTimeout: shortLockWait})
	db := ts.db(testPassword)
	for _, s := range []string{"ja", "jb"} {
		mustExec(t, db, "CREATE SINK "+s+" INTO DELTA '"+s+"' (id BIGINT NOT NULL, v VARCHAR(10), PRIMARY KEY (id)) WITH (mode = 'upsert')")
		mustExec(t, db, "INSERT INTO "+s+" VALUES (1, 'orig')")
	}
	ctx := context.Background()
	s, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const both = "UPDATE ja JOIN jb ON ja.id = jb.id SET ja.v = 'failed', jb.v = 'failed'"
	if _, err := s.ExecContext(ctx, both); mysqlCode(err) != 1235 {
		t.Errorf("%s: %v, want 1235", both, err)
	}
	if _, err := s.ExecContext(ctx, "UPDATE ja JOIN jb ON ja.id = jb.id SET ja.v = ?, jb.v = ?", "failed", "failed"); mysqlCode(err) != 1235 {
		t.Errorf("prepared UPDATE of two sinks: %v, want 1235", err)
	}
	if _, err := s.ExecContext(ctx, "DELETE ja, jb FROM ja JOIN jb ON ja.id = jb.id"); mysqlCode(err) != 1235 {
		t.Errorf("DELETE from two sinks: %v, want 1235", err)
	}
	// Inside a transaction the statement fails alone.
	mustExec(t, s, "BEGIN")
	mustExec(t, s, "INSERT INTO ja VALUES (2, 'tx')")
	if _, err := s.ExecContext(ctx, both); mysqlCode(err) != 1235 {
		t.Errorf("%s in a transaction: %v, want 1235", both, err)
	}
	mustExec(t, s, "COMMIT")
	// Changing one sink while reading the other is fine.
	mustExec(t, s, "UPDATE ja JOIN jb ON ja.id = jb.id SET ja.v = jb.v")
	if _, err := db.Exec("INSERT INTO ja VALUES (3, 'other')"); err != nil {
		t.Errorf("another connection's INSERT: %v", err)
	}
	for q, want := range map[string]int{
		"SELECT count(*) FROM ja WHERE v = 'failed'": 0,
		"SELECT count(*) FROM jb WHERE v = 'failed'": 0,
		"SELECT count(*) FROM ja":                    3,
		"SELECT count(*) FROM jb":                    1,
	} {
		if n := count(t, db, q); n != want {
			t.Errorf("%s: %d, want %d", q, n, want)
		}
	}
}

// An autocommit UPDATE that fails after it locked its sink (here: it
// changes a key column) leaves the sink free at once: the wire layer rolls
// back the failed statement's transaction, which go-mysql-server would
// keep, with the lock, until the connection's next statement.
func TestFailedUpdateLeavesSinkUnlocked(t *testing.T) {
	ts := startServerWith(t, Config{LockWaitTimeout: shortLockWait})
	db := ts.db(testPassword)
	mustExec(t, db, "CREATE SINK u INTO DELTA 'u' (id BIGINT NOT NULL, v VARCHAR(10), PRIMARY KEY (id)) WITH (mode = 'upsert')")
	mustExec(t, db, "INSERT INTO u VALUES (1, 'a')")
	ctx := context.Background()
	s, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.ExecContext(ctx, "UPDATE u SET id = 2 WHERE id = 1"); mysqlCode(err) != 1235 {
		t.Fatalf("UPDATE of a key column: %v, want 1235", err)
	}
	if _, err := s.ExecContext(ctx, "UPDATE u SET id = ? WHERE id = 1", 2); mysqlCode(err) != 1235 {
		t.Fatalf("prepared UPDATE of a key column: %v, want 1235", err)
	}
	// s is idle now; another connection writes the sink.
	if _, err := db.Exec("INSERT INTO u VALUES (3, 'c')"); err != nil {
		t.Errorf("INSERT from another connection after the failed UPDATE: %v", err)
	}
	if diff := cmp.Diff([]int64{1, 3}, ids(t, db, "u")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// START TRANSACTION READ ONLY, and transaction_read_only = 1, refuse
// writes with MySQL's 1792 (ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION), and
// still read.
func TestReadOnlyTransactionRefusesWrites(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	mustExec(t, db, "CREATE SINK ro INTO DELTA 'ro' (id BIGINT NOT NULL, v VARCHAR(10), PRIMARY KEY (id)) WITH (mode = 'upsert')")
	mustExec(t, db, "INSERT INTO ro VALUES (1, 'a')")
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	writes := []string{"INSERT INTO ro VALUES (2, 'b')", "UPDATE ro SET v = 'x'", "DELETE FROM ro"}
	mustExec(t, c, "START TRANSACTION READ ONLY")
	for _, q := range writes {
		_, err := c.ExecContext(ctx, q)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1792 || string(me.SQLState[:]) != "25006" {
			t.Errorf("%s in a READ ONLY transaction: %v, want 1792 (25006)", q, err)
		}
	}
	var n int
	if err := c.QueryRowContext(ctx, "SELECT count(*) FROM ro").Scan(&n); err != nil || n != 1 {
		t.Errorf("SELECT in a READ ONLY transaction: %d, %v", n, err)
	}
	mustExec(t, c, "COMMIT")

	mustExec(t, c, "SET transaction_read_only = 1")
	for _, q := range writes {
		if _, err := c.ExecContext(ctx, q); mysqlCode(err) != 1792 {
			t.Errorf("%s with transaction_read_only = 1: %v, want 1792", q, err)
		}
	}
	mustExec(t, c, "SET transaction_read_only = 0")
	mustExec(t, c, "INSERT INTO ro VALUES (3, 'c')")
	if diff := cmp.Diff([]int64{1, 3}, ids(t, db, "ro")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A replayed autocommit INSERT (lakesql_epoch set to an epoch the table
// holds) writes nothing and reports 0 rows affected over the wire, as
// through Engine.Exec; go-mysql-server counts the rows before the commit.
func TestReplayedInsertReportsNoRows(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	mustExec(t, db, "CREATE SINK rp INTO DELTA 'rp' (id BIGINT NOT NULL)")
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	insert := func(prepared bool) int64 {
		t.Helper()
		mustExec(t, c, "SET lakesql_epoch = 7")
		var res sql.Result
		var err error
		if prepared {
			res, err = c.ExecContext(ctx, "INSERT INTO rp VALUES (?), (?)", 1, 2)
		} else {
			res, err = c.ExecContext(ctx, "INSERT INTO rp VALUES (1), (2)")
		}
		if err != nil {
			t.Fatal(err)
		}
		n, _ := res.RowsAffected()
		return n
	}
	if n := insert(false); n != 2 {
		t.Errorf("first INSERT: %d rows affected, want 2", n)
	}
	for _, prepared := range []bool{false, true} {
		if n := insert(prepared); n != 0 {
			t.Errorf("replayed INSERT (prepared %v): %d rows affected, want 0", prepared, n)
		}
	}
	if n := count(t, db, "SELECT count(*) FROM rp"); n != 2 {
		t.Errorf("the replays changed the table: %d rows", n)
	}
	// The next statement that writes is counted again.
	if res, err := c.ExecContext(ctx, "INSERT INTO rp VALUES (3)"); err != nil {
		t.Fatal(err)
	} else if n, _ := res.RowsAffected(); n != 1 {
		t.Errorf("INSERT after the replays: %d rows affected, want 1", n)
	}
}

// Whether the sinks show the changelog column _op is a property of each
// statement, prepared ones included: go-mysql-server does not parse a
// prepared statement again when it runs it, and a flag set at parse time
// used to give it the columns of whatever the connection parsed last.
func TestPreparedStatementsKeepTheirColumns(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	mustExec(t, db, "CREATE SINK cl INTO DELTA 'cl' (id BIGINT NOT NULL, v VARCHAR(10), PRIMARY KEY (id)) WITH (mode = 'upsert')")
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	prepare := func(q string) *sql.Stmt {
		t.Helper()
		st, err := c.PrepareContext(ctx, q)
		if err != nil {
			t.Fatalf("prepare %s: %v", q, err)
		}
		return st
	}
	plain := prepare("INSERT INTO cl VALUES (?, ?)")
	changelog := prepare("INSERT INTO cl (_op, id, v) VALUES (?, ?, ?)")
	sel := prepare("SELECT * FROM cl WHERE id >= ?")

	mustExec(t, c, "INSERT INTO cl (_op, id, v) VALUES ('I', 1, 'a')")
	if _, err := plain.ExecContext(ctx, 2, "b"); err != nil {
		t.Errorf("prepared plain INSERT after a changelog INSERT: %v", err)
	}
	rows, err := sel.QueryContext(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	rows.Close()
	if diff := cmp.Diff([]string{"id", "v"}, cols); diff != "" {
		t.Errorf("prepared SELECT * after a changelog INSERT (-want +got):\n%s", diff)
	}
	mustExec(t, c, "SELECT 1")
	if _, err := changelog.ExecContext(ctx, "I", 3, "c"); err != nil {
		t.Errorf("prepared changelog INSERT after another statement: %v", err)
	}
	// SQL PREPARE and EXECUTE.
	mustExec(t, c, "PREPARE del FROM 'INSERT INTO cl (_op, id, v) VALUES (''D'', 1, NULL)'")
	mustExec(t, c, "SELECT 1")
	mustExec(t, c, "EXECUTE del")
	mustExec(t, c, "PREPARE ins FROM 'INSERT INTO cl VALUES (4, ''d'')'")
	mustExec(t, c, "INSERT INTO cl (_op, id, v) VALUES ('I', 5, 'e')")
	mustExec(t, c, "EXECUTE ins")
	if diff := cmp.Diff([]int64{2, 3, 4, 5}, ids(t, db, "cl")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A statement refused while it is prepared (COM_STMT_PREPARE) gets the
// code and SQLSTATE it gets as a query.
func TestPrepareErrorCodes(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	mustExec(t, db, "CREATE SINK pc INTO DELTA 'pc' (id BIGINT NOT NULL, v VARCHAR(10))")
	for _, tc := range []struct {
		query string
		code  uint16
		state string
	}{
		{"INSERT INTO pc VALUES (?)", 1136, "21S01"},
		{"INSERT INTO nosuch VALUES (?)", 1146, "42S02"},
		{"SELECT nope FROM pc WHERE id = ?", 1054, "42S22"},
	} {
		_, err := db.Exec(tc.query, 1)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != tc.code || string(me.SQLState[:]) != tc.state {
			t.Errorf("prepared %s: %v, want %d (%s)", tc.query, err, tc.code, tc.state)
		}
	}
}

// KILL QUERY of a statement waiting for a sink another transaction holds
// (an upsert sink: appending transactions do not wait for each other)
// gets MySQL's 1317 (query execution was interrupted), not the lock wait
// timeout 1205 a client would retry on.
func TestKillQueryWaitingForSink(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	mustExec(t, db, "CREATE SINK kq INTO DELTA 'kq' (id BIGINT NOT NULL, PRIMARY KEY (id)) WITH (mode = 'upsert')")
	ctx := context.Background()
	holder, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	waiter, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close()
	mustExec(t, holder, "BEGIN")
	mustExec(t, holder, "INSERT INTO kq VALUES (1)")
	var id int64
	if err := waiter.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := waiter.ExecContext(ctx, "INSERT INTO kq VALUES (2)"); done <- err }()
	time.Sleep(time.Second)
	mustExec(t, db, fmt.Sprintf("KILL QUERY %d", id))
	var werr error
	select {
	case werr = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the killed statement did not end")
	}
	mustExec(t, holder, "ROLLBACK")
	if mysqlCode(werr) != 1317 {
		t.Errorf("KILL QUERY of a statement waiting for a sink: %v, want 1317", werr)
	}
	if diff := cmp.Diff([]int64{}, ids(t, db, "kq")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestFailedFlushInTransaction: a statement whose turn it is to flush the
// epoch's buffer (flush_rows = 1) fails when the flush cannot write (here
// a partition folder cannot be made), takes none of its own rows, and
// keeps the rows earlier statements buffered; once the folder can be made
// the transaction goes on, and COMMIT writes every row whose statement
// succeeded, once. A client retrying the failed INSERT gets its row once.
func TestFailedFlushInTransaction(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir, "pw")
	db := ts.db("pw")
	mustExec(t, db, "CREATE SINK fl INTO DELTA 'fl' (id BIGINT NOT NULL, region VARCHAR(8)) PARTITION BY (region) WITH (flush_rows = 1)")
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "INSERT INTO fl VALUES (1, 'bad')")
	blocker := filepath.Join(dir, "fl", "region=bad")
	if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(ctx, "INSERT INTO fl VALUES (2, 'us')"); err == nil {
		t.Fatal("an INSERT whose flush could not write succeeded")
	}
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	mustExec(t, c, "INSERT INTO fl VALUES (2, 'us')") // the client retries
	mustExec(t, c, "INSERT INTO fl VALUES (3, 'eu')")
	mustExec(t, c, "COMMIT")
	if diff := cmp.Diff([]int64{1, 2, 3}, ids(t, db, "fl")); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
}
