package wire

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// preparedDB connects with interpolateParams=false: go-sql-driver/mysql
// then sends every statement that has arguments as COM_STMT_PREPARE and
// COM_STMT_EXECUTE (binary protocol), as JDBC's useServerPrepStmts does.
// One connection, so that a transaction's statements share it.
func (ts *testServer) preparedDB() *sql.DB {
	ts.t.Helper()
	db, err := sql.Open("mysql", dsn(ts.addr, testPassword)+"&interpolateParams=false")
	if err != nil {
		ts.t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	ts.t.Cleanup(func() { db.Close() })
	return db
}

// queryStrings runs a query and returns its rows as strings ("NULL" for NULL).
func queryStrings(t *testing.T, db *sql.DB, query string, args ...any) [][]string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), query, args...)
	return rowStrings(t, query, rows, err)
}

func rowStrings(t *testing.T, query string, rows *sql.Rows, err error) [][]string {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	out := [][]string{}
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = "NULL"
			if v.Valid {
				row[i] = v.String
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}

func TestProcPreparedOverWire(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.preparedDB()
	ctx := context.Background()

	// Arguments force COM_STMT_PREPARE; a NULL argument is "not given".
	if _, err := db.ExecContext(ctx, "CALL lakesql_create_sink(?, ?, ?, ?, ?, ?)",
		"t", "delta", "lake/t", "id BIGINT NOT NULL, name VARCHAR(16), PRIMARY KEY (id)", nil, "mode = 'upsert'"); err != nil {
		t.Fatalf("CALL lakesql_create_sink: %v", err)
	}
	for i, name := range []string{"a", "b"} {
		if _, err := db.ExecContext(ctx, "INSERT INTO t VALUES (?, ?)", i+1, name); err != nil {
			t.Fatalf("prepared INSERT: %v", err)
		}
	}
	if diff := cmp.Diff([]int64{1, 2}, ids(t, db, "t")); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}

	// Result rows reach the client over the binary protocol: a statement
	// prepared explicitly, and one prepared because it has an argument.
	stmt, err := db.PrepareContext(ctx, "CALL lakesql_show_sinks()")
	if err != nil {
		t.Fatalf("prepare lakesql_show_sinks: %v", err)
	}
	defer stmt.Close()
	rows, err := stmt.QueryContext(ctx)
	got := rowStrings(t, "CALL lakesql_show_sinks()", rows, err)
	if len(got) != 1 || got[0][0] != "t" || got[0][1] != "DELTA" || !strings.HasSuffix(got[0][2], "/lake/t") || got[0][3] != "upsert" {
		t.Errorf("lakesql_show_sinks() = %v", got)
	}
	var sink, health string
	var lastEpoch, version, commits, rowCount int64
	var errText sql.NullString
	var maint [9]sql.NullString // the maintenance columns
	if err := db.QueryRowContext(ctx, "CALL lakesql_sink_status(?)", "t").Scan(
		&sink, &health, &lastEpoch, &version, &commits, &rowCount, &errText, &maint[0], &maint[1], &maint[2],
		&maint[3], &maint[4], &maint[5], &maint[6], &maint[7], &maint[8]); err != nil {
		t.Fatalf("CALL lakesql_sink_status(?): %v", err)
	}
	if sink != "t" || health != "healthy" || lastEpoch != 2 || version != 2 || commits != 2 || rowCount != 2 || errText.Valid {
		t.Errorf("lakesql_sink_status(t) = %s %s %d %d %d %d %v", sink, health, lastEpoch, version, commits, rowCount, errText)
	}
	want := "CREATE SINK `t` INTO DELTA 'lake/t' (`id` BIGINT NOT NULL, `name` VARCHAR(16), PRIMARY KEY (`id`)) WITH (mode = 'upsert')"
	if diff := cmp.Diff([][]string{{"t", want}}, queryStrings(t, db, "CALL lakesql_show_create_sink(?)", "t")); diff != "" {
		t.Errorf("lakesql_show_create_sink (-want +got):\n%s", diff)
	}

	// Errors keep their codes through prepare and execute.
	for _, c := range []struct {
		query string
		args  []any
		code  uint16
		msg   string
	}{
		{"CALL lakesql_drop_sink(?)", []any{"nosuch"}, 1146, "no such sink: nosuch"},
		{"CALL lakesql_show_create_sink(?)", []any{"nosuch"}, 1146, "no such sink: sink nosuch"},
		{"CALL lakesql_create_sink(?, ?, ?, ?, ?, ?)", []any{"x", "delta", "lake/x", "id BIGINT", nil, "colour = 'blue'"}, 1210,
			"sink x: bad sink option: unknown option colour"},
		{"CALL lakesql_create_sink(?, ?, ?)", []any{nil, "delta", "lake/x"}, 1210,
			"lakesql_create_sink: argument name: the sink name must be given (not NULL or empty)"},
		{"CALL lakesql_create_sink(?, ?, ?, ?)", []any{"x", "delta", "lake/x", "id BIGINT) WITH (mode = 'upsert'"}, 1064,
			"lakesql_create_sink: argument columns: syntax error"},
		{"CALL lakesql_create_sink(?, ?, ?)", []any{"t", "delta", "lake/t2"}, 1050, "sink already exists: t"},
		// A wrong count fails when the statement is prepared.
		{"CALL lakesql_drop_sink(?, ?, ?)", []any{"t", 1, 2}, 1318, "expected 1 to 2, got 3"},
	} {
		_, err := db.ExecContext(ctx, c.query, c.args...)
		if code := mysqlCode(err); code != c.code || err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s %v: got %v (code %d), want code %d and %q", c.query, c.args, err, code, c.code, c.msg)
		}
	}
	// The text form over COM_QUERY fails with the same code and message.
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.ExecContext(ctx, "CREATE SINK x INTO DELTA 'lake/x' (id BIGINT) WITH (colour = 'blue')")
	if code := mysqlCode(err); code != 1210 || !strings.Contains(err.Error(), "sink x: bad sink option: unknown option colour") {
		t.Errorf("text form: %v (code %d), want the procedure's 1210", err, code)
	}
	conn.Close()

	// A CALL in a transaction commits it first, as CREATE SINK does.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO t VALUES (?, ?)", 3, "c"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "CALL lakesql_create_sink(?, ?, ?, ?)", "u", "delta", "lake/u", "id BIGINT"); err != nil {
		t.Fatalf("CALL in a transaction: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{1, 2, 3}, ids(t, db, "t")); diff != "" {
		t.Errorf("rows after the CALL and ROLLBACK (-want +got):\n%s", diff)
	}

	if _, err := db.ExecContext(ctx, "CALL lakesql_drop_sink(?, ?)", "u", true); err != nil {
		t.Fatalf("CALL lakesql_drop_sink: %v", err)
	}
	if _, err := db.ExecContext(ctx, "CALL lakesql_drop_sink(?, ?)", "u", true); err != nil {
		t.Fatalf("CALL lakesql_drop_sink with if_exists of a dropped sink: %v", err)
	}
	if got := queryStrings(t, db, "CALL lakesql_show_sinks()"); len(got) != 1 {
		t.Errorf("sinks after the drop: %v", got)
	}
}

// lakesql's text statements cannot be prepared: the connection layer
// parses every prepared statement with the MySQL grammar, which has no
// CREATE SINK, before lakesql sees it. They travel over COM_QUERY only.
func TestProcTextFormCannotBePrepared(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.preparedDB()
	ctx := context.Background()
	_, err := db.ExecContext(ctx, "CREATE SINK y INTO DELTA ? (id BIGINT)", "lake/y")
	if code := mysqlCode(err); code != 1064 || !strings.Contains(err.Error(), "syntax error") {
		t.Errorf("prepared CREATE SINK with an argument: %v (code %d), want the MySQL grammar's syntax error 1064", err, code)
	}
	if _, err := db.PrepareContext(ctx, "SHOW SINKS"); err == nil || !strings.Contains(err.Error(), "syntax error") {
		t.Errorf("prepared SHOW SINKS: %v, want a syntax error", err)
	}
	// Over COM_QUERY the same statements work, on the same connection.
	mustExec(t, db, "CREATE SINK y INTO DELTA 'lake/y' (id BIGINT)")
	if got := queryStrings(t, db, "SHOW SINKS"); len(got) != 1 || got[0][0] != "y" {
		t.Errorf("SHOW SINKS = %v", got)
	}
}
