package wire

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"
)

// userDB opens a connection pool for user (text protocol, or prepared
// statements with prepared).
func (ts *testServer) userDB(user, password string, prepared bool) *sql.DB {
	ts.t.Helper()
	d := fmt.Sprintf("%s:%s@tcp(%s)/lakesql?timeout=10s", user, password, ts.addr)
	if prepared {
		d += "&interpolateParams=false"
	}
	db, err := sql.Open("mysql", d)
	if err != nil {
		ts.t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	ts.t.Cleanup(func() { db.Close() })
	return db
}

// wantCode checks that err is a MySQL error with code and SQLSTATE state.
func wantCodeState(t *testing.T, what string, err error, code uint16, state string) {
	t.Helper()
	me, _ := err.(*mysql.MySQLError)
	if me == nil || me.Number != code || string(me.SQLState[:]) != state {
		t.Errorf("%s: %v, want %d (%s)", what, err, code, state)
	}
}

// sinkStates is SHOW SINKS and each sink's table version and rows, as root
// sees them: what a refused statement must leave unchanged.
func sinkStates(t *testing.T, root *sql.DB) [][]string {
	t.Helper()
	out := queryStrings(t, root, "SHOW SINKS")
	for _, r := range queryStrings(t, root, "SHOW SINK STATUS") {
		out = append(out, []string{r[0], r[3], r[5]})
	}
	return out
}

func setupTwoSinks(t *testing.T, root *sql.DB) {
	t.Helper()
	mustExec(t, root, "CREATE SINK a INTO DELTA 'lake/a' (id BIGINT NOT NULL, name VARCHAR(16), PRIMARY KEY (id))")
	mustExec(t, root, "CREATE SINK b INTO DELTA 'lake/b' (id BIGINT)")
	mustExec(t, root, "INSERT INTO a VALUES (1, 'x'), (2, 'y')")
	mustExec(t, root, "INSERT INTO b VALUES (7)")
}

// A user with SELECT on lakesql.* reads and is refused every write, with
// MySQL's code, whichever path it takes; nothing is written.
func TestReadOnlyUserRefusedEveryWrite(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	root := ts.db(testPassword)
	setupTwoSinks(t, root)
	mustExec(t, root, "CREATE USER 'ro'@'%' IDENTIFIED BY 'ro-pw'")
	mustExec(t, root, "GRANT SELECT ON lakesql.* TO 'ro'@'%'")
	before := sinkStates(t, root)

	ro := ts.userDB("ro", "ro-pw", false)
	roPrepared := ts.userDB("ro", "ro-pw", true)
	outfile := filepath.Join(ts.dir, SecureFilesDir, "out.txt")
	infile := filepath.Join(ts.dir, SecureFilesDir, "in.csv")
	if err := os.MkdirAll(filepath.Dir(infile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(infile, []byte("9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		db    *sql.DB
		query string
		args  []any
		code  uint16
	}{
		{ro, "INSERT INTO a VALUES (3, 'z')", nil, 1142},
		{ro, "INSERT INTO lakesql.b SELECT id FROM a", nil, 1142},
		{ro, "UPDATE a SET name = 'w' WHERE id = 1", nil, 1142},
		{ro, "DELETE FROM a WHERE id = 1", nil, 1142},
		{ro, "REPLACE INTO a VALUES (1, 'r')", nil, 1142},
		{ro, "CREATE SINK c INTO DELTA 'lake/c' (id BIGINT)", nil, 1142},
		{ro, "DROP SINK a", nil, 1142},
		{ro, "DROP SINK IF EXISTS b", nil, 1142},
		{ro, "CALL lakesql_create_sink('c', 'delta', 'lake/c', 'id BIGINT')", nil, 1142},
		{ro, "CALL lakesql_drop_sink('a')", nil, 1142},
		{ro, "SET lakesql_epoch = 5", nil, 1044},
		{ro, "SET @@session.lakesql_epoch = 5", nil, 1044},
		{ro, "SELECT id FROM a INTO OUTFILE '" + outfile + "'", nil, 1045},
		{ro, "SELECT id FROM a INTO DUMPFILE '" + outfile + "'", nil, 1045},
		{ro, "LOAD DATA INFILE '" + infile + "' INTO TABLE b", nil, 1045},
		{ro, "CREATE VIEW v AS SELECT id FROM a", nil, 1142},
		{ro, "CREATE USER 'x'@'%' IDENTIFIED BY 'x'", nil, 1227},
		{ro, "GRANT INSERT ON lakesql.* TO 'ro'@'%'", nil, 1044},
		{roPrepared, "INSERT INTO a VALUES (?, ?)", []any{4, "p"}, 1142},
		{roPrepared, "CALL lakesql_create_sink(?, ?, ?, ?)", []any{"c", "delta", "lake/c", "id BIGINT"}, 1142},
		{roPrepared, "CALL lakesql_drop_sink(?)", []any{"a"}, 1142},
		{roPrepared, "DELETE FROM a WHERE id = ?", []any{1}, 1142},
	} {
		_, err := c.db.Exec(c.query, c.args...)
		state := "42000"
		if c.code == 1045 {
			state = "28000"
		}
		wantCodeState(t, c.query, err, c.code, state)
	}
	if _, err := os.Stat(outfile); err == nil {
		t.Errorf("a refused INTO OUTFILE wrote %s", outfile)
	}
	if diff := cmp.Diff(before, sinkStates(t, root)); diff != "" {
		t.Errorf("refused writes changed the sinks (-before +after):\n%s", diff)
	}
	// The epoch variable was not set either.
	if diff := cmp.Diff([][]string{{"-1"}}, queryStrings(t, ro, "SELECT @@lakesql_epoch")); diff != "" {
		t.Errorf("lakesql_epoch (-want +got):\n%s", diff)
	}

	// Reads are allowed, on both SELECT routes and through SHOW and CALL.
	for _, c := range []struct {
		query string
		want  [][]string
	}{
		{"SELECT count(*) FROM a", [][]string{{"2"}}},
		{"SELECT a.id, b.id FROM a JOIN b ORDER BY a.id", [][]string{{"1", "7"}, {"2", "7"}}},
		{"SHOW SINKS", queryStrings(t, root, "SHOW SINKS")},
		{"CALL lakesql_show_sinks()", queryStrings(t, root, "SHOW SINKS")},
		{"SHOW CREATE SINK b", queryStrings(t, root, "SHOW CREATE SINK b")},
	} {
		if diff := cmp.Diff(c.want, queryStrings(t, ro, c.query)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.query, diff)
		}
	}
	if diff := cmp.Diff([][]string{{"2"}}, queryStrings(t, roPrepared, "SELECT count(*) FROM a WHERE id > ?", 0)); diff != "" {
		t.Errorf("prepared SELECT (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"GRANT USAGE ON *.* TO `ro`@`%`"}, {"GRANT SELECT ON `lakesql`.* TO `ro`@`%`"}},
		queryStrings(t, ro, "SHOW GRANTS")); diff != "" {
		t.Errorf("SHOW GRANTS (-want +got):\n%s", diff)
	}
}

// GRANT and REVOKE take effect on the next statement of a connection that
// is already open; privileges on one table do not reach another.
func TestGrantAndRevokeTakeEffect(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	root := ts.db(testPassword)
	setupTwoSinks(t, root)
	mustExec(t, root, "CREATE USER w IDENTIFIED BY 'w-pw'")
	mustExec(t, root, "GRANT INSERT ON lakesql.a TO w")
	w := ts.userDB("w", "w-pw", false)

	mustExec(t, w, "INSERT INTO a VALUES (3, 'z')")
	for _, q := range []string{"SELECT * FROM a", "SELECT count(*) FROM a", "SELECT * FROM b", "SHOW CREATE SINK b", "INSERT INTO b VALUES (8)"} {
		_, err := w.Exec(q)
		wantCodeState(t, q, err, 1142, "42000")
	}
	// SHOW SINKS lists the sinks the user holds a privilege on.
	if diff := cmp.Diff([][]string{{"a"}}, column0(queryStrings(t, w, "SHOW SINKS"))); diff != "" {
		t.Errorf("SHOW SINKS (-want +got):\n%s", diff)
	}

	mustExec(t, root, "GRANT SELECT ON lakesql.* TO w")
	if diff := cmp.Diff([][]string{{"1"}, {"2"}, {"3"}}, queryStrings(t, w, "SELECT id FROM a ORDER BY id")); diff != "" {
		t.Errorf("after GRANT SELECT (-want +got):\n%s", diff)
	}
	mustExec(t, root, "REVOKE INSERT ON lakesql.a FROM w")
	_, err := w.Exec("INSERT INTO a VALUES (4, 'q')")
	wantCodeState(t, "INSERT after REVOKE", err, 1142, "42000")

	mustExec(t, root, "GRANT ALL ON lakesql.* TO w")
	mustExec(t, w, "INSERT INTO b VALUES (8)")
	mustExec(t, w, "CREATE SINK c INTO DELTA 'lake/c' (id BIGINT)")
	mustExec(t, w, "SET lakesql_epoch = 1")
	mustExec(t, w, "INSERT INTO c VALUES (1)")
	mustExec(t, w, "SET lakesql_epoch = -1")
	mustExec(t, w, "DROP SINK c")
	mustExec(t, root, "REVOKE ALL ON lakesql.* FROM w")
	_, err = w.Exec("SELECT id FROM a")
	wantCodeState(t, "SELECT after REVOKE ALL", err, 1142, "42000")
}

func column0(rows [][]string) [][]string {
	out := [][]string{}
	for _, r := range rows {
		out = append(out, r[:1])
	}
	return out
}

// Accounts and their privileges survive a restart; ALTER USER changes a
// password and DROP USER ends an account.
func TestAccountsPersist(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir, testPassword)
	root := ts.db(testPassword)
	setupTwoSinks(t, root)
	mustExec(t, root, "CREATE USER 'ro'@'%' IDENTIFIED BY 'ro-pw'")
	mustExec(t, root, "GRANT SELECT ON lakesql.a TO 'ro'@'%'")
	mustExec(t, root, "CREATE USER gone IDENTIFIED BY 'gone-pw'")
	ts.stop()

	ts = startServer(t, dir, testPassword)
	root = ts.db(testPassword)
	ro := ts.userDB("ro", "ro-pw", false)
	if diff := cmp.Diff([][]string{{"2"}}, queryStrings(t, ro, "SELECT count(*) FROM a")); diff != "" {
		t.Errorf("after restart (-want +got):\n%s", diff)
	}
	_, err := ro.Exec("INSERT INTO a VALUES (5, 'e')")
	wantCodeState(t, "INSERT after restart", err, 1142, "42000")
	if diff := cmp.Diff([][]string{{"GRANT USAGE ON *.* TO `ro`@`%`"}, {"GRANT SELECT ON `lakesql`.`a` TO `ro`@`%`"}},
		queryStrings(t, root, "SHOW GRANTS FOR ro")); diff != "" {
		t.Errorf("SHOW GRANTS FOR ro (-want +got):\n%s", diff)
	}

	mustExec(t, root, "ALTER USER ro IDENTIFIED BY 'new-pw'")
	mustExec(t, root, "DROP USER gone")
	ts.stop()
	ts = startServer(t, dir, testPassword)
	wantCodeState(t, "old password", ts.userDB("ro", "ro-pw", false).Ping(), 1045, "28000")
	if err := ts.userDB("ro", "new-pw", false).Ping(); err != nil {
		t.Errorf("new password: %v", err)
	}
	wantCodeState(t, "dropped user", ts.userDB("gone", "gone-pw", false).Ping(), 1045, "28000")
	b, err := os.ReadFile(filepath.Join(dir, PrivilegesFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, pw := range []string{testPassword, "ro-pw", "new-pw"} {
		if bytes.Contains(b, []byte(pw)) {
			t.Errorf("%s holds the password %q", PrivilegesFile, pw)
		}
	}
}

// A data directory of an earlier version, with DATA/users.json: its users
// log in with their passwords and keep what they could do; the file is
// renamed users.json.migrated.
func TestUsersJSONMigrated(t *testing.T) {
	dir := t.TempDir()
	old := fmt.Sprintf(`{"users": [
  {"name": "root", "plugin": "mysql_native_password", "hash": %q},
  {"name": "bob", "plugin": "mysql_native_password", "hash": %q}
]}
`, NativePasswordHash("old-root-pw"), NativePasswordHash("bob-pw"))
	if err := os.WriteFile(filepath.Join(dir, UsersFile), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, dir, "")
	if got := ts.srv.GeneratedPassword(); got != "" {
		t.Errorf("migration generated a root password: %q", got)
	}
	root := ts.db("old-root-pw")
	mustExec(t, root, "CREATE SINK a INTO DELTA 'lake/a' (id BIGINT)")
	bob := ts.userDB("bob", "bob-pw", false)
	mustExec(t, bob, "INSERT INTO a VALUES (1)")
	if diff := cmp.Diff([][]string{{"1"}}, queryStrings(t, bob, "SELECT count(*) FROM a")); diff != "" {
		t.Errorf("bob's SELECT (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, UsersFile)); !os.IsNotExist(err) {
		t.Errorf("%s still there after the migration: %v", UsersFile, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, UsersFile+MigratedSuffix)); err != nil || string(b) != old {
		t.Errorf("%s%s: %v, want the old file", UsersFile, MigratedSuffix, err)
	}
	ts.stop()
	// The second start reads privileges.db only.
	ts = startServer(t, dir, "")
	if err := ts.userDB("bob", "bob-pw", false).Ping(); err != nil {
		t.Errorf("bob after restart: %v", err)
	}
	if err := ts.db("old-root-pw").Ping(); err != nil {
		t.Errorf("root after restart: %v", err)
	}
}

// A user without any privilege on lakesql cannot use it: 1044 at connect.
func TestNoPrivilegeNoDatabase(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	root := ts.db(testPassword)
	mustExec(t, root, "CREATE USER nobody IDENTIFIED BY 'n-pw'")
	wantCodeState(t, "connect to lakesql", ts.userDB("nobody", "n-pw", false).Ping(), 1044, "42000")
}

// LOAD_FILE is NULL to an account without FILE, as in MySQL; root reads.
func TestLoadFileNeedsFilePrivilege(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	root := ts.db(testPassword)
	path := filepath.Join(ts.dir, SecureFilesDir, "secret.txt")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustExec(t, root, "CREATE USER ro IDENTIFIED BY 'ro-pw'")
	mustExec(t, root, "GRANT SELECT ON lakesql.* TO ro")
	q := "SELECT LOAD_FILE('" + path + "')"
	if diff := cmp.Diff([][]string{{"NULL"}}, queryStrings(t, ts.userDB("ro", "ro-pw", false), q)); diff != "" {
		t.Errorf("ro (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"s3cret"}}, queryStrings(t, root, q)); diff != "" {
		t.Errorf("root (-want +got):\n%s", diff)
	}
	mustExec(t, root, "GRANT FILE ON *.* TO ro")
	if diff := cmp.Diff([][]string{{"s3cret"}}, queryStrings(t, ts.userDB("ro", "ro-pw", false), q)); diff != "" {
		t.Errorf("ro with FILE (-want +got):\n%s", diff)
	}
}

// An account may KILL its own connections and statements without SUPER,
// as in MySQL; another account's is 1095.
func TestKillOwnConnectionOnly(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	root := ts.db(testPassword)
	mustExec(t, root, "CREATE USER ro IDENTIFIED BY 'ro-pw'")
	mustExec(t, root, "GRANT SELECT ON lakesql.* TO ro")
	ctx := context.Background()
	connID := func(c *sql.Conn) string {
		var id string
		if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	rootConn, err := root.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rootConn.Close()
	ro := ts.userDB("ro", "ro-pw", false)
	ro.SetMaxOpenConns(2)
	a, err := ro.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := ro.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	_, err = b.ExecContext(ctx, "KILL QUERY "+connID(rootConn))
	wantCodeState(t, "KILL QUERY of root's connection", err, 1095, "HY000")
	_, err = b.ExecContext(ctx, "KILL "+connID(rootConn))
	wantCodeState(t, "KILL of root's connection", err, 1095, "HY000")
	if err := rootConn.PingContext(ctx); err != nil {
		t.Errorf("root's connection after the refused KILL: %v", err)
	}
	if _, err := b.ExecContext(ctx, "KILL QUERY "+connID(a)); err != nil {
		t.Errorf("KILL QUERY of its own connection: %v", err)
	}
	if _, err := b.ExecContext(ctx, "KILL "+connID(a)); err != nil {
		t.Errorf("KILL of its own connection: %v", err)
	}
}
