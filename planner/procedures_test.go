package planner

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/internal/deltatest"
)

// callCode runs q and returns the MySQL code of its error (0 when it succeeds).
func (te *testEngine) callCode(s *Session, q string) (int, string) {
	te.t.Helper()
	_, err := te.e.Exec(context.Background(), s, q)
	if err == nil {
		return 0, ""
	}
	return MySQLError(err).Num, err.Error()
}

// The procedures give the same rows as the text forms, and a sink made by
// CALL is an ordinary sink.
func TestProcCreateShowDrop(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, `CALL lakesql_create_sink('orders', 'DELTA', 'lake/orders',
		'id BIGINT NOT NULL, amount DOUBLE, region VARCHAR(16), PRIMARY KEY (id)',
		'region', "mode = 'upsert', writer_id = 'svc-a'")`)
	te.exec(s, "CALL lakesql_create_sink('events', 'delta', 'lake/events', 'ts TIMESTAMP, payload JSON')")

	want := "CREATE SINK `orders` INTO DELTA 'lake/orders' (`id` BIGINT NOT NULL, `amount` DOUBLE, `region` VARCHAR(16), " +
		"PRIMARY KEY (`id`)) PARTITION BY (`region`) WITH (mode = 'upsert', writer_id = 'svc-a')"
	got := te.exec(s, "CALL lakesql_show_create_sink('orders')")
	if diff := cmp.Diff(&Result{Columns: []string{"Sink", "Create Sink"}, Types: []ColumnType{{Name: "TEXT"}, {Name: "TEXT"}},
		Rows: [][]any{{"orders", want}}}, got); diff != "" {
		t.Errorf("lakesql_show_create_sink (-want +got):\n%s", diff)
	}

	te.exec(s, "INSERT INTO orders VALUES (1, 1.5, 'eu'), (2, 2.5, 'us')")
	te.exec(s, "INSERT INTO events VALUES ('2024-01-02 03:04:05', '{}')")
	for call, text := range map[string]string{
		"CALL lakesql_show_sinks()":                  "SHOW SINKS",
		"CALL lakesql_show_create_sink('orders')":    "SHOW CREATE SINK orders",
		"call LAKESQL_SHOW_CREATE_SINK('ORDERS')":    "SHOW CREATE SINK orders",
		"CALL lakesql_sink_status()":                 "SHOW SINK STATUS",
		"CALL lakesql_sink_status(NULL)":             "SHOW SINK STATUS",
		"CALL lakesql_sink_status('orders')":         "SHOW SINK STATUS orders",
		"CALL lakesql.lakesql_sink_status('events')": "SHOW SINK STATUS events",
	} {
		if diff := cmp.Diff(te.exec(s, text), te.exec(s, call)); diff != "" {
			t.Errorf("%s differs from %s (-text +call):\n%s", call, text, diff)
		}
	}
	if got := te.rows(s, "SELECT id, region FROM orders ORDER BY id"); !cmp.Equal(got, [][]any{{int64(1), "eu"}, {int64(2), "us"}}) {
		t.Errorf("rows of the sink made by CALL: %v", got)
	}

	te.exec(s, "CALL lakesql_drop_sink('events')")
	res := te.exec(s, "CALL lakesql_drop_sink('events', TRUE)")
	if diff := cmp.Diff([]Warning{{Level: "Note", Code: 1051, Message: "unknown sink events"}}, res.Warnings); diff != "" {
		t.Errorf("drop with if_exists of a dropped sink: warnings (-want +got):\n%s", diff)
	}
	res = te.exec(s, "CALL lakesql_create_sink_if_not_exists('orders', 'delta', 'lake/other', 'id BIGINT')")
	if diff := cmp.Diff([]Warning{{Level: "Note", Code: 1050, Message: "sink orders already exists"}}, res.Warnings); diff != "" {
		t.Errorf("create if not exists of an existing sink: warnings (-want +got):\n%s", diff)
	}
	// Three arguments attach to an existing table, as CREATE SINK without columns.
	te.exec(s, "CALL lakesql_create_sink('events2', 'delta', 'lake/events')")
	if got := te.rows(s, "SELECT payload FROM events2"); len(got) != 1 {
		t.Errorf("attached by CALL: %v, want the one row", got)
	}
	if got := te.rows(s, "CALL lakesql_show_sinks()"); len(got) != 2 {
		t.Errorf("sinks after the drops: %v", got)
	}
}

// Errors that the execution raises are the text form's, word for word.
func TestProcErrorsAreTheTextForms(t *testing.T) {
	base := t.TempDir()
	te := openTestEngine(t, filepath.Join(base, "data"))
	s := te.session()
	te.exec(s, createOrders)
	for call, text := range map[string]string{
		"CALL lakesql_create_sink('x', 'delta', 'lake/x', 'id BIGINT', NULL, 'colour = ''blue''')": "CREATE SINK x INTO DELTA 'lake/x' (id BIGINT) WITH (colour = 'blue')",
		"CALL lakesql_create_sink('x', 'delta', 'lake/x', 'id BIGINT', '', 'mode = sideways')":     "CREATE SINK x INTO DELTA 'lake/x' (id BIGINT) WITH (mode = sideways)",
		"CALL lakesql_create_sink('x', 'delta', '../outside', 'id BIGINT')":                        "CREATE SINK x INTO DELTA '../outside' (id BIGINT)",
		"CALL lakesql_create_sink('x', 'iceberg', 'nonamespace', 'id BIGINT')":                     "CREATE SINK x INTO ICEBERG 'nonamespace' (id BIGINT)",
		"CALL lakesql_create_sink('x', 'delta', 'lake/missing')":                                   "CREATE SINK x INTO DELTA 'lake/missing'",
		"CALL lakesql_create_sink('orders', 'delta', 'lake/o2', 'id BIGINT')":                      "CREATE SINK orders INTO DELTA 'lake/o2' (id BIGINT)",
		"CALL lakesql_create_sink('o2', 'delta', 'lake/orders')":                                   "CREATE SINK o2 INTO DELTA 'lake/orders'",
		"CALL lakesql_drop_sink('nosuch')":                                                         "DROP SINK nosuch",
		"CALL lakesql_drop_sink('nosuch', 0)":                                                      "DROP SINK nosuch",
		"CALL lakesql_show_create_sink('nosuch')":                                                  "SHOW CREATE SINK nosuch",
		"CALL lakesql_sink_status('nosuch')":                                                       "SHOW SINK STATUS nosuch",
	} {
		code, msg := te.callCode(s, call)
		wantCode, wantMsg := te.callCode(s, text)
		if wantCode == 0 {
			t.Fatalf("%s: succeeded; the test needs it to fail", text)
		}
		if code != wantCode || msg != wantMsg {
			t.Errorf("%s:\n got %d %s\nwant %d %s (as %s)", call, code, msg, wantCode, wantMsg, text)
		}
	}
	// Definition errors keep the text form's code; their positions count
	// in the argument, or in the statement the procedure wrote, which the
	// message shows.
	for call, want := range map[string]struct {
		code int
		msg  string
	}{
		"CALL lakesql_create_sink('x', 'delta', 'lake/x', 'id ENUM(''a'')')": {1235,
			`lakesql_create_sink: argument columns: unsupported column type at position 4 near 'ENUM'`},
		"CALL lakesql_create_sink('x', 'delta', 'lake/x', 'id BIGINT, id INT')": {1210,
			`lakesql_create_sink: argument columns: invalid sink definition at position 12 near 'id': column "id" is defined twice (first at position 1)`},
		"CALL lakesql_create_sink('x', 'delta', 'lake/x', 'id BIGINT NOT')": {1064,
			`lakesql_create_sink: argument columns: syntax error at position 14 near end of input: expected NULL after NOT`},
		"CALL lakesql_create_sink('x', 'delta', 'lake/x', 'id BIGINT', 'v')": {1210,
			`lakesql_create_sink: invalid sink definition at position 63 near 'v': partition column "v" is not a column of sink "x" ` +
				"(in CREATE SINK `x` INTO DELTA 'lake/x' (id BIGINT) PARTITION BY (v))"},
		"CALL lakesql_create_sink('x', 'delta', 'lake/x', 'id BIGINT', NULL, 'mode = ''upsert'', mode = ''append''')": {1210,
			`lakesql_create_sink: argument options: invalid sink definition at position 18 near 'mode': option "mode" is given twice (first at position 1)`},
		"CALL lakesql_create_sink(REPEAT('n', 65), 'delta', 'lake/x')": {1210, "is longer than 64 characters"},
	} {
		code, msg := te.callCode(s, call)
		if code != want.code || !strings.Contains(msg, want.msg) {
			t.Errorf("%s:\n got %d %s\nwant %d %s", call, code, msg, want.code, want.msg)
		}
	}
	if got := te.rows(s, "SHOW SINKS"); len(got) != 1 {
		t.Errorf("failed calls left sinks behind: %v", got)
	}
}

// NULL, empty or wrong arguments and wrong counts are MySQL errors with
// their own codes, never a panic.
func TestProcArgumentErrors(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	for call, want := range map[string]struct {
		code int
		msg  string
	}{
		"CALL lakesql_create_sink(NULL, 'delta', 'lake/x')":  {1210, "lakesql_create_sink: argument name: the sink name must be given (not NULL or empty)"},
		"CALL lakesql_create_sink('', 'delta', 'lake/x')":    {1210, "lakesql_create_sink: argument name: the sink name must be given"},
		"CALL lakesql_create_sink('x', NULL, 'lake/x')":      {1210, "lakesql_create_sink: argument format: expected 'delta' or 'iceberg', got ''"},
		"CALL lakesql_create_sink('x', 'parquet', 'lake/x')": {1210, "argument format: expected 'delta' or 'iceberg', got 'parquet'"},
		"CALL lakesql_create_sink('x', 42, 'lake/x')":        {1210, "argument format: expected 'delta' or 'iceberg', got '42'"},
		"CALL lakesql_create_sink('x', 'delta', NULL)":       {1210, "lakesql_create_sink: argument location: the table location must be given (not NULL or empty)"},
		"CALL lakesql_create_sink_if_not_exists(NULL, 'delta', 'lake/x')": {1210,
			"lakesql_create_sink_if_not_exists: argument name: the sink name must be given"},
		"CALL lakesql_drop_sink(NULL)":                                     {1210, "lakesql_drop_sink: argument name: the sink name must be given (not NULL or empty)"},
		"CALL lakesql_drop_sink('x', 'yes')":                               {1210, "lakesql_drop_sink: argument if_exists: expected 1, 0, TRUE or FALSE, got 'yes'"},
		"CALL lakesql_show_create_sink(NULL)":                              {1210, "lakesql_show_create_sink: argument name: the sink name must be given"},
		"CALL lakesql_create_sink('x', 'delta')":                           {1318, "Incorrect number of arguments for PROCEDURE lakesql.lakesql_create_sink; expected 3 to 6, got 2 (usage: CALL lakesql_create_sink(name, format, location [, columns [, partition_by [, options]]]))"},
		"CALL lakesql_create_sink('a', 'delta', 'lake/x', '', '', '', '')": {1318, "expected 3 to 6, got 7"},
		"CALL lakesql_drop_sink()":                                         {1318, "expected 1 to 2, got 0 (usage: CALL lakesql_drop_sink(name [, if_exists]))"},
		"CALL lakesql_show_sinks('x')":                                     {1318, "expected 0, got 1 (usage: CALL lakesql_show_sinks())"},
		"CALL lakesql_show_create_sink()":                                  {1318, "expected 1, got 0 (usage: CALL lakesql_show_create_sink(name))"},
		"CALL lakesql_sink_status('a', 'b')":                               {1318, "expected 0 to 1, got 2 (usage: CALL lakesql_sink_status([name]))"},
		"CALL lakesql_create_sinks('x', 'delta', 'lake/x')":                {1305, "PROCEDURE lakesql_create_sinks does not exist (lakesql's procedures: lakesql_create_sink, "},
	} {
		code, msg := te.callCode(s, call)
		if code != want.code || !strings.Contains(msg, want.msg) {
			t.Errorf("%s:\n got %d %s\nwant %d %s", call, code, msg, want.code, want.msg)
		}
	}
	if got := te.rows(s, "SHOW SINKS"); len(got) != 0 {
		t.Errorf("failed calls left sinks behind: %v", got)
	}
}

// An argument is a value: a name or location is quoted, and a list cannot
// close its parentheses and add a clause of its own.
func TestProcArgumentsCannotInject(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	for _, call := range []string{
		// Each of these would make a sink if the list could close early.
		// The columns list closes and adds WITH.
		"CALL lakesql_create_sink('x', 'delta', 'lake/x', 'id BIGINT) WITH (mode = ''append''')",
		// The partition list closes and adds WITH.
		"CALL lakesql_create_sink('x', 'delta', 'lake/x', 'id BIGINT, v BIGINT', 'v) WITH (writer_id = ''other''')",
		// The columns list closes and opens PARTITION BY, leaving its ')' to the procedure.
		"CALL lakesql_create_sink('x', 'delta', 'lake/x', 'id BIGINT, v BIGINT) PARTITION BY (v')",
		// An unterminated comment would swallow what the procedure adds.
		"CALL lakesql_create_sink('x', 'delta', 'lake/x', 'id BIGINT /*')",
		// A string opened in the options would too.
		"CALL lakesql_create_sink('x', 'delta', 'lake/x', 'id BIGINT', NULL, 'mode = ''upsert')",
	} {
		if code, msg := te.callCode(s, call); code != 1064 {
			t.Errorf("%s: code %d (%s), want the syntax error 1064", call, code, msg)
		}
	}
	if got := te.rows(s, "SHOW SINKS"); len(got) != 0 {
		t.Fatalf("an injection attempt made a sink: %v", got)
	}

	// A comment at the end of a list is a comment: the list still closes.
	te.exec(s, "CALL lakesql_create_sink('c', 'delta', 'lake/c', 'id BIGINT -- the key', NULL, 'mode = ''append'' # default')")
	// Names and locations are taken literally, quotes included.
	// (A sink name cannot hold a single quote: its spill folder is named after it.)
	te.exec(s, "CALL lakesql_create_sink('we`ird INTO', 'delta', 'lake/it''s) WITH (a = 1)', 'id BIGINT')")
	got := te.rows(s, "CALL lakesql_show_sinks()")
	want := [][]any{
		{"c", "DELTA", filepath.Join(te.dir, "lake", "c"), "append"},
		{"we`ird INTO", "DELTA", filepath.Join(te.dir, "lake", "it's) WITH (a = 1)"), "append"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sinks (-want +got):\n%s", diff)
	}
	te.exec(s, "INSERT INTO `we``ird INTO` VALUES (1)")
	te.exec(s, "CALL lakesql_drop_sink('we`ird INTO')")
}

// CALL lakesql_create_sink and lakesql_drop_sink commit an open
// transaction first, as CREATE SINK and DROP SINK do.
func TestProcCommitsOpenTransaction(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, "CALL lakesql_create_sink('orders', 'delta', 'lake/orders', 'id BIGINT NOT NULL, PRIMARY KEY (id)')")
	table := filepath.Join(te.dir, "lake", "orders")
	te.exec(s, "BEGIN")
	te.exec(s, "INSERT INTO orders VALUES (1)")
	v := deltatest.Versions(t, table)
	te.exec(s, "CALL lakesql_create_sink('other', 'delta', 'lake/other', 'id BIGINT')")
	if got := deltatest.Versions(t, table); got != v+1 {
		t.Errorf("CALL lakesql_create_sink in a transaction: %d versions, want %d (the transaction committed)", got, v+1)
	}
	te.exec(s, "INSERT INTO orders VALUES (2)") // autocommit again
	te.exec(s, "ROLLBACK")
	if got := te.rows(s, "SELECT id FROM orders ORDER BY id"); !cmp.Equal(got, [][]any{{int64(1)}, {int64(2)}}) {
		t.Errorf("rows after ROLLBACK: %v, want 1 and 2", got)
	}

	te.exec(s, "SET autocommit = 0")
	te.exec(s, "INSERT INTO orders VALUES (3)")
	te.exec(s, "CALL lakesql_drop_sink('orders')")
	te.exec(s, "SET autocommit = 1")
	te.exec(s, "CALL lakesql_create_sink('orders', 'delta', 'lake/orders')")
	if got := te.rows(s, "SELECT id FROM orders ORDER BY id"); !cmp.Equal(got, [][]any{{int64(1)}, {int64(2)}, {int64(3)}}) {
		t.Errorf("rows after CALL lakesql_drop_sink and attaching again: %v, want 1, 2 and 3", got)
	}

	// The SHOW procedures leave an open transaction alone.
	te.exec(s, "BEGIN")
	te.exec(s, "INSERT INTO orders VALUES (4)")
	v = deltatest.Versions(t, table)
	te.exec(s, "CALL lakesql_show_sinks()")
	te.exec(s, "CALL lakesql_sink_status('orders')")
	if got := deltatest.Versions(t, table); got != v {
		t.Errorf("a SHOW procedure committed the transaction: %d versions, want %d", got, v)
	}
	te.exec(s, "ROLLBACK")
	if got := len(te.rows(s, "SELECT id FROM orders")); got != 3 {
		t.Errorf("%d rows after ROLLBACK, want 3", got)
	}
}
