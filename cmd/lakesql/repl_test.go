package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/internal/deltatest"
	"github.com/lakesql/lakesql/planner"
)

func runREPL(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

const replSetup = `CREATE SINK orders INTO DELTA 'lake/orders'
  (id BIGINT NOT NULL, amount DOUBLE, region VARCHAR(16), PRIMARY KEY (id));
`

func TestREPLExec(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runREPL(t, "", "--data", dir, "-e",
		replSetup+"INSERT INTO orders VALUES (1, 1.5, 'eu'), (2, NULL, 'us'); SELECT id, amount, region FROM orders ORDER BY id")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	want := `Query OK, 0 rows affected

Query OK, 2 rows affected

+----+--------+--------+
| id | amount | region |
+----+--------+--------+
|  1 |    1.5 | eu     |
|  2 |   NULL | us     |
+----+--------+--------+
2 rows in set

`
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}

	// The data persists; an error exits non-zero with the MySQL code.
	code, out, errs = runREPL(t, "", "--data", dir, "-e", "SELECT count(*) AS n FROM orders")
	if code != 0 || !strings.Contains(out, "| 2 |") {
		t.Errorf("count after restart: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = runREPL(t, "", "--data", dir, "-e", "CREATE SINK s INTO DELTA 'x' (id BIGINT")
	if code != 1 || out != "" || !strings.HasPrefix(errs, "ERROR 1064 (42000): ") {
		t.Errorf("syntax error: exit %d, stdout %q, stderr %q; want exit 1 and ERROR 1064 (42000)", code, out, errs)
	}
	code, _, errs = runREPL(t, "", "--data", dir, "-e", "SELECT * FROM nosuch")
	if code != 1 || !strings.HasPrefix(errs, "ERROR 1146 (") {
		t.Errorf("unknown table: exit %d, stderr %q", code, errs)
	}
	code, _, errs = runREPL(t, "", "--data", dir, "--bogus")
	if code != 2 || !strings.Contains(errs, "bogus") {
		t.Errorf("unknown flag: exit %d, stderr %q", code, errs)
	}
}

const script = `-- a script with comments; and semicolons in them
CREATE SINK orders INTO DELTA 'lake/orders'
  (id BIGINT NOT NULL,   # the key
   amount DOUBLE, region VARCHAR(16),
   PRIMARY KEY (id));
/* a block comment;
   over two lines */
BEGIN;
INSERT INTO orders VALUES
  (1, 2.5, 'a;b'),
  (2, 3, 'it''s "x;"');
COMMIT;
SELECT * FROM nosuch;
SELECT id, region FROM orders ORDER BY id;
`

func TestREPLScript(t *testing.T) {
	// Without --force the script stops at the failing statement.
	dir := t.TempDir()
	code, out, errs := runREPL(t, script, "--data", dir)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.HasPrefix(errs, "ERROR 1146 (") || !strings.HasSuffix(errs, ") at line 13: table not found: nosuch\n") {
		t.Errorf("stderr %q, want ERROR 1146 (...) at line 13: table not found: nosuch", errs)
	}
	want := strings.Repeat("Query OK, 0 rows affected\n\n", 2) + "Query OK, 2 rows affected\n\nQuery OK, 0 rows affected\n\n"
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}

	// With --force it goes on, and still exits 1.
	dir = t.TempDir()
	code, out, _ = runREPL(t, script, "--data", dir, "--force")
	if code != 1 {
		t.Errorf("--force: exit %d, want 1", code)
	}
	wantTable := `+----+-----------+
| id | region    |
+----+-----------+
|  1 | a;b       |
|  2 | it's "x;" |
+----+-----------+
2 rows in set
`
	if !strings.HasSuffix(out, wantTable+"\n") {
		t.Errorf("--force: stdout %q, want it to end with\n%s", out, wantTable)
	}
	if got := deltatest.Versions(t, filepath.Join(dir, "lake/orders")); got != 2 {
		t.Errorf("Delta versions = %d, want 2 (create, one transaction)", got)
	}

	// Replaying an explicit epoch prints its warning and adds nothing.
	code, out, errs = runREPL(t, `SET lakesql_epoch = 9; INSERT INTO orders VALUES (3, 1, 'x');
SET lakesql_epoch = 9; INSERT INTO orders VALUES (3, 1, 'x');
SELECT count(*) AS n FROM orders;`, "--data", dir)
	if code != 0 {
		t.Fatalf("replay: exit %d, stderr %s", code, errs)
	}
	if !strings.Contains(out, "Query OK, 0 rows affected\nNote (Code ") || !strings.Contains(out, "| 3 |") {
		t.Errorf("replay: stdout %q, want a warning and 3 rows", out)
	}
}

func TestSplitStatements(t *testing.T) {
	src := "SELECT 1;\n-- c;\nSELECT ';' # x;\n, \"a\\\";\" /* ; */;\n\nSELECT `a;b`\nFROM t; SELECT 'open;"
	stmts, rest := splitStatements(src)
	var got []statement
	for _, s := range stmts {
		got = append(got, statement{text: s.text, line: s.line})
	}
	want := []statement{
		{text: "SELECT 1", line: 1},
		{text: "SELECT ';'  \n, \"a\\\";\"", line: 3},
		{text: "SELECT `a;b`\nFROM t", line: 6},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(statement{})); diff != "" {
		t.Errorf("statements (-want +got):\n%s", diff)
	}
	if rest.raw != " SELECT 'open;" || rest.line != 7 {
		t.Errorf("rest = %+v", rest)
	}
}

// TestREPLInteractive drives the interactive loop directly (stdin in the
// tests is not a terminal).
func TestREPLInteractive(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"--data", dir, "-e", replSetup}, strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatal(errb.String())
	}
	out.Reset()
	r, closeREPL := newTestREPL(t, dir, &out, &errb)
	in := "\\timing\nINSERT INTO orders\n  VALUES (1, 1, 'x');\n\\timing\nSELECT id\nFROM orders;\nquit\nSELECT 'not run';\n"
	if code := r.interactive(strings.NewReader(in)); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got := out.String()
	for _, want := range []string{"lakesql> Timing is on.\nlakesql>      -> Query OK, 1 row affected\n(",
		" sec)\n\nlakesql> Timing is off.\nlakesql>      -> +----+\n| id |", "1 row in set\n\nlakesql> "} {
		if !strings.Contains(got, want) {
			t.Errorf("output %q does not contain %q", got, want)
		}
	}
	if strings.Contains(got, "not run") {
		t.Error("statements after quit ran")
	}
	hist, err := os.ReadFile(filepath.Join(dir, historyFile))
	if err != nil {
		t.Fatal(err)
	}
	wantHist := "INSERT INTO orders VALUES (1, 1, 'x')\nSELECT id FROM orders\n"
	if diff := cmp.Diff(wantHist, string(hist)); diff != "" {
		t.Errorf("history file (-want +got):\n%s", diff)
	}
	// A new session reads the history back.
	closeREPL()
	out.Reset()
	r, _ = newTestREPL(t, dir, &out, &errb)
	r.interactive(strings.NewReader("\\history\n"))
	if !strings.Contains(out.String(), "    2  SELECT id FROM orders\n") {
		t.Errorf("\\history: %q", out.String())
	}
}

func newTestREPL(t *testing.T, dir string, stdout, stderr io.Writer) (*repl, func()) {
	t.Helper()
	e, err := planner.Open(context.Background(), planner.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	s := e.NewSession()
	var once sync.Once
	closeREPL := func() { once.Do(func() { s.Close(); e.Close() }) }
	t.Cleanup(closeREPL)
	return &repl{ctx: context.Background(), engine: e, session: s, stdout: stdout, stderr: stderr, dataDir: dir}, closeREPL
}

// syncWriter signals the first write.
type syncWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf.Len() == 0 {
		close(w.wrote)
	}
	return w.buf.Write(p)
}

func TestProgress(t *testing.T) {
	w := &syncWriter{wrote: make(chan struct{})}
	withProgress(w, "COMMIT", time.Millisecond, time.Millisecond, func() {
		select {
		case <-w.wrote:
		case <-time.After(10 * time.Second):
			t.Error("no progress line while the statement ran")
		}
	})
	if !strings.HasPrefix(w.buf.String(), "COMMIT still running (") {
		t.Errorf("progress %q", w.buf.String())
	}
	// A fast statement prints nothing.
	var quiet bytes.Buffer
	withProgress(&quiet, "COMMIT", time.Hour, time.Hour, func() {})
	if quiet.Len() != 0 {
		t.Errorf("fast statement printed %q", quiet.String())
	}
}

// TestInterrupt: a Ctrl-C while a statement runs aborts it with ERROR 1317;
// the REPL goes on.
func TestInterrupt(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	r, _ := newTestREPL(t, dir, &out, &errb)
	r.interrupts = func() (<-chan os.Signal, func()) {
		ch := make(chan os.Signal, 1)
		ch <- os.Interrupt // pressed as the statement starts
		return ch, func() {}
	}
	start := time.Now()
	if r.run("SELECT SLEEP(30)", 0) {
		t.Fatal("an interrupted statement succeeded")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the interrupted statement ran %v", d)
	}
	if want := "^C -- query aborted\nERROR 1317 (70100): Query execution was interrupted\n"; errb.String() != want {
		t.Errorf("stderr %q, want %q", errb.String(), want)
	}
	r.interrupts = nil
	if !r.run("SELECT 1", 0) {
		t.Errorf("the session is unusable after an interrupt: %s", errb.String())
	}
}

// Values show as the mysql client shows them: a DATE without a time, a
// DATETIME(p) with p fractional digits, a DECIMAL with its scale.
func TestREPLTypedValues(t *testing.T) {
	code, out, errs := runREPL(t, "", "--data", t.TempDir(), "-e", `
		CREATE SINK v INTO DELTA 'lake/v' (d DATE, ts DATETIME(6), t0 DATETIME, n DECIMAL(10,2));
		INSERT INTO v VALUES ('2024-01-02', '2024-01-02 03:04:05', '2024-01-02 03:04:05', 3.1);
		SELECT d, ts, t0, n FROM v`)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	want := "| 2024-01-02 | 2024-01-02 03:04:05.000000 | 2024-01-02 03:04:05 | 3.10 |"
	if !strings.Contains(out, want) {
		t.Errorf("stdout %s\nwant a row %s", out, want)
	}
}

// TestREPLHistoryMasksSecrets: the history file and \history keep a
// statement with its secrets masked, the rest as typed; a history file
// from before masking is masked when \history prints it.
func TestREPLHistoryMasksSecrets(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	old := "CREATE SINK old INTO DELTA 's3://b/o' (id INT) WITH (storage.secret_access_key = 'old-secret-1')\n"
	if err := os.WriteFile(filepath.Join(dir, historyFile), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	r, _ := newTestREPL(t, dir, &out, &errb)
	in := "CREATE SINK s3s INTO DELTA 's3://nobucket/x' (id INT)\n  WITH (storage.endpoint = 'http://u:proxy-pw-2@127.0.0.1:1', storage.access_key_id = 'AKIA', storage.secret_access_key = 'new-secret-3');\n" +
		"SELECT 'kept' /* password=pw-in-comment-4 */;\n\\history\n"
	r.interactive(strings.NewReader(in))
	hist, err := os.ReadFile(filepath.Join(dir, historyFile))
	if err != nil {
		t.Fatal(err)
	}
	wantHist := old + "CREATE SINK s3s INTO DELTA 's3://nobucket/x' (id INT) WITH (storage.endpoint = 'http://u:****@127.0.0.1:1', storage.access_key_id = '****', storage.secret_access_key = '****')\n" +
		"SELECT 'kept' /* password=**** */\n"
	if diff := cmp.Diff(wantHist, string(hist)); diff != "" {
		t.Errorf("history file (-want +got):\n%s", diff)
	}
	for _, s := range []string{"old-secret-1", "proxy-pw-2", "new-secret-3", "pw-in-comment-4"} {
		if strings.Contains(out.String(), s) || strings.Contains(errb.String(), s) {
			t.Errorf("the REPL printed %s:\n%s\n%s", s, out.String(), errb.String())
		}
	}
	if !strings.Contains(out.String(), "    1  CREATE SINK old INTO DELTA 's3://b/o' (id INT) WITH (storage.secret_access_key = '****')\n") {
		t.Errorf("\\history: %q", out.String())
	}
}
