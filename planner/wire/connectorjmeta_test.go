package wire

import (
	"database/sql"
	"os"
	"strings"
	"testing"
)

// connectorJColumn is one getColumns row as MySQL 8 answers Connector/J's
// query: TYPE_NAME, COLUMN_SIZE, DECIMAL_DIGITS (NULL: -1), IS_NULLABLE.
type connectorJColumn struct {
	name, typeName string
	size, digits   int64
	nullable       string
}

// TestConnectorJGetColumns runs the SQL MySQL Connector/J 9.7 sends for
// DatabaseMetaData.getColumns (captured from the server; testdata keeps it
// verbatim but for the collation and the three parameters): it first asks
// SCHEMATA for information_schema's collation, then applies it to
// information_schema.COLUMNS' utf8mb3 columns with COLLATE, which failed
// with "COLLATION 'utf8mb4_0900_bin' is not valid for CHARACTER SET
// 'utf8mb3'" while SCHEMATA said utf8mb4_0900_bin. Both protocols.
func TestConnectorJGetColumns(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	mustExec(t, db, "CREATE SINK types INTO DELTA 'lake/types' (id BIGINT NOT NULL, b BOOLEAN, i8 TINYINT, u8 TINYINT UNSIGNED, i16 SMALLINT, i32 INT, u32 INT UNSIGNED, i64 BIGINT, f32 FLOAT, f64 DOUBLE, `dec` DECIMAL(20,6), vc VARCHAR(64), tx TEXT, js JSON, vb VARBINARY(64), d DATE, dt DATETIME(6), ts TIMESTAMP(6), PRIMARY KEY (id)) WITH (mode = 'upsert')")

	var charset, coll string
	if err := db.QueryRow("SELECT DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM INFORMATION_SCHEMA.SCHEMATA WHERE SCHEMA_NAME = 'information_schema'").Scan(&charset, &coll); err != nil {
		t.Fatal(err)
	}
	if charset != "utf8mb3" || coll != "utf8mb3_general_ci" {
		t.Errorf("information_schema's SCHEMATA row: %s %s, want MySQL 8's utf8mb3 utf8mb3_general_ci", charset, coll)
	}

	text, err := os.ReadFile("testdata/connectorj9_getcolumns.sql")
	if err != nil {
		t.Fatal(err)
	}
	query := strings.ReplaceAll(strings.TrimSpace(string(text)), "{{COLLATION}}", coll)
	want := []connectorJColumn{
		{"id", "BIGINT", 19, -1, "NO"},
		{"b", "BIT", 1, -1, "YES"},
		{"i8", "TINYINT", 3, -1, "YES"},
		{"u8", "TINYINT UNSIGNED", 3, -1, "YES"},
		{"i16", "SMALLINT", 5, -1, "YES"},
		{"i32", "INT", 10, -1, "YES"},
		{"u32", "INT UNSIGNED", 10, -1, "YES"},
		{"i64", "BIGINT", 19, -1, "YES"},
		{"f32", "FLOAT", 12, 0, "YES"},
		{"f64", "DOUBLE", 22, 0, "YES"},
		{"dec", "DECIMAL", 20, 6, "YES"},
		{"vc", "VARCHAR", 64, -1, "YES"},
		{"tx", "TEXT", 65535, -1, "YES"},
		{"js", "JSON", 1073741824, -1, "YES"},
		{"vb", "VARBINARY", 64, -1, "YES"},
		{"d", "DATE", 10, -1, "YES"},
		{"dt", "DATETIME", 26, -1, "YES"},
		{"ts", "TIMESTAMP", 26, -1, "YES"},
	}
	for _, c := range []struct {
		proto string
		run   func() (*sql.Rows, error)
	}{
		{"binary", func() (*sql.Rows, error) { return db.Query(query, "lakesql", "types", "%") }},
		{"text", func() (*sql.Rows, error) {
			q := strings.Replace(query, "TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME LIKE ?", "TABLE_SCHEMA = 'lakesql' AND TABLE_NAME = 'types' AND COLUMN_NAME LIKE '%'", 1)
			return db.Query(q)
		}},
	} {
		rows, err := c.run()
		if err != nil {
			t.Fatalf("%s: %v", c.proto, err)
		}
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		var got []connectorJColumn
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			byName := map[string]any{}
			for i, n := range cols {
				if _, dup := byName[n]; !dup {
					byName[n] = vals[i]
				}
			}
			got = append(got, connectorJColumn{
				name:     asString(byName["COLUMN_NAME"]),
				typeName: asString(byName["TYPE_NAME"]),
				size:     asInt(t, byName["COLUMN_SIZE"]),
				digits:   asInt(t, byName["DECIMAL_DIGITS"]),
				nullable: asString(byName["IS_NULLABLE"]),
			})
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", c.proto, err)
		}
		rows.Close()
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows %v, want %d", c.proto, len(got), got, len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: row %d = %+v, want %+v", c.proto, i, got[i], want[i])
			}
		}
	}
}

func asString(v any) string {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case string:
		return x
	}
	return ""
}

// asInt reads an integer column; NULL is -1.
func asInt(t *testing.T, v any) int64 {
	t.Helper()
	switch x := v.(type) {
	case nil:
		return -1
	case int64:
		return x
	case uint64:
		return int64(x)
	case []byte:
		var n int64
		for _, ch := range x {
			if ch < '0' || ch > '9' {
				t.Fatalf("not an integer: %q", x)
			}
			n = n*10 + int64(ch-'0')
		}
		return n
	}
	t.Fatalf("not an integer: %T %v", v, v)
	return 0
}
