package planner

import (
	"fmt"
	"testing"
)

// TestOptimizeWhereTypedPartitions: OPTIMIZE SINK ... WHERE compares date,
// timestamp and decimal partition values with their literals on Iceberg as
// on Delta. Each partition holds two one-row files; a predicate that
// selects one partition rewrites its two files and leaves the other's.
func TestOptimizeWhereTypedPartitions(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	const cols = "(id BIGINT NOT NULL, d DATE, ts DATETIME, amt DECIMAL(9,2)) PARTITION BY (d, ts, amt) WITH (auto_compact = false)"
	for _, sink := range []string{"pd INTO DELTA 'lake/pd'", "pi INTO ICEBERG 'db.pi'"} {
		te.exec(s, "CREATE SINK "+sink+" "+cols)
	}
	for _, name := range []string{"pd", "pi"} {
		for id := 1; id <= 6; id++ {
			day := []string{"2026-01-01 10:00:00', 1.50", "2026-01-02 11:30:00', 2.25", "2026-01-03 12:45:00', 3.75"}[(id-1)/2]
			te.exec(s, fmt.Sprintf("INSERT INTO %s VALUES (%d, '%s', '%s)", name, id, day[:10], day))
		}
		for _, where := range []string{
			"d = DATE '2026-01-02'",
			"ts = TIMESTAMP '2026-01-01 10:00:00'",
			"amt = 3.75",
		} {
			got := te.rows(s, fmt.Sprintf("OPTIMIZE SINK %s WHERE %s", name, where))
			if len(got) != 1 || fmt.Sprint(got[0][2:4]) != "[1 2]" {
				t.Errorf("%s: OPTIMIZE WHERE %s = %v, want 1 partition, 2 files removed", name, where, got)
			}
		}
		if got := te.rows(s, "SELECT count(*), sum(id) FROM "+name); fmt.Sprint(got) != "[[6 21]]" {
			t.Errorf("%s after OPTIMIZE: %v, want 6 rows summing to 21", name, got)
		}
	}
}
