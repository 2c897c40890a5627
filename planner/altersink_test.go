package planner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/sinkdef"
	"github.com/lakesql/lakesql/sqlsink"
)

// TestAlterErrorCodes pins the codes of the sink's ALTER errors: a
// change the format refuses is 1846 with its message, one not built 1235.
func TestAlterErrorCodes(t *testing.T) {
	for _, c := range []struct {
		err   error
		code  uint16
		state string
	}{
		{fmt.Errorf("alter sink s: %w: narrowing BIGINT to INT", sqlsink.ErrSchemaChange), erAlterOperationNotSupportedReason, "0A000"},
		{fmt.Errorf("alter sink s: %w: option mode", sinkdef.ErrAlterRefused), erAlterOperationNotSupportedReason, "0A000"},
		{fmt.Errorf("alter sink s: %w: schema changes are not built yet", sqlsink.ErrUnsupported), 1235, "42000"},
	} {
		got := MySQLError(c.err)
		if got.Num != int(c.code) || got.State != c.state || got.Message != c.err.Error() {
			t.Errorf("MySQLError(%v) = %d %s %q, want %d %s with the error's message", c.err, got.Num, got.State, got.Message, c.code, c.state)
		}
	}
}

// readRegistry reads sinks.json.
func readRegistry(t *testing.T, dir string) registryDoc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, registryFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc registryDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func writeRegistry(t *testing.T, dir string, doc registryDoc) {
	t.Helper()
	if err := saveRegistry(dir, doc.Sinks); err != nil {
		t.Fatal(err)
	}
}

// TestAlterOptionsPersist: SET changes the stored definition, a failed
// SET leaves it alone, and a restart serves the altered one.
func TestAlterOptionsPersist(t *testing.T) {
	dir := t.TempDir()
	te := openTestEngine(t, dir)
	s := te.session()
	te.exec(s, createOrders+" WITH (mode = 'upsert', auto_compact = false)")
	te.exec(s, "INSERT INTO orders VALUES (1, 1.0, 'eu')")
	te.exec(s, "ALTER SINK orders SET (flush_rows = 10, memory_limit = '256MB')")
	te.fails(s, "ALTER SINK orders SET (flush_rows = 0)", "not a positive row count")
	te.fails(s, "ALTER SINK orders SET (delivery = 'at-least-once')", "cannot change on a live sink")
	want := "CREATE SINK `orders` INTO DELTA 'lake/orders' (`id` BIGINT NOT NULL, `amount` DOUBLE, `region` VARCHAR(16), PRIMARY KEY (`id`)) WITH (mode = 'upsert', auto_compact = FALSE, flush_rows = 10, memory_limit = '256MB')"
	if got := readRegistry(t, dir).Sinks[0]; got.Statement != want || got.Pending != "" {
		t.Errorf("stored definition = %q (pending %q), want %q", got.Statement, got.Pending, want)
	}
	if cfg := mustSink(t, te, "orders").Config(); cfg.FlushRows != 10 || cfg.MemoryLimit != "256MB" {
		t.Errorf("the open sink has flush_rows %d, memory_limit %s: it did not take the change", cfg.FlushRows, cfg.MemoryLimit)
	}
	te.exec(s, "INSERT INTO orders VALUES (2, 2.0, 'us')")
	if err := te.e.Close(); err != nil {
		t.Fatal(err)
	}
	te2 := openTestEngine(t, dir)
	s2 := te2.session()
	if diff := cmp.Diff([][]any{{"orders", want}}, te2.rows(s2, "SHOW CREATE SINK orders")); diff != "" {
		t.Errorf("SHOW CREATE SINK after restart (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]any{{int64(1)}, {int64(2)}}, te2.rows(s2, "SELECT id FROM orders ORDER BY id")); diff != "" {
		t.Errorf("rows after restart (-want +got):\n%s", diff)
	}
}

// mustSink returns the opened sink of a handle.
func mustSink(t *testing.T, te *testEngine, name string) *sqlsink.Sink {
	t.Helper()
	h, ok := te.e.lookup(name)
	if !ok {
		t.Fatalf("no sink %s", name)
	}
	s, err := h.open(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPendingAlterNotTaken: a crash left a pending definition whose
// change the table never took; the next start forgets it and keeps the
// stored one.
func TestPendingAlterNotTaken(t *testing.T) {
	dir := t.TempDir()
	te := openTestEngine(t, dir)
	s := te.session()
	te.exec(s, createOrders)
	te.exec(s, "INSERT INTO orders VALUES (1, 1.0, 'eu')")
	if err := te.e.Close(); err != nil {
		t.Fatal(err)
	}
	doc := readRegistry(t, dir)
	stored := doc.Sinks[0].Statement
	doc.Sinks[0].Pending = "CREATE SINK `orders` INTO DELTA 'lake/orders' (`id` BIGINT NOT NULL, `amount` DOUBLE, `region` VARCHAR(16), `note` TEXT, PRIMARY KEY (`id`))"
	writeRegistry(t, dir, doc)

	te2 := openTestEngine(t, dir)
	if got := readRegistry(t, dir).Sinks[0]; got.Statement != stored || got.Pending != "" {
		t.Errorf("after the start: definition %q, pending %q; want %q and none", got.Statement, got.Pending, stored)
	}
	s2 := te2.session()
	if diff := cmp.Diff([][]any{{int64(1), 1.0}}, te2.rows(s2, "SELECT id, amount FROM orders")); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if got := te2.rows(s2, "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_NAME = 'orders'"); fmt.Sprint(got) != "[[3]]" {
		t.Errorf("information_schema.COLUMNS of orders = %v, want 3 columns", got)
	}
}

// TestAlterInTransaction: ALTER SINK inside a transaction that writes to
// the sink is 1192 and leaves the transaction as it was; one that writes
// to another sink is committed first, as MySQL's DDL commits.
func TestAlterInTransaction(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, createOrders)
	te.exec(s, "CREATE SINK other INTO DELTA 'lake/other' (id BIGINT)")
	te.exec(s, "BEGIN")
	te.exec(s, "INSERT INTO orders VALUES (1, 1.0, 'eu')")
	err := te.fails(s, "ALTER SINK orders SET (flush_rows = 5)", "COMMIT or ROLLBACK first")
	if m := MySQLError(err); m.Num != 1192 {
		t.Errorf("code %d, want 1192", m.Num)
	}
	te.exec(s, "COMMIT")
	te.exec(s, "BEGIN")
	te.exec(s, "INSERT INTO other VALUES (7)")
	te.exec(s, "ALTER SINK orders SET (flush_rows = 5)")
	te.exec(s, "ROLLBACK") // nothing left to roll back: the ALTER committed it
	other := te.session()
	if diff := cmp.Diff([][]any{{int64(7)}}, te.rows(other, "SELECT id FROM other")); diff != "" {
		t.Errorf("the implicit commit (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]any{{int64(1)}}, te.rows(other, "SELECT id FROM orders")); diff != "" {
		t.Errorf("orders (-want +got):\n%s", diff)
	}
}
