package wire

import (
	"context"
	"database/sql"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/google/go-cmp/cmp"
)

// The client matrix's types sink (clients/SCENARIO.md, step 2).
const createTypes = "CREATE SINK types INTO DELTA 'lake/types' (id BIGINT NOT NULL, b BOOLEAN, i8 TINYINT, " +
	"u8 TINYINT UNSIGNED, i16 SMALLINT, i32 INT, u32 INT UNSIGNED, i64 BIGINT, f32 FLOAT, f64 DOUBLE, " +
	"dec DECIMAL(20,6), vc VARCHAR(64), tx TEXT, js JSON, vb VARBINARY(64), d DATE, dt DATETIME(6), " +
	"ts TIMESTAMP(6), PRIMARY KEY (id)) WITH (mode = 'upsert')"

// The COLUMN_TYPE of each column of types, as MySQL 8 shows it.
var typesColumnTypes = [][2]string{
	{"id", "bigint"}, {"b", "tinyint(1)"}, {"i8", "tinyint"}, {"u8", "tinyint unsigned"},
	{"i16", "smallint"}, {"i32", "int"}, {"u32", "int unsigned"}, {"i64", "bigint"},
	{"f32", "float"}, {"f64", "double"}, {"dec", "decimal(20,6)"}, {"vc", "varchar(64)"},
	{"tx", "text"}, {"js", "json"}, {"vb", "varbinary(64)"}, {"d", "date"},
	{"dt", "datetime(6)"}, {"ts", "timestamp(6)"},
}

func textRows(t *testing.T, db *sql.DB, query string, args ...any) [][]string {
	t.Helper()
	rows, err := db.Query(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = v.String
			if !v.Valid {
				row[i] = "NULL"
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Metadata shows the declared types and the primary key (issue 14, items
// 12 and 13).
func TestDeclaredTypesAndKeyInMetadata(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	mustExec(t, db, createTypes)

	var want, got [][]string
	for _, c := range typesColumnTypes {
		null, key := "YES", ""
		if c[0] == "id" {
			null, key = "NO", "PRI"
		}
		want = append(want, []string{c[0], c[1], null, key})
	}
	got = textRows(t, db, "SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_KEY FROM information_schema.COLUMNS "+
		"WHERE TABLE_SCHEMA = 'lakesql' AND TABLE_NAME = 'types' ORDER BY ORDINAL_POSITION")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("information_schema.COLUMNS (-want +got):\n%s", diff)
	}
	got = textRows(t, db, "SHOW FULL COLUMNS FROM types")
	for i, row := range got {
		if i < len(want) && (row[0] != want[i][0] || row[1] != want[i][1] || row[4] != want[i][3]) {
			t.Errorf("SHOW FULL COLUMNS row %d: %v, want %v", i, row, want[i])
		}
	}

	// The primary key, as SHOW INDEX and information_schema list it.
	got = textRows(t, db, "SHOW INDEX FROM types")
	if len(got) != 1 || got[0][2] != "PRIMARY" || got[0][4] != "id" || got[0][1] != "0" {
		t.Errorf("SHOW INDEX: %v, want one row PRIMARY on id, unique", got)
	}
	for q, w := range map[string][][]string{
		"SELECT INDEX_NAME, COLUMN_NAME, NON_UNIQUE FROM information_schema.STATISTICS WHERE TABLE_NAME = 'types'":                  {{"PRIMARY", "id", "0"}},
		"SELECT CONSTRAINT_NAME, COLUMN_NAME, ORDINAL_POSITION FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_NAME = 'types'": {{"PRIMARY", "id", "1"}},
		"SELECT CONSTRAINT_NAME, CONSTRAINT_TYPE FROM information_schema.TABLE_CONSTRAINTS WHERE TABLE_NAME = 'types'":              {{"PRIMARY", "PRIMARY KEY"}},
	} {
		if diff := cmp.Diff(w, textRows(t, db, q)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", q, diff)
		}
	}

	// A key is metadata only: a join on it and a filter on it still read
	// every row (no index lookup is planned).
	mustExec(t, db, "INSERT INTO types (id, vc) VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	if diff := cmp.Diff([][]string{{"2", "b"}}, textRows(t, db,
		"SELECT x.id, y.vc FROM types x JOIN types y ON x.id = y.id WHERE x.id + 0 = 2")); diff != "" {
		t.Errorf("join on the key (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"3"}}, textRows(t, db, "SELECT count(*) FROM types x JOIN types y ON x.id = y.id")); diff != "" {
		t.Errorf("join on the key, count (-want +got):\n%s", diff)
	}
}

// The information_schema.COLUMNS values MariaDB Connector/J builds its
// getColumns rows from (COLUMN_SIZE from NUMERIC_PRECISION or
// DATETIME_PRECISION, DECIMAL_DIGITS from NUMERIC_SCALE, BOOLEAN from
// COLUMN_TYPE tinyint(1)) are MySQL 8's: a tinyint(1) has precision 3 and
// scale 0, a DATETIME(6) precision and scale NULL and DATETIME_PRECISION 6.
func TestColumnPrecisionsInInformationSchema(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	mustExec(t, db, createTypes)
	want := [][]string{
		{"b", "tinyint", "tinyint(1)", "3", "0", "NULL"},
		{"i8", "tinyint", "tinyint", "3", "0", "NULL"},
		{"u8", "tinyint", "tinyint unsigned", "3", "0", "NULL"},
		{"u32", "int", "int unsigned", "10", "0", "NULL"},
		{"f64", "double", "double", "22", "NULL", "NULL"},
		{"dec", "decimal", "decimal(20,6)", "20", "6", "NULL"},
		{"dt", "datetime", "datetime(6)", "NULL", "NULL", "6"},
		{"ts", "timestamp", "timestamp(6)", "NULL", "NULL", "6"},
	}
	got := textRows(t, db, "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, NUMERIC_PRECISION, NUMERIC_SCALE, DATETIME_PRECISION "+
		"FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'lakesql' AND TABLE_NAME = 'types' "+
		"AND COLUMN_NAME IN ('b', 'i8', 'u8', 'u32', 'f64', 'dec', 'dt', 'ts') ORDER BY ORDINAL_POSITION")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("information_schema.COLUMNS (-want +got):\n%s", diff)
	}
}

// Result columns carry the declared type, NOT NULL, PRI, UNSIGNED, a
// BOOLEAN 1 wide, and p decimals for DATETIME(p) and TIMESTAMP(p); their
// values have exactly p fraction digits on both protocols (items 2, 11, 12).
func TestResultFieldsAndFractions(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	mustExec(t, db, createTypes)
	mustExec(t, db, "INSERT INTO types (id, b, u8, u32, `dec`, vc, js, vb, dt, ts) VALUES "+
		"(1, true, 255, 4294967295, 1.5, 'x', '{\"a\": [1, 2]}', x'00ff', '2024-06-15 10:20:30.1', '2024-06-15 10:20:30.000001')")

	rows, err := db.Query("SELECT id, b, u8, u32, `dec`, vc, js, vb, dt, ts FROM types")
	if err != nil {
		t.Fatal(err)
	}
	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	rows.Close()
	type desc struct {
		Name     string
		Nullable bool
		Scale    int64
	}
	var gotDesc []desc
	for _, ct := range cts {
		n, _ := ct.Nullable()
		_, s, _ := ct.DecimalSize()
		gotDesc = append(gotDesc, desc{ct.DatabaseTypeName(), n, s})
	}
	wantDesc := []desc{{"BIGINT", false, 0}, {"TINYINT", true, 0}, {"UNSIGNED TINYINT", true, 0},
		{"UNSIGNED INT", true, 0}, {"DECIMAL", true, 6}, {"VARCHAR", true, 0}, {"JSON", true, 0},
		{"VARBINARY", true, 0}, {"DATETIME", true, 6}, {"TIMESTAMP", true, 6}}
	if diff := cmp.Diff(wantDesc, gotDesc); diff != "" {
		t.Errorf("result column types (-want +got):\n%s", diff)
	}

	// Text protocol, then binary (a parameter makes go-sql-driver prepare).
	want := [][]string{{"2024-06-15 10:20:30.100000", "2024-06-15 10:20:30.000001"}}
	if diff := cmp.Diff(want, textRows(t, db, "SELECT dt, ts FROM types")); diff != "" {
		t.Errorf("text protocol (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, textRows(t, db, "SELECT dt, ts FROM types WHERE id = ?", 1)); diff != "" {
		t.Errorf("binary protocol (-want +got):\n%s", diff)
	}

	// The raw fields: flags and lengths go-sql-driver does not expose.
	conn, err := mysql.Connect(context.Background(), &mysql.ConnParams{
		Host: strings.Split(ts.addr, ":")[0], Port: port(t, ts.addr), Uname: "root", Pass: testPassword, DbName: "lakesql"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	res, err := conn.ExecuteFetch("SELECT id, b, u32, ts FROM types", 10, true)
	if err != nil {
		t.Fatal(err)
	}
	f := res.Fields
	if f[0].Flags&uint32(querypb.MySqlFlag_NOT_NULL_FLAG) == 0 || f[0].Flags&uint32(querypb.MySqlFlag_PRI_KEY_FLAG) == 0 {
		t.Errorf("id flags %b: want NOT NULL and PRI", f[0].Flags)
	}
	if f[1].ColumnLength != 1 || f[1].Type != sqltypes.Int8 {
		t.Errorf("BOOLEAN field: %v length %d, want INT8 length 1", f[1].Type, f[1].ColumnLength)
	}
	if f[2].Flags&uint32(querypb.MySqlFlag_UNSIGNED_FLAG) == 0 {
		t.Errorf("INT UNSIGNED flags %b: want UNSIGNED", f[2].Flags)
	}
	if f[3].Type != sqltypes.Timestamp || f[3].Decimals != 6 {
		t.Errorf("TIMESTAMP(6) field: %v decimals %d, want TIMESTAMP with 6", f[3].Type, f[3].Decimals)
	}
}

func port(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
