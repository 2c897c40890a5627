package wire

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/planner"
)

// answersSelect1 fails the test unless the server answers SELECT 1.
func answersSelect1(t *testing.T, db *sql.DB, after string) {
	t.Helper()
	var one int
	if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("after %s: SELECT 1 = %d, %v", after, one, err)
	}
}

func TestStatementCostBounded(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	chain := func(op string, n int) string { return strings.TrimSuffix(strings.Repeat("1"+op, n), op) }
	nested := func(n int) string { return strings.Repeat("(SELECT ", n) + "1" + strings.Repeat(")", n) }
	for _, c := range []struct {
		name, q string
		want    uint16
	}{
		{"100,000 terms of 1+1", "SELECT " + chain("+", 100_000), 1436},
		{"65 terms of %", "SELECT " + chain(" % ", 66), 1436},
		{"200,000 NOTs", "SELECT " + strings.Repeat("NOT ", 200_000) + "1", 1436},
		{"1,001 ORs deep", "SELECT " + chain(" OR ", 1002), 1436},
		{"17 chains of 64 %'s", "SELECT " + strings.TrimSuffix(strings.Repeat(chain(" % ", 64)+",", 17), ","), 1436},
		{"subqueries 11 deep", "SELECT " + nested(11), 1473},
		{"three chains of subqueries 10 deep", "SELECT " + nested(10) + "," + nested(10) + "," + nested(10), 1473},
		{"an EXPLAIN of one", "EXPLAIN SELECT " + chain("+", 10_000), 1436},
		{"a CALL of one", "CALL lakesql_nothing(" + chain("+", 10_000) + ")", 1436},
	} {
		_, err := db.Exec(c.q)
		if got := mysqlCode(err); got != c.want {
			t.Errorf("%s: %v, want %d", c.name, err, c.want)
		}
		answersSelect1(t, db, c.name)
	}

	// Big statements within the bounds still run.
	mustExec(t, db, "CREATE SINK bulk INTO DELTA 'lake/bulk' (id BIGINT NOT NULL, v VARCHAR(32), x DOUBLE)")
	var b strings.Builder
	b.WriteString("INSERT INTO bulk VALUES ")
	for i := range 20_000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "(%d,'v%d',%d.5)", i, i, i)
	}
	mustExec(t, db, b.String())
	for _, q := range []string{
		"SELECT " + chain("+", 65),
		"SELECT " + chain(" OR ", 1000),
		"SELECT " + nested(10) + "," + nested(10),
		"SELECT " + strings.TrimSuffix(strings.Repeat("1,", 20_000), ","),
		"SELECT count(*) FROM bulk WHERE id IN (" + strings.TrimSuffix(strings.Repeat("7,", 50_000), ",") + ")",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Errorf("%.60s…: %v", q, err)
		}
	}
	if n := count(t, db, "SELECT count(*) FROM bulk"); n != 20_000 {
		t.Errorf("bulk holds %d rows, want 20000", n)
	}

	// Prepared (COM_STMT_PREPARE), with 65,528 parameters, the most
	// lakesql prepares: the same bound.
	_, err := db.Prepare("SELECT " + strings.TrimSuffix(strings.Repeat("?+", 65_528), "+"))
	if err == nil || mysqlCode(err) != 1436 {
		t.Errorf("prepare of 65,528 ?+? terms: %v, want 1436", err)
	}
	answersSelect1(t, db, "the prepared form")
	// And by SQL PREPARE: the statement is refused when it is executed.
	if _, err := db.Exec("PREPARE deep FROM '" + "SELECT " + chain("+", 1000) + "'"); err == nil {
		if _, err = db.Exec("EXECUTE deep"); mysqlCode(err) != 1436 {
			t.Errorf("EXECUTE of a prepared deep statement: %v, want 1436", err)
		}
	} else if mysqlCode(err) != 1436 {
		t.Errorf("PREPARE of a deep statement: %v, want 1436", err)
	}
}

// connID returns the connection id of c.
func connID(t *testing.T, c *sql.Conn) int64 {
	t.Helper()
	var id int64
	if err := c.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// processInfo returns the statement connection id runs, "" when it runs
// none, and whether the connection is listed at all.
func processInfo(t *testing.T, db *sql.DB, id int64) (string, bool) {
	t.Helper()
	var info sql.NullString
	err := db.QueryRow("SELECT info FROM information_schema.processlist WHERE id = ?", id).Scan(&info)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return info.String, true
}

// waitRunning waits until connection id runs a statement beginning with prefix.
func waitRunning(t *testing.T, db *sql.DB, id int64, prefix string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if info, _ := processInfo(t, db, id); strings.HasPrefix(info, prefix) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("connection %d never ran %q", id, prefix)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitGone waits until connection id runs no statement (gone: is listed no more).
func waitGone(t *testing.T, db *sql.DB, id int64, gone bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, listed := processInfo(t, db, id)
		if !listed || (!gone && info == "") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("connection %d still runs %.40q", id, info)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runKilled runs q on its own connection, kills it with kill (KILL QUERY
// or KILL) once it runs, and returns q's error and the connection.
func runKilled(t *testing.T, db *sql.DB, q, kill string) (error, *sql.Conn) {
	t.Helper()
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	id := connID(t, c)
	done := make(chan error, 1)
	go func() {
		rows, err := c.QueryContext(ctx, q)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		done <- err
	}()
	waitRunning(t, db, id, q[:min(len(q), 20)])
	mustExec(t, db, fmt.Sprintf("%s %d", kill, id))
	select {
	case err := <-done:
		return err, c
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not stop %.40q", kill, q)
	}
	return nil, nil
}

func TestKillQuery(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	nested := strings.Repeat("(SELECT ", 10) + "1" + strings.Repeat(")", 10)
	for _, c := range []struct{ name, q string }{
		{"SLEEP", "SELECT SLEEP(100)"},
		{"a cross join", "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 5000) SELECT count(*) FROM r a, r b, r c"},
		// Analysed for about a second, then sleeps: killed in either
		// phase, it is interrupted (planner's TestAnalysisInterrupted pins
		// the analysis).
		{"a statement being analysed", "SELECT " + nested + "," + nested + ", SLEEP(100)"},
	} {
		err, conn := runKilled(t, db, c.q, "KILL QUERY")
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1317 || me.SQLState != [5]byte{'7', '0', '1', '0', '0'} {
			t.Errorf("%s killed: %v, want 1317 (70100)", c.name, err)
		}
		// KILL QUERY leaves the connection.
		var one int
		if err := conn.QueryRowContext(context.Background(), "SELECT 1").Scan(&one); err != nil {
			t.Errorf("%s: the connection after KILL QUERY: %v", c.name, err)
		}
		answersSelect1(t, db, c.name)
	}

	// KILL ends the connection.
	err, conn := runKilled(t, db, "SELECT SLEEP(100)", "KILL")
	if err == nil {
		t.Error("KILL: the statement succeeded")
	}
	if err := conn.PingContext(context.Background()); err == nil {
		t.Error("KILL: the connection still answers")
	}
	answersSelect1(t, db, "KILL")
}

// A killed statement leaves the transaction it ran in as it was: COMMIT
// lands exactly the rows inserted before it.
func TestKillLeavesTransaction(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	mustExec(t, db, createT)
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	id := connID(t, c)
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
	done := make(chan error, 1)
	go func() {
		_, err := c.ExecContext(ctx, "SELECT count(*), SLEEP(100) FROM t")
		done <- err
	}()
	waitRunning(t, db, id, "SELECT count(*), SLEEP")
	mustExec(t, db, fmt.Sprintf("KILL QUERY %d", id))
	if err := <-done; mysqlCode(err) != 1317 {
		t.Fatalf("killed SELECT: %v, want 1317", err)
	}
	mustExec(t, c, "INSERT INTO t VALUES (3, 'c')")
	mustExec(t, c, "COMMIT")
	if diff := cmp.Diff([]int64{1, 2, 3}, ids(t, db, "t")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A client that goes away cancels its statement. With --max-connections
// the connection is not the bare TCP connection go-mysql-server's own
// watch knows (and it watches only while rows are sent).
func TestDisconnectCancels(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(context.Background(), Config{Listener: l, DataDir: t.TempDir(), RootPassword: testPassword, MaxConnections: 20})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Shutdown(context.Background())
	addr := srv.Addr().String()
	db, err := sql.Open("mysql", dsn(addr, testPassword))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	for _, q := range []string{
		"SELECT SLEEP(100)",
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r WHERE n < 5000) SELECT count(*) FROM r a, r b, r c",
	} {
		var raw net.Conn
		name := fmt.Sprintf("gone%d", len(q))
		mysql.RegisterDialContext(name, func(ctx context.Context, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
			raw = c
			return c, err
		})
		kdb, err := sql.Open("mysql", fmt.Sprintf("root:%s@%s(%s)/lakesql", testPassword, name, addr))
		if err != nil {
			t.Fatal(err)
		}
		c, err := kdb.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		id := connID(t, c)
		go c.ExecContext(context.Background(), q)
		waitRunning(t, db, id, q[:min(len(q), 20)])
		raw.Close()
		waitGone(t, db, id, true)
		kdb.Close()
		answersSelect1(t, db, "a client gone")
	}
}

func TestMaxAllowedPacket(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var packet int64
	if err := c.QueryRowContext(ctx, "SELECT @@max_allowed_packet").Scan(&packet); err != nil || packet != planner.DefaultMaxAllowedPacket {
		t.Fatalf("max_allowed_packet = %d, %v; want 67108864", packet, err)
	}
	for _, f := range []struct{ call, name string }{
		{"REPEAT('x', 1<<30)", "repeat"},
		{"SPACE(1<<30)", "space"},
		{"LPAD('x', 1<<30, 'y')", "lpad"},
		{"RPAD('x', 20000000, 'y')", "rpad"}, // 4 bytes a character in utf8mb4, as MySQL counts
		{"CONCAT(REPEAT('a', 40000000), REPEAT('b', 40000000))", "concat"},
		{"CONCAT_WS(REPEAT('-', 1000000), " + strings.Repeat("'a',", 80) + "'a')", "concat_ws"},
		{"REPLACE(REPEAT('a', 1000), 'a', REPEAT('b', 1000000))", "replace"},
		{"TO_BASE64(REPEAT('a', 60000000))", "to_base64"},
		{"HEX(REPEAT('a', 40000000))", "hex"},
	} {
		var n sql.NullInt64
		if err := c.QueryRowContext(ctx, "SELECT LENGTH("+f.call+")").Scan(&n); err != nil || n.Valid {
			t.Errorf("LENGTH(%s) = %v, %v; want NULL", f.call, n, err)
			continue
		}
		var level, msg string
		var code int
		if err := c.QueryRowContext(ctx, "SHOW WARNINGS").Scan(&level, &code, &msg); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("Result of %s() was larger than max_allowed_packet (67108864) - truncated", f.name)
		if code != 1301 || msg != want {
			t.Errorf("%s: warning %d %q, want 1301 %q", f.call, code, msg, want)
		}
	}
	var s string
	if err := c.QueryRowContext(ctx, "SELECT CONCAT(REPEAT('ab', 3), LPAD('x', 3, 'y'), SPACE(1))").Scan(&s); err != nil || s != "abababyyx " {
		t.Errorf("small values: %q, %v", s, err)
	}
	// A row larger than the packet: 1153, as MySQL refuses it.
	rows, err := c.QueryContext(ctx, "SELECT REPEAT('x', 40000000), REPEAT('y', 40000000)")
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1153 || string(me.SQLState[:]) != "08S01" {
		t.Errorf("a row of 80 MB: %v, want 1153 (08S01)", err)
	}
	answersSelect1(t, db, "a row too large")
}
