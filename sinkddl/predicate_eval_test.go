package sinkddl

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestPredicateEval evaluates predicates over the partition values the
// backends report, with three-valued logic: a null value makes a
// comparison unknown, and unknown keeps no partition, also under NOT.
func TestPredicateEval(t *testing.T) {
	day := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		where  string
		values map[string]any
		want   bool
	}{
		{"d = DATE '2026-12-01'", map[string]any{"d": day}, true},
		{"d > DATE '2026-12-01'", map[string]any{"d": day}, false},
		{"d >= '2026-12-01'", map[string]any{"d": day}, true},
		{"d < TIMESTAMP '2026-12-01 00:00:00.5'", map[string]any{"d": day}, true},
		{"n = 3", map[string]any{"n": int64(3)}, true},
		{"n = 3", map[string]any{"n": int32(3)}, true},
		{"n = 3", map[string]any{"n": int8(3)}, true},
		{"n = 3.0", map[string]any{"n": int16(3)}, true},
		{"n < 2.5", map[string]any{"n": int64(2)}, true},
		{"n = '3'", map[string]any{"n": int64(3)}, true},
		{"n <> 3", map[string]any{"n": int64(4)}, true},
		{"n = 9223372036854775807", map[string]any{"n": int64(9223372036854775807)}, true},
		{"n = 9223372036854775808", map[string]any{"n": int64(9223372036854775807)}, false},
		{"f = 1.1", map[string]any{"f": float32(1.1)}, true},
		{"f = 1.1", map[string]any{"f": 1.1}, true},
		{"f > -1", map[string]any{"f": -0.5}, true},
		{"dec = 12.3", map[string]any{"dec": "12.30"}, true},
		{"dec < 12.31", map[string]any{"dec": "12.30"}, true},
		{"s = 'eu'", map[string]any{"s": "eu"}, true},
		{"s < 'f'", map[string]any{"s": "eu"}, true},
		{"s IN ('us', 'eu')", map[string]any{"s": "eu"}, true},
		{"s NOT IN ('us', 'eu')", map[string]any{"s": "eu"}, false},
		{"s BETWEEN 'a' AND 'f'", map[string]any{"s": "eu"}, true},
		{"s NOT BETWEEN 'a' AND 'f'", map[string]any{"s": "eu"}, false},
		{"b = TRUE", map[string]any{"b": true}, true},
		{"b = 0", map[string]any{"b": false}, true},
		{"bin = 'x'", map[string]any{"bin": []byte("x")}, true},
		{"S = 'eu'", map[string]any{"s": "eu"}, true}, // case-insensitive column
		// Nulls: unknown, which NOT keeps unknown.
		{"s = 'eu'", map[string]any{"s": nil}, false},
		{"NOT s = 'eu'", map[string]any{"s": nil}, false},
		{"s <> 'eu'", map[string]any{"s": nil}, false},
		{"s IS NULL", map[string]any{"s": nil}, true},
		{"s IS NOT NULL", map[string]any{"s": nil}, false},
		{"s IN ('a')", map[string]any{"s": nil}, false},
		{"NOT s IN ('a')", map[string]any{"s": nil}, false},
		{"s NOT BETWEEN 'a' AND 'b'", map[string]any{"s": nil}, false},
		{"s = 'x' OR n = 1", map[string]any{"s": nil, "n": int64(1)}, true},
		{"NOT (s = 'x' OR n = 2)", map[string]any{"s": nil, "n": int64(1)}, false},
		{"NOT (s = 'x' AND n = 2)", map[string]any{"s": nil, "n": int64(1)}, true},
		{"s = 'x' AND n = 1", map[string]any{"s": nil, "n": int64(1)}, false},
	}
	for _, c := range cases {
		stmt, err := Parse("OPTIMIZE SINK t WHERE " + c.where)
		if err != nil {
			t.Fatalf("%s: %v", c.where, err)
		}
		got, err := stmt.(*OptimizeSink).Where.Eval(c.values)
		if err != nil {
			t.Errorf("%s over %v: %v", c.where, c.values, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s over %v = %v, want %v", c.where, c.values, got, c.want)
		}
	}
}

// TestPredicateEvalErrors: a column that is not among the values, or a
// literal of the wrong kind for the value, is ErrPredicate, never a
// silent false.
func TestPredicateEvalErrors(t *testing.T) {
	day := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		where  string
		values map[string]any
	}{
		{"x = 1", map[string]any{"d": day}},
		{"d = 5", map[string]any{"d": day}},
		{"s = DATE '2026-12-01'", map[string]any{"s": "eu"}},
		{"s = 1", map[string]any{"s": "eu"}},
		{"n = 'abc'", map[string]any{"n": int64(1)}},
		{"bin = 1", map[string]any{"bin": []byte("x")}},
		{"v = 1", map[string]any{"v": struct{}{}}},
		{"n IN (1, 'x')", map[string]any{"n": int64(2)}},
	}
	for _, c := range cases {
		stmt, err := Parse("OPTIMIZE SINK t WHERE " + c.where)
		if err != nil {
			t.Fatalf("%s: %v", c.where, err)
		}
		if _, err := stmt.(*OptimizeSink).Where.Eval(c.values); !errors.Is(err, ErrPredicate) {
			t.Errorf("%s over %v: err = %v, want ErrPredicate", c.where, c.values, err)
		}
	}
}

func TestPredicateColumns(t *testing.T) {
	stmt, err := Parse("OPTIMIZE SINK t WHERE a = 1 AND (b IS NULL OR NOT a IN (2)) AND c BETWEEN 1 AND 2")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a", "b", "c"}, stmt.(*OptimizeSink).Where.Columns()); d != "" {
		t.Error(d)
	}
}
