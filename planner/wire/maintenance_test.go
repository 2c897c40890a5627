package wire

import (
	"context"
	"database/sql"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// statusColumn returns one column of SHOW SINK STATUS name.
func statusColumn(t *testing.T, db *sql.DB, sink, column string) string {
	t.Helper()
	rows, err := db.Query("SHOW SINK STATUS " + sink)
	if err != nil {
		t.Fatal(err)
	}
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	rows.Close()
	got := queryStrings(t, db, "SHOW SINK STATUS "+sink)
	for i, c := range cols {
		if c == column {
			return got[0][i]
		}
	}
	t.Fatalf("SHOW SINK STATUS has no column %s: %v", column, cols)
	return ""
}

// TestMaintenanceOverWire runs OPTIMIZE, VACUUM, SHOW SINK HISTORY and
// AS OF on a Delta sink through go-sql-driver/mysql, and their errors.
func TestMaintenanceOverWire(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	db.SetMaxOpenConns(1) // one session: SET applies to the statements after it
	ctx := context.Background()
	mustExec(t, db, "CREATE SINK m INTO DELTA 'lake/m' (id BIGINT NOT NULL, region VARCHAR(8), v BIGINT) PARTITION BY (region) WITH (auto_compact = false)")
	for i := 1; i <= 6; i++ {
		region := "eu"
		if i%2 == 0 {
			region = "us"
		}
		mustExec(t, db, "INSERT INTO m VALUES ("+strconv.Itoa(i)+", '"+region+"', "+strconv.Itoa(i*10)+")")
	}
	all := "SELECT id, region, v FROM m ORDER BY id"
	before := queryStrings(t, db, all)
	if got := statusColumn(t, db, "m", "Live_files"); got != "6" {
		t.Fatalf("Live_files before OPTIMIZE = %s, want 6", got)
	}

	// OPTIMIZE of one partition: its three files become one.
	got := queryStrings(t, db, "OPTIMIZE SINK m WHERE region = 'eu'")
	if d := cmp.Diff([]string{"m", "7", "1", "3", "1"}, got[0][:5]); d != "" {
		t.Errorf("OPTIMIZE WHERE region = 'eu' (-want +got):\n%s", d)
	}
	if d := cmp.Diff(before, queryStrings(t, db, all)); d != "" {
		t.Errorf("rows after OPTIMIZE (-before +after):\n%s", d)
	}
	if got := statusColumn(t, db, "m", "Live_files"); got != "4" {
		t.Errorf("Live_files after OPTIMIZE = %s, want 4", got)
	}
	if got := statusColumn(t, db, "m", "Optimize_outcome"); got != "ok" {
		t.Errorf("Optimize_outcome = %s, want ok", got)
	}
	// Nothing left to compact in eu: no version.
	got = queryStrings(t, db, "OPTIMIZE SINK m WHERE region IN ('eu') AND region IS NOT NULL")
	if got[0][1] != "NULL" || got[0][3] != "0" {
		t.Errorf("second OPTIMIZE of eu = %v, want Version NULL and no file removed", got[0])
	}

	// History: newest first, the OPTIMIZE on top, the writes below.
	hist := queryStrings(t, db, "SHOW SINK HISTORY m LIMIT 3")
	if len(hist) != 3 || hist[0][0] != "7" || hist[0][2] != "OPTIMIZE" || hist[1][0] != "6" || hist[1][2] != "WRITE" {
		t.Errorf("SHOW SINK HISTORY m LIMIT 3 = %v", hist)
	}
	if hist[1][5] != "1" {
		t.Errorf("version 6 added %s rows, want 1", hist[1][5])
	}
	if got := queryStrings(t, db, "CALL lakesql_sink_history('m', 1)"); len(got) != 1 || got[0][0] != "7" {
		t.Errorf("CALL lakesql_sink_history('m', 1) = %v", got)
	}

	// AS OF a version, and AS OF the time of one.
	if d := cmp.Diff([][]string{{"1", "eu", "10"}, {"2", "us", "20"}}, queryStrings(t, db, "SELECT id, region, v FROM m AS OF 2 ORDER BY id")); d != "" {
		t.Errorf("AS OF 2 (-want +got):\n%s", d)
	}
	v3 := queryStrings(t, db, "SHOW SINK HISTORY m")
	var at string
	for _, h := range v3 {
		if h[0] == "3" {
			at = h[1]
		}
	}
	if got := queryStrings(t, db, "SELECT count(*) FROM m AS OF TIMESTAMP('"+at+"')"); got[0][0] != "3" {
		t.Errorf("AS OF TIMESTAMP('%s') (version 3) = %v rows, want 3", at, got)
	}
	if got := queryStrings(t, db, "SELECT count(*) FROM m AS OF '"+at+"'"); got[0][0] != "3" {
		t.Errorf("AS OF '%s' (version 3) = %v rows, want 3", at, got)
	}
	_, err := db.ExecContext(ctx, "SELECT * FROM m AS OF 999")
	wantCode(t, "AS OF 999", err, 1210)
	_, err = db.ExecContext(ctx, "SELECT * FROM m AS OF '1999-01-01 00:00:00'")
	wantCode(t, "AS OF a time before the table", err, 1210)

	// Errors of OPTIMIZE and VACUUM.
	_, err = db.ExecContext(ctx, "OPTIMIZE SINK nosuch")
	wantCode(t, "OPTIMIZE of an unknown sink", err, 1146)
	_, err = db.ExecContext(ctx, "VACUUM SINK nosuch")
	wantCode(t, "VACUUM of an unknown sink", err, 1146)
	_, err = db.ExecContext(ctx, "SHOW SINK HISTORY nosuch")
	wantCode(t, "HISTORY of an unknown sink", err, 1146)
	_, err = db.ExecContext(ctx, "OPTIMIZE SINK m WHERE v = 1")
	wantCodeText(t, err, 1054, "region")
	_, err = db.ExecContext(ctx, "OPTIMIZE SINK m WHERE region = DATE '2026-01-01'")
	wantCode(t, "a date compared with a text partition", err, 1210)
	_, err = db.ExecContext(ctx, "OPTIMIZE SINK m WHERE region = read_text('/etc/passwd')")
	wantCode(t, "a function in the predicate", err, 1064)
	_, err = db.ExecContext(ctx, "VACUUM SINK m RETAIN -1 HOURS")
	wantCode(t, "a negative retention", err, 1210)
	_, err = db.ExecContext(ctx, "VACUUM SINK m RETAIN 0 HOURS")
	wantCodeText(t, err, 1210, "lakesql_vacuum_retention_check")
	_, err = db.ExecContext(ctx, "CALL lakesql_vacuum_sink('m', '1', '1')")
	wantCodeText(t, err, 1210, "lakesql_vacuum_retention_check")

	// With the check off: the dry run lists the files the OPTIMIZE
	// removed, and VACUUM deletes just those.
	mustExec(t, db, "SET lakesql_vacuum_retention_check = OFF")
	dry := queryStrings(t, db, "VACUUM SINK m RETAIN 0 HOURS DRY RUN")
	if len(dry) != 3 {
		t.Fatalf("VACUUM DRY RUN = %v, want the 3 files OPTIMIZE removed", dry)
	}
	for _, f := range dry {
		if f[2] != "removed" {
			t.Errorf("dry run file %v: reason %s, want removed", f, f[2])
		}
	}
	if got := queryStrings(t, db, "CALL lakesql_vacuum_sink('m', '0', TRUE)"); got[0][1] != "3" {
		t.Errorf("CALL lakesql_vacuum_sink dry run = %v, want 3 files", got)
	}
	if d := cmp.Diff(dry, queryStrings(t, db, "VACUUM SINK m RETAIN 0 HOURS DRY RUN")); d != "" {
		t.Errorf("a dry run deleted something (-first +second):\n%s", d)
	}
	vac := queryStrings(t, db, "VACUUM SINK m RETAIN 0 HOURS")
	if vac[0][0] != "m" || vac[0][1] != "3" {
		t.Errorf("VACUUM = %v, want 3 files deleted", vac)
	}
	if got := queryStrings(t, db, "VACUUM SINK m RETAIN 0 HOURS DRY RUN"); len(got) != 0 {
		t.Errorf("dry run after VACUUM = %v, want nothing left", got)
	}
	if d := cmp.Diff(before, queryStrings(t, db, all)); d != "" {
		t.Errorf("rows after VACUUM (-before +after):\n%s", d)
	}
	if got := statusColumn(t, db, "m", "Vacuum_outcome"); got != "ok" {
		t.Errorf("Vacuum_outcome = %s, want ok", got)
	}
	// A version whose files VACUUM deleted.
	_, err = db.ExecContext(ctx, "SELECT * FROM m AS OF 2")
	wantCode(t, "AS OF a vacuumed version", err, 1412)

	// Inside a transaction OPTIMIZE commits it first, as OPTIMIZE TABLE
	// does in MySQL.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "INSERT INTO m VALUES (7, 'eu', 70)")
	mustExec(t, tx, "OPTIMIZE SINK m")
	if err := tx.Rollback(); err != nil && err != sql.ErrTxDone {
		t.Logf("rollback after the implicit commit: %v", err)
	}
	if got := queryStrings(t, db, "SELECT count(*) FROM m"); got[0][0] != "7" {
		t.Errorf("after OPTIMIZE in a transaction: %v rows, want 7 (the INSERT committed)", got)
	}
	// Writes AS OF are refused.
	_, err = db.ExecContext(ctx, "UPDATE m AS OF 8 SET v = 0")
	if err == nil {
		t.Error("UPDATE ... AS OF succeeded")
	}
}
