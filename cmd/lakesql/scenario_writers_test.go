package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/go-sql-driver/mysql"
)

// writersServe starts `lakesql serve --data data` and returns one
// connection to it (one session, so SHOW WARNINGS sees the last statement).
func writersServe(t *testing.T, bin, data string, args ...string) (*serveProcess, *sql.Conn) {
	t.Helper()
	p := startServe(t, bin, []string{"LAKESQL_ROOT_PASSWORD=pw"},
		append([]string{"--listen", "127.0.0.1:0", "--data", data}, args...)...)
	db, err := sql.Open("mysql", fmt.Sprintf("root:pw@tcp(%s)/lakesql", p.addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return p, conn
}

func writersExec(t *testing.T, c *sql.Conn, q string) int64 {
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

func writersInt(t *testing.T, c *sql.Conn, q string) int64 {
	t.Helper()
	var n int64
	if err := c.QueryRowContext(context.Background(), q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// writersWarnings returns SHOW WARNINGS of the connection's last statement.
func writersWarnings(t *testing.T, c *sql.Conn) []string {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), "SHOW WARNINGS")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var level, msg string
		var code int
		if err := rows.Scan(&level, &code, &msg); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d %s", level, code, msg))
	}
	return out
}

// lastEpoch is SHOW SINK STATUS's Last_epoch.
func lastEpoch(t *testing.T, c *sql.Conn, sink string) int64 {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), "SHOW SINK STATUS "+sink)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if !rows.Next() {
		t.Fatal("SHOW SINK STATUS: no row")
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	for i, c := range cols {
		if strings.EqualFold(c, "Last_epoch") {
			var n int64
			fmt.Sscan(vals[i].String, &n)
			return n
		}
	}
	t.Fatalf("no Last_epoch in %v", cols)
	return 0
}

// TestDataDirServesOneProcess: `lakesql -e` on the data directory of a
// running `lakesql serve` is refused, naming the server's pid, and writes
// nothing; the server's next INSERT lands as usual.
func TestDataDirServesOneProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildLakesql(t)
	data := t.TempDir()
	p, c := writersServe(t, bin, data)
	writersExec(t, c, "CREATE SINK t INTO DELTA 'lake/t' (id BIGINT NOT NULL)")
	writersExec(t, c, "INSERT INTO t VALUES (1)")

	out, err := exec.Command(bin, "--data", data, "-e", "INSERT INTO t VALUES (2)").CombinedOutput()
	if err == nil {
		t.Fatalf("lakesql -e on a served data directory succeeded:\n%s", out)
	}
	for _, want := range []string{"in use", fmt.Sprintf("lakesql process %d", p.cmd.Process.Pid), filepath.Join(data, "lakesql.lock")} {
		if !strings.Contains(string(out), want) {
			t.Errorf("lakesql -e said %q; want it to name %q", out, want)
		}
	}
	// A second server is refused the same way, before it serves anything.
	second := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--data", data)
	second.Env = append(os.Environ(), "LAKESQL_ROOT_PASSWORD=pw")
	if out, err := second.CombinedOutput(); err == nil || !strings.Contains(string(out), "in use") {
		t.Errorf("a second lakesql serve on the data directory: %v\n%s", err, out)
	}

	if n := writersExec(t, c, "INSERT INTO t VALUES (3)"); n != 1 {
		t.Fatalf("INSERT after the refused process: %d rows affected, want 1", n)
	}
	if w := writersWarnings(t, c); len(w) != 0 {
		t.Fatalf("INSERT after the refused process warned: %q", w)
	}
	if n := writersInt(t, c, "SELECT COUNT(*) FROM t"); n != 2 {
		t.Fatalf("%d rows, want 2 (1 and 3)", n)
	}
	if code, _ := p.stop(t); code != 0 {
		t.Fatalf("serve exit code %d\nstderr:\n%s", code, p.stderr)
	}
	// Once the server is gone, the data directory is free again.
	if out, err := exec.Command(bin, "--data", data, "-e", "INSERT INTO t VALUES (2)").CombinedOutput(); err != nil {
		t.Fatalf("lakesql -e after the server stopped: %v\n%s", err, out)
	}
}

// TestAutomaticEpochTakenByAnotherProcess: a server's sink and a
// `lakesql -e` of another data directory write one table under the same
// writer id (lakesql-t). The -e process takes the epochs after the
// server's; the server's next autocommit INSERT, numbered from what its
// sink saw, finds its number taken. Its row is new, not a replay: it
// lands under the next free epoch, with 1 row affected and no note.
func TestAutomaticEpochTakenByAnotherProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildLakesql(t)
	lake := t.TempDir()
	loc := filepath.Join(lake, "t")
	_, c := writersServe(t, bin, t.TempDir(), "--allowed-roots", lake)
	writersExec(t, c, fmt.Sprintf("CREATE SINK t INTO DELTA '%s' (id BIGINT NOT NULL)", loc))
	writersExec(t, c, "INSERT INTO t VALUES (1)")
	writersExec(t, c, "INSERT INTO t VALUES (2)")

	other := t.TempDir()
	script := fmt.Sprintf("CREATE SINK t INTO DELTA '%s'; INSERT INTO t VALUES (10); INSERT INTO t VALUES (11)", loc)
	if out, err := exec.Command(bin, "--data", other, "--allowed-roots", lake, "-e", script).CombinedOutput(); err != nil {
		t.Fatalf("the other process: %v\n%s", err, out)
	}

	if n := writersExec(t, c, "INSERT INTO t VALUES (3)"); n != 1 {
		t.Fatalf("INSERT after the other process: %d rows affected, want 1", n)
	}
	if w := writersWarnings(t, c); len(w) != 0 {
		t.Fatalf("INSERT after the other process warned (a replay?): %q", w)
	}
	if n := writersInt(t, c, "SELECT COUNT(*) FROM t WHERE id = 3"); n != 1 {
		t.Fatal("the server's acknowledged row 3 is not in the table")
	}
	if n := writersInt(t, c, "SELECT COUNT(*) FROM t"); n != 5 {
		t.Fatalf("%d rows, want 5", n)
	}
	if e := lastEpoch(t, c, "t"); e != 5 {
		t.Fatalf("Last_epoch %d, want 5 (after the other process's 3 and 4)", e)
	}
	// A named epoch the table holds is still a replay.
	writersExec(t, c, "SET lakesql_epoch = 4")
	if n := writersExec(t, c, "INSERT INTO t VALUES (99)"); n != 0 {
		t.Fatalf("replayed epoch 4: %d rows affected, want 0", n)
	}
	if w := writersWarnings(t, c); len(w) != 1 || !strings.Contains(w[0], "1105") {
		t.Fatalf("replayed epoch 4: warnings %q, want note 1105", w)
	}
	if n := writersInt(t, c, "SELECT COUNT(*) FROM t"); n != 5 {
		t.Fatalf("%d rows after the replay, want 5", n)
	}
}

// TestEmptyCommitFileOverTheWire: a 0-byte latest log entry makes SELECT
// and INSERT fail with an error naming the file; nothing commits on top.
func TestEmptyCommitFileOverTheWire(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildLakesql(t)
	lake := t.TempDir()
	loc := filepath.Join(lake, "t")
	_, c := writersServe(t, bin, t.TempDir(), "--allowed-roots", lake)
	writersExec(t, c, fmt.Sprintf("CREATE SINK t INTO DELTA '%s' (id BIGINT NOT NULL)", loc))
	writersExec(t, c, "INSERT INTO t VALUES (1)")
	entry := filepath.Join("_delta_log", "00000000000000000002.json")
	if err := os.WriteFile(filepath.Join(loc, entry), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"SELECT COUNT(*) FROM t", "INSERT INTO t VALUES (2)"} {
		_, err := c.ExecContext(context.Background(), q)
		if err == nil || !strings.Contains(err.Error(), entry) || !strings.Contains(err.Error(), "corrupt Delta log") {
			t.Errorf("%s: %v; want a corrupt log error naming %s", q, err, entry)
		}
	}
	if _, err := os.Stat(filepath.Join(loc, "_delta_log", "00000000000000000003.json")); !os.IsNotExist(err) {
		t.Fatalf("a version was committed on top of the empty entry: %v", err)
	}
}

// TestAbandonedEpochLeavesNothing: a client that names an epoch, writes in
// a transaction and disconnects leaves nothing behind: the next automatic
// epoch is the last committed + 1, on another connection, and after a
// ROLLBACK on the same one.
func TestAbandonedEpochLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildLakesql(t)
	p, c := writersServe(t, bin, t.TempDir())
	writersExec(t, c, "CREATE SINK t INTO DELTA 'lake/t' (id BIGINT NOT NULL)")
	writersExec(t, c, "INSERT INTO t VALUES (1)")

	db, err := sql.Open("mysql", fmt.Sprintf("root:pw@tcp(%s)/lakesql", p.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	gone, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"SET lakesql_epoch = 600", "BEGIN", "INSERT INTO t VALUES (600)"} {
		if _, err := gone.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Close the connection under database/sql: the client quits mid-transaction.
	if err := gone.Raw(func(dc any) error { return dc.(interface{ Close() error }).Close() }); err != nil {
		t.Fatal(err)
	}
	gone.Close()

	if n := writersExec(t, c, "INSERT INTO t VALUES (2)"); n != 1 {
		t.Fatalf("INSERT after the abandoned epoch: %d rows affected", n)
	}
	for _, q := range []string{"SET lakesql_epoch = 700", "BEGIN", "INSERT INTO t VALUES (700)", "ROLLBACK"} {
		writersExec(t, c, q)
	}
	if n := writersExec(t, c, "INSERT INTO t VALUES (3)"); n != 1 {
		t.Fatalf("INSERT after the rolled-back epoch: %d rows affected", n)
	}
	if e := lastEpoch(t, c, "t"); e != 3 {
		t.Fatalf("Last_epoch %d, want 3: the abandoned 600 and rolled-back 700 left nothing", e)
	}
	if n := writersInt(t, c, "SELECT COUNT(*) FROM t"); n != 3 {
		t.Fatalf("%d rows, want 3", n)
	}
}
