package planner

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/sinkddl"
)

// The README's type table is rendered from MySQLTypeTable, so that the
// documentation says what the parser does. LAKESQL_UPDATE_README=1
// rewrites it in place.
const (
	typeTableBegin = "<!-- type table: generated from planner.MySQLTypeTable by TestREADMETypeTable -->\n"
	typeTableEnd   = "<!-- end of type table -->\n"
)

func renderTypeTable() string {
	var b strings.Builder
	b.WriteString("| MySQL type | Arrow | Delta | Iceberg | notes |\n| --- | --- | --- | --- | --- |\n")
	for _, m := range sinkddl.MySQLTypeTable() {
		arrowName, delta, iceberg := m.ArrowName, m.Delta, m.Iceberg
		if m.Arrow == nil {
			arrowName, delta, iceberg = "refused", "", ""
		}
		b.WriteString("| " + strings.Join([]string{m.MySQL, arrowName, delta, iceberg, m.Notes}, " | ") + " |\n")
	}
	return b.String()
}

func TestREADMETypeTable(t *testing.T) {
	const path = "../README.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i := strings.Index(doc, typeTableBegin)
	j := strings.Index(doc, typeTableEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no type table between %q and %q", typeTableBegin, typeTableEnd)
	}
	got, want := doc[i+len(typeTableBegin):j], renderTypeTable()
	if got == want {
		return
	}
	if os.Getenv("LAKESQL_UPDATE_README") == "1" {
		doc = doc[:i+len(typeTableBegin)] + want + doc[j:]
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's type table is stale (LAKESQL_UPDATE_README=1 rewrites it) (-want +got):\n%s", cmp.Diff(want, got))
}
