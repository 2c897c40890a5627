package main

// One scenario suite, three paths. The steps below are written once and
// run through go-sql-driver/mysql against `lakesql serve`, the mariadb
// command-line client against `lakesql serve`, and the embedded
// database/sql driver (scenario_paths_test.go). Each step asserts what a
// user should see; every statement's outcome (rows, rows affected, MySQL
// code, SQLSTATE and message) is also written to a transcript, and the
// transcripts of the paths must be identical: the three paths behave the
// same, not merely well.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/internal/deltatest"
	"github.com/lakesql/lakesql/internal/storageloc"
)

// MySQL error codes the scenario expects.
const (
	codeAccessDenied  = 1045 // ER_ACCESS_DENIED_ERROR
	codeNotNull       = 1048 // ER_BAD_NULL_ERROR
	codeUnknownColumn = 1054 // ER_BAD_FIELD_ERROR
	codeParse         = 1064 // ER_PARSE_ERROR
	codeNoSuchTable   = 1146 // ER_NO_SUCH_TABLE
	codeWrongArgs     = 1210 // ER_WRONG_ARGUMENTS
	codeNotSupported  = 1235 // ER_NOT_SUPPORTED_YET
	codeNoDefault     = 1364 // ER_NO_DEFAULT_FOR_FIELD
	codeWrongValue    = 1366 // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
)

const (
	scenarioCreateOrders = "CREATE SINK orders INTO DELTA 'lake/orders' " +
		"(id BIGINT NOT NULL, amount DOUBLE, region VARCHAR(16), PRIMARY KEY (id)) WITH (mode = 'upsert')"
	scenarioSelectOrders = "SELECT id, amount, region FROM orders ORDER BY id"
)

func TestScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("starts lakesql serve and client processes")
	}
	type path struct {
		name string
		open func(t *testing.T) scenarioPath
	}
	needMariadb := func(t *testing.T) {
		if _, err := exec.LookPath("mariadb"); err != nil {
			t.Skip("the mariadb client is not installed (.ci/run installs Debian's mariadb-client)")
		}
	}
	// The same paths twice: with the Delta tables in the data directory,
	// and on S3 (versitygw), the server started with --table-root and
	// --storage, the embedded driver with the DSN options table_root and
	// storage.*. Every step runs in both; the transcripts are compared
	// within each.
	storages := []struct {
		name  string
		paths []path
	}{
		{"local", []path{
			{"go-sql-driver", func(t *testing.T) scenarioPath { return mysqlDriverPath{newServedData(t)} }},
			{"mariadb", func(t *testing.T) scenarioPath { needMariadb(t); return mariadbPath{newServedData(t)} }},
			{"embedded", func(t *testing.T) scenarioPath { return newEmbeddedPath(t) }},
		}},
		{"s3", []path{
			// Credentials in --storage flags here, from the environment
			// for the mariadb path's server.
			{"go-sql-driver", func(t *testing.T) scenarioPath { return mysqlDriverPath{newServedLake(t, true)} }},
			{"mariadb", func(t *testing.T) scenarioPath { needMariadb(t); return mariadbPath{newServedLake(t, false)} }},
			{"embedded", func(t *testing.T) scenarioPath { return newEmbeddedLake(t) }},
		}},
	}
	for _, st := range storages {
		t.Run(st.name, func(t *testing.T) {
			// The two storages' runs are independent, and mostly wait.
			t.Parallel()
			var (
				mu          sync.Mutex
				transcripts = map[string][]logEntry{}
			)
			t.Run("path", func(t *testing.T) {
				for _, p := range st.paths {
					t.Run(p.name, func(t *testing.T) {
						t.Parallel()
						log := runScenario(t, p.open(t))
						mu.Lock()
						transcripts[p.name] = log
						mu.Unlock()
					})
				}
			})

			// The paths that ran to the end must have seen the same outcomes.
			ref := st.paths[0].name
			for _, p := range st.paths[1:] {
				want, got := transcripts[ref], transcripts[p.name]
				if want == nil || got == nil {
					t.Logf("transcripts of %s and %s not compared: one of them did not run to the end", ref, p.name)
					continue
				}
				if p.name == "embedded" {
					want = withoutWireOnly(want)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("the %s path saw other outcomes than the %s path (-%s +%s):\n%s", p.name, ref, ref, p.name, diff)
				}
			}
		})
	}
}

// logEntry is one statement's outcome, as the transcript keeps it.
type logEntry struct {
	Session  string
	SQL      string
	Affected int64      `json:",omitempty"`
	Rows     [][]string `json:",omitempty"`
	Err      *sqlError  `json:",omitempty"`
	// Versions is the number of versions a table gained since it was
	// last counted, for the entries that count them.
	Versions int `json:",omitempty"`
	// WireOnly marks steps that have no meaning on the embedded path.
	WireOnly bool `json:"-"`
}

func withoutWireOnly(log []logEntry) []logEntry {
	return slices.DeleteFunc(slices.Clone(log), func(e logEntry) bool { return e.WireOnly })
}

// named is a session with the name the transcript gives it.
type named struct {
	session
	name string
}

// scenario runs the steps on one path.
type scenario struct {
	t    *testing.T
	p    scenarioPath
	ctx  context.Context
	norm *strings.Replacer // data directory paths and the table root out of the transcript
	// root is where relative Delta locations go: the data directory, or
	// an s3:// location.
	root string
	// counted is the last version count of each table.
	counted map[string]int

	mu  sync.Mutex
	log []logEntry
}

func (sc *scenario) record(e logEntry) {
	rows := make([][]string, len(e.Rows))
	for r, row := range e.Rows {
		rows[r] = make([]string, len(row))
		for i, v := range row {
			rows[r][i] = sc.norm.Replace(v)
		}
	}
	if e.Rows != nil {
		e.Rows = rows
	}
	if e.Err != nil {
		c := *e.Err
		c.Message = sc.norm.Replace(c.Message)
		e.Err = &c
	}
	e.SQL = sc.norm.Replace(e.SQL)
	sc.mu.Lock()
	sc.log = append(sc.log, e)
	sc.mu.Unlock()
}

// run runs a statement and records its outcome.
func (sc *scenario) run(s named, q string, query bool) (int64, [][]string, error) {
	var (
		affected int64
		rows     [][]string
		err      error
	)
	if query {
		rows, err = s.Query(sc.ctx, q)
	} else {
		affected, err = s.Exec(sc.ctx, q)
	}
	e := logEntry{Session: s.name, SQL: q, Affected: affected, Rows: rows}
	var se *sqlError
	switch {
	case errors.As(err, &se):
		e.Err = se
	case err != nil:
		e.Err = &sqlError{Message: err.Error()} // no MySQL code: a failure of its own
	}
	sc.record(e)
	return affected, rows, err
}

// exec runs a statement that must succeed and affect want rows.
func (sc *scenario) exec(s named, q string, want int64) bool {
	sc.t.Helper()
	got, _, err := sc.run(s, q, false)
	if err != nil {
		sc.t.Errorf("[%s] %s: %v", s.name, q, err)
		return false
	}
	if got != want {
		sc.t.Errorf("[%s] %s: %d rows affected, want %d", s.name, q, got, want)
	}
	return true
}

// fails runs a statement that must fail with the MySQL error code want.
func (sc *scenario) fails(s named, q string, want int) {
	sc.t.Helper()
	_, _, err := sc.run(s, q, false)
	if err == nil {
		sc.t.Errorf("[%s] %s: succeeded, want error %d", s.name, q, want)
		return
	}
	if code := errorCode(err); code != want {
		sc.t.Errorf("[%s] %s: error code %d, want %d: %v", s.name, q, code, want, err)
	}
}

// query runs a statement that must return want.
func (sc *scenario) query(s named, q string, want [][]string) {
	sc.t.Helper()
	_, got, err := sc.run(s, q, true)
	if err != nil {
		sc.t.Errorf("[%s] %s: %v", s.name, q, err)
		return
	}
	if diff := cmp.Diff(want, got); diff != "" {
		sc.t.Errorf("[%s] %s (-want +got):\n%s", s.name, q, diff)
	}
}

// table is the location of a sink's Delta table made with a relative
// location 'lake/NAME', as SHOW SINKS shows it.
func (sc *scenario) table(name string) string {
	if storageloc.IsLocation(sc.root) {
		return sc.root + "/lake/" + name
	}
	return filepath.Join(sc.root, "lake", name)
}

// beside is where the relative location '../NAME' would be.
func (sc *scenario) beside(name string) string {
	if storageloc.IsLocation(sc.root) {
		return sc.root[:strings.LastIndex(sc.root, "/")] + "/" + name
	}
	return filepath.Join(filepath.Dir(sc.root), name)
}

// absent checks that nothing is at a location: no file or folder, or no
// object under the prefix.
func (sc *scenario) absent(loc, after string) {
	sc.t.Helper()
	if storageloc.IsLocation(loc) {
		if keys := lakeKeys(sc.t, loc); len(keys) > 0 {
			sc.t.Errorf("after %s: objects under %s: %v", after, loc, keys)
		}
		return
	}
	if _, err := os.Stat(loc); !errors.Is(err, os.ErrNotExist) {
		sc.t.Errorf("after %s: %s exists (%v)", after, loc, err)
	}
}

// versions checks how many versions a sink's table has and returns the
// count, so that one unexpected version fails one check, not all that
// follow. The transcript gets the versions made since the last count.
func (sc *scenario) versions(name string, want int, when string) int {
	sc.t.Helper()
	var got int
	if loc := sc.table(name); storageloc.IsLocation(loc) {
		got = lakeVersions(sc.t, loc)
	} else {
		got = deltatest.Versions(sc.t, loc)
	}
	sc.record(logEntry{Session: "delta", SQL: fmt.Sprintf("new versions of %s %s", name, when), Versions: got - sc.counted[name]})
	sc.counted[name] = got
	if got != want {
		sc.t.Errorf("%s: table %s has %d versions, want %d", when, name, got, want)
	}
	return got
}

func (sc *scenario) open(name string) named {
	sc.t.Helper()
	return named{sc.p.Open(sc.t), name}
}

func (sc *scenario) close(s named) {
	sc.t.Helper()
	if err := s.Close(); err != nil {
		sc.t.Errorf("close session %s: %v", s.name, err)
	}
}

// orders is what the orders sink must hold: id → row.
type orders map[int][]string

func (o orders) set(id int, amount, region string) {
	o[id] = []string{strconv.Itoa(id), amount, region}
}

func (o orders) rows() [][]string {
	ids := make([]int, 0, len(o))
	for id := range o {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	out := [][]string{}
	for _, id := range ids {
		out = append(out, o[id])
	}
	return out
}

// runScenario runs every step on p and returns the transcript; it returns
// only when the scenario ran to its end.
func runScenario(t *testing.T, p scenarioPath) []logEntry {
	data := p.DataDir()
	base := filepath.Dir(data)
	root := p.TableRoot()
	norm := strings.NewReplacer(data, "$DATA", base, "$BASE")
	if root == "" {
		root = data
	} else {
		norm = strings.NewReplacer(root, "$ROOT", data, "$DATA", base, "$BASE")
	}
	sc := &scenario{t: t, p: p, ctx: t.Context(), norm: norm, root: root, counted: map[string]int{}}
	want := orders{}
	v := 0 // versions of the orders table

	// Create, insert, commit, rollback, select.
	s1 := sc.open("s1")
	s2 := sc.open("s2")
	sc.exec(s1, scenarioCreateOrders, 0)
	sinks := [][]string{{"orders", "DELTA", sc.table("orders"), "upsert"}}
	sc.query(s2, "SHOW SINKS", sinks)
	v = sc.versions("orders", v+1, "after CREATE SINK")

	sc.exec(s1, "INSERT INTO orders VALUES (1, 1.5, 'eu'), (2, 2.5, 'us')", 2)
	want.set(1, "1.5", "eu")
	want.set(2, "2.5", "us")
	v = sc.versions("orders", v+1, "after an autocommit INSERT")
	sc.query(s2, scenarioSelectOrders, want.rows())

	sc.exec(s1, "BEGIN", 0)
	sc.exec(s1, "INSERT INTO orders VALUES (3, 3.5, 'eu')", 1)
	sc.exec(s1, "INSERT INTO orders VALUES (4, NULL, 'ap'), (5, 5.5, 'us')", 2)
	// Neither the transaction itself nor another session sees its rows
	// before COMMIT, and the table has no new version.
	sc.query(s1, scenarioSelectOrders, want.rows())
	sc.query(s2, scenarioSelectOrders, want.rows())
	v = sc.versions("orders", v, "before COMMIT")
	sc.exec(s1, "COMMIT", 0)
	want.set(3, "3.5", "eu")
	want.set(4, "NULL", "ap")
	want.set(5, "5.5", "us")
	v = sc.versions("orders", v+1, "after BEGIN, two INSERTs, COMMIT")
	sc.query(s2, scenarioSelectOrders, want.rows())

	sc.exec(s1, "BEGIN", 0)
	sc.exec(s1, "INSERT INTO orders VALUES (6, 6.5, 'eu')", 1)
	sc.exec(s1, "ROLLBACK", 0)
	v = sc.versions("orders", v, "after ROLLBACK")
	sc.query(s2, scenarioSelectOrders, want.rows())

	// Changelog rows: an update and a delete by key.
	sc.exec(s1, "INSERT INTO orders (_op, id, amount, region) VALUES ('U', 2, 20.5, 'us'), ('D', 5, NULL, 'us')", 2)
	want.set(2, "20.5", "us")
	delete(want, 5)
	v = sc.versions("orders", v+1, "after a changelog INSERT")
	sc.query(s2, scenarioSelectOrders, want.rows())
	sc.query(s2, "SELECT region, COUNT(*), SUM(amount) FROM orders GROUP BY region ORDER BY region",
		[][]string{{"ap", "1", "NULL"}, {"eu", "2", "5"}, {"us", "1", "20.5"}})

	// Bad statements get MySQL codes; the session and the others go on.
	s3 := sc.open("s3")
	for _, bad := range []struct {
		q    string
		code int
	}{
		{"SELEC 1", codeParse},
		{"SELECT * FROM nosuch", codeNoSuchTable},
		{"INSERT INTO nosuch VALUES (1)", codeNoSuchTable},
		{"INSERT INTO orders (id, colour) VALUES (7, 'blue')", codeUnknownColumn},
		{"SHOW CREATE SINK nosuch", codeNoSuchTable},
	} {
		sc.fails(s1, bad.q, bad.code)
		sc.query(s3, "SELECT COUNT(*) FROM orders", [][]string{{strconv.Itoa(len(want))}})
	}
	sc.query(s1, "SELECT 1", [][]string{{"1"}})
	sc.close(s3)
	s3 = sc.open("s3")
	sc.query(s3, scenarioSelectOrders, want.rows())
	sc.close(s3)
	v = sc.versions("orders", v, "after the bad statements")

	// A wrong password is refused; the right one still works.
	wrongPasswordStep(sc)

	// Bad input: each statement fails with a clear error and MySQL code,
	// and loses nothing: neither committed rows nor the rows an open
	// transaction holds. After each failure: the committed rows and the
	// table versions are unchanged, no sink was defined and no table or
	// folder was left behind.
	sc.exec(s1, "CREATE SINK old INTO DELTA 'lake/old' (id BIGINT NOT NULL, name VARCHAR(16))", 0)
	sc.exec(s1, "INSERT INTO old VALUES (1, 'one'), (2, 'two')", 2)
	sc.exec(s1, "DROP SINK old", 0) // the table stays, for the attach below
	sc.versions("old", 2, "after DROP SINK")
	sc.query(s2, "SHOW SINKS", sinks)
	nothingChanged := func(after string) {
		sc.t.Helper()
		sc.query(s2, scenarioSelectOrders, want.rows())
		v = sc.versions("orders", v, "after "+after)
		sc.versions("old", 2, "after "+after)
		sc.query(s2, "SHOW SINKS", sinks)
		for _, loc := range []string{sc.table("bad"), sc.beside("outside"), filepath.Join(base, "elsewhere")} {
			sc.absent(loc, after)
		}
	}
	type badInput struct {
		what string
		q    string
		code int
	}

	// Bad rows inside an open transaction.
	sc.exec(s1, "BEGIN", 0)
	sc.exec(s1, "INSERT INTO orders VALUES (10, 10.5, 'eu')", 1)
	badRows := []badInput{
		{"a string for a BIGINT", "INSERT INTO orders VALUES ('abc', 1.5, 'eu')", codeWrongValue},
		{"a string for a DOUBLE", "INSERT INTO orders VALUES (11, 'lots', 'eu')", codeWrongValue},
		{"NULL into NOT NULL", "INSERT INTO orders VALUES (NULL, 1.5, 'eu')", codeNotNull},
		{"NULL into NOT NULL after a good row", "INSERT INTO orders VALUES (12, 1.5, 'eu'), (NULL, 1.5, 'eu')", codeNotNull},
		{"an unknown _op", "INSERT INTO orders (_op, id, amount, region) VALUES ('Z', 13, 1.5, 'eu')", codeWrongValue},
		{"a NULL _op after a good row", "INSERT INTO orders (_op, id, amount, region) VALUES ('I', 14, 1.5, 'eu'), (NULL, 15, 1.5, 'eu')", codeWrongValue},
		{"a row without its key in upsert mode", "INSERT INTO orders (amount, region) VALUES (1.5, 'eu')", codeNoDefault},
	}
	for _, bad := range badRows {
		sc.fails(s1, bad.q, bad.code)
		nothingChanged(bad.what + " in a transaction")
	}
	// The transaction is still usable, and COMMIT writes exactly its rows
	// (the one before the failures and the one after) in one version.
	sc.exec(s1, "INSERT INTO orders VALUES (16, 16.5, 'ap')", 1)
	sc.exec(s1, "COMMIT", 0)
	want.set(10, "10.5", "eu")
	want.set(16, "16.5", "ap")
	v = sc.versions("orders", v+1, "after COMMIT of the transaction with failed statements")
	sc.query(s2, scenarioSelectOrders, want.rows())

	// The same bad rows in autocommit mode write no version.
	for _, bad := range badRows {
		sc.fails(s1, bad.q, bad.code)
		nothingChanged(bad.what + " in autocommit mode")
	}

	// Bad sink definitions.
	for _, bad := range []badInput{
		{"an unknown option", "CREATE SINK bad INTO DELTA 'lake/bad' (id BIGINT) WITH (colour = 'blue')", codeWrongArgs},
		{"an unknown column type", "CREATE SINK bad INTO DELTA 'lake/bad' (id FROBNICATE)", codeNotSupported},
		{"upsert mode without a key", "CREATE SINK bad INTO DELTA 'lake/bad' (id BIGINT, amount DOUBLE) WITH (mode = 'upsert')", codeWrongArgs},
		{"a relative path outside the allowed roots", "CREATE SINK bad INTO DELTA '../outside' (id BIGINT)", codeWrongArgs},
		{"an absolute path outside the allowed roots", "CREATE SINK bad INTO DELTA '" + filepath.Join(base, "elsewhere") + "' (id BIGINT)", codeWrongArgs},
		{"attaching with another column type", "CREATE SINK old INTO DELTA 'lake/old' (id INT NOT NULL, name VARCHAR(16))", codeWrongArgs},
		{"attaching with another column", "CREATE SINK old INTO DELTA 'lake/old' (id BIGINT NOT NULL, label VARCHAR(16))", codeWrongArgs},
	} {
		sc.fails(s1, bad.q, bad.code)
		nothingChanged(bad.what)
	}
	// A CREATE SINK commits the open transaction first, as MySQL commits
	// before DDL, even when it then fails: the transaction's rows are kept
	// (committed), not lost.
	sc.exec(s1, "BEGIN", 0)
	sc.exec(s1, "INSERT INTO orders VALUES (17, 17.5, 'eu')", 1)
	sc.fails(s1, "CREATE SINK bad INTO DELTA 'lake/bad' (id BIGINT) WITH (colour = 'blue')", codeWrongArgs)
	want.set(17, "17.5", "eu")
	v++
	nothingChanged("a failed CREATE SINK in a transaction")
	sc.exec(s1, "ROLLBACK", 0) // nothing left to roll back
	nothingChanged("ROLLBACK after the DDL")

	// Attaching with no columns takes the table's schema and its rows.
	sc.exec(s1, "CREATE SINK old INTO DELTA 'lake/old'", 0)
	sinks = [][]string{{"old", "DELTA", sc.table("old"), "append"}, {"orders", "DELTA", sc.table("orders"), "upsert"}}
	sc.query(s2, "SHOW SINKS", sinks)
	sc.query(s2, "SELECT id, name FROM old ORDER BY id", [][]string{{"1", "one"}, {"2", "two"}})
	sc.versions("old", 2, "after attaching")

	// A client killed mid-transaction leaves nothing in the table, and
	// the sink it wrote is free for the others.
	k := p.OpenKillable(t)
	kn := named{k, "killed"}
	sc.exec(kn, "BEGIN", 0)
	sc.exec(kn, "INSERT INTO orders VALUES (20, 20.5, 'eu'), (21, 21.5, 'eu')", 2)
	if err := k.Kill(); err != nil {
		t.Fatalf("kill the client: %v", err)
	}
	// Over the wire this waits until the server has rolled the killed
	// connection's transaction back (at most planner.DefaultLockWaitTimeout).
	sc.exec(s2, "INSERT INTO orders VALUES (22, 22.5, 'us')", 1)
	want.set(22, "22.5", "us")
	v = sc.versions("orders", v+1, "after the killed client and one more INSERT")
	sc.query(s2, scenarioSelectOrders, want.rows())

	// Two connections commit to the same sink concurrently: both land,
	// one version each.
	concurrentStep(sc, want)
	v = sc.versions("orders", v+2, "after two concurrent transactions")
	sc.query(s2, scenarioSelectOrders, want.rows())

	// Restart: everything committed is there, and writing goes on.
	sc.close(s1)
	sc.close(s2)
	p.Restart(t)
	s4 := sc.open("s4")
	sc.query(s4, scenarioSelectOrders, want.rows())
	sc.query(s4, "SHOW SINKS", sinks)
	sc.query(s4, "SELECT id, name FROM old ORDER BY id", [][]string{{"1", "one"}, {"2", "two"}})
	v = sc.versions("orders", v, "after restart")
	sc.exec(s4, "INSERT INTO orders VALUES (40, 40.5, 'eu'), (2, 2.25, 'us')", 2)
	want.set(40, "40.5", "eu")
	want.set(2, "2.25", "us")
	v = sc.versions("orders", v+1, "after an INSERT after restart")
	sc.query(s4, scenarioSelectOrders, want.rows())
	sc.close(s4)
	if storageloc.IsLocation(root) {
		// With the tables on S3, none may have landed on the local disk.
		filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() && d.Name() == "_delta_log" {
				t.Errorf("a Delta table on the local disk with --table-root %s: %s", root, filepath.Dir(path))
			}
			return nil
		})
	}
	return sc.log
}

// wrongPasswordStep: a wrong password or an unknown user is refused with
// 1045, and the right password still opens a session.
func wrongPasswordStep(sc *scenario) {
	sc.t.Helper()
	for _, login := range []struct{ user, password string }{
		{"root", "wrong"},
		{"root", ""},
		{"nobody", scenarioPassword},
	} {
		s, err := sc.p.OpenAs(sc.t, login.user, login.password)
		if errors.Is(err, errNotApplicable) {
			sc.t.Logf("%s: no users, no passwords: the wrong-password step does not apply", sc.p.Name())
			break
		}
		e := logEntry{Session: "login", SQL: fmt.Sprintf("connect as %s with password %q", login.user, login.password), WireOnly: true}
		if err == nil {
			sc.t.Errorf("%s: a session opened", e.SQL)
			s.Close()
		} else if code := errorCode(err); code != codeAccessDenied {
			sc.t.Errorf("%s: error code %d, want %d: %v", e.SQL, code, codeAccessDenied, err)
		}
		var se *sqlError
		if errors.As(err, &se) {
			e.Err = &sqlError{Code: se.Code, State: se.State} // messages differ between clients
		}
		sc.record(e)
	}
	s := sc.open("login")
	sc.query(s, "SELECT 1", [][]string{{"1"}})
	sc.close(s)
}

// concurrentStep runs two transactions at once, each on its own session:
// both BEGIN, then both write and commit at the same time (the second
// writer waits for the first one's COMMIT).
func concurrentStep(sc *scenario, want orders) {
	sc.t.Helper()
	a, b := sc.open("a"), sc.open("b")
	defer sc.close(a)
	defer sc.close(b)
	start := len(sc.log)
	var begun, done sync.WaitGroup
	begun.Add(2)
	for i, s := range []named{a, b} {
		done.Add(1)
		go func() {
			defer done.Done()
			ok := sc.exec(s, "BEGIN", 0)
			begun.Done()
			begun.Wait()
			if !ok {
				return
			}
			id := 30 + 2*i
			sc.exec(s, fmt.Sprintf("INSERT INTO orders VALUES (%d, %d.5, 'eu')", id, id), 1)
			sc.exec(s, fmt.Sprintf("INSERT INTO orders VALUES (%d, %d.5, 'us')", id+1, id+1), 1)
			sc.exec(s, "COMMIT", 0)
		}()
	}
	done.Wait()
	for _, id := range []int{30, 32} {
		want.set(id, fmt.Sprintf("%d.5", id), "eu")
		want.set(id+1, fmt.Sprintf("%d.5", id+1), "us")
	}
	// Which transaction went first is up to the scheduler: the transcript
	// keeps each session's statements in order, a's before b's.
	sc.mu.Lock()
	slices.SortStableFunc(sc.log[start:], func(x, y logEntry) int { return strings.Compare(x.Session, y.Session) })
	sc.mu.Unlock()
}
