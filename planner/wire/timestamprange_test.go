package wire

import (
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestTimestampFullRange: TIMESTAMP and DATETIME hold the years 0001 to
// 9999, as Delta and Iceberg do, not MySQL's 1970-2038 TIMESTAMP: written
// as text and as bound parameters, read back through the text and binary
// protocols, compared, and filtered on.
func TestTimestampFullRange(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	text := ts.db(testPassword)
	mustExec(t, text, "CREATE SINK r INTO DELTA 'lake/r' (id BIGINT NOT NULL, ts TIMESTAMP(6), dt DATETIME(6))")
	// Not 0001-01-01 00:00:00 itself: go-sql-driver sends Go's zero time as
	// '0000-00-00'.
	values := []string{"0001-01-01 00:00:00.000001", "1969-01-01 00:00:00.000000", "1970-01-01 00:00:00.000000",
		"2040-01-01 00:00:00.050000", "9999-12-31 23:59:59.999999"}
	for i, v := range values {
		mustExec(t, text, fmt.Sprintf("INSERT INTO r VALUES (%d, '%s', '%s')", i, v, v))
	}
	binary, err := sql.Open("mysql", fmt.Sprintf("root:%s@tcp(%s)/lakesql?interpolateParams=false&parseTime=true", testPassword, ts.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer binary.Close()
	for i, v := range values {
		tv, _ := time.Parse("2006-01-02 15:04:05.999999", v)
		if _, err := binary.Exec("INSERT INTO r VALUES (?, ?, ?)", 10+i, tv, tv); err != nil {
			t.Fatalf("bound %s: %v", v, err)
		}
	}
	var want [][]string
	for i, v := range values {
		want = append(want, []string{fmt.Sprint(i), v, v})
	}
	for i, v := range values {
		want = append(want, []string{fmt.Sprint(10 + i), v, v})
	}
	if diff := cmp.Diff(want, textRows(t, text, "SELECT id, ts, dt FROM r ORDER BY id")); diff != "" {
		t.Errorf("text protocol (-want +got):\n%s", diff)
	}
	rows, err := binary.Query("SELECT id, ts, dt FROM r WHERE id >= ? ORDER BY id", 10)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for i := 0; rows.Next(); i++ {
		var id int64
		var a, b time.Time
		if err := rows.Scan(&id, &a, &b); err != nil {
			t.Fatal(err)
		}
		if got := a.Format("2006-01-02 15:04:05.000000"); got != values[i] {
			t.Errorf("binary TIMESTAMP of row %d: %s, want %s", id, got, values[i])
		}
		if got := b.Format("2006-01-02 15:04:05.000000"); got != values[i] {
			t.Errorf("binary DATETIME of row %d: %s, want %s", id, got, values[i])
		}
	}
	if n := count(t, text, "SELECT count(*) FROM r WHERE ts < '1970-01-01 00:00:00'"); n != 4 {
		t.Errorf("rows before 1970: %d, want 4", n)
	}
	if n := count(t, text, "SELECT count(*) FROM r WHERE ts - INTERVAL 1 DAY > '2039-01-01'"); n != 4 {
		t.Errorf("rows after 2039: %d, want 4", n)
	}
	if _, err := text.Exec("INSERT INTO r VALUES (99, '10000-01-01 00:00:00', NULL)"); mysqlCode(err) != 1292 {
		t.Errorf("year 10000: %v, want 1292", err)
	}
}
