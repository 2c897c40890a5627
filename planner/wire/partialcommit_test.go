package wire

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/internal/deltatest"
)

// blockNextCommit makes the next commit of the Delta table at dir fail:
// its next log entry is taken by a folder. The returned func lifts it.
func blockNextCommit(t *testing.T, dir string) func() {
	t.Helper()
	next := filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", deltatest.Versions(t, dir)))
	if err := os.Mkdir(next, 0o755); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := os.Remove(next); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPartialCommitSaysHowToFinish: a COMMIT over two sinks whose second
// sink fails leaves the first committed; the error (with the failure's
// own code) names the committed sink with its table version, the one not
// committed, and how to finish. With a named epoch, running the same
// transaction again with the same SET lakesql_epoch finishes it: each
// sink then holds its rows exactly once. Without one, the error says to
// run again only what wrote to the sink not committed.
func TestPartialCommitSaysHowToFinish(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir, testPassword)
	db := ts.db(testPassword)
	ctx := context.Background()
	mustExec(t, db, "CREATE SINK pa INTO DELTA 'pa' (id BIGINT NOT NULL)")
	mustExec(t, db, "CREATE SINK pb INTO DELTA 'pb' (id BIGINT NOT NULL)")
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The code a failing commit of one sink gets, which the partial
	// COMMIT keeps.
	lift := blockNextCommit(t, filepath.Join(dir, "pb"))
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "INSERT INTO pb VALUES (0)")
	_, single := c.ExecContext(ctx, "COMMIT")
	if single == nil {
		t.Fatal("a COMMIT whose log entry could not be written succeeded")
	}

	tx := []string{"SET lakesql_epoch = 7", "BEGIN", "INSERT INTO pa VALUES (1), (2)", "INSERT INTO pb VALUES (1), (2)", "COMMIT"}
	for _, q := range tx[:4] {
		mustExec(t, c, q)
	}
	_, err = c.ExecContext(ctx, "COMMIT")
	if err == nil {
		t.Fatal("COMMIT succeeded although pb's log entry could not be written")
	}
	if mysqlCode(err) != mysqlCode(single) {
		t.Errorf("partial COMMIT: code %d, want %d as a one-sink failure", mysqlCode(err), mysqlCode(single))
	}
	for _, want := range []string{"sink pb: ", "Committed: pa (table version 1, epoch 7)", "not committed (rolled back): pb",
		"run the same transaction again after SET lakesql_epoch = 7"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("partial COMMIT error does not say %q:\n%v", want, err)
		}
	}
	lift()
	for _, q := range tx {
		mustExec(t, c, q)
	}
	for _, s := range []string{"pa", "pb"} {
		if diff := cmp.Diff([]int64{1, 2}, ids(t, db, s)); diff != "" {
			t.Errorf("%s after the replay (-want +got):\n%s", s, diff)
		}
	}

	// Automatic epochs: a replay of the whole transaction would write pa
	// twice, so the error says what to run again instead.
	lift = blockNextCommit(t, filepath.Join(dir, "pb"))
	mustExec(t, c, "BEGIN")
	mustExec(t, c, "INSERT INTO pa VALUES (3)")
	mustExec(t, c, "INSERT INTO pb VALUES (3)")
	_, err = c.ExecContext(ctx, "COMMIT")
	for _, want := range []string{"Committed: pa (table version 2, epoch 8)", "not committed (rolled back): pb",
		"run again only the statements that wrote to pb"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("partial COMMIT with automatic epochs does not say %q:\n%v", want, err)
		}
	}
	lift()
	mustExec(t, c, "INSERT INTO pb VALUES (3)")
	for _, s := range []string{"pa", "pb"} {
		if diff := cmp.Diff([]int64{1, 2, 3}, ids(t, db, s)); diff != "" {
			t.Errorf("%s at the end (-want +got):\n%s", s, diff)
		}
	}
}
