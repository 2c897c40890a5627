package wire

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-cmp/cmp"
)

// TestParametersOutOfRangeRefused: the binary protocol's parameters
// (go-sql-driver/mysql with interpolateParams=false, as JDBC's
// useServerPrepStmts and pandas' nullable BIGINT send them) are checked as
// given: a uint64 beyond 2^63, the DOUBLE 2^63 and a string of 20 digits
// were each stored as -2^63, so that distinct keys of an upsert sink
// collapsed into one row.
func TestParametersOutOfRangeRefused(t *testing.T) {
	ts := startServer(t, t.TempDir(), testPassword)
	db := ts.preparedDB()
	mustExec(t, db, "CREATE SINK p INTO DELTA 'lake/p' (id BIGINT NOT NULL PRIMARY KEY, bi BIGINT, iu INT UNSIGNED, "+
		"ti TINYINT, f FLOAT, d DOUBLE, de DECIMAL(10,2), dt DATE) WITH (mode = 'upsert')")

	const twoTo63 = float64(1 << 63)
	cases := []struct {
		query string
		args  []any
		code  uint16
		state string
		msg   string // part of the message, when it matters
	}{
		{"INSERT INTO p (id) VALUES (?)", []any{uint64(math.MaxUint64)}, 1264, "22003", "18446744073709551615"},
		{"INSERT INTO p (id) VALUES (?)", []any{twoTo63}, 1264, "22003", ""},
		{"INSERT INTO p (id) VALUES (?)", []any{"99999999999999999999"}, 1264, "22003", "'99999999999999999999'"},
		{"INSERT INTO p (id) VALUES (?)", []any{"9223372036854775808"}, 1264, "22003", ""},
		{"INSERT INTO p (id) VALUES (?)", []any{-twoTo63 - 4096}, 1264, "22003", ""},
		{"INSERT INTO p (id) VALUES (?), (?)", []any{int64(1), uint64(1 << 63)}, 1264, "22003", "at row 2"},
		{"INSERT INTO p (id, bi) VALUES (?, ?)", []any{int64(1), twoTo63}, 1264, "22003", ""},
		{"INSERT INTO p (id, bi) VALUES (?, ? + 1)", []any{int64(1), int64(math.MaxInt64)}, 1264, "22003", ""},
		// INT UNSIGNED shows the value given, not a wrapped one.
		{"INSERT INTO p (id, iu) VALUES (?, ?)", []any{int64(1), uint64(math.MaxUint64)}, 1264, "22003", "18446744073709551615 is not within 0..4294967295"},
		{"INSERT INTO p (id, iu) VALUES (?, ?)", []any{int64(1), int64(-1)}, 1264, "22003", "-1 is not within 0..4294967295"},
		{"INSERT INTO p (id, ti) VALUES (?, ?)", []any{int64(1), float64(127.5)}, 1264, "22003", ""},
		{"INSERT INTO p (id, ti) VALUES (?, ?)", []any{int64(1), ""}, 1366, "HY000", ""},
		{"INSERT INTO p (id, f) VALUES (?, ?)", []any{int64(1), float64(1e39)}, 1264, "22003", ""},
		{"INSERT INTO p (id, d) VALUES (?, ?)", []any{int64(1), math.Inf(1)}, 1264, "22003", ""},
		{"INSERT INTO p (id, d) VALUES (?, ?)", []any{int64(1), math.NaN()}, 1366, "HY000", ""},
		{"INSERT INTO p (id, d) VALUES (?, ?)", []any{int64(1), "NaN"}, 1366, "HY000", ""},
		{"INSERT INTO p (id, de) VALUES (?, ?)", []any{int64(1), "x1.5"}, 1366, "HY000", ""},
		{"INSERT INTO p (id, de) VALUES (?, ?)", []any{int64(1), math.Inf(-1)}, 1264, "22003", ""},
		{"INSERT INTO p (id, dt) VALUES (?, ?)", []any{int64(1), "0000-00-00"}, 1292, "22007", ""},
	}
	for _, c := range cases {
		_, err := db.Exec(c.query, c.args...)
		var me *mysql.MySQLError
		if !errors.As(err, &me) {
			t.Errorf("%s %v: got %v, want error %d", c.query, c.args, err, c.code)
			continue
		}
		if me.Number != c.code || string(me.SQLState[:]) != c.state || !strings.Contains(me.Message, c.msg) {
			t.Errorf("%s %v: got %d (%s) %q, want %d (%s) with %q", c.query, c.args, me.Number, me.SQLState, me.Message, c.code, c.state, c.msg)
		}
	}
	if n := count(t, db, "SELECT count(*) FROM p"); n != 0 {
		t.Fatalf("%d rows after refused inserts, want 0", n)
	}

	// The ends of BIGINT stay two rows, and an UPDATE's parameter is
	// checked as an INSERT's is.
	for _, id := range []any{int64(math.MaxInt64), int64(math.MinInt64), uint64(math.MaxInt64 - 1), "-9223372036854775807"} {
		if _, err := db.Exec("INSERT INTO p (id) VALUES (?)", id); err != nil {
			t.Fatalf("INSERT id %v: %v", id, err)
		}
	}
	if _, err := db.Exec("UPDATE p SET bi = ? WHERE id = ?", uint64(math.MaxUint64), int64(math.MaxInt64)); mysqlCode(err) != 1264 {
		t.Errorf("UPDATE with uint64 max: got %v, want 1264", err)
	}
	got := queryStrings(t, db, "SELECT id, bi FROM p ORDER BY id")
	want := [][]string{
		{"-9223372036854775808", "NULL"}, {"-9223372036854775807", "NULL"},
		{"9223372036854775806", "NULL"}, {"9223372036854775807", "NULL"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}
