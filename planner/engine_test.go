package planner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/internal/deltatest"
	"github.com/lakesql/lakesql/sinkddl"
	"github.com/lakesql/lakesql/sqlsink"
)

type testEngine struct {
	t   *testing.T
	dir string
	e   *Engine
}

func openTestEngine(t *testing.T, dir string, roots ...string) *testEngine {
	t.Helper()
	e, err := Open(context.Background(), Options{DataDir: dir, AllowedRoots: roots})
	if err != nil {
		t.Fatal(err)
	}
	te := &testEngine{t: t, dir: dir, e: e}
	t.Cleanup(func() { e.Close() })
	return te
}

func (te *testEngine) session() *Session {
	s := te.e.NewSession()
	te.t.Cleanup(func() { s.Close() })
	return s
}

func (te *testEngine) exec(s *Session, q string) *Result {
	te.t.Helper()
	res, err := te.e.Exec(context.Background(), s, q)
	if err != nil {
		te.t.Fatalf("%s: %v", q, err)
	}
	return res
}

func (te *testEngine) fails(s *Session, q string, want string) error {
	te.t.Helper()
	_, err := te.e.Exec(context.Background(), s, q)
	if err == nil {
		te.t.Fatalf("%s: succeeded, want an error containing %q", q, want)
	}
	if !strings.Contains(err.Error(), want) {
		te.t.Fatalf("%s: error %q does not contain %q", q, err, want)
	}
	return err
}

// rows runs a query and returns its rows.
func (te *testEngine) rows(s *Session, q string) [][]any {
	te.t.Helper()
	return te.exec(s, q).Rows
}

const createOrders = `CREATE SINK orders INTO DELTA 'lake/orders'
  (id BIGINT NOT NULL, amount DOUBLE, region VARCHAR(16), PRIMARY KEY (id))`

func TestAutocommitInsertAndSelect(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, createOrders)
	table := filepath.Join(te.dir, "lake", "orders")
	v0 := deltatest.Versions(t, table)
	res := te.exec(s, "INSERT INTO orders VALUES (1, 1.5, 'eu'), (2, NULL, 'us')")
	if res.RowsAffected != 2 {
		t.Errorf("rows affected = %d, want 2", res.RowsAffected)
	}
	if got := deltatest.Versions(t, table) - v0; got != 1 {
		t.Errorf("autocommit INSERT made %d versions, want 1", got)
	}
	got := te.rows(s, "SELECT id, amount, region FROM orders ORDER BY id")
	want := [][]any{{int64(1), 1.5, "eu"}, {int64(2), nil, "us"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	got = te.rows(s, "SELECT region, count(*) FROM orders WHERE id > 1 GROUP BY region")
	if diff := cmp.Diff([][]any{{"us", int64(1)}}, got); diff != "" {
		t.Errorf("aggregate (-want +got):\n%s", diff)
	}
}

func TestTransactionIsOneVersion(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, createOrders)
	table := filepath.Join(te.dir, "lake", "orders")
	v0 := deltatest.Versions(t, table)
	te.exec(s, "BEGIN")
	te.exec(s, "INSERT INTO orders VALUES (1, 1.0, 'eu')")
	te.exec(s, "INSERT INTO orders VALUES (2, 2.0, 'eu'), (3, 3.0, 'us')")
	// Inside the transaction a SELECT sees the last committed version.
	if got := te.rows(s, "SELECT count(*) FROM orders"); !cmp.Equal(got, [][]any{{int64(0)}}) {
		t.Errorf("inside the transaction: %v, want the committed version (0 rows)", got)
	}
	if got := deltatest.Versions(t, table) - v0; got != 0 {
		t.Errorf("%d versions before COMMIT, want 0", got)
	}
	te.exec(s, "COMMIT")
	if got := deltatest.Versions(t, table) - v0; got != 1 {
		t.Errorf("BEGIN/INSERT/INSERT/COMMIT made %d versions, want 1", got)
	}
	got := te.rows(s, "SELECT id FROM orders ORDER BY id")
	if diff := cmp.Diff([][]any{{int64(1)}, {int64(2)}, {int64(3)}}, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	// INSERT ... SELECT from a sink, in a transaction.
	te.exec(s, "START TRANSACTION")
	te.exec(s, "INSERT INTO orders SELECT id + 10, amount, region FROM orders WHERE region = 'eu'")
	te.exec(s, "COMMIT")
	got = te.rows(s, "SELECT id FROM orders ORDER BY id")
	if diff := cmp.Diff([][]any{{int64(1)}, {int64(2)}, {int64(3)}, {int64(11)}, {int64(12)}}, got); diff != "" {
		t.Errorf("after INSERT ... SELECT (-want +got):\n%s", diff)
	}
}

func TestRollbackLeavesNothing(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, createOrders)
	table := filepath.Join(te.dir, "lake", "orders")
	v0 := deltatest.Versions(t, table)
	te.exec(s, "BEGIN")
	te.exec(s, "INSERT INTO orders VALUES (1, 1.0, 'eu')")
	te.exec(s, "ROLLBACK")
	if got := deltatest.Versions(t, table) - v0; got != 0 {
		t.Errorf("ROLLBACK made %d versions", got)
	}
	if got := te.rows(s, "SELECT count(*) FROM orders"); !cmp.Equal(got, [][]any{{int64(0)}}) {
		t.Errorf("after ROLLBACK: %v", got)
	}
	// The sink is usable afterwards, by another session too.
	s2 := te.session()
	te.exec(s2, "INSERT INTO orders VALUES (5, 5.0, 'eu')")
	if got := te.rows(s, "SELECT id FROM orders"); !cmp.Equal(got, [][]any{{int64(5)}}) {
		t.Errorf("after a later INSERT: %v", got)
	}
}

func TestFailingStatementKeepsEarlierRows(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, createOrders)
	te.exec(s, "BEGIN")
	te.exec(s, "INSERT INTO orders VALUES (1, 1.0, 'eu')")
	te.fails(s, "INSERT INTO orders VALUES (2, 2.0, 'eu'), (NULL, 3.0, 'us')", "non-nullable")
	te.exec(s, "INSERT INTO orders VALUES (4, 4.0, 'us')")
	te.exec(s, "COMMIT")
	got := te.rows(s, "SELECT id FROM orders ORDER BY id")
	if diff := cmp.Diff([][]any{{int64(1)}, {int64(4)}}, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	// A failed autocommit statement leaves nothing behind for the next one.
	te.fails(s, "INSERT INTO orders VALUES (7, 7.0, 'eu'), (NULL, 8.0, 'eu')", "non-nullable")
	te.exec(s, "INSERT INTO orders VALUES (9, 9.0, 'eu')")
	got = te.rows(s, "SELECT id FROM orders ORDER BY id")
	if diff := cmp.Diff([][]any{{int64(1)}, {int64(4)}, {int64(9)}}, got); diff != "" {
		t.Errorf("after a failed autocommit INSERT (-want +got):\n%s", diff)
	}
}

func TestExplicitEpochReplayIsSkipped(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, createOrders)
	table := filepath.Join(te.dir, "lake", "orders")
	te.exec(s, "SET lakesql_epoch = 42")
	te.exec(s, "BEGIN")
	te.exec(s, "INSERT INTO orders VALUES (1, 1.0, 'eu')")
	te.exec(s, "COMMIT")
	v := deltatest.Versions(t, table)
	// The variable applies to one transaction only.
	if got := te.rows(s, "SELECT @@lakesql_epoch"); !cmp.Equal(got, [][]any{{int64(-1)}}) {
		t.Errorf("@@lakesql_epoch after the commit = %v, want -1", got)
	}
	te.exec(s, "SET lakesql_epoch = 42")
	res := te.exec(s, "INSERT INTO orders VALUES (1, 1.0, 'eu')")
	if res.RowsAffected != 0 {
		t.Errorf("replayed autocommit INSERT: rows affected = %d, want 0", res.RowsAffected)
	}
	if len(res.Warnings) != 1 || res.Warnings[0].Code != WarnEpochReplayed {
		t.Errorf("replay warnings = %+v", res.Warnings)
	}
	if got := deltatest.Versions(t, table); got != v {
		t.Errorf("a replay made %d versions", got-v)
	}
	if got := te.rows(s, "SELECT count(*) FROM orders"); !cmp.Equal(got, [][]any{{int64(1)}}) {
		t.Errorf("after the replay: %v, want 1 row", got)
	}
	// Without an explicit epoch the next one follows the last committed.
	te.exec(s, "INSERT INTO orders VALUES (2, 2.0, 'eu')")
	sk, _ := te.e.lookup("orders")
	sink, _ := sk.open(context.Background())
	if last, _ := sink.LastCommittedEpoch(); last != 43 {
		t.Errorf("last committed epoch = %d, want 43", last)
	}
}

func TestRestartKeepsSinksAndData(t *testing.T) {
	dir := t.TempDir()
	te := openTestEngine(t, dir)
	s := te.session()
	te.exec(s, createOrders+" WITH (mode = 'upsert', writer_id = 'svc-a')")
	te.exec(s, "INSERT INTO orders VALUES (1, 1.0, 'eu'), (2, 2.0, 'us')")
	if err := te.e.Close(); err != nil {
		t.Fatal(err)
	}
	te2 := openTestEngine(t, dir)
	s2 := te2.session()
	got := te2.rows(s2, "SELECT id, amount FROM orders ORDER BY id")
	if diff := cmp.Diff([][]any{{int64(1), 1.0}, {int64(2), 2.0}}, got); diff != "" {
		t.Errorf("after restart (-want +got):\n%s", diff)
	}
	// Upsert mode survived the restart: the same key replaces its row.
	te2.exec(s2, "INSERT INTO orders VALUES (1, 10.0, 'eu')")
	got = te2.rows(s2, "SELECT id, amount FROM orders ORDER BY id")
	if diff := cmp.Diff([][]any{{int64(1), 10.0}, {int64(2), 2.0}}, got); diff != "" {
		t.Errorf("upsert after restart (-want +got):\n%s", diff)
	}
	res := te2.exec(s2, "SHOW CREATE SINK orders")
	want := "CREATE SINK `orders` INTO DELTA 'lake/orders' (`id` BIGINT NOT NULL, `amount` DOUBLE, `region` VARCHAR(16), PRIMARY KEY (`id`)) WITH (mode = 'upsert', writer_id = 'svc-a')"
	if diff := cmp.Diff([][]any{{"orders", want}}, res.Rows); diff != "" {
		t.Errorf("SHOW CREATE SINK (-want +got):\n%s", diff)
	}
}

func TestShowSinks(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, createOrders+" WITH (mode = 'upsert')")
	te.exec(s, "CREATE SINK events INTO DELTA 'lake/events' (ts TIMESTAMP, payload JSON)")
	res := te.exec(s, "SHOW SINKS")
	text := ColumnType{Name: "TEXT"}
	want := &Result{Columns: []string{"Sink", "Format", "Location", "Mode"}, Types: []ColumnType{text, text, text, text}, Rows: [][]any{
		{"events", "DELTA", filepath.Join(te.dir, "lake", "events"), "append"},
		{"orders", "DELTA", filepath.Join(te.dir, "lake", "orders"), "upsert"},
	}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("SHOW SINKS (-want +got):\n%s", diff)
	}
	te.exec(s, "DROP SINK events")
	te.fails(s, "SELECT * FROM events", "not found")
	if got := len(te.exec(s, "SHOW SINKS").Rows); got != 1 {
		t.Errorf("after DROP SINK: %d sinks", got)
	}
	// The data stays: the sink can attach to it again.
	te.exec(s, "CREATE SINK events2 INTO DELTA 'lake/events'")
	te.fails(s, "CREATE SINK orders INTO DELTA 'lake/other' (id BIGINT)", "already exists")
	te.exec(s, "CREATE SINK IF NOT EXISTS orders INTO DELTA 'lake/other' (id BIGINT)")
}

func TestBadInput(t *testing.T) {
	base := t.TempDir()
	te := openTestEngine(t, filepath.Join(base, "data"))
	s := te.session()
	err := te.fails(s, "CREATE SINK x INTO DELTA 'lake/x' (id BIGINT) WITH (colour = 'blue')", "unknown option colour")
	if !errors.Is(err, ErrOption) {
		t.Errorf("unknown option: %v is not ErrOption", err)
	}
	te.fails(s, "CREATE SINK x INTO DELTA 'lake/x' (id BIGINT) WITH (mode = 'sideways')", "not a mode")
	err = te.fails(s, "CREATE SINK x INTO DELTA '../outside' (id BIGINT)", "outside the allowed roots")
	if !errors.Is(err, ErrLocation) {
		t.Errorf("outside root: %v is not ErrLocation", err)
	}
	te.fails(s, "CREATE SINK x INTO DELTA '"+filepath.Join(base, "elsewhere")+"' (id BIGINT)", "outside the allowed roots")
	err = te.fails(s, "CREATE SINK x INTO ICEBERG 'x' (id BIGINT)", "needs a namespace: namespace.table")
	if !errors.Is(err, ErrLocation) {
		t.Errorf("Iceberg table without a namespace: %v is not ErrLocation", err)
	}
	te.fails(s, "CREATE SINK x INTO DELTA 'lake/missing'", "")
	err = te.fails(s, "CREATE SINK x INTO PARQUET 'lake/x' (id BIGINT)", "syntax error at position 20")
	if se := new(sinkddl.SyntaxError); !errors.As(err, &se) {
		t.Errorf("syntax error: %T %v is not a *SyntaxError", err, err)
	}
	for q, want := range map[string]int{
		"CREATE SINK x INTO PARQUET 'lake/x' (id BIGINT)":                    1064,
		"CREATE SINK x INTO DELTA 'lake/x' (id BIGINT) WITH (a = 1)":         1210,
		"CREATE SINK x INTO DELTA '/elsewhere' (id BIGINT)":                  1210,
		"CREATE SINK x INTO ICEBERG 'x' (id BIGINT)":                         1210,
		"CREATE SINK x INTO DELTA 'lake/x' (ts DATE) PARTITION BY (day(ts))": 1235,
		"SHOW CREATE SINK nosuch":                                            1146,
		"SELECT * FROM nosuch":                                               1146,
		"SELEC 1":                                                            1064,
	} {
		_, err := te.e.Exec(context.Background(), s, q)
		if got := MySQLError(err); got == nil || got.Num != want {
			t.Errorf("%s: MySQL error %v, want %d", q, got, want)
		}
	}
	if got := MySQLError(te.fails(s, "SELECT * FROM nosuch", "")); got.State != "42S02" {
		t.Errorf("unknown table: SQLSTATE %s, want 42S02", got.State)
	}
	// None of the failures left a sink behind.
	if got := te.exec(s, "SHOW SINKS").Rows; len(got) != 0 {
		t.Errorf("failed CREATE SINKs left %v", got)
	}

	te.exec(s, createOrders)
	te.exec(s, "INSERT INTO orders VALUES (1, 1.0, 'eu')")
	te.fails(s, "INSERT INTO orders VALUES (NULL, 1.0, 'eu')", "non-nullable")
	if code := MySQLError(te.fails(s, "INSERT INTO orders VALUES (NULL, 1.0, 'eu')", "")).Num; code != 1048 {
		t.Errorf("NULL into NOT NULL: MySQL error %d, want 1048", code)
	}
	if code := MySQLError(te.fails(s, "INSERT INTO orders (_op, id) VALUES ('Z', 3)", `_op "Z"`)).Num; code != 1366 {
		t.Errorf("unknown _op: MySQL error %d, want 1366", code)
	}
	te.fails(s, "INSERT INTO orders VALUES ('abc', 1.0, 'eu')", "")
	te.fails(s, "INSERT INTO orders VALUES (2, 1.0, 'eu', 'extra')", "")
	te.fails(s, "INSERT INTO orders (id, colour) VALUES (2, 'blue')", "colour")
	if got := te.rows(s, "SELECT id FROM orders"); !cmp.Equal(got, [][]any{{int64(1)}}) {
		t.Errorf("after the failed INSERTs: %v, want the one committed row", got)
	}
	// Attaching with columns that do not match the table is refused.
	te.exec(s, "DROP SINK orders")
	te.fails(s, "CREATE SINK orders INTO DELTA 'lake/orders' (id INT NOT NULL, amount DOUBLE, region VARCHAR(16))", "does not match")
	// Attaching without columns takes the table's schema and its data.
	te.exec(s, "CREATE SINK orders INTO DELTA 'lake/orders'")
	if got := te.rows(s, "SELECT id, amount, region FROM orders"); !cmp.Equal(got, [][]any{{int64(1), 1.0, "eu"}}) {
		t.Errorf("attached sink reads %v", got)
	}
}

func TestSinkGoneUnderneath(t *testing.T) {
	dir := t.TempDir()
	te := openTestEngine(t, dir)
	s := te.session()
	te.exec(s, createOrders)
	te.exec(s, "CREATE SINK other INTO DELTA 'lake/other' (id BIGINT)")
	te.e.Close()
	if err := os.RemoveAll(filepath.Join(dir, "lake", "orders")); err != nil {
		t.Fatal(err)
	}
	te2 := openTestEngine(t, dir)
	s2 := te2.session()
	if code := MySQLError(te2.fails(s2, "SELECT * FROM orders", "is gone")).Num; code != 1146 {
		t.Errorf("sink whose table is gone: MySQL error %d, want 1146", code)
	}
	te2.fails(s2, "INSERT INTO orders VALUES (1, 1.0, 'eu')", "is gone")
	// The other sink is unaffected.
	te2.exec(s2, "INSERT INTO other VALUES (1)")
	te2.exec(s2, "DROP SINK orders")
	te2.e.Close()

	// A table changed underneath: another engine puts a different table
	// where other's was.
	if err := os.RemoveAll(filepath.Join(dir, "lake", "other")); err != nil {
		t.Fatal(err)
	}
	te3 := openTestEngine(t, t.TempDir(), dir)
	te3.exec(te3.session(), "CREATE SINK x INTO DELTA '"+filepath.Join(dir, "lake", "other")+"' (id INT, name TEXT)")
	te3.e.Close()
	te4 := openTestEngine(t, dir)
	s4 := te4.session()
	te4.fails(s4, "SELECT * FROM other", "does not match the sink's columns")
	te4.fails(s4, "INSERT INTO other VALUES (1)", "does not match the sink's columns")
	if got := te4.exec(s4, "SHOW SINK STATUS other").Rows; len(got) != 1 || got[0][1] != "unavailable" {
		t.Errorf("SHOW SINK STATUS of a broken sink: %v", got)
	}
}

func TestChangelogRows(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, createOrders+" WITH (mode = 'upsert')")
	te.exec(s, "INSERT INTO orders VALUES (1, 1.0, 'eu'), (2, 2.0, 'us'), (3, 3.0, 'us')")
	te.exec(s, "BEGIN")
	te.exec(s, "INSERT INTO orders (_op, id, amount, region) VALUES ('D', 2, NULL, NULL), ('U', 3, 30.0, 'us')")
	te.exec(s, "INSERT INTO orders (id, _op, amount, region) VALUES (4, 'I', 4.0, 'eu')")
	err := te.fails(s, "INSERT INTO orders (_op, id, amount, region) VALUES ('X', 5, 5.0, 'eu')", `_op "X"`)
	if !errors.Is(err, sqlsink.ErrBadOp) {
		t.Errorf("unknown _op: %v is not ErrBadOp", err)
	}
	te.exec(s, "COMMIT")
	got := te.rows(s, "SELECT id, amount FROM orders ORDER BY id")
	if diff := cmp.Diff([][]any{{int64(1), 1.0}, {int64(3), 30.0}, {int64(4), 4.0}}, got); diff != "" {
		t.Errorf("after the changelog (-want +got):\n%s", diff)
	}
	// A plain INSERT still needs no _op, and SELECT * shows no _op.
	te.exec(s, "INSERT INTO orders VALUES (6, 6.0, 'eu')")
	if res := te.exec(s, "SELECT * FROM orders WHERE id = 6"); !cmp.Equal(res.Columns, []string{"id", "amount", "region"}) {
		t.Errorf("SELECT * columns = %v", res.Columns)
	}
	// Deletes need upsert mode.
	te.exec(s, "CREATE SINK log INTO DELTA 'lake/log' (id BIGINT)")
	te.fails(s, "INSERT INTO log (_op, id) VALUES ('D', 1)", "append mode")
}

func TestAutocommitOffAndSeveralSinks(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, createOrders)
	te.exec(s, "CREATE SINK log INTO DELTA 'lake/log' (id BIGINT, note TEXT)")
	orders, log := filepath.Join(te.dir, "lake", "orders"), filepath.Join(te.dir, "lake", "log")
	vo, vl := deltatest.Versions(t, orders), deltatest.Versions(t, log)
	te.exec(s, "SET autocommit = 0")
	te.exec(s, "INSERT INTO orders VALUES (1, 1.0, 'eu')")
	te.exec(s, "INSERT INTO log VALUES (1, 'first')")
	te.exec(s, "INSERT INTO orders VALUES (2, 2.0, 'eu')")
	if deltatest.Versions(t, orders) != vo || deltatest.Versions(t, log) != vl {
		t.Fatal("autocommit=0: rows were committed before COMMIT")
	}
	te.exec(s, "COMMIT")
	if deltatest.Versions(t, orders)-vo != 1 || deltatest.Versions(t, log)-vl != 1 {
		t.Errorf("one transaction over two sinks made %d and %d versions, want 1 and 1",
			deltatest.Versions(t, orders)-vo, deltatest.Versions(t, log)-vl)
	}
	te.exec(s, "INSERT INTO log VALUES (2, 'second')")
	te.exec(s, "ROLLBACK")
	if got := te.rows(s, "SELECT count(*) FROM log"); !cmp.Equal(got, [][]any{{int64(1)}}) {
		t.Errorf("log after ROLLBACK: %v", got)
	}
	// The same explicit epoch goes to every sink of the transaction; a
	// replay skips both.
	te.exec(s, "SET autocommit = 1")
	te.exec(s, "SET lakesql_epoch = 100")
	te.exec(s, "BEGIN")
	te.exec(s, "INSERT INTO orders VALUES (3, 3.0, 'us')")
	te.exec(s, "INSERT INTO log VALUES (3, 'third')")
	te.exec(s, "COMMIT")
	te.exec(s, "SET lakesql_epoch = 100")
	te.exec(s, "BEGIN")
	te.exec(s, "INSERT INTO orders VALUES (3, 3.0, 'us')")
	te.exec(s, "INSERT INTO log VALUES (3, 'third')")
	res := te.exec(s, "COMMIT")
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].Message, "2 sink(s)") {
		t.Errorf("replayed COMMIT warnings = %+v", res.Warnings)
	}
	// SHOW WARNINGS lists them (how a database/sql program sees a replay),
	// without warnings of its own; the next statement clears them.
	res = te.exec(s, "SHOW WARNINGS")
	if len(res.Rows) != 1 || fmt.Sprint(res.Rows[0][1]) != fmt.Sprint(WarnEpochReplayed) || len(res.Warnings) != 0 {
		t.Errorf("SHOW WARNINGS after a replayed COMMIT: rows %v, warnings %v", res.Rows, res.Warnings)
	}
	if res = te.exec(s, "SELECT 1"); len(res.Warnings) != 0 {
		t.Errorf("warnings outlived their statement: %v", res.Warnings)
	}
	if got := te.rows(s, "SELECT count(*) FROM orders"); !cmp.Equal(got, [][]any{{int64(3)}}) {
		t.Errorf("orders after the replay: %v", got)
	}
}

// Appending transactions do not wait for each other: each keeps its
// rows until its COMMIT (group commit). A transaction on an upsert sink
// holds the sink from its first write, and the other writers take turns.
// DROP SINK waits for every transaction that wrote to the sink.
func TestConcurrentSessionsTakeTurns(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s1, s2 := te.session(), te.session()
	te.exec(s1, createOrders)
	te.exec(s1, "BEGIN")
	te.exec(s1, "INSERT INTO orders VALUES (1, 1.0, 'eu')")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_, err := te.e.Exec(ctx, s2, "INSERT INTO orders VALUES (2, 2.0, 'eu')")
	cancel()
	if err != nil {
		t.Fatalf("an append beside another session's open transaction: %v", err)
	}
	if got := te.rows(s2, "SELECT id FROM orders ORDER BY id"); !cmp.Equal(got, [][]any{{int64(2)}}) {
		t.Errorf("before the first transaction's COMMIT: %v, want only its neighbour's row", got)
	}
	te.exec(s1, "COMMIT")

	te.exec(s1, "CREATE SINK kv INTO DELTA 'lake/kv' (id BIGINT NOT NULL, v BIGINT, PRIMARY KEY (id)) WITH (mode = 'upsert')")
	te.exec(s1, "BEGIN")
	te.exec(s1, "INSERT INTO kv VALUES (1, 1)")
	// s2 waits for s1's transaction; here it gives up first.
	ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, err = te.e.Exec(ctx, s2, "INSERT INTO kv VALUES (2, 2)")
	cancel()
	if err == nil || !strings.Contains(err.Error(), "in use by another transaction") {
		t.Fatalf("second writer of an upsert sink: %v, want it to wait and time out", err)
	}
	if code := MySQLError(err).Num; code != 1205 {
		t.Errorf("busy sink: MySQL error %d, want 1205", code)
	}
	done := make(chan error, 1)
	go func() {
		_, err := te.e.Exec(context.Background(), s2, "INSERT INTO kv VALUES (3, 3)")
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	te.exec(s1, "COMMIT")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]any{{int64(1)}, {int64(3)}}, te.rows(s1, "SELECT id FROM kv ORDER BY id")); diff != "" {
		t.Errorf("kv rows (-want +got):\n%s", diff)
	}
	// DROP SINK waits for a transaction of another session that wrote to
	// the sink, whether it holds the sink or keeps rows for a group commit.
	for _, sink := range []string{"kv", "orders"} {
		te.exec(s1, "BEGIN")
		te.exec(s1, "INSERT INTO "+sink+" VALUES (6, 6"+map[string]string{"kv": ")", "orders": ".0, 'eu')"}[sink])
		ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, err = te.e.Exec(ctx, s2, "DROP SINK "+sink)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "in use by another transaction") {
			t.Fatalf("DROP SINK of a sink another transaction writes (%s): %v", sink, err)
		}
		te.exec(s1, "ROLLBACK")
	}
	// Closing a session rolls back its transaction and frees the sink.
	te.exec(s1, "BEGIN")
	te.exec(s1, "INSERT INTO orders VALUES (4, 4.0, 'eu')")
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	te.exec(s2, "INSERT INTO orders VALUES (5, 5.0, 'eu')")
	got := te.rows(s2, "SELECT id FROM orders ORDER BY id")
	if diff := cmp.Diff([][]any{{int64(1)}, {int64(2)}, {int64(5)}}, got); diff != "" {
		t.Errorf("after closing a session mid-transaction (-want +got):\n%s", diff)
	}
	te.exec(s2, "DROP SINK orders")
}

func TestShowSinkStatus(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, createOrders)
	te.exec(s, "SET lakesql_epoch = 7")
	te.exec(s, "INSERT INTO orders VALUES (1, 1.0, 'eu'), (2, 2.0, 'eu')")
	res := te.exec(s, "SHOW SINK STATUS orders")
	// Then the table's layout (one live file, small, two commits since no checkpoint, never optimized or
	// vacuumed); Table_bytes is the writer's, checked apart.
	want := &Result{
		Columns: []string{"Sink", "Health", "Last_epoch", "Table_version", "Commits", "Rows", "Error",
			"Live_files", "Small_files", "Table_bytes", "Versions_since_checkpoint",
			"Last_optimize", "Optimize_outcome", "Last_vacuum", "Vacuum_outcome", "Warning"},
		Types: []ColumnType{{Name: "TEXT"}, {Name: "TEXT"}, {Name: "BIGINT"}, {Name: "BIGINT"},
			{Name: "BIGINT"}, {Name: "BIGINT"}, {Name: "TEXT"},
			{Name: "BIGINT"}, {Name: "BIGINT"}, {Name: "BIGINT"}, {Name: "BIGINT"},
			{Name: "DATETIME", Scale: 6}, {Name: "TEXT"}, {Name: "DATETIME", Scale: 6}, {Name: "TEXT"}, {Name: "TEXT"}},
		Rows: [][]any{{"orders", "healthy", int64(7), int64(1), int64(1), int64(2), nil,
			int64(1), int64(1), nil, int64(2), nil, nil, nil, nil, nil}},
	}
	if len(res.Rows) == 1 && len(res.Rows[0]) == len(want.Columns) {
		if b, ok := res.Rows[0][9].(int64); !ok || b <= 0 {
			t.Errorf("Table_bytes = %v, want the bytes of the file", res.Rows[0][9])
		}
		res.Rows[0][9] = nil
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("SHOW SINK STATUS (-want +got):\n%s", diff)
	}
	te.fails(s, "SHOW SINK STATUS nosuch", "no such sink")
}

// A failed COMMIT ends the transaction for Engine.Exec too (the REPL, the
// database/sql driver, whose Tx.Commit runs COMMIT and then hands the
// connection back to its pool): the session is in autocommit mode again,
// and an INSERT after it commits on its own instead of waiting, unseen,
// for a COMMIT that never comes.
func TestFailedCommitLeavesAutocommit(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, "CREATE SINK fc INTO DELTA 'fc' (id BIGINT NOT NULL)")
	te.exec(s, "BEGIN")
	te.exec(s, "INSERT INTO fc VALUES (1)")
	next := filepath.Join(te.dir, "fc", "_delta_log", "00000000000000000001.json")
	if err := os.Mkdir(next, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := te.e.Exec(context.Background(), s, "COMMIT"); err == nil {
		t.Fatal("COMMIT succeeded although its log entry could not be written")
	}
	if err := os.Remove(next); err != nil {
		t.Fatal(err)
	}
	te.exec(s, "INSERT INTO fc VALUES (2)")
	if got := te.rows(te.session(), "SELECT id FROM fc"); !cmp.Equal(got, [][]any{{int64(2)}}) {
		t.Errorf("another session sees %v, want [[2]]: the INSERT after the failed COMMIT was not committed", got)
	}
}

// TestLeakedEpochIsDropped: go-mysql-server's server path leaves a failed
// autocommit statement's transaction open; rows that statement handed to a
// sink must not reach the next statement's commit.
func TestLeakedEpochIsDropped(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, createOrders)
	h, _ := te.e.lookup("orders")
	gctx := te.e.gmsContext(context.Background(), s, "")
	tx, err := s.StartTransaction(gctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	gctx.SetTransaction(tx)
	// The failed statement's rows, already in the epoch; then the error
	// left the transaction open.
	if err := s.write(gctx, h, nil, []gms.Row{{int64(99), 9.0, "xx"}}); err != nil {
		t.Fatal(err)
	}
	te.exec(s, "INSERT INTO orders VALUES (1, 1.0, 'eu')")
	got := te.rows(s, "SELECT id FROM orders ORDER BY id")
	if diff := cmp.Diff([][]any{{int64(1)}}, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

func TestDeleteAndUpdateOnUpsertSink(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, createOrders+" WITH (mode = 'upsert')")
	table := filepath.Join(te.dir, "lake", "orders")
	te.exec(s, "INSERT INTO orders VALUES (1, 1.0, 'eu'), (2, 2.0, 'us'), (3, 3.0, 'us'), (4, 4.0, 'eu')")
	if res := te.exec(s, "DELETE FROM orders WHERE id = 2"); res.RowsAffected != 1 {
		t.Errorf("DELETE: %d rows affected, want 1", res.RowsAffected)
	}
	if res := te.exec(s, "UPDATE orders SET amount = 30.0 WHERE region = 'us'"); res.RowsAffected != 1 {
		t.Errorf("UPDATE: %d rows affected, want 1", res.RowsAffected)
	}
	v := deltatest.Versions(t, table)
	te.exec(s, "BEGIN")
	te.exec(s, "DELETE FROM orders WHERE region = 'eu' AND id > 1")
	te.exec(s, "INSERT INTO orders VALUES (5, 5.0, 'ap')")
	te.exec(s, "COMMIT")
	if got := deltatest.Versions(t, table) - v; got != 1 {
		t.Errorf("BEGIN/DELETE/INSERT/COMMIT made %d versions, want 1", got)
	}
	te.fails(s, "UPDATE orders SET id = 9 WHERE id = 1", "key column id")
	got := te.rows(s, "SELECT id, amount, region FROM orders ORDER BY id")
	want := [][]any{{int64(1), 1.0, "eu"}, {int64(3), 30.0, "us"}, {int64(5), 5.0, "ap"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	te.exec(s, "CREATE SINK log INTO DELTA 'lake/log' (id BIGINT)")
	te.exec(s, "INSERT INTO log VALUES (1)")
	te.fails(s, "DELETE FROM log WHERE id = 1", "append mode")
	te.fails(s, "UPDATE log SET id = 2", "append mode")
	if got := te.rows(s, "SELECT id FROM log"); !cmp.Equal(got, [][]any{{int64(1)}}) {
		t.Errorf("append sink after refused DELETE/UPDATE: %v", got)
	}
}

func TestAttachedSinkChangedUnderneath(t *testing.T) {
	dir := t.TempDir()
	te := openTestEngine(t, dir)
	s := te.session()
	te.exec(s, "CREATE SINK a INTO DELTA 'lake/a' (id BIGINT, name TEXT)")
	te.exec(s, "INSERT INTO a VALUES (1, 'one')")
	te.exec(s, "DROP SINK a")
	te.exec(s, "CREATE SINK b INTO DELTA 'lake/a'") // attach: the schema comes from the table
	te.e.Close()
	// Another engine replaces the table with one of other columns.
	if err := os.RemoveAll(filepath.Join(dir, "lake", "a")); err != nil {
		t.Fatal(err)
	}
	other := openTestEngine(t, t.TempDir(), dir)
	other.exec(other.session(), "CREATE SINK x INTO DELTA '"+filepath.Join(dir, "lake", "a")+"' (id INT)")
	other.e.Close()
	te2 := openTestEngine(t, dir)
	s2 := te2.session()
	err := te2.fails(s2, "SELECT * FROM b", "changed underneath: it had 2 columns, it has 1")
	if !errors.Is(err, sqlsink.ErrConfig) {
		t.Errorf("%v (%T) is not sqlsink.ErrConfig", err, err)
	}
}

// CREATE SINK and DROP SINK commit the open transaction first, as MySQL
// commits before DDL, and end it: what follows runs in autocommit mode.
func TestDDLCommitsOpenTransaction(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, createOrders)
	table := filepath.Join(te.dir, "lake", "orders")
	te.exec(s, "BEGIN")
	te.exec(s, "INSERT INTO orders VALUES (1, 1.0, 'eu')")
	v := deltatest.Versions(t, table)
	te.exec(s, "CREATE SINK other INTO DELTA 'lake/other' (id BIGINT)")
	if got := deltatest.Versions(t, table); got != v+1 {
		t.Errorf("CREATE SINK in a transaction: %d versions, want %d (the transaction committed)", got, v+1)
	}
	te.exec(s, "INSERT INTO orders VALUES (2, 2.0, 'eu')") // autocommit again
	te.exec(s, "ROLLBACK")
	got := te.rows(s, "SELECT id FROM orders ORDER BY id")
	if diff := cmp.Diff([][]any{{int64(1)}, {int64(2)}}, got); diff != "" {
		t.Errorf("rows after ROLLBACK (-want +got):\n%s", diff)
	}

	// With autocommit off, DROP SINK commits the rows written to the
	// sink it drops; the table keeps them.
	te.exec(s, "SET autocommit = 0")
	te.exec(s, "INSERT INTO orders VALUES (3, 3.0, 'eu')")
	te.exec(s, "DROP SINK orders")
	te.exec(s, "SET autocommit = 1")
	te.exec(s, "CREATE SINK orders INTO DELTA 'lake/orders'")
	got = te.rows(s, "SELECT id FROM orders ORDER BY id")
	if diff := cmp.Diff([][]any{{int64(1)}, {int64(2)}, {int64(3)}}, got); diff != "" {
		t.Errorf("rows after DROP SINK and attaching again (-want +got):\n%s", diff)
	}
}

// Declared lengths hold as in MySQL's strict mode: characters for CHAR and
// VARCHAR, bytes for BINARY and VARBINARY; a longer value fails its
// statement (1406) and the transaction keeps its other rows.
func TestDeclaredLengths(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, "CREATE SINK l INTO DELTA 'lake/l' (id BIGINT NOT NULL, c CHAR(2), v VARCHAR(4), b VARBINARY(3), PRIMARY KEY (id)) WITH (mode = 'upsert')")
	te.exec(s, "BEGIN")
	te.exec(s, "INSERT INTO l VALUES (1, 'éé', 'ßßßß', 'abc')") // 4 characters, 8 bytes: fits
	for q, col := range map[string]string{
		"INSERT INTO l VALUES (2, 'abc', NULL, NULL)":   "c",
		"INSERT INTO l VALUES (2, NULL, 'abcde', NULL)": "v",
		"INSERT INTO l VALUES (2, NULL, NULL, 'éé')":    "b", // 4 bytes
	} {
		err := te.fails(s, q, "is too large for column '"+col+"'")
		if got := MySQLError(err); got.Num != 1406 || got.State != "22001" {
			t.Errorf("%s: MySQL error %d (%s), want 1406 (22001)", q, got.Num, got.State)
		}
	}
	// A NOT NULL column left out: MySQL's 1364, not go-mysql-server's 1105.
	if got := MySQLError(te.fails(s, "INSERT INTO l (c) VALUES ('a')", "doesn't have a default value")); got.Num != 1364 {
		t.Errorf("key left out: MySQL error %d, want 1364", got.Num)
	}
	te.exec(s, "COMMIT")
	te.fails(s, "UPDATE l SET v = 'toolong' WHERE id = 1", "is too large for column 'v'")
	got := te.rows(s, "SELECT id, c, v FROM l")
	if diff := cmp.Diff([][]any{{int64(1), "éé", "ßßßß"}}, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

// A statement whose rows the sink refuses, as the first write of its
// epoch, leaves no version behind and does not use up the epoch: a
// retry under the same explicit epoch lands.
func TestRefusedFirstWriteOpensNoEpoch(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, "CREATE SINK u INTO DELTA 'lake/u' (id BIGINT NOT NULL, v VARCHAR(8), PRIMARY KEY (id)) WITH (mode = 'upsert')")
	table := filepath.Join(te.dir, "lake", "u")
	v0 := deltatest.Versions(t, table)
	te.exec(s, "SET lakesql_epoch = 10")
	te.fails(s, "INSERT INTO u (_op, id, v) VALUES ('X', 1, 'x')", `_op "X"`)
	te.fails(s, "INSERT INTO u (_op, id, v) VALUES ('X', 1, 'x')", `_op "X"`) // autocommit, no explicit epoch left over?
	te.exec(s, "BEGIN")
	te.fails(s, "INSERT INTO u (_op, id, v) VALUES ('X', 1, 'x')", `_op "X"`)
	te.exec(s, "COMMIT")
	if got := deltatest.Versions(t, table); got != v0 {
		t.Fatalf("refused statements made %d version(s)", got-v0)
	}
	res := te.exec(s, "INSERT INTO u (_op, id, v) VALUES ('I', 1, 'good')")
	if res.RowsAffected != 1 || len(res.Warnings) != 0 {
		t.Errorf("retry: %d rows affected, warnings %v; want 1 row and no replay note", res.RowsAffected, res.Warnings)
	}
	if got := te.rows(s, "SHOW SINK STATUS u"); got[0][2] != int64(10) {
		t.Errorf("last epoch %v, want 10 (the explicit epoch survives refused statements)", got[0][2])
	}
	if diff := cmp.Diff([][]any{{int64(1), "good"}}, te.rows(s, "SELECT id, v FROM u")); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

// The declared type's rules hold where the table's type is wider: integer
// ranges (1264), BOOLEAN as 0 or 1, JSON text (3140), TEXT byte limits;
// ON DUPLICATE KEY UPDATE is refused rather than ignored; a DECIMAL scale
// beyond MySQL's 30 is refused at CREATE.
func TestDeclaredTypeRules(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, `CREATE SINK r INTO DELTA 'lake/r' (id BIGINT NOT NULL, tu TINYINT UNSIGNED, mi MEDIUMINT,
		iu INT UNSIGNED, b BOOLEAN, j JSON, tt TINYTEXT, PRIMARY KEY (id)) WITH (mode = 'upsert')`)
	for q, want := range map[string]int{
		"INSERT INTO r (id, tu) VALUES (1, -1)":                               1264,
		"INSERT INTO r (id, tu) VALUES (1, 256)":                              1264,
		"INSERT INTO r (id, mi) VALUES (1, 8388608)":                          1264,
		"INSERT INTO r (id, iu) VALUES (1, 4294967296)":                       1264,
		"INSERT INTO r (id, iu) VALUES (1, -1)":                               1264,
		"INSERT INTO r (id, b) VALUES (1, 2)":                                 1264,
		"INSERT INTO r (id, j) VALUES (1, 'not json')":                        3140,
		"INSERT INTO r (id, tt) VALUES (1, REPEAT('x', 256))":                 1406,
		"INSERT INTO r (id, tu) VALUES (1, 1) ON DUPLICATE KEY UPDATE tu = 2": 1235,
		"CREATE SINK d INTO DELTA 'lake/d' (n DECIMAL(38,31))":                1425,
	} {
		_, err := te.e.Exec(context.Background(), s, q)
		if got := MySQLError(err); got == nil || got.Num != want {
			t.Errorf("%s: MySQL error %v, want %d", q, got, want)
		}
	}
	te.exec(s, `INSERT INTO r VALUES (1, 255, -8388608, 4294967295, 1, '{"a": [1, 2]}', REPEAT('x', 255))`)
	got := te.rows(s, "SELECT tu, mi, iu, b, j FROM r")
	if len(got) != 1 || fmt.Sprint(got[0][:3]) != "[255 -8388608 4294967295]" {
		t.Errorf("edge values read back as %v", got)
	}
}

// TestSessionsStartInUTC: sessions start with time_zone '+00:00', so NOW()
// is the UTC wall clock on a machine in any zone: TIMESTAMP values are
// stored as UTC (README, Limitations), and NOW() in the machine's zone
// would be stored off by its offset.
func TestSessionsStartInUTC(t *testing.T) {
	old := time.Local
	time.Local = time.FixedZone("UTC+2", 2*3600)
	t.Cleanup(func() { time.Local = old })
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	got := te.rows(s, "SELECT @@time_zone, TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), NOW())")
	if len(got) != 1 || got[0][0] != "+00:00" {
		t.Fatalf("@@time_zone, NOW()-UTC_TIMESTAMP(): %v, want +00:00", got)
	}
	if d, ok := got[0][1].(int64); !ok || d < -1 || d > 1 {
		t.Errorf("NOW() is %v s from UTC_TIMESTAMP() on a machine at UTC+2, want 0", got[0][1])
	}
}

// TestChangeAfterOwnWritesRefused: UPDATE and DELETE read the last
// committed version, which does not hold the transaction's own rows, so
// after the transaction wrote a sink they are refused (1235) instead of
// overwriting those rows with stale ones (two UPDATEs n = n + 1 would add
// one) or missing them (a DELETE of a row inserted earlier). The
// transaction goes on, and COMMIT writes what it holds.
func TestChangeAfterOwnWritesRefused(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, createOrders+" WITH (mode = 'upsert')")
	te.exec(s, "INSERT INTO orders VALUES (1, 1.0, 'eu')")
	te.exec(s, "BEGIN")
	te.exec(s, "UPDATE orders SET amount = amount + 1 WHERE id = 1")
	te.fails(s, "UPDATE orders SET amount = amount + 1 WHERE id = 1", "COMMIT first")
	te.exec(s, "INSERT INTO orders VALUES (2, 2.0, 'us')")
	te.fails(s, "DELETE FROM orders WHERE id = 2", "COMMIT first")
	te.exec(s, "COMMIT")
	got := te.rows(s, "SELECT id, amount FROM orders ORDER BY id")
	want := [][]any{{int64(1), 2.0}, {int64(2), 2.0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	te.exec(s, "DELETE FROM orders WHERE id = 2") // a new transaction may
	if got := te.rows(s, "SELECT count(*) FROM orders"); got[0][0] != int64(1) {
		t.Errorf("count after DELETE: %v", got)
	}
}
