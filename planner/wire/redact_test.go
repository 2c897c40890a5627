package wire

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
)

func TestRedactLiterals(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT 1":                             "SELECT 1",
		"CALL p('a', 'it''s', \"x\")":          "CALL p('***', '***', '***')",
		`SELECT 'a\'b', c FROM t`:              `SELECT '***', c FROM t`,
		"SELECT `col'name` FROM t":             "SELECT `col'name` FROM t",
		"WITH (storage.secret_access_key = 's": "WITH (storage.secret_access_key = '***'",
		"SELECT `a``b`, 'x'":                   "SELECT `a``b`, '***'",
		"SELECT `open":                         "SELECT `open",
		"":                                     "",
	} {
		if got := redactLiterals(in); got != want {
			t.Errorf("redactLiterals(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPrepareFailureLogRedacted: a statement that fails to prepare is
// logged by go-mysql-server with its text; the server's log shows it
// without its string literals.
func TestPrepareFailureLogRedacted(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	var buf bytes.Buffer
	std := logrus.StandardLogger()
	out := std.Out
	std.SetOutput(&buf)
	t.Cleanup(func() { std.SetOutput(out) })
	db := ts.preparedDB()
	_, err := db.PrepareContext(context.Background(), "SELECT 'hunter2-secret' FROM no_such_table WHERE id = ?")
	if err == nil {
		t.Fatal("preparing a SELECT from a missing table succeeded")
	}
	logged := buf.String()
	if !strings.Contains(logged, "unable to prepare query") {
		t.Fatalf("go-mysql-server did not log the failed prepare (the test checks nothing):\n%s", logged)
	}
	if strings.Contains(logged, "hunter2-secret") || !strings.Contains(logged, "'***'") {
		t.Errorf("the log shows the literal or no redaction:\n%s", logged)
	}
}
