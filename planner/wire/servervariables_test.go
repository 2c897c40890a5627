package wire

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/planner"
)

// greetingVersion reads the server version from the handshake packet.
func greetingVersion(t *testing.T, addr string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	// 4-byte header, protocol version 10, then the NUL-terminated version.
	r := bufio.NewReader(c)
	if _, err := r.Discard(5); err != nil {
		t.Fatal(err)
	}
	v, err := r.ReadString(0)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(v, "\x00")
}

func TestServerVariablesTellTheTruth(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	got := queryStrings(t, db, "SELECT @@version, VERSION(), @@version_comment, @@transaction_isolation, @@tx_isolation, @@session.transaction_isolation")
	want := [][]string{{planner.ServerVersion, planner.ServerVersion, "lakesql", "READ-COMMITTED", "READ-COMMITTED", "READ-COMMITTED"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("server variables (-want +got):\n%s", diff)
	}
	if g := greetingVersion(t, ts.addr); g != planner.ServerVersion {
		t.Errorf("greeting version %q, @@version %q", g, planner.ServerVersion)
	}
}

// rowsAffected runs an Exec and returns its rows affected.
func rowsAffected(t *testing.T, db *sql.DB, query string, args ...any) int64 {
	t.Helper()
	res, err := db.ExecContext(context.Background(), query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSetAndDoReportZeroRows(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	for name, db := range map[string]*sql.DB{"text": ts.db(testPassword), "prepared": ts.preparedDB()} {
		for _, q := range []struct {
			query string
			args  []any
		}{
			{"SET @a = 1", nil},
			{"SET @a = 1, @b = 2", nil},
			{"SET autocommit = 1", nil},
			{"SET @a = ?", []any{7}},
			{"DO 1", nil},
			{"DO 1 + 1, SLEEP(0)", nil},
		} {
			if name == "prepared" && strings.HasPrefix(q.query, "DO") {
				// vitess parses a statement to prepare with its grammar, which has no DO.
				continue
			}
			if n := rowsAffected(t, db, q.query, q.args...); n != 0 {
				t.Errorf("%s %s: %d rows affected, want 0", name, q.query, n)
			}
		}
	}
	db := ts.db(testPassword)
	db.SetMaxOpenConns(1)
	mustExec(t, db, "SET @x = 0")
	mustExec(t, db, "DO SLEEP(0), @x")
	_, err := db.Exec("DO")
	if code := mysqlCode(err); code != 1064 {
		t.Errorf("DO without an expression: %v (code %d), want 1064", err, code)
	}
	_, err = db.Exec("DO nosuch_column")
	if code := mysqlCode(err); code != 1054 {
		t.Errorf("DO of an unknown column: %v (code %d), want 1054", err, code)
	}
}

// SHOW GRANTS tells each account's grants, read from the accounts; the
// column is named after the account, as MySQL names it.
func TestShowGrants(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	root := ts.db(testPassword)
	mustExec(t, root, "CREATE USER bob IDENTIFIED BY 'bob-pw'")
	mustExec(t, root, "GRANT SELECT ON lakesql.* TO bob")
	mustExec(t, root, "GRANT INSERT ON lakesql.t TO bob")
	bob, err := sql.Open("mysql", fmt.Sprintf("bob:bob-pw@tcp(%s)/lakesql?timeout=10s", ts.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	columns := func(db *sql.DB, query string) []string {
		rows, err := db.Query(query)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		return cols
	}
	bobGrants := [][]string{
		{"GRANT USAGE ON *.* TO `bob`@`%`"},
		{"GRANT SELECT ON `lakesql`.* TO `bob`@`%`"},
		{"GRANT INSERT ON `lakesql`.`t` TO `bob`@`%`"},
	}
	for _, c := range []struct {
		db     *sql.DB
		query  string
		col    string
		grants [][]string
	}{
		{root, "SHOW GRANTS FOR 'bob'", "Grants for bob@%", bobGrants},
		{root, "SHOW GRANTS FOR 'bob'@'%'", "Grants for bob@%", bobGrants},
		{bob, "SHOW GRANTS", "Grants for bob@%", bobGrants},
		{bob, "SHOW GRANTS FOR CURRENT_USER()", "Grants for bob@%", bobGrants},
		{bob, "SHOW GRANTS FOR bob", "Grants for bob@%", bobGrants},
	} {
		if diff := cmp.Diff(c.grants, queryStrings(t, c.db, c.query)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.query, diff)
		}
		if diff := cmp.Diff([]string{c.col}, columns(c.db, c.query)); diff != "" {
			t.Errorf("%s column (-want +got):\n%s", c.query, diff)
		}
	}
	// root holds every privilege, with GRANT OPTION; prepared
	// (COM_STMT_PREPARE), SHOW GRANTS answers the same.
	st, err := ts.preparedDB().Prepare("SHOW GRANTS")
	if err != nil {
		t.Fatalf("prepare SHOW GRANTS: %v", err)
	}
	rows, err := st.Query()
	got := rowStrings(t, "prepared SHOW GRANTS", rows, err)
	st.Close()
	if diff := cmp.Diff(queryStrings(t, root, "SHOW GRANTS"), got); diff != "" {
		t.Errorf("prepared SHOW GRANTS (-text +prepared):\n%s", diff)
	}
	if len(got) == 0 || !strings.HasPrefix(got[0][0], "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP,") ||
		!strings.HasSuffix(got[0][0], " ON *.* TO `root`@`%` WITH GRANT OPTION") {
		t.Errorf("root's grants: %q", got)
	}
	if diff := cmp.Diff([]string{"Grants for root@%"}, columns(root, "SHOW GRANTS")); diff != "" {
		t.Errorf("root's column (-want +got):\n%s", diff)
	}
	for _, q := range []string{"SHOW GRANTS FOR nobody", "SHOW GRANTS FOR 'root'@'localhost'"} {
		_, err := root.Query(q)
		me, _ := err.(*mysql.MySQLError)
		if me == nil || me.Number != 1141 || string(me.SQLState[:]) != "42000" {
			t.Errorf("%s: %v, want 1141 (42000)", q, err)
		}
	}
	// Another account's grants need SELECT on the mysql database.
	_, err = bob.Query("SHOW GRANTS FOR root")
	me, _ := err.(*mysql.MySQLError)
	if me == nil || me.Number != 1044 || string(me.SQLState[:]) != "42000" {
		t.Errorf("bob: SHOW GRANTS FOR root: %v, want 1044 (42000)", err)
	}
}

// Refused definitions are 1210 whether sent as text or as a prepared CALL:
// the file system and the catalog never see them.
func TestRefusedLocationsAre1210(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	text := ts.db(testPassword)
	prepared := ts.preparedDB()
	long := strings.Repeat("b", 300)
	for i, c := range []struct {
		format, location, options string
	}{
		{"delta", "file:lake/x", ""},
		{"delta", "FILE:/x", ""},
		{"delta", "s3:/x", ""},
		{"delta", "file:///tmp/x", ""},
		{"delta", "lake/" + long, ""},
		{"delta", strings.Repeat("c/", 600), ""},
		{"delta", "lake/w", "writer_id = '" + strings.Repeat("w", 100000) + "'"},
		{"iceberg", "ns." + long, ""},
		{"iceberg", "ns/x.t", ""},
		{"iceberg", `ns.a\b`, ""},
	} {
		name := fmt.Sprintf("s%d", i)
		ddl := fmt.Sprintf("CREATE SINK %s INTO %s '%s' (id BIGINT)", name, c.format, strings.ReplaceAll(c.location, `\`, `\\`))
		if c.options != "" {
			ddl += " WITH (" + c.options + ")"
		}
		_, err := text.Exec(ddl)
		if code := mysqlCode(err); code != 1210 {
			t.Errorf("%.80s: %.200v (code %d), want 1210", ddl, err, code)
		}
		_, err = prepared.Exec("CALL lakesql_create_sink(?, ?, ?, ?, ?, ?)", name, c.format, c.location, "id BIGINT", nil, c.options)
		if code := mysqlCode(err); code != 1210 {
			t.Errorf("prepared CALL %s %.60s: %.200v (code %d), want 1210", c.format, c.location, err, code)
		}
	}
	if got := queryStrings(t, text, "SHOW SINKS"); len(got) != 0 {
		t.Errorf("sinks after refused definitions: %v", got)
	}
}

func TestSQLPrepareExecuteDeallocate(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	db.SetMaxOpenConns(1)
	mustExec(t, db, createT+" WITH (mode = 'upsert')")
	mustExec(t, db, "PREPARE ins FROM 'INSERT INTO t VALUES (?, ?)'")
	mustExec(t, db, "SET @id = 1, @name = 'a'")
	if n := rowsAffected(t, db, "EXECUTE ins USING @id, @name"); n != 1 {
		t.Errorf("EXECUTE of an INSERT: %d rows affected, want 1", n)
	}
	mustExec(t, db, "PREPARE sel FROM 'SELECT name FROM t WHERE id = ?'")
	if diff := cmp.Diff([][]string{{"a"}}, queryStrings(t, db, "EXECUTE sel USING @id")); diff != "" {
		t.Errorf("EXECUTE of a SELECT (-want +got):\n%s", diff)
	}
	mustExec(t, db, "DEALLOCATE PREPARE sel")
	for _, c := range []struct {
		query string
		code  uint16
	}{
		{"EXECUTE sel USING @id", 1243},
		{"EXECUTE nosuch", 1243},
		{"PREPARE bad FROM 'SELEC 1'", 1064},
	} {
		_, err := db.Exec(c.query)
		if code := mysqlCode(err); code != c.code {
			t.Errorf("%s: %v (code %d), want %d", c.query, err, code, c.code)
		}
	}

	// The mariadb CLI tracks session state and read PREPARE's OK packet
	// as malformed (ERROR 2027).
	if _, err := exec.LookPath("mariadb"); err != nil {
		t.Skip("SKIPPED: the mariadb client is not installed (Debian's mariadb-client): the CLI half of this test did not run")
	}
	host, port, _ := net.SplitHostPort(ts.addr)
	cmd := exec.Command("mariadb", "--no-defaults", "--skip-ssl", "-h", host, "-P", port, "-uroot", "-p"+testPassword, "--batch", "lakesql",
		"-e", "PREPARE s FROM 'SELECT ? + 1'; SET @a = 41; EXECUTE s USING @a; DEALLOCATE PREPARE s; PREPARE u FROM 'UPDATE t SET name = ? WHERE id = 1'; EXECUTE u USING @a; SELECT name FROM t")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("mariadb: %v: %s", err, errOut.String())
	}
	if want := "? + 1\n42\nname\n41\n"; out.String() != want {
		t.Errorf("mariadb output %q, want %q", out.String(), want)
	}
}
