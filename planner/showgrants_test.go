package planner

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A REPL or driver session has no user: it is the data directory's owner.
func TestShowGrantsEmbedded(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	res := te.exec(s, "SHOW GRANTS")
	if diff := cmp.Diff([]string{"Grants for root@localhost"}, res.Columns); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]any{{"GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost`"}}, res.Rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	err := te.fails(s, "SHOW GRANTS FOR bob", "There is no such grant defined for user 'bob' on host '%'")
	if e := MySQLError(err); e.Num != 1141 || e.State != "42000" {
		t.Errorf("SHOW GRANTS FOR bob: %d (%s), want 1141 (42000)", e.Num, e.State)
	}
}
