package sinkddl

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/internal/datadriven"
	"github.com/lakesql/lakesql/internal/sqlword"
)

// arrowEqual compares Arrow types by meaning: TimestampType has unexported
// fields that cmp cannot look into.
var arrowEqual = cmp.Comparer(func(a, b arrow.DataType) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return arrow.TypeEqual(a, b)
})

// checkRoundTrip checks that a parsed statement renders SQL that parses back
// to an equal statement, and that rendering is then stable.
func checkRoundTrip(t testing.TB, stmt Statement) {
	t.Helper()
	text := stmt.String()
	again, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse(String()) of %#v: %v\nString() = %q", stmt, err, text)
	}
	if d := cmp.Diff(stmt, again, arrowEqual); d != "" {
		t.Fatalf("Parse(String()) differs (-first +again):\n%s\nString() = %q", d, text)
	}
	if again.String() != text {
		t.Fatalf("String() is not stable: %q then %q", text, again.String())
	}
}

// checkPosition checks that an error points into the statement, at the text
// it quotes.
func checkPosition(t testing.TB, sql string, err error) {
	t.Helper()
	pos, near := 0, ""
	var syn *SyntaxError
	var def *DefinitionError
	switch {
	case errors.As(err, &syn):
		pos, near = syn.Pos, syn.Near
	case errors.As(err, &def):
		pos, near = def.Pos, def.Near
		if near == "" {
			t.Errorf("Parse(%q): a definition error near nothing: %v", sql, err)
		}
	default:
		t.Fatalf("Parse(%q) = %T %v, want *SyntaxError or *DefinitionError", sql, err, err)
	}
	if pos < 1 || pos > len(sql)+1 {
		t.Fatalf("Parse(%q): position %d outside the statement: %v", sql, pos, err)
	}
	if near == "" {
		if rest, ok := sqlword.SkipBlank(sql, pos-1); ok && rest != len(sql) {
			t.Errorf("Parse(%q): error at end of input, but input follows position %d: %v", sql, pos, err)
		}
		return
	}
	if strings.HasPrefix(near, `\x`) { // invalid UTF-8 is quoted as \xNN
		return
	}
	if !strings.HasPrefix(sql[pos-1:], strings.TrimSuffix(near, "...")) {
		t.Errorf("Parse(%q): near %q is not the text at position %d: %v", sql, near, pos, err)
	}
}

// TestTypeTable checks that every row of the documented table does what it
// says: accepted examples parse to the row's Arrow type, refused ones fail
// with ErrUnsupportedType naming the column and the type.
func TestTypeTable(t *testing.T) {
	rows := MySQLTypeTable()
	if len(rows) != len(typeRules) {
		t.Fatalf("MySQLTypeTable has %d rows, typeRules %d", len(rows), len(typeRules))
	}
	for _, row := range rows {
		if row.MySQL == "" || row.Example == "" {
			t.Errorf("row %+v lacks its MySQL spelling or example", row)
		}
		sql := "CREATE SINK s INTO DELTA 'x' (c " + row.Example + ")"
		stmt, err := Parse(sql)
		if row.Arrow == nil {
			if row.Notes == "" || row.ArrowName != "" || row.Delta != "" || row.Iceberg != "" {
				t.Errorf("refused row %q: want notes and no types, got %+v", row.MySQL, row)
			}
			if !errors.Is(err, ErrUnsupportedType) {
				t.Errorf("%s: got %v, want ErrUnsupportedType", row.Example, err)
				continue
			}
			typeName, _, _ := strings.Cut(row.Example, "(")
			if msg := err.Error(); !strings.Contains(msg, `column "c"`) || !strings.Contains(msg, typeName) {
				t.Errorf("%s: error %q does not name the column and the type", row.Example, msg)
			}
			continue
		}
		if row.ArrowName == "" || row.Delta == "" || row.Iceberg == "" {
			t.Errorf("row %q lacks a type name: %+v", row.MySQL, row)
		}
		if err != nil {
			t.Errorf("%s: %v", row.Example, err)
			continue
		}
		if got := stmt.(*CreateSink).Columns[0].Type; !arrow.TypeEqual(got, row.Arrow) {
			t.Errorf("%s parses to %v, the table says %v", row.Example, got, row.Arrow)
		}
	}
	// The caller owns the slice.
	rows[0].MySQL = "changed"
	if MySQLTypeTable()[0].MySQL == "changed" {
		t.Error("MySQLTypeTable returns shared rows")
	}
}

func FuzzParse(f *testing.F) {
	for _, c := range datadriven.ReadFiles(f, "testdata/*.txt") {
		f.Add(c.Input)
	}
	for _, row := range MySQLTypeTable() {
		f.Add("CREATE SINK s INTO DELTA 'x' (c " + row.Example + " NOT NULL PRIMARY KEY COMMENT 'k')")
	}
	f.Fuzz(func(t *testing.T, sql string) {
		claimed := IsLakesqlStatement(sql)
		stmt, err := Parse(sql)
		if err != nil {
			_ = err.Error()
			checkPosition(t, sql, err)
			return
		}
		if !claimed {
			t.Fatalf("Parse(%q) succeeds but IsLakesqlStatement says it is not ours", sql)
		}
		checkRoundTrip(t, stmt)
	})
}
