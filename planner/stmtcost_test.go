package planner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	gms "github.com/dolthub/go-mysql-server/sql"
)

func TestCheckCost(t *testing.T) {
	chain := func(op string, n int) string { return strings.TrimSuffix(strings.Repeat("1"+op, n), op) }
	nested := func(n int) string { return strings.Repeat("(SELECT ", n) + "1" + strings.Repeat(")", n) }
	var insert strings.Builder
	insert.WriteString("INSERT INTO t VALUES ")
	for i := range 100_000 {
		if i > 0 {
			insert.WriteString(",")
		}
		fmt.Fprintf(&insert, "(%d,'v%d',%d.5)", i, i, i)
	}
	for _, c := range []struct {
		name, q string
		want    error
	}{
		{"100,000-row INSERT of 3 columns", insert.String(), nil},
		{"64 +'s", "SELECT " + chain("+", 65), nil},
		{"65 +'s", "SELECT " + chain("+", 66), ErrTooComplex},
		{"1,000 levels", "SELECT " + chain(" OR ", 1000), nil},
		{"1,001 levels", "SELECT " + chain(" OR ", 1001), ErrTooComplex},
		{"more than a million nodes", "SELECT " + chain(",", 1_000_000), ErrTooComplex},
		{"subqueries 10 deep", "SELECT " + nested(10), nil},
		{"subqueries 11 deep", "SELECT " + nested(11), ErrSelectNesting},
		{"three chains 10 deep", "SELECT " + nested(10) + "," + nested(10) + "," + nested(10), ErrSelectNesting},
		{"derived tables 50 deep", "SELECT * FROM " + strings.Repeat("(SELECT * FROM ", 49) + "(SELECT 1 a) t0" + strings.Repeat(") t", 49), nil},
		{"IN subqueries 11 deep", "SELECT 1 WHERE 1 IN " + strings.Repeat("(SELECT 1 WHERE 1 IN ", 10) + "(SELECT 1)" + strings.Repeat(")", 10), ErrSelectNesting},
		{"EXPLAIN", "EXPLAIN SELECT " + chain("+", 100), ErrTooComplex},
		{"CALL", "CALL p(" + chain("+", 100) + ")", ErrTooComplex},
		{"UPDATE", "UPDATE t SET a = " + chain("+", 100), ErrTooComplex},
	} {
		st, err := gms.GlobalParser.ParseSimple(c.q)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := CheckCost(st); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// A statement whose context is cancelled (KILL QUERY, a client gone) is
// stopped by the analyzer's next rule: go-mysql-server's analyzer itself
// never looks at the context.
func TestAnalysisInterrupted(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := te.e.Exec(ctx, s, "SELECT 1 + 1")
	if !errors.Is(err, errInterrupted) || !strings.Contains(err.Error(), "while it was analysed") {
		t.Fatalf("SELECT with a cancelled context: %v, want interrupted while it was analysed", err)
	}
	if code := MySQLError(err).Num; code != 1317 {
		t.Errorf("code %d, want 1317", code)
	}
	// The session goes on.
	if rows := te.rows(s, "SELECT 1 + 1"); len(rows) != 1 || fmt.Sprint(rows[0][0]) != "2" {
		t.Errorf("after: %v", rows)
	}
}

// A routed SELECT that DuckDB stops for a cancelled context is
// interrupted (1317), not DuckDB's error.
func TestRoutedQueryInterrupted(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, createOrders)
	te.exec(s, "INSERT INTO orders VALUES (1, 2.5, 'eu')")
	gctx := te.e.gmsContext(context.Background(), s, "SELECT * FROM orders")
	gctx.SetCurrentDatabase(DatabaseName)
	plan, err := te.e.planDuck(gctx, "SELECT * FROM orders")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := te.e.runDuck(ctx, gctx, plan); MySQLError(err).Num != 1317 {
		t.Errorf("routed SELECT with a cancelled context: %v, want 1317", err)
	}
}
