package wire

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/lakesql/lakesql/internal/deltatest"
)

// The greeting, the login's OK and every later OK and EOF carry
// SERVER_STATUS_AUTOCOMMIT while autocommit is on and
// SERVER_STATUS_IN_TRANS while a transaction is open.
func TestStatusFlagsTellTheTruth(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	rc := rawLogin(t, ts.addr, testPassword)
	if rc.greeting&transactionFlags != statusAutocommit {
		t.Errorf("greeting status %04x, want autocommit (0002) and no transaction", rc.greeting)
	}
	if rc.login&transactionFlags != statusAutocommit {
		t.Errorf("login OK status %04x, want 0002", rc.login)
	}
	p, err := rc.command([]byte{0x0e}) // COM_PING before any statement
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := parseOK(p); err != nil || ok.status&transactionFlags != statusAutocommit {
		t.Errorf("COM_PING before the first statement: %s, %v; want status 0002", describe(p), err)
	}
	for _, tc := range []struct {
		query string
		want  uint16
	}{
		{"SELECT 1", statusAutocommit},
		{createT, statusAutocommit},
		{"INSERT INTO t VALUES (1, 'a')", statusAutocommit},
		{"BEGIN", statusAutocommit | statusInTrans},
		{"SELECT id FROM t", statusAutocommit | statusInTrans},
		{"INSERT INTO t VALUES (2, 'b')", statusAutocommit | statusInTrans},
		{"COMMIT", statusAutocommit},
		{"SET autocommit = 0", 0},
		{"SELECT id FROM t", 0}, // a read opens nothing (read committed)
		{"INSERT INTO t VALUES (3, 'c')", statusInTrans},
		{"SELECT id FROM t", statusInTrans},
		{"ROLLBACK", 0},
		{"INSERT INTO t VALUES (4, 'd')", statusInTrans},
		{"COMMIT", 0},
		{"START TRANSACTION", statusInTrans},
		{"ROLLBACK", 0},
		{"SET autocommit = 1", statusAutocommit},
		{"SELECT id FROM t", statusAutocommit},
	} {
		r, err := rc.query(tc.query)
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		if got := r.status() & transactionFlags; got != tc.want {
			t.Errorf("%s: status %04x, want %04x", tc.query, got, tc.want)
		}
		for _, s := range r.eofStatus {
			if s&transactionFlags != tc.want {
				t.Errorf("%s: an EOF carries status %04x, want %04x", tc.query, s, tc.want)
			}
		}
	}
}

// A client that reads autocommit from the greeting, as PyMySQL and
// mysqlclient do, turns it off when the greeting says it is on, and then
// gets real transactions: ROLLBACK leaves nothing, COMMIT one version.
func TestGreetingAutocommitGivesClientTransactions(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir, testPassword)
	db := ts.db(testPassword)
	mustExec(t, db, createT)
	table := filepath.Join(dir, "lake", "t")
	v0 := deltatest.Versions(t, table)

	rc := rawLogin(t, ts.addr, testPassword)
	// PyMySQL's connect(autocommit=False): SET autocommit=0 only when the
	// server's status says autocommit is on.
	if rc.login&statusAutocommit != 0 {
		if _, err := rc.query("SET autocommit = 0"); err != nil {
			t.Fatal(err)
		}
	}
	run := func(q string) {
		t.Helper()
		if _, err := rc.query(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for i := 1; i <= 3; i++ {
		run(fmt.Sprintf("INSERT INTO t VALUES (%d, 'x')", i))
	}
	run("ROLLBACK")
	if got := ids(t, db, "t"); len(got) != 0 {
		t.Errorf("after rollback(): %v, want no rows", got)
	}
	if got := deltatest.Versions(t, table); got != v0 {
		t.Errorf("after rollback(): %d versions, want %d", got, v0)
	}
	for i := 4; i <= 6; i++ {
		run(fmt.Sprintf("INSERT INTO t VALUES (%d, 'x')", i))
	}
	run("COMMIT")
	if got := ids(t, db, "t"); len(got) != 3 {
		t.Errorf("after commit(): %v, want 3 rows", got)
	}
	if got := deltatest.Versions(t, table); got != v0+1 {
		t.Errorf("after commit(): %d versions, want %d (one per transaction)", got, v0+1)
	}
}
