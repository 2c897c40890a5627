package main

import (
	"fmt"
	"strings"
)

// Probes of table maintenance: malformed OPTIMIZE, VACUUM, SHOW SINK
// HISTORY and AS OF, predicates that try to reach DuckDB (a function that
// reads files, a subquery, a second statement), retentions out of range,
// versions that never existed. The canary sinks are maintained for real
// too (OPTIMIZE, VACUUM DRY RUN, AS OF): the suite checks afterwards that
// their rows are unchanged.

func init() {
	errs := []struct {
		name string
		want int
		sql  string
	}{
		{"optimize-read-text-literal", 1064, "OPTIMIZE SINK canary_d WHERE v = read_text('/etc/passwd')"},
		{"optimize-read-text-column", 1064, "OPTIMIZE SINK canary_d WHERE read_text('/etc/passwd') = 'x'"},
		{"optimize-read-text-spaced", 1064, "OPTIMIZE SINK canary_d WHERE read_text ('/etc/passwd') = 'x'"},
		{"optimize-subquery", 1064, "OPTIMIZE SINK canary_d WHERE id IN (SELECT content FROM read_text('/etc/passwd'))"},
		{"optimize-scalar-subquery", 1064, "OPTIMIZE SINK canary_i WHERE id = (SELECT 1)"},
		{"optimize-second-statement", 1064, "OPTIMIZE SINK canary_d WHERE id = 1; DROP SINK canary_d"},
		{"optimize-comment-escape", 1064, "OPTIMIZE SINK canary_d WHERE id = 1 /* */ ) OR (1 = 1"},
		{"optimize-nesting", 1064, "OPTIMIZE SINK canary_d WHERE " + strings.Repeat("(", 5000) + "id = 1" + strings.Repeat(")", 5000)},
		{"optimize-not-chain", 1064, "OPTIMIZE SINK canary_d WHERE " + strings.Repeat("NOT ", 5000) + "id = 1"},
		{"optimize-null-literal", 1064, "OPTIMIZE SINK canary_d WHERE id = NULL"},
		{"optimize-bad-date", 1064, "OPTIMIZE SINK canary_d WHERE id = DATE '2026-02-30'"},
		{"optimize-non-partition", 1054, "OPTIMIZE SINK canary_d WHERE id = 1"},
		{"optimize-non-partition-iceberg", 1054, "OPTIMIZE SINK canary_i WHERE v IS NULL"},
		{"optimize-unknown-sink", 1146, "OPTIMIZE SINK no_such_sink"},
		{"optimize-table-is-mysql", 1064, "OPTIMIZE TABLE no_such_table"}, // MySQL's, which go-mysql-server cannot parse
		{"vacuum-negative", 1210, "VACUUM SINK canary_d RETAIN -1 HOURS"},
		{"vacuum-too-short", 1210, "VACUUM SINK canary_d RETAIN 0 HOURS"},
		{"vacuum-too-short-iceberg", 1210, "VACUUM SINK canary_i RETAIN 1 HOURS"},
		{"vacuum-beyond-duration", 1210, "VACUUM SINK canary_d RETAIN 99999999999 HOURS"},
		{"vacuum-exponent", 1064, "VACUUM SINK canary_d RETAIN 1e400 HOURS"},
		{"vacuum-days", 1064, "VACUUM SINK canary_d RETAIN 7 DAYS"},
		{"vacuum-unknown-sink", 1146, "VACUUM SINK no_such_sink DRY RUN"},
		{"history-unknown-sink", 1146, "SHOW SINK HISTORY no_such_sink"},
		{"history-huge-limit", 1064, "SHOW SINK HISTORY canary_d LIMIT 99999999999999999999999"},
		{"history-where", 1064, "SHOW SINK HISTORY canary_d WHERE 1 = 1"},
		{"call-optimize-clause", 1064, "CALL lakesql_optimize_sink('canary_d', 'id = 1) OR (1 = 1')"},
		{"call-optimize-stacked", 1064, "CALL lakesql_optimize_sink('canary_d', 'id = 1; DROP SINK canary_d')"},
		{"call-vacuum-nan", 1210, "CALL lakesql_vacuum_sink('canary_d', 'NaN')"},
		{"call-vacuum-negative", 1210, "CALL lakesql_vacuum_sink('canary_d', '-5')"},
		{"call-vacuum-words", 1210, "CALL lakesql_vacuum_sink('canary_d', '1 HOURS DRY RUN')"},
		{"call-history-negative", 1210, "CALL lakesql_sink_history('canary_d', '-1')"},
		{"asof-never-existed", 1210, "SELECT * FROM canary_d AS OF 99999"},
		{"asof-before-table", 1210, "SELECT * FROM canary_d AS OF '1970-01-01 00:00:00'"},
		{"asof-garbage", 1210, "SELECT * FROM canary_d AS OF 'next tuesday'"},
		{"asof-iceberg-no-snapshot", 1210, "SELECT * FROM canary_i AS OF 12345"},
	}
	for _, e := range errs {
		registerHostile(hostileProbe{name: "maintenance/" + e.name, want: e.want,
			run: func(h *hostileEnv) error { return h.exec(e.sql) }})
	}
	registerHostile(
		// Writes AS OF: refused, whatever the code; the canary is checked.
		hostileProbe{name: "maintenance/asof-update", run: func(h *hostileEnv) error {
			if err := h.exec("UPDATE canary_d AS OF 1 SET v = 'x'"); err == nil {
				return h.wrong("UPDATE ... AS OF succeeded")
			}
			return nil
		}},
		hostileProbe{name: "maintenance/asof-delete", run: func(h *hostileEnv) error {
			if err := h.exec("DELETE FROM canary_d AS OF 1"); err == nil {
				return h.wrong("DELETE ... AS OF succeeded")
			}
			return nil
		}},
		// Real maintenance of the canaries: their rows must not change.
		hostileProbe{name: "maintenance/optimize-canaries", run: func(h *hostileEnv) error {
			for _, s := range []string{"canary_d", "canary_i"} {
				if err := h.exec("OPTIMIZE SINK " + s); err != nil {
					return err
				}
			}
			return nil
		}},
		hostileProbe{name: "maintenance/vacuum-dry-run-canaries", run: func(h *hostileEnv) error {
			for _, s := range []string{"canary_d", "canary_i"} {
				if _, err := h.query("VACUUM SINK " + s + " DRY RUN"); err != nil {
					return err
				}
			}
			return nil
		}},
		hostileProbe{name: "maintenance/history-and-asof", run: func(h *hostileEnv) error {
			rows, err := h.query("SHOW SINK HISTORY canary_d LIMIT 1")
			if err != nil {
				return err
			}
			if len(rows) != 1 {
				return h.wrong("SHOW SINK HISTORY canary_d LIMIT 1 = %v", rows)
			}
			got, err := h.query(fmt.Sprintf("SELECT count(*) FROM canary_d AS OF %s", rows[0][0]))
			if err != nil {
				return err
			}
			if len(got) != 1 || got[0][0] != "3" {
				return h.wrong("canary_d AS OF its newest version holds %v rows, want 3", got)
			}
			return nil
		}},
	)
}
