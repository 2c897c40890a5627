package wire

import (
	"database/sql"
	"testing"
)

// tableRows reads information_schema.TABLES.TABLE_ROWS of a sink; valid is
// false for NULL.
func tableRows(t *testing.T, db *sql.DB, sink string) sql.NullInt64 {
	t.Helper()
	var n sql.NullInt64
	err := db.QueryRow("SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'lakesql' AND TABLE_NAME = ?", sink).Scan(&n)
	if err != nil {
		t.Fatalf("TABLE_ROWS of %s: %v", sink, err)
	}
	return n
}

// checkTableRows: TABLE_ROWS, from the table's metadata, is count(*), from
// its rows.
func checkTableRows(t *testing.T, db *sql.DB, sink, after string) {
	t.Helper()
	want := count(t, db, "SELECT count(*) FROM "+sink)
	if got := tableRows(t, db, sink); !got.Valid || got.Int64 != int64(want) {
		t.Errorf("%s after %s: TABLE_ROWS = %v, count(*) = %d", sink, after, got, want)
	}
}

// TestTableRowsFromMetadata: TABLE_ROWS of a Delta sink sums its files'
// numRecords stats, of an Iceberg sink is its snapshot's total-records,
// after inserts in several commits and an upsert sink's updates and
// deletes (copy-on-write removes files).
func TestTableRowsFromMetadata(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	for _, c := range []struct{ sink, into string }{
		{"d", "DELTA 'd'"},
		{"i", "ICEBERG 'ns.i'"},
	} {
		mustExec(t, db, "CREATE SINK "+c.sink+" INTO "+c.into+" (id BIGINT NOT NULL, v BIGINT)")
		checkTableRows(t, db, c.sink, "CREATE SINK")
		mustExec(t, db, "INSERT INTO "+c.sink+" VALUES (1, 1), (2, 2), (3, 3)")
		checkTableRows(t, db, c.sink, "one INSERT")
		mustExec(t, db, "INSERT INTO "+c.sink+" VALUES (4, 4), (5, 5)")
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		mustExec(t, tx, "INSERT INTO "+c.sink+" VALUES (6, 6)")
		mustExec(t, tx, "INSERT INTO "+c.sink+" VALUES (7, 7), (8, 8)")
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		checkTableRows(t, db, c.sink, "three commits")
	}

	mustExec(t, db, "CREATE SINK u INTO DELTA 'u' (id BIGINT NOT NULL, v BIGINT, PRIMARY KEY (id)) WITH (mode = 'upsert')")
	mustExec(t, db, "INSERT INTO u VALUES (1, 1), (2, 2), (3, 3), (4, 4)")
	mustExec(t, db, "INSERT INTO u VALUES (5, 5), (6, 6)")
	checkTableRows(t, db, "u", "two INSERTs")
	mustExec(t, db, "UPDATE u SET v = 20 WHERE id = 2")
	mustExec(t, db, "INSERT INTO u VALUES (6, 60), (7, 7)") // one new key, one upserted
	checkTableRows(t, db, "u", "UPDATE and upsert")
	mustExec(t, db, "DELETE FROM u WHERE id IN (1, 5)")
	checkTableRows(t, db, "u", "DELETE")
	mustExec(t, db, "DELETE FROM u")
	checkTableRows(t, db, "u", "DELETE of every row")

	// An Iceberg upsert commits equality deletes (with its first rows
	// too), which match an unknown number of rows: TABLE_ROWS is NULL
	// then, not a wrong number.
	mustExec(t, db, "CREATE SINK iu INTO ICEBERG 'ns.iu' (id BIGINT NOT NULL, v BIGINT, PRIMARY KEY (id)) WITH (mode = 'upsert')")
	checkTableRows(t, db, "iu", "CREATE SINK")
	mustExec(t, db, "INSERT INTO iu VALUES (1, 1), (2, 2), (3, 3)")
	mustExec(t, db, "UPDATE iu SET v = 20 WHERE id = 2")
	if got := tableRows(t, db, "iu"); got.Valid {
		t.Errorf("iu after upserts (equality deletes): TABLE_ROWS = %d, want NULL", got.Int64)
	}
	if n := count(t, db, "SELECT count(*) FROM iu"); n != 3 {
		t.Errorf("iu: count(*) = %d, want 3", n)
	}

	// SHOW TABLE STATUS reads the same count.
	var name, engine, rowFormat string
	var version any
	var rows sql.NullInt64
	r, err := db.Query("SHOW TABLE STATUS LIKE 'd'")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cols, _ := r.Columns()
	vals := make([]any, len(cols))
	vals[0], vals[1], vals[2], vals[3], vals[4] = &name, &engine, &version, &rowFormat, &rows
	for i := 5; i < len(vals); i++ {
		vals[i] = new(any)
	}
	if !r.Next() {
		t.Fatal("SHOW TABLE STATUS LIKE 'd': no row")
	}
	if err := r.Scan(vals...); err != nil {
		t.Fatal(err)
	}
	if !rows.Valid || rows.Int64 != 8 {
		t.Errorf("SHOW TABLE STATUS Rows of d = %v, want 8", rows)
	}
}
