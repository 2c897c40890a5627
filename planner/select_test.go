package planner

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestSelectRouteMatchesGMS runs each query through the DuckDB route and
// through go-mysql-server, and wants the same answer from both.
func TestSelectRouteMatchesGMS(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, `CREATE SINK t INTO DELTA 'lake/t' (id BIGINT NOT NULL, n INT, amount DECIMAL(10,2), region VARCHAR(8),
		ok BOOLEAN, d DATE, ts DATETIME(6), f DOUBLE, PRIMARY KEY (id))`)
	te.exec(s, `INSERT INTO t VALUES
		(1, 10, 1.50, 'eu', true, '2024-01-02', '2024-01-02 03:04:05.123456', 0.5),
		(2, NULL, 2.25, 'us', false, NULL, NULL, NULL),
		(3, 30, NULL, 'eu', NULL, '2023-12-31', '2023-12-31 23:59:59', 0.25),
		(4, 10, 4.00, NULL, true, '2024-02-29', '2024-02-29 12:00:00', 2),
		(5, -7, -1.25, 'ap', false, '2020-06-15', '2020-06-15 00:00:00.5', -1.5)`)
	queries := []string{
		"SELECT * FROM t ORDER BY id",
		"SELECT id, n FROM t ORDER BY n, id",
		"SELECT id, n FROM t ORDER BY n DESC, id",
		"SELECT region, count(*) FROM t GROUP BY region ORDER BY region",
		"SELECT region, count(*) AS c, min(amount), max(ts) FROM t GROUP BY region HAVING count(*) > 1 ORDER BY c",
		"SELECT count(DISTINCT n) FROM t",
		"SELECT count(n), count(*) FROM t WHERE region IS NOT NULL",
		"SELECT id FROM t WHERE n BETWEEN 0 AND 20 ORDER BY id",
		"SELECT id FROM t WHERE n NOT IN (10, 30) ORDER BY id",
		"SELECT id FROM t WHERE region = 'eu' AND (amount > 1 OR amount IS NULL) ORDER BY id",
		"SELECT id FROM t WHERE NOT (region <> 'eu') ORDER BY id",
		"SELECT id FROM t WHERE d >= '2024-01-01' ORDER BY id",
		"SELECT id FROM t WHERE amount < -1.0 ORDER BY id",
		"SELECT DISTINCT region FROM t ORDER BY region",
		"SELECT x.id AS k FROM t AS x ORDER BY k DESC LIMIT 2 OFFSET 1",
		"SELECT min(d), max(d), min(ok), max(region) FROM t",
		"SELECT id, ok FROM t WHERE ok = 1 ORDER BY id",
		"SELECT lakesql.t.id FROM lakesql.t ORDER BY lakesql.t.id LIMIT 3",
		"SELECT sum(n) FROM t",
		"SELECT region, sum(n), count(*) FROM t GROUP BY region ORDER BY region",
		"SELECT region, sum(f), avg(f), avg(DISTINCT f) FROM t GROUP BY region ORDER BY region",
		"SELECT sum(DISTINCT n) AS s FROM t WHERE id > 1",
		"SELECT sum(n) FROM t WHERE id > 100",
		"SELECT sum(amount) FROM t", // an exact DECIMAL on both routes
	}
	for _, q := range queries {
		before := s.routed.Load()
		duck, err := te.e.Exec(context.Background(), s, q)
		if err != nil || s.routed.Load() != before+1 {
			t.Errorf("%s: not routed to DuckDB (%v)", q, err)
			continue
		}
		s.noRoute.Store(true)
		want, err := te.e.Exec(context.Background(), s, q)
		s.noRoute.Store(false)
		if err != nil {
			t.Errorf("%s: go-mysql-server: %v", q, err)
			continue
		}
		if diff := cmp.Diff(want, duck); diff != "" {
			t.Errorf("%s: DuckDB route differs from go-mysql-server (-gms +duckdb):\n%s", q, diff)
		}
	}
	// Outside the whitelist: go-mysql-server runs them, over the same scan.
	for _, q := range []string{
		"SELECT id + 1 FROM t ORDER BY id",
		"SELECT avg(n) FROM t", // MySQL gives a DECIMAL with four more decimals
		"SELECT a.id FROM t a JOIN t b ON a.id = b.n",
		"SELECT upper(region) FROM t WHERE id = 1",
		"SELECT id FROM t WHERE region LIKE 'e%' ORDER BY id",
		"SELECT id FROM t WHERE n = '10'",   // MySQL converts the string to a number
		"SELECT id FROM t WHERE region = 1", // ... and the column to a number
		"SELECT id FROM t WHERE ok = 2",     // DuckDB would read 2 as true
		// MySQL filters rows by a selected column here; DuckDB wants
		// HAVING without GROUP BY to hold aggregates only.
		"SELECT id FROM t WHERE n > 2 HAVING id > 2 ORDER BY id",
	} {
		before := s.routed.Load()
		te.exec(s, q)
		if s.routed.Load() != before {
			t.Errorf("%s: routed to DuckDB, want go-mysql-server", q)
		}
	}
	if got := te.rows(s, "SELECT id FROM t WHERE n = '10' ORDER BY id"); !cmp.Equal(got, [][]any{{int64(1)}, {int64(4)}}) {
		t.Errorf("string compared with a number: %v", got)
	}
	if got := te.rows(s, "SELECT id FROM t WHERE n > 2 HAVING id > 2 ORDER BY id"); !cmp.Equal(got, [][]any{{int64(3)}, {int64(4)}}) {
		t.Errorf("HAVING without GROUP BY: %v", got)
	}
}

// TestValuesRoundTrip writes one value of each column type and reads it
// back, through DuckDB and through go-mysql-server.
func TestValuesRoundTrip(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, `CREATE SINK v INTO DELTA 'lake/v' (b BOOLEAN, i8 TINYINT, i16 SMALLINT, i32 INT, i64 BIGINT,
		f FLOAT, d DOUBLE, dec DECIMAL(12,3), s VARCHAR(20), bin VARBINARY(8), dt DATE, dtm DATETIME(6), ts TIMESTAMP(6))`)
	te.exec(s, `INSERT INTO v VALUES (true, -8, -16, -32, -64, 1.5, 2.25, 123456789.125, 'héllo', 0x00ff,
		'2024-02-29', '2024-02-29 23:59:58.123456', '2024-03-01 00:00:01.5')`)
	te.exec(s, "INSERT INTO v VALUES (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)")
	q := "SELECT * FROM v ORDER BY i64"
	before := s.routed.Load()
	duck := te.exec(s, q)
	if s.routed.Load() != before+1 {
		t.Fatal("not routed to DuckDB")
	}
	s.noRoute.Store(true)
	viaGMS := te.exec(s, q)
	s.noRoute.Store(false)
	for name, res := range map[string]*Result{"duckdb": duck, "gms": viaGMS} {
		if len(res.Rows) != 2 {
			t.Fatalf("%s: %d rows", name, len(res.Rows))
		}
		for i, v := range res.Rows[0] {
			if v != nil {
				t.Errorf("%s: NULL row, column %s = %v", name, res.Columns[i], v)
			}
		}
		got := make([]string, len(res.Rows[1]))
		for i, v := range res.Rows[1] {
			got[i] = fmt.Sprintf("%T %v", v, v)
			if tm, ok := v.(time.Time); ok {
				got[i] = "time " + tm.UTC().Format("2006-01-02 15:04:05.999999")
			}
		}
		want := []string{"int8 1", "int8 -8", "int16 -16", "int32 -32", "int64 -64", "float32 1.5", "float64 2.25",
			"decimal.Decimal 123456789.125", "string héllo", "[]uint8 [0 255]", "time 2024-02-29 00:00:00",
			"time 2024-02-29 23:59:58.123456", "time 2024-03-01 00:00:01.5"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: values (-want +got):\n%s", name, diff)
		}
	}
}
