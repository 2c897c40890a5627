package planner

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gms "github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/lakesql/lakesql/internal/deltatest"
)

// deltaActions returns the action kinds (add, metaData, ...) of one
// version of a Delta table's log, and the metaData's schemaString.
func deltaActions(t *testing.T, table string, version int) (kinds map[string]int, schema string) {
	t.Helper()
	f, err := os.Open(filepath.Join(table, "_delta_log", fmt.Sprintf("%020d.json", version)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kinds = map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var action map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &action); err != nil {
			t.Fatal(err)
		}
		for k, v := range action {
			kinds[k]++
			if k == "metaData" {
				var md struct {
					SchemaString string `json:"schemaString"`
				}
				if err := json.Unmarshal(v, &md); err != nil {
					t.Fatal(err)
				}
				schema = md.SchemaString
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return kinds, schema
}

// The columns an INSERT adds land in the version of its rows: one log
// entry holds the metaData action with the new schema and the add actions.
// A rolled-back INSERT writes no version.
func TestInsertEvolvesInTheDataCommit(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, "CREATE SINK ev INTO DELTA 'lake/ev' (id BIGINT NOT NULL) WITH (schema_evolution = 'add_columns')")
	te.exec(s, "INSERT INTO ev VALUES (1)")
	table := filepath.Join(te.dir, "lake", "ev")
	before := deltatest.Versions(t, table)

	te.exec(s, "BEGIN")
	te.exec(s, "INSERT INTO ev (id, gone) VALUES (2, 'x')")
	te.exec(s, "ROLLBACK")
	if v := deltatest.Versions(t, table); v != before {
		t.Fatalf("a rolled-back INSERT wrote versions: %d, want %d", v, before)
	}

	te.exec(s, "BEGIN")
	te.exec(s, "INSERT INTO ev (id, note) VALUES (2, 'x')")
	te.exec(s, "INSERT INTO ev (id, note, amount) VALUES (3, 'y', 2.50)")
	te.exec(s, "COMMIT")
	if v := deltatest.Versions(t, table); v != before+1 {
		t.Fatalf("the transaction made %d versions, want 1", v-before)
	}
	kinds, schema := deltaActions(t, table, before)
	if kinds["metaData"] != 1 || kinds["add"] == 0 {
		t.Fatalf("version %d holds actions %v, want one metaData beside the adds", before, kinds)
	}
	for _, col := range []string{`"name":"note","type":"string"`, `"name":"amount","type":"decimal(3,2)"`} {
		if !strings.Contains(schema, col) {
			t.Errorf("the new schema %s lacks %s", schema, col)
		}
	}
	if strings.Contains(schema, "gone") {
		t.Errorf("the rolled-back column is in the schema: %s", schema)
	}
	got := te.rows(te.session(), "SELECT id, note FROM ev ORDER BY id")
	if fmt.Sprint(got) != "[[1 <nil>] [2 x] [3 y]]" {
		t.Errorf("rows %v", got)
	}
}

func TestInferColumn(t *testing.T) {
	cases := []struct{ values, want string }{
		{"(1), (-20)", "int64"},
		{"(1.5), (-12.125)", "decimal(5, 3)"},
		{"(123), (0.5)", "decimal(4, 1)"},
		{"(99999999999999999999)", "decimal(20, 0)"},
		{"(1e3), (2)", "float64"},
		{"(1.5), (NULL), (2e0)", "float64"},
		{"('a'), (NULL)", "utf8"},
		{"(TRUE), (FALSE)", "bool"},
		{"(NULL)", "error: all NULL"},
		{"(1), ('a')", "error: mix an integer and a string"},
		{"(TRUE), (1)", "error: mix a boolean and an integer"},
		{"(NOW())", "error: not a literal"},
	}
	for _, c := range cases {
		st, err := gms.GlobalParser.ParseSimple("INSERT INTO s (x) VALUES " + c.values)
		if err != nil {
			t.Fatal(err)
		}
		typ, err := inferColumn(st.(*ast.Insert), 0)
		got := ""
		if err != nil {
			got = "error: " + err.Error()
		} else {
			got = typ.String()
		}
		if want, isErr := strings.CutPrefix(c.want, "error: "); isErr {
			if err == nil || !strings.Contains(got, want) {
				t.Errorf("%s: %s, want an error with %q", c.values, got, want)
			}
		} else if got != c.want {
			t.Errorf("%s: %s, want %s", c.values, got, c.want)
		}
	}
}
