package wire

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// readOnlyWrites are the statements beyond INSERT, UPDATE and DELETE that
// write: a READ ONLY transaction refuses each with 1792, and read_only
// with 1290. files is the server's DATA/files.
func readOnlyWrites(files string) []string {
	return []string{
		"CREATE SINK rw_new INTO DELTA 'rw_new' (id BIGINT NOT NULL)",
		"DROP SINK rw",
		"CALL lakesql_create_sink('rw_new', 'delta', 'rw_new', 'id BIGINT NOT NULL')",
		"CALL lakesql_create_sink_if_not_exists('rw_new', 'delta', 'rw_new', 'id BIGINT NOT NULL')",
		"CALL lakesql_drop_sink('rw')",
		"SET lakesql_epoch = 5",
		"SET @@session.lakesql_epoch = 6",
		"SELECT 1 INTO OUTFILE '" + filepath.Join(files, "ro_out.txt") + "'",
		"SELECT id FROM rw INTO OUTFILE '" + filepath.Join(files, "ro_sink.txt") + "'",
		"SELECT 1 INTO DUMPFILE '" + filepath.Join(files, "ro_dump.bin") + "'",
		"CREATE VIEW rw_view AS SELECT 1",
		"INSERT INTO rw VALUES (9)",
		"UPDATE rw SET id = 9",
		"DELETE FROM rw",
	}
}

// readOnlyReads still run where writes are refused.
var readOnlyReads = []string{"SELECT count(*) FROM rw", "SHOW SINKS", "CALL lakesql_show_sinks()", "SHOW SINK STATUS rw",
	"CALL lakesql_sink_status('rw')", "SHOW CREATE SINK rw", "SELECT @@lakesql_epoch", "SELECT 1 INTO @one"}

func wantSQLError(t *testing.T, err error, code uint16, state, context string) {
	t.Helper()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != code || string(me.SQLState[:]) != state {
		t.Errorf("%s: %v, want %d (%s)", context, err, code, state)
	}
}

// checkNothingWritten: after the refused writes, rw still has its row, no
// new sink, view or file exists, and the epoch is unset.
func checkNothingWritten(t *testing.T, db *sql.DB, files string) {
	t.Helper()
	if n := count(t, db, "SELECT count(*) FROM rw"); n != 1 {
		t.Errorf("rw holds %d rows, want 1", n)
	}
	if n := count(t, db, "SELECT count(*) FROM information_schema.tables WHERE table_name IN ('rw_new', 'rw_view')"); n != 0 {
		t.Errorf("a refused CREATE left %d tables or views", n)
	}
	for _, f := range []string{"ro_out.txt", "ro_sink.txt", "ro_dump.bin"} {
		if _, err := os.Stat(filepath.Join(files, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a refused INTO OUTFILE left %s: %v", f, err)
		}
	}
}

// TestReadOnlyTransactionRefusesEveryWrite: START TRANSACTION READ ONLY
// and transaction_read_only = 1 refuse every statement that writes, not
// only INSERT, UPDATE and DELETE, with 1792 (25006); reads still run.
func TestReadOnlyTransactionRefusesEveryWrite(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir, testPassword)
	db := ts.db(testPassword)
	mustExec(t, db, "CREATE SINK rw INTO DELTA 'rw' (id BIGINT NOT NULL)")
	mustExec(t, db, "INSERT INTO rw VALUES (1)")
	files := filepath.Join(dir, SecureFilesDir)
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, mode := range []struct{ on, off string }{
		{"START TRANSACTION READ ONLY", "COMMIT"},
		{"SET transaction_read_only = 1", "SET transaction_read_only = 0"},
	} {
		mustExec(t, c, mode.on)
		for _, q := range readOnlyWrites(files) {
			_, err := c.ExecContext(ctx, q)
			wantSQLError(t, err, 1792, "25006", mode.on+"; "+q)
		}
		for _, q := range readOnlyReads {
			rows, err := c.QueryContext(ctx, q)
			if err != nil {
				t.Errorf("%s; %s: %v", mode.on, q, err)
				continue
			}
			rows.Close()
		}
		mustExec(t, c, mode.off)
		checkNothingWritten(t, db, files)
	}
	// Read-write again: the same statements run.
	mustExec(t, c, "SET lakesql_epoch = 5")
	mustExec(t, c, "CREATE VIEW rw_view AS SELECT 1")
	mustExec(t, c, "CREATE SINK rw_new INTO DELTA 'rw_new' (id BIGINT NOT NULL)")
}

// TestGlobalReadOnly: SET GLOBAL read_only = 1 refuses every write with
// 1290 to accounts without SUPER (root has it, and writes); super_read_only = 1
// refuses root too. Reads run throughout.
func TestGlobalReadOnly(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir, testPassword)
	root := ts.db(testPassword)
	// reader may write everything; read_only is what stops it.
	mustExec(t, root, "CREATE USER 'reader'@'%' IDENTIFIED BY 'reader-pw'")
	mustExec(t, root, "GRANT ALL ON lakesql.* TO 'reader'@'%'")
	mustExec(t, root, "GRANT FILE ON *.* TO 'reader'@'%'")
	other, err := sql.Open("mysql", fmt.Sprintf("reader:reader-pw@tcp(%s)/lakesql", ts.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	mustExec(t, root, "CREATE SINK rw INTO DELTA 'rw' (id BIGINT NOT NULL)")
	mustExec(t, root, "INSERT INTO rw VALUES (1)")
	files := filepath.Join(dir, SecureFilesDir)
	t.Cleanup(func() {
		// System variables are the process's: leave them as found.
		root.Exec("SET GLOBAL super_read_only = 0")
		root.Exec("SET GLOBAL read_only = 0")
	})
	mustExec(t, root, "SET GLOBAL read_only = 1")
	for _, q := range readOnlyWrites(files) {
		_, err := other.Exec(q)
		wantSQLError(t, err, 1290, "HY000", "read_only = 1, user reader: "+q)
	}
	for _, q := range readOnlyReads {
		if _, err := other.Exec(q); err != nil {
			t.Errorf("read_only = 1, user reader: %s: %v", q, err)
		}
	}
	checkNothingWritten(t, root, files)
	// Nor may reader lift it (1227), as a user without SUPER may not.
	for _, q := range []string{"SET GLOBAL read_only = 0", "SET GLOBAL super_read_only = 1", "SET @@global.read_only = OFF"} {
		_, err := other.Exec(q)
		wantSQLError(t, err, 1227, "42000", "user reader: "+q)
	}
	if _, err := other.Exec("INSERT INTO rw VALUES (8)"); mysqlCode(err) != 1290 {
		t.Errorf("after reader's SET GLOBAL read_only = 0: %v, want 1290", err)
	}
	// root is spared, as MySQL spares SUPER, and so is an account once
	// it is granted SUPER.
	mustExec(t, root, "INSERT INTO rw VALUES (2)")
	mustExec(t, root, "CREATE SINK rw2 INTO DELTA 'rw2' (id BIGINT NOT NULL)")
	mustExec(t, root, "GRANT SUPER ON *.* TO 'reader'@'%'")
	mustExec(t, other, "INSERT INTO rw VALUES (5)")
	mustExec(t, root, "REVOKE SUPER ON *.* FROM 'reader'@'%'")
	if _, err := other.Exec("INSERT INTO rw VALUES (9)"); mysqlCode(err) != 1290 {
		t.Errorf("after REVOKE SUPER: %v, want 1290", err)
	}

	mustExec(t, root, "SET GLOBAL super_read_only = 1")
	for _, q := range []string{"INSERT INTO rw VALUES (3)", "DROP SINK rw2", "SET lakesql_epoch = 7", "CREATE VIEW rw_view AS SELECT 1"} {
		_, err := root.Exec(q)
		wantSQLError(t, err, 1290, "HY000", "super_read_only = 1, root: "+q)
	}
	mustExec(t, root, "SET GLOBAL super_read_only = 0")
	mustExec(t, root, "SET GLOBAL read_only = 0")
	mustExec(t, other, "INSERT INTO rw VALUES (4)")
	if n := count(t, root, "SELECT count(*) FROM rw"); n != 4 {
		t.Errorf("rw holds %d rows, want 4 (1, 2, 5 and 4)", n)
	}
}
