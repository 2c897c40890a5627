package driver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/internal/deltatest"
	"github.com/lakesql/lakesql/planner"
)

const createOrders = `CREATE SINK orders INTO DELTA 'lake/orders'
  (id BIGINT NOT NULL, amount DOUBLE, region VARCHAR(16), PRIMARY KEY (id))`

func openDB(t *testing.T, dir string) *sql.DB {
	t.Helper()
	db, err := sql.Open("lakesql", dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t *testing.T, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, q string, args ...any) sql.Result {
	t.Helper()
	res, err := db.ExecContext(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return res
}

// query returns all rows of q as driver values.
func query(t *testing.T, db *sql.DB, q string, args ...any) [][]any {
	t.Helper()
	rs, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]any
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, vals)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDriver(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	table := filepath.Join(dir, "lake/orders")
	db := openDB(t, dir)
	mustExec(t, db, createOrders)
	v0 := deltatest.Versions(t, table)

	// Autocommit insert with arguments of every kind: one version.
	res := mustExec(t, db, "INSERT INTO orders VALUES (?, ?, ?), (?, ?, ?)",
		1, 1.5, "eu", int64(2), nil, "it's a ? \\ ;")
	if n, _ := res.RowsAffected(); n != 2 {
		t.Errorf("RowsAffected = %d, want 2", n)
	}
	if got := deltatest.Versions(t, table); got != v0+1 {
		t.Errorf("versions after an autocommit insert = %d, want %d", got, v0+1)
	}
	got := query(t, db, "SELECT id, amount, region FROM orders WHERE id = ? OR region = ? ORDER BY id", 1, "it's a ? \\ ;")
	want := [][]any{{int64(1), 1.5, "eu"}, {int64(2), nil, "it's a ? \\ ;"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("select (-want +got):\n%s", diff)
	}
	if got := query(t, db, "SELECT 'a?b' AS s, ? AS n", 7); !cmp.Equal(got, [][]any{{"a?b", int64(7)}}) {
		t.Errorf("a '?' in a string is not a placeholder: %v", got)
	}

	// BeginTx ... Commit: one version for two statements.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "INSERT INTO orders VALUES (?, ?, ?)", 3, 3.0, "us")
	mustExec(t, tx, "INSERT INTO orders VALUES (?, ?, ?)", 4, 4.0, "us")
	if got := deltatest.Versions(t, table); got != v0+1 {
		t.Errorf("versions before Commit = %d, want %d (rows are buffered)", got, v0+1)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := deltatest.Versions(t, table); got != v0+2 {
		t.Errorf("versions after Commit = %d, want %d", got, v0+2)
	}

	// Rollback leaves nothing.
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "INSERT INTO orders VALUES (5, 5, 'eu')")
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if got := deltatest.Versions(t, table); got != v0+2 {
		t.Errorf("versions after Rollback = %d, want %d", got, v0+2)
	}

	// A failing statement in a transaction keeps the earlier rows.
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "INSERT INTO orders VALUES (6, 6, 'eu')")
	_, err = tx.Exec("INSERT INTO orders VALUES (7, 7, 'eu'), (NULL, 8, 'eu')")
	if err == nil {
		t.Fatal("NULL into NOT NULL succeeded")
	}
	var se *mysql.SQLError
	if !errors.As(err, &se) || se.Number() == 0 {
		t.Errorf("error %v carries no MySQL code", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	got = query(t, db, "SELECT id FROM orders ORDER BY id")
	want = [][]any{{int64(1)}, {int64(2)}, {int64(3)}, {int64(4)}, {int64(6)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if got := deltatest.Versions(t, table); got != v0+3 {
		t.Errorf("versions = %d, want %d", got, v0+3)
	}
}

func TestErrors(t *testing.T) {
	db := openDB(t, t.TempDir())
	_, err := db.Exec("SELECT * FROM nosuch")
	var se *mysql.SQLError
	if !errors.As(err, &se) || se.Number() != mysql.ERNoSuchTable {
		t.Errorf("unknown table: %v, want MySQL error %d", err, mysql.ERNoSuchTable)
	}
	_, err = db.Exec("DROP SINK nosuch")
	if !errors.Is(err, planner.ErrNoSink) {
		t.Errorf("DROP SINK nosuch: %v, want planner.ErrNoSink", err)
	}
	if !errors.As(err, &se) || se.Number() != mysql.ERNoSuchTable {
		t.Errorf("DROP SINK nosuch: %v, want MySQL error %d", err, mysql.ERNoSuchTable)
	}
	_, err = db.Exec("CREATE SINK s INTO DELTA 'x' (id BIGINT) WITH (bogus = 1")
	if !errors.As(err, &se) || se.Number() != mysql.ERParseError {
		t.Errorf("syntax error: %v, want MySQL error %d", err, mysql.ERParseError)
	}
	if _, err := db.BeginTx(context.Background(), &sql.TxOptions{Isolation: sql.LevelSerializable}); err == nil ||
		!strings.Contains(err.Error(), "isolation level") {
		t.Errorf("serializable: %v, want an isolation level error", err)
	}
	if _, err := db.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true}); err == nil ||
		!strings.Contains(err.Error(), "read-only") {
		t.Errorf("read-only: %v, want a read-only error", err)
	}
	if _, err := db.Exec("SELECT ?, ?", 1); err == nil {
		t.Error("too few arguments succeeded")
	}
	if _, err := db.Exec("SELECT ?", sql.Named("x", 1)); err == nil {
		t.Error("a named argument succeeded")
	}
}

func TestEpochReplay(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	table := filepath.Join(dir, "lake/orders")
	db := openDB(t, dir)
	mustExec(t, db, createOrders)
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < 2; i++ {
		mustExec(t, c, "SET lakesql_epoch = 42")
		tx, err := c.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		mustExec(t, tx, "INSERT INTO orders VALUES (1, 1, 'eu'), (2, 2, 'eu')")
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	if got := query(t, db, "SELECT count(*) FROM orders"); !cmp.Equal(got, [][]any{{int64(2)}}) {
		t.Errorf("count after a replay = %v, want 2", got)
	}
	got := query(t, db, "SHOW SINK STATUS orders")
	if len(got) != 1 || got[0][2] != int64(42) {
		t.Errorf("SHOW SINK STATUS = %v, want last epoch 42", got)
	}
	if got := deltatest.Versions(t, table); got != 2 {
		t.Errorf("versions = %d, want 2 (create + epoch 42)", got)
	}
}

func TestReopen(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("lakesql", dir)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, createOrders)
	mustExec(t, db, "INSERT INTO orders VALUES (?, ?, ?)", 1, 2.5, "eu")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	enginesMu.Lock()
	n := len(engines)
	enginesMu.Unlock()
	if n != 0 {
		t.Errorf("%d engines open after the last DB closed", n)
	}
	db = openDB(t, dir)
	got := query(t, db, "SELECT id, amount, region FROM orders")
	if diff := cmp.Diff([][]any{{int64(1), 2.5, "eu"}}, got); diff != "" {
		t.Errorf("after reopening (-want +got):\n%s", diff)
	}
}

func TestSharedEngine(t *testing.T) {
	dir := t.TempDir()
	a := openDB(t, dir)
	b := openDB(t, dir)
	mustExec(t, a, createOrders)
	mustExec(t, b, "INSERT INTO orders VALUES (1, 1, 'eu')")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if got := query(t, a, "SELECT id FROM orders"); !cmp.Equal(got, [][]any{{int64(1)}}) {
		t.Errorf("rows = %v", got)
	}
	if _, err := sql.Open("lakesql", dir+"?bogus=1"); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("unknown option: %v", err)
	}
	other, err := sql.Open("lakesql", dir+"?allowed_roots="+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Ping(); err == nil || !strings.Contains(err.Error(), "allowed_roots") {
		t.Errorf("same directory, other roots: %v, want an error", err)
	}
}

func TestAllowedRoots(t *testing.T) {
	dir, lake := t.TempDir(), t.TempDir()
	db := openDB(t, dir+"?allowed_roots="+lake)
	mustExec(t, db, "CREATE SINK ok INTO DELTA '"+filepath.Join(lake, "t")+"' (id BIGINT)")
	if _, err := db.Exec("CREATE SINK bad INTO DELTA '" + filepath.Join(t.TempDir(), "t") + "' (id BIGINT)"); err == nil {
		t.Error("a location outside allowed_roots was accepted")
	}
}

func TestConcurrentTransactions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	table := filepath.Join(dir, "lake/orders")
	db := openDB(t, dir)
	mustExec(t, db, createOrders)
	v0 := deltatest.Versions(t, table)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				errs <- err
				return
			}
			for i := 0; i < 3; i++ {
				if _, err := tx.Exec("INSERT INTO orders VALUES (?, ?, ?)", w*10+i, float64(i), "eu"); err != nil {
					tx.Rollback()
					errs <- err
					return
				}
			}
			time.Sleep(50 * time.Millisecond)
			errs <- tx.Commit()
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got := query(t, db, "SELECT id FROM orders ORDER BY id")
	want := [][]any{{int64(0)}, {int64(1)}, {int64(2)}, {int64(10)}, {int64(11)}, {int64(12)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if got := deltatest.Versions(t, table); got != v0+2 {
		t.Errorf("versions = %d, want %d (one per transaction)", got, v0+2)
	}
}

func TestInterpolate(t *testing.T) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.FixedZone("X", 3600))
	args := []driver.NamedValue{{Value: nil}, {Value: int64(-3)}, {Value: 1.0}, {Value: 0.25}, {Value: true},
		{Value: "a'b\\c\n"}, {Value: []byte{0, 0xff}}, {Value: ts}}
	q := "SELECT ?, ?, ?, ?, ?, '?', `?`, \"?\" -- ?\n, ? # ?\n, ? /* ? */, ?"
	got, err := interpolate(q, args)
	if err != nil {
		t.Fatal(err)
	}
	want := "SELECT NULL, -3, 1e0, 0.25, TRUE, '?', `?`, \"?\" -- ?\n, 'a''b\\\\c\\n' # ?\n, X'00ff' /* ? */, '2026-01-02 02:04:05.123456'"
	if got != want {
		t.Errorf("interpolate:\n got %s\nwant %s", got, want)
	}
	if _, err := interpolate(q+", ?", args); err == nil {
		t.Error("9 placeholders, 8 arguments: no error")
	}
}

// TestDroppedConnection uses the driver directly: a connection closed in
// the middle of a transaction leaves nothing, and the last connection
// closes the engine.
func TestDroppedConnection(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "lake/orders")
	c, err := (&Driver{}).Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ex := c.(driver.ExecerContext)
	for _, q := range []string{createOrders, "BEGIN", "INSERT INTO orders VALUES (1, 1, 'eu')"} {
		if _, err := ex.ExecContext(ctx, q, nil); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	enginesMu.Lock()
	n := len(engines)
	enginesMu.Unlock()
	if n != 0 {
		t.Errorf("%d engines open after the last connection closed", n)
	}
	if got := deltatest.Versions(t, table); got != 1 {
		t.Errorf("versions = %d, want 1 (the create only)", got)
	}
	db := openDB(t, dir)
	if got := query(t, db, "SELECT count(*) FROM orders"); !cmp.Equal(got, [][]any{{int64(0)}}) {
		t.Errorf("rows after a dropped transaction: %v, want 0", got)
	}
}

// TestValueTypes round-trips arguments of each kind through a sink.
func TestValueTypes(t *testing.T) {
	db := openDB(t, t.TempDir())
	mustExec(t, db, `CREATE SINK v INTO DELTA 'lake/v'
	  (id BIGINT NOT NULL, ts TIMESTAMP(6), ok BOOLEAN, b VARBINARY(16), d DECIMAL(10,2), s VARCHAR(32))`)
	ts := time.Date(2026, 3, 4, 5, 6, 7, 890000000, time.FixedZone("CET", 3600))
	mustExec(t, db, "INSERT INTO v VALUES (?, ?, ?, ?, ?, ?)", 1, ts, true, []byte{0, 1, 0xfe}, "12.34", "a\x00b\n'\\")
	mustExec(t, db, "INSERT INTO v VALUES (?, ?, ?, ?, ?, ?)", 2, nil, false, nil, nil, nil)
	got := query(t, db, "SELECT id, ts, ok, b, d, s FROM v ORDER BY id")
	if len(got) != 2 {
		t.Fatalf("rows = %v", got)
	}
	gotTS, isTime := got[0][1].(time.Time)
	if !isTime || !gotTS.Equal(ts) {
		t.Errorf("ts = %#v, want the instant %v", got[0][1], ts)
	}
	got[0][1] = nil
	// BOOLEAN is TINYINT(1), as in MySQL: an int64 that scans into a bool.
	want := [][]any{
		{int64(1), nil, int64(1), []byte{0, 1, 0xfe}, "12.34", "a\x00b\n'\\"},
		{int64(2), nil, int64(0), nil, nil, nil},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	var ok bool
	if err := db.QueryRow("SELECT ok FROM v WHERE id = ?", 1).Scan(&ok); err != nil || !ok {
		t.Errorf("scan BOOLEAN into bool: %v, %v", ok, err)
	}
}

// Column types and values as go-sql-driver/mysql gives them over the wire:
// MySQL's type names, a DECIMAL as text with its scale, a DATE as a date.
// A VARCHAR(n) column is TEXT (its length is checked by lakesql, not by
// the type), on the wire too.
func TestColumnTypes(t *testing.T) {
	db := openDB(t, t.TempDir())
	for _, q := range []string{
		"CREATE SINK v INTO DELTA 'lake/v' (id BIGINT, d DATE, n DECIMAL(10,2), s VARCHAR(8))",
		"INSERT INTO v VALUES (1, '2024-01-02', 3.1, 'x')",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	rows, err := db.Query("SELECT id, d, n, s FROM v")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ct := range cts {
		names = append(names, ct.DatabaseTypeName())
	}
	if diff := cmp.Diff([]string{"BIGINT", "DATE", "DECIMAL", "VARCHAR"}, names); diff != "" {
		t.Errorf("type names (-want +got):\n%s", diff)
	}
	if !rows.Next() {
		t.Fatal("no row")
	}
	var (
		id int64
		d  time.Time
		n  string
		s  string
	)
	if err := rows.Scan(&id, &d, &n, &s); err != nil {
		t.Fatal(err)
	}
	if n != "3.10" || d.Format("2006-01-02") != "2024-01-02" {
		t.Errorf("n = %q, d = %v; want 3.10 and 2024-01-02", n, d)
	}
}
