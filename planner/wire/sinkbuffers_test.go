package wire

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"
)

// startServerWith runs a server on a free loopback port with cfg (its
// Listener, DataDir and RootPassword filled in).
func startServerWith(t *testing.T, cfg Config) *testServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Listener, cfg.RootPassword = l, testPassword
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	srv, err := New(context.Background(), cfg)
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	ts := &testServer{t: t, srv: srv, dir: cfg.DataDir, addr: srv.Addr().String(), done: make(chan error, 1)}
	go func() { ts.done <- srv.Serve() }()
	t.Cleanup(ts.stop)
	return ts
}

// openTables reads the status variable Open_tables.
func openTables(t *testing.T, db *sql.DB) int {
	t.Helper()
	var name, v string
	if err := db.QueryRow("SHOW GLOBAL STATUS LIKE 'Open_tables'").Scan(&name, &v); err != nil {
		t.Fatalf("SHOW GLOBAL STATUS: %v", err)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("Open_tables = %q: %v", v, err)
	}
	return n
}

func execAffected(t *testing.T, c *sql.Conn, q string) int64 {
	t.Helper()
	res, err := c.ExecContext(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// 120 sinks with room for 5 open buffers: the count never passes 5, and
// every sink, its buffer released and opened again many times over, still
// writes, reads, and recognises a replayed epoch.
func TestSinkBuffersBounded(t *testing.T) {
	const sinks, bound = 120, 5
	ts := startServerWith(t, Config{MaxOpenSinks: bound, SinkIdleTimeout: -1})
	db := ts.db(testPassword)
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	check := func(after string) {
		t.Helper()
		if n := ts.srv.engine.OpenSinks(); n > bound {
			t.Fatalf("after %s: %d sinks hold a buffer, the bound is %d", after, n, bound)
		}
	}
	for i := range sinks {
		mustExec(t, c, fmt.Sprintf("CREATE SINK b%d INTO DELTA 'b%d' (id BIGINT NOT NULL, v VARCHAR(10))", i, i))
		check("CREATE SINK")
		mustExec(t, c, "SET lakesql_epoch = 1")
		if n := execAffected(t, c, fmt.Sprintf("INSERT INTO b%d VALUES (1, 'one')", i)); n != 1 {
			t.Fatalf("b%d: INSERT affected %d rows, want 1", i, n)
		}
		check("INSERT")
	}
	if n := openTables(t, db); n != ts.srv.engine.OpenSinks() || n > bound {
		t.Fatalf("Open_tables = %d, the engine has %d open, the bound is %d", n, ts.srv.engine.OpenSinks(), bound)
	}
	for i := range sinks {
		// Epoch 1 again: a replay, recognised after the buffer came back.
		mustExec(t, c, "SET lakesql_epoch = 1")
		if n := execAffected(t, c, fmt.Sprintf("INSERT INTO b%d VALUES (99, 'replay')", i)); n != 0 {
			t.Fatalf("b%d: the replay of epoch 1 affected %d rows, want 0", i, n)
		}
		mustExec(t, c, "SET lakesql_epoch = 2")
		if n := execAffected(t, c, fmt.Sprintf("INSERT INTO b%d VALUES (2, 'two')", i)); n != 1 {
			t.Fatalf("b%d: INSERT of epoch 2 affected %d rows, want 1", i, n)
		}
		check("the second INSERT")
	}
	mustExec(t, c, "SET lakesql_epoch = DEFAULT")
	for i := range sinks {
		var n, sum int64
		if err := c.QueryRowContext(context.Background(), fmt.Sprintf("SELECT count(*), sum(id) FROM b%d", i)).Scan(&n, &sum); err != nil {
			t.Fatal(err)
		}
		if n != 2 || sum != 3 {
			t.Fatalf("b%d: %d rows summing to %d, want 2 rows (1 and 2)", i, n, sum)
		}
		var name, health, epoch string
		var version, commits, rows, reason sql.NullString
		var maint [9]sql.NullString // the maintenance columns
		if err := c.QueryRowContext(context.Background(), fmt.Sprintf("SHOW SINK STATUS b%d", i)).Scan(&name, &health, &epoch, &version, &commits, &rows, &reason,
			&maint[0], &maint[1], &maint[2], &maint[3], &maint[4], &maint[5], &maint[6], &maint[7], &maint[8]); err != nil {
			t.Fatal(err)
		}
		if health != "healthy" || epoch != "2" {
			t.Fatalf("b%d: SHOW SINK STATUS says %s, last epoch %s; want healthy, 2", i, health, epoch)
		}
	}
	check("the SELECTs")
}

// A sink in a transaction keeps its buffer, rows and all, however many
// other sinks want one: the bound gives way, the transaction commits.
// With room for one buffer, k0's is the one every other sink would take.
func TestSinkBufferKeptInTransaction(t *testing.T) {
	const bound = 1
	ts := startServerWith(t, Config{MaxOpenSinks: bound, SinkIdleTimeout: -1})
	db := ts.db(testPassword)
	// k0 is an upsert sink: its transaction writes into the sink's buffer
	// from its first statement (an appending one keeps its rows until
	// COMMIT, for a group commit, and holds no buffer).
	mustExec(t, db, "CREATE SINK k0 INTO DELTA 'k0' (id BIGINT NOT NULL, PRIMARY KEY (id)) WITH (mode = 'upsert')")
	for i := 1; i < 6; i++ {
		mustExec(t, db, fmt.Sprintf("CREATE SINK k%d INTO DELTA 'k%d' (id BIGINT NOT NULL)", i, i))
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for id := range 3 {
		if _, err := tx.Exec(fmt.Sprintf("INSERT INTO k0 VALUES (%d)", id)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i < 6; i++ {
		mustExec(t, db, fmt.Sprintf("INSERT INTO k%d VALUES (7)", i))
	}
	if n := ts.srv.engine.OpenSinks(); n != bound+1 {
		t.Fatalf("%d sinks hold a buffer; want %d: the bound and k0, whose transaction holds rows", n, bound+1)
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("COMMIT of k0's rows: %v", err)
	}
	if got := ids(t, db, "k0"); fmt.Sprint(got) != "[0 1 2]" {
		t.Fatalf("k0 holds %v, want [0 1 2]", got)
	}
	// The next sink to want a buffer takes k0's, idle now.
	mustExec(t, db, "INSERT INTO k1 VALUES (8)")
	if n := ts.srv.engine.OpenSinks(); n > bound {
		t.Fatalf("%d sinks hold a buffer after the transaction ended; the bound is %d", n, bound)
	}
}

// A sink unused for the idle timeout releases its buffer, and writes as
// before when it is used again.
func TestSinkBufferIdleRelease(t *testing.T) {
	ts := startServerWith(t, Config{SinkIdleTimeout: 50 * time.Millisecond})
	db := ts.db(testPassword)
	mustExec(t, db, "CREATE SINK idle INTO DELTA 'idle' (id BIGINT NOT NULL)")
	mustExec(t, db, "INSERT INTO idle VALUES (1)")
	// Waits for the janitor, however slow the machine; the deadline only
	// keeps a broken janitor from hanging the test.
	for deadline := time.Now().Add(time.Minute); ts.srv.engine.OpenSinks() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the idle sink still holds its buffer")
		}
	}
	mustExec(t, db, "INSERT INTO idle VALUES (2)")
	if got := ids(t, db, "idle"); fmt.Sprint(got) != "[1 2]" {
		t.Fatalf("idle holds %v, want [1 2]", got)
	}
}
