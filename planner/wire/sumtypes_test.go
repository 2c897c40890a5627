package wire

import (
	"context"
	"strings"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/google/go-cmp/cmp"
)

// SUM and AVG of integers and DECIMAL are exact DECIMAL columns, with
// MariaDB 10.11's metadata for the same table (NEWDECIMAL, length and
// decimals), on both SELECT routes and both protocols; SUM of a DOUBLE
// stays DOUBLE.
func TestExactSumFieldsAndValues(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.db(testPassword)
	mustExec(t, db, "CREATE SINK sums INTO DELTA 'lake/sums' (id BIGINT NOT NULL, b BIGINT, i INT, d DECIMAL(20,2), f DOUBLE)")
	mustExec(t, db, "INSERT INTO sums VALUES (1, 9007199254740993, 2147483647, 0.25, 0.5), "+
		"(2, 9223372036854775807, 2147483647, 1.50, 1), (3, NULL, NULL, NULL, NULL)")

	type field struct {
		Type     querypb.Type
		Length   uint32
		Decimals uint32
	}
	// MariaDB: SUM(BIGINT) DECIMAL(41,0), SUM(INT) DECIMAL(32,0),
	// SUM(DECIMAL(20,2)) DECIMAL(42,2), AVG(BIGINT) DECIMAL(23,4).
	sumFields := []field{{sqltypes.Decimal, 42, 0}, {sqltypes.Decimal, 33, 0}, {sqltypes.Decimal, 44, 2}, {sqltypes.Float64, 0, 0}}
	sums := []string{"9232379236109516800", "4294967294", "1.75", "1.5"}
	cases := []struct {
		name, query, prepared string
		fields                []field
		values                []string
	}{
		{"DuckDB route", "SELECT sum(b), sum(i), sum(d), sum(f) FROM sums",
			"SELECT sum(b), sum(i), sum(d), sum(f) FROM sums WHERE id > ?", sumFields, sums},
		{"go-mysql-server route", "SELECT sum(b), sum(i), sum(d), sum(f) FROM sums WHERE id + 0 > 0",
			"SELECT sum(b), sum(i), sum(d), sum(f) FROM sums WHERE id + 0 > ?", sumFields, sums},
		{"AVG", "SELECT avg(b), avg(d) FROM sums", "SELECT avg(b), avg(d) FROM sums WHERE id > ?",
			[]field{{sqltypes.Decimal, 25, 4}, {sqltypes.Decimal, 26, 6}},
			[]string{"4616189618054758400.0000", "0.875000"}},
	}

	conn, err := mysql.Connect(context.Background(), &mysql.ConnParams{
		Host: strings.Split(ts.addr, ":")[0], Port: port(t, ts.addr), Uname: "root", Pass: testPassword, DbName: "lakesql"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, c := range cases {
		res, err := conn.ExecuteFetch(c.query, 10, true)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got []field
		for _, f := range res.Fields {
			g := field{f.Type, f.ColumnLength, f.Decimals}
			if f.Type == sqltypes.Float64 {
				g.Length, g.Decimals = 0, 0 // not what this test is about
			}
			got = append(got, g)
		}
		if diff := cmp.Diff(c.fields, got); diff != "" {
			t.Errorf("%s: fields (-want +got):\n%s", c.name, diff)
		}
		want := [][]string{c.values}
		if diff := cmp.Diff(want, textRows(t, db, c.query)); diff != "" {
			t.Errorf("%s: text protocol (-want +got):\n%s", c.name, diff)
		}
		// A parameter makes go-sql-driver prepare: the binary protocol.
		if diff := cmp.Diff(want, textRows(t, db, c.prepared, 0)); diff != "" {
			t.Errorf("%s: binary protocol (-want +got):\n%s", c.name, diff)
		}
	}
}
