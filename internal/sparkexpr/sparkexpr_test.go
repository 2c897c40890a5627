package sparkexpr

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
)

var cols = Columns([]string{"id", "Name", "ts", "amount", "weird \"col`"})

func TestTranslate(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"id > 0", `("id" > 0)`},
		{"ID >= 1 AND name IS NOT NULL", `(("id" >= 1) AND ("Name" IS NOT NULL))`},
		{"id <=> 3", `("id" IS NOT DISTINCT FROM 3)`},
		{"id == 1 or id != 2", `(("id" = 1) OR ("id" <> 2))`},
		{"`weird \"col``` = 'it\\'s'", `("weird ""col` + "`" + `" = 'it''s')`},
		{"name LIKE 'a\\_%'", `("Name" LIKE 'a\_%' ESCAPE '\')`},
		{"id NOT IN (1, 2)", `("id" NOT IN (1, 2))`},
		{"amount BETWEEN 1.5 AND 10L", `("amount" BETWEEN 1.5 AND CAST('10' AS BIGINT))`},
		{"CAST(ts AS DATE)", `TRY_CAST("ts" AS DATE)`},
		{"cast(amount as decimal(10, 2)) > 0", `(TRY_CAST("amount" AS DECIMAL(10, 2)) > 0)`},
		{"concat(name, 'x')", `("Name" || 'x')`},
		{"CASE WHEN id > 1 THEN 'a' ELSE 'b' END = 'a'", `((CASE WHEN ("id" > 1) THEN 'a' ELSE 'b' END) = 'a')`},
		{"NOT (id < -1)", `(NOT (("id" < (- 1))))`},
		{"year(ts) * 100 + month(ts)", `((year("ts") * 100) + month("ts"))`},
		{"ts > TIMESTAMP '2020-01-01 00:00:00'", `("ts" > CAST('2020-01-01 00:00:00' AS TIMESTAMPTZ))`},
	} {
		got, err := Translate(c.in, cols)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got.SQL != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got.SQL, c.want)
		}
	}
}

func TestRefused(t *testing.T) {
	for _, in := range []string{
		"", "id > ", "nope > 1", "id > 0; DROP TABLE x", "id > 0) OR (1", "(SELECT 1)",
		"exists(id)", "a.b > 1", "id > 0 -- comment", "'unterminated", "id IS 3", "CAST(id AS struct)",
		"rand() > 0.5", "id NOT 3", "CASE END", strings.Repeat("(", 200) + "1" + strings.Repeat(")", 200),
		strings.Repeat("NOT ", 200) + "true", strings.Repeat("- ", 200) + "1", "1x > 0", "1.2.3 = 1",
	} {
		if got, err := Translate(in, cols); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%q: got %q, %v; want ErrUnsupported", in, got.SQL, err)
		}
	}
}

func TestColumns(t *testing.T) {
	got, err := Translate("id > 0 AND ID < amount AND name <> ''", cols)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Columns, ",") != "id,amount,Name" {
		t.Fatalf("columns %q", got.Columns)
	}
}

// TestDuckDBAgrees evaluates translations in DuckDB against what Spark
// gives for the same expressions.
func TestDuckDBAgrees(t *testing.T) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	row := Columns([]string{"i", "s", "n"})
	from := ` FROM (SELECT 7 AS i, 'Abc' AS s, CAST(NULL AS INTEGER) AS n)`
	for _, c := range []struct {
		in   string
		want string // as DuckDB prints it; Spark gives the same
	}{
		{"i / 2", "3.5"},
		{"i % 3", "1"},
		{"-i % 3", "-1"},
		{"concat(s, n)", "<nil>"},
		{"n <=> NULL", "true"},
		{"n = NULL", "<nil>"},
		{"upper(s) || lower(s)", "ABCabc"},
		{"length(s)", "3"},
		{"coalesce(n, i)", "7"},
		{"CAST('x' AS INT)", "<nil>"},
		{"s LIKE 'A_c'", "true"},
		{"i IN (1, 7)", "true"},
	} {
		tr, err := Translate(c.in, row)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		var v any
		if err := db.QueryRow("SELECT " + tr.SQL + from).Scan(&v); err != nil {
			t.Fatalf("%s (%s): %v", c.in, tr.SQL, err)
		}
		if got := fmtAny(v); got != c.want {
			t.Errorf("%s = %s, want %s", c.in, got, c.want)
		}
	}
}

func fmtAny(v any) string {
	if v == nil {
		return "<nil>"
	}
	switch x := v.(type) {
	case []byte:
		return string(x)
	}
	return strings.TrimSpace(strings.ReplaceAll(strings.TrimSpace(sprint(v)), "\n", ""))
}

func sprint(v any) string { return fmt.Sprint(v) }
