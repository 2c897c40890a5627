// Package deltatest holds checks that tests of several layers make on the
// Delta tables lakesql writes.
package deltatest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakesql/lakesql/tableformat/delta"
)

// Versions counts the commit files in a table's Delta log: how many table
// versions the tests' transactions made.
func Versions(t testing.TB, table string) int {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(table, "_delta_log"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") && !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	return n
}

// TxnVersion reads the latest snapshot of a table and returns the last
// epoch (txn version) it records for the application appID.
func TxnVersion(t testing.TB, table, appID string) (int64, bool) {
	t.Helper()
	store, err := delta.NewLocalStorage(table)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := delta.NewTable(store).Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return snap.TxnVersion(appID)
}
