package wire

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/tableformat/delta"
)

// nestedSchema is a Delta table with a struct, a list and a map column,
// whose leaves cover the values JSON text must carry exactly.
const nestedSchema = `{"type":"struct","fields":[
 {"name":"id","type":"long","nullable":false,"metadata":{}},
 {"name":"s","type":{"type":"struct","fields":[
   {"name":"n","type":"long","nullable":true,"metadata":{}},
   {"name":"d","type":"decimal(20,6)","nullable":true,"metadata":{}},
   {"name":"ts","type":"timestamp","nullable":true,"metadata":{}},
   {"name":"bin","type":"binary","nullable":true,"metadata":{}},
   {"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}}
 ]},"nullable":true,"metadata":{}},
 {"name":"l","type":{"type":"array","elementType":"integer","containsNull":true},"nullable":true,"metadata":{}},
 {"name":"m","type":{"type":"map","keyType":"string","valueType":"double","valueContainsNull":true},"nullable":true,"metadata":{}},
 {"name":"plain","type":"string","nullable":true,"metadata":{}}
]}`

func createNestedTable(t *testing.T, dir string) {
	t.Helper()
	schema, err := delta.ParseSchema(nestedSchema)
	if err != nil {
		t.Fatal(err)
	}
	store, err := delta.NewLocalStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := delta.Create(context.Background(), store, delta.CreateOptions{Schema: schema}); err != nil {
		t.Fatal(err)
	}
}

// TestNestedColumnsAsJSON: struct, list and map columns are read and
// written over the wire as JSON text, exactly (int64 extremes, decimals,
// timestamps, binary as base64, NULLs at every level); a column that is not
// selected never matters; bad JSON is refused with 1366 and nothing lands;
// information_schema keeps answering.
func TestNestedColumnsAsJSON(t *testing.T) {
	dir := t.TempDir()
	createNestedTable(t, filepath.Join(dir, "lake", "nested"))
	ts := startServer(t, dir, testPassword)
	db := ts.db(testPassword)
	ctx := context.Background()
	mustExec(t, db, "CREATE SINK n INTO DELTA 'lake/nested'")

	rows := [][2]string{
		{`{"n": 9223372036854775807, "d": 12345678901234.123456, "ts": "2024-06-15 10:20:30.000001", "bin": "AP8nXA==", "tags": ["a", null, "it's \"q\" 😀"]}`,
			`[1, null, -2147483648]`},
		{`{"n": -9223372036854775808, "d": null, "ts": null, "bin": null, "tags": []}`, `[]`},
		{`null`, `null`},
	}
	maps := []string{`{"b": 1.5, "a": null}`, `{}`, `null`}
	for i, r := range rows {
		var s, l, m any = r[0], r[1], maps[i]
		if r[0] == "null" {
			s, l, m = nil, nil, nil
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO n (id, s, l, m, plain) VALUES (?, ?, ?, ?, 'p')", i, s, l, m); err != nil {
			t.Fatalf("insert row %d: %v", i, err)
		}
	}

	type row struct {
		ID      int64
		S, L, M sql.NullString
	}
	var got []row
	rs, err := db.QueryContext(ctx, "SELECT id, s, l, m FROM n ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		var r row
		if err := rs.Scan(&r.ID, &r.S, &r.L, &r.M); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	str := func(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
	want := []row{
		{0, str(rows[0][0]), str(rows[0][1]), str(maps[0])},
		{1, str(rows[1][0]), str(rows[1][1]), str(maps[1])},
		{2, sql.NullString{}, sql.NullString{}, sql.NullString{}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("nested values read back (-want +got):\n%s", diff)
	}

	// Columns not selected, and metadata, never trip on nested types.
	if n := count(t, db, "SELECT count(*) FROM n WHERE plain = 'p'"); n != 3 {
		t.Errorf("count of plain: %d, want 3", n)
	}
	var colType string
	if err := db.QueryRowContext(ctx, "SELECT COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_NAME = 'n' AND COLUMN_NAME = 's'").Scan(&colType); err != nil {
		t.Fatalf("information_schema.COLUMNS: %v", err)
	}
	if colType != "longtext" {
		t.Errorf("COLUMN_TYPE of s = %q, want longtext", colType)
	}

	for _, bad := range []struct{ col, val string }{
		{"s", `{"n": 1, "nosuch": 2}`},                 // a field the struct does not have
		{"s", `{"n": "x"}`},                            // not a long
		{"s", `{"n": 9223372036854775808}`},            // beyond long
		{"l", `[1, 2`},                                 // not JSON
		{"l", `{"a": 1}`},                              // an object for a list
		{"m", `{"a": "one"}`},                          // not a double
		{"s", `{"n": 1, "n": 2}`},                      // a key twice
		{"l", `[1] [2]`},                               // text after the value
		{"s", `{"ts": "2024-13-45 99:00:00"}`},         // not a timestamp
		{"s", `{"bin": "not base64!"}`},                // not base64
		{"s", `{"d": 123456789012345678901234567890}`}, // beyond decimal(20,6)
	} {
		_, err := db.ExecContext(ctx, "INSERT INTO n (id, "+bad.col+") VALUES (9, ?)", bad.val)
		if code := mysqlCode(err); code != 1366 {
			t.Errorf("INSERT %s = %s: error %v (code %d), want 1366", bad.col, bad.val, err, code)
		}
	}
	if n := count(t, db, "SELECT count(*) FROM n"); n != 3 {
		t.Errorf("rows after refused inserts: %d, want 3", n)
	}
}

// TestNestedGoldenTables reads Spark's tables with map, array and struct
// columns through SQL over the wire: each nested column of every row, as
// JSON, equals the table's expected rows (kept beside it as Parquet) as
// DuckDB's to_json renders them.
func TestNestedGoldenTables(t *testing.T) {
	golden := filepath.Join("..", "..", "..", "shared", "testdata", "delta", "golden")
	if _, err := os.Stat(golden); err != nil {
		t.Skipf("SKIP (loudly): the shared test data is absent (%s): %v", golden, err)
	}
	dir := t.TempDir()
	tables := []string{"data-reader-map", "data-reader-array-primitives", "data-reader-array-complex-objects"}
	for _, name := range tables {
		cmd := exec.Command("tar", "--zstd", "-xf", filepath.Join(golden, name+".tar.zst"), "-C", dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("unpack %s: %v\n%s", name, err, out)
		}
	}
	duck, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer duck.Close()
	ts := startServer(t, dir, testPassword)
	db := ts.db(testPassword)
	for i, name := range tables {
		sink := fmt.Sprintf("g%d", i)
		mustExec(t, db, "CREATE SINK "+sink+" INTO DELTA '"+name+"/delta'")
		expected := filepath.Join(dir, name, "expected", "*.parquet")
		var nested []string
		desc, err := duck.Query("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('" + expected + "'))")
		if err != nil {
			t.Fatal(err)
		}
		for desc.Next() {
			var c, typ string
			if err := desc.Scan(&c, &typ); err != nil {
				t.Fatal(err)
			}
			if strings.ContainsAny(typ, "[(") && !strings.HasPrefix(typ, "DECIMAL") && !strings.Contains(typ, "BLOB") {
				nested = append(nested, c)
			}
		}
		desc.Close()
		if len(nested) == 0 {
			t.Fatalf("%s: no nested columns in the expected rows", name)
		}
		var ours, theirs []string
		for _, c := range nested {
			ours = append(ours, "`"+c+"`")
			theirs = append(theirs, `CAST(to_json("`+c+`") AS VARCHAR)`)
		}
		got := jsonRows(t, db, "SELECT "+strings.Join(ours, ", ")+" FROM "+sink)
		want := jsonRows(t, duck, "SELECT "+strings.Join(theirs, ", ")+" FROM read_parquet('"+expected+"')")
		if len(want) == 0 {
			t.Fatalf("%s: no expected rows", name)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: columns %v (-expected +lakesql):\n%s", name, nested, diff)
		}
	}
}

// jsonRows returns each row's values parsed as JSON (NULL as nil), the rows
// sorted by their text, so that two readers' rows compare in any order.
func jsonRows(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	var out []string
	for _, r := range textRows(t, db, q) {
		vals := make([]any, len(r))
		for i, v := range r {
			if v == "NULL" {
				continue
			}
			if err := json.Unmarshal([]byte(v), &vals[i]); err != nil {
				t.Fatalf("%s: value %q is not JSON: %v", q, v, err)
			}
		}
		b, err := json.Marshal(vals)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	sort.Strings(out)
	return out
}

// TestUnreadableSinkKeepsMetadata: a sink whose table is gone is still
// listed by information_schema and SHOW TABLES, with its declared columns,
// while reading or writing it fails with 1146 and the other sinks work.
func TestUnreadableSinkKeepsMetadata(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir, testPassword)
	db := ts.db(testPassword)
	mustExec(t, db, "CREATE SINK a INTO DELTA 'lake/a' (id BIGINT)")
	mustExec(t, db, "CREATE SINK b INTO DELTA 'lake/b' (id BIGINT, v VARCHAR(8))")
	mustExec(t, db, "INSERT INTO a VALUES (1)")
	ts.stop()
	if err := os.RemoveAll(filepath.Join(dir, "lake", "b")); err != nil {
		t.Fatal(err)
	}
	ts = startServer(t, dir, testPassword)
	db = ts.db(testPassword)
	got := textRows(t, db, "SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'lakesql' ORDER BY TABLE_NAME, ORDINAL_POSITION")
	want := [][]string{{"a", "id"}, {"b", "id"}, {"b", "v"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("information_schema.COLUMNS (-want +got):\n%s", diff)
	}
	if got := textRows(t, db, "SHOW TABLES"); len(got) != 2 {
		t.Errorf("SHOW TABLES: %v, want a and b", got)
	}
	for _, q := range []string{"SELECT * FROM b", "SELECT id + 1 FROM b", "INSERT INTO b VALUES (1, 'x')",
		"SELECT a.id FROM a JOIN b ON a.id = b.id", "DELETE FROM b"} {
		if _, err := db.Exec(q); mysqlCode(err) != 1146 {
			t.Errorf("%s: %v, want 1146", q, err)
		}
	}
	if n := count(t, db, "SELECT count(*) FROM a"); n != 1 {
		t.Errorf("count(a) = %d, want 1", n)
	}
}
