package wire

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAlterSinkOverWire runs ALTER SINK through go-sql-driver/mysql: the
// ALTER privilege, the CALL form with '?' arguments over the binary
// protocol, the codes of the refusals, and a restart that serves the
// altered definition.
func TestAlterSinkOverWire(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir, testPassword)
	root := ts.db(testPassword)
	mustExec(t, root, "CREATE SINK a INTO DELTA 'lake/a' (id BIGINT NOT NULL, name VARCHAR(16), PRIMARY KEY (id)) WITH (mode = 'upsert', auto_compact = false)")
	mustExec(t, root, "INSERT INTO a VALUES (1, 'x'), (2, 'y')")

	// Privileges: ALTER on the sink, as ALTER TABLE takes.
	mustExec(t, root, "CREATE USER 'alt'@'%' IDENTIFIED BY 'alt-pw'")
	mustExec(t, root, "GRANT SELECT, INSERT ON lakesql.a TO 'alt'@'%'")
	alt := ts.userDB("alt", "alt-pw", false)
	_, err := alt.Exec("ALTER SINK a SET (flush_rows = 7)")
	wantCodeState(t, "ALTER SINK without ALTER", err, 1142, "42000")
	_, err = alt.Exec("CALL lakesql_alter_sink('a', 'SET (flush_rows = 7)')")
	wantCodeState(t, "CALL lakesql_alter_sink without ALTER", err, 1142, "42000")
	mustExec(t, root, "GRANT ALTER ON lakesql.a TO 'alt'@'%'")
	mustExec(t, alt, "ALTER SINK a SET (flush_rows = 7)")

	// The CALL form with placeholders, as a client that prepares every
	// statement sends it.
	prep := ts.preparedDB()
	if _, err := prep.Exec("CALL lakesql_alter_sink(?, ?)", "a", "SET (flush_age = '90s')"); err != nil {
		t.Fatalf("CALL lakesql_alter_sink(?, ?): %v", err)
	}
	_, err = prep.Exec("CALL lakesql_alter_sink(?, ?)", "a", "SET (flush_age = '90s'); DROP SINK a")
	wantCodeState(t, "a second statement in the change", err, 1064, "42000")

	// The refusals, with their SQLSTATE.
	for _, c := range []struct {
		sql   string
		code  uint16
		state string
	}{
		{"ALTER SINK a SET (nope = 1)", 1210, "HY000"},
		{"ALTER SINK a SET (mode = 'append')", 1846, "0A000"},
		{"ALTER SINK a DROP COLUMN id", 1846, "0A000"},
		{"ALTER SINK a DROP COLUMN nope", 1054, "42S22"},
		{"ALTER SINK a ADD COLUMN NAME INT", 1060, "42S21"},
		{"ALTER SINK a ADD COLUMN n INT NOT NULL", 1235, "42000"},
		{"ALTER SINK nope ADD COLUMN n INT", 1146, "42S02"},
	} {
		_, err := root.Exec(c.sql)
		wantCodeState(t, c.sql, err, c.code, c.state)
	}
	conn, err := root.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, conn, "BEGIN")
	mustExec(t, conn, "INSERT INTO a VALUES (3, 'z')")
	_, err = conn.ExecContext(t.Context(), "ALTER SINK a SET (flush_rows = 8)")
	wantCodeState(t, "ALTER SINK in a transaction writing to it", err, 1192, "25000")
	mustExec(t, conn, "COMMIT")
	conn.Close()

	want := [][]string{{"a", "CREATE SINK `a` INTO DELTA 'lake/a' (`id` BIGINT NOT NULL, `name` VARCHAR(16), PRIMARY KEY (`id`)) WITH (mode = 'upsert', auto_compact = FALSE, flush_rows = 7, flush_age = '90s')"}}
	if d := cmp.Diff(want, queryStrings(t, root, "SHOW CREATE SINK a")); d != "" {
		t.Errorf("SHOW CREATE SINK a (-want +got):\n%s", d)
	}
	root.Close()
	ts.stop()

	ts2 := startServer(t, dir, "")
	root2 := ts2.db(testPassword)
	if d := cmp.Diff(want, queryStrings(t, root2, "SHOW CREATE SINK a")); d != "" {
		t.Errorf("SHOW CREATE SINK a after a restart (-want +got):\n%s", d)
	}
	mustExec(t, root2, "INSERT INTO a VALUES (4, 'w')")
	if d := cmp.Diff([]int64{1, 2, 3, 4}, ids(t, root2, "a")); d != "" {
		t.Errorf("rows after a restart (-want +got):\n%s", d)
	}
}
