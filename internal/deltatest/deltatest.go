// Package deltatest holds checks that tests of several layers make on the
// Delta tables lakesql writes.
package deltatest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
