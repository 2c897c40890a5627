package main

import (
	"fmt"
	"strings"
)

// Probes of ALTER SINK: bad and oversized names, types out of range or
// nested without end, unknown options and options fixed at creation,
// strings that look like SQL injection into the option values, a CHECK
// expression or the CALL form's arguments, changes that would break the
// canaries (dropping their key, renaming onto a taken name) and an ALTER
// inside a transaction that writes to the sink. Each must fail with its
// code and leave the canaries as they were. The probes that succeed, or
// may break a sink, work on a sink of their own (alter_probe).

func init() {
	long := strings.Repeat("c", 65)
	many := make([]string, 0, 2001)
	for i := range 2000 {
		many = append(many, fmt.Sprintf("ADD COLUMN c%d INT", i))
	}
	many = append(many, "ADD COLUMN c0 INT") // a duplicate: refused before the table is touched
	errs := []struct {
		name string
		want int
		sql  string
	}{
		{"empty-name", 1210, "ALTER SINK `` ADD COLUMN c INT"},
		{"long-sink-name", 1210, "ALTER SINK " + long + " ADD COLUMN c INT"},
		{"nul-in-name", 1210, "ALTER SINK `canary\x00_d` ADD COLUMN c INT"},
		{"long-column-name", 1210, "ALTER SINK canary_d ADD COLUMN " + long + " INT"},
		{"trailing-space-name", 1210, "ALTER SINK canary_d ADD COLUMN `c ` INT"},
		{"unknown-sink", 1146, "ALTER SINK no_such_sink ADD COLUMN c INT"},
		{"sink-name-injection", 1146, "ALTER SINK `canary_d; DROP SINK canary_d` ADD COLUMN c INT"},
		{"huge-varchar", 1210, "ALTER SINK canary_d ADD COLUMN c VARCHAR(99999999999)"},
		{"huge-decimal", 1235, "ALTER SINK canary_d ADD COLUMN c DECIMAL(65,30)"},
		{"nested-type", 1064, "ALTER SINK canary_d ADD COLUMN c INT" + strings.Repeat("(", 5000)},
		{"unknown-type", 1235, "ALTER SINK canary_d ADD COLUMN c " + strings.Repeat("X", 10000)},
		{"enum", 1235, "ALTER SINK canary_d ADD COLUMN c ENUM('a', 'b')"},
		{"not-null", 1235, "ALTER SINK canary_d ADD COLUMN c INT NOT NULL"},
		{"many-changes-duplicate", 1060, "ALTER SINK canary_d " + strings.Join(many, ", ")},
		{"duplicate-column", 1060, "ALTER SINK canary_d ADD COLUMN V INT"},
		{"rename-onto-taken", 1060, "ALTER SINK canary_d RENAME COLUMN v TO ID"},
		{"drop-key", 1846, "ALTER SINK canary_d DROP COLUMN id"},
		{"drop-unknown", 1054, "ALTER SINK canary_i DROP COLUMN nope"},
		{"drop-op-column", 1846, "ALTER SINK canary_d DROP COLUMN _op"},
		{"unknown-option", 1210, "ALTER SINK canary_d SET (frobnicate = 1)"},
		{"unknown-option-dotted", 1210, "ALTER SINK canary_d SET (delta.appendOnly = true)"},
		{"catalog-option", 1846, "ALTER SINK canary_i SET (catalog.uri = 'http://attacker.invalid/')"},
		{"storage-option", 1846, "ALTER SINK canary_d SET (storage.s3.endpoint = 'http://attacker.invalid/')"},
		{"writer-id", 1846, "ALTER SINK canary_d SET (writer_id = 'someone-else')"},
		{"mode", 1846, "ALTER SINK canary_d SET (mode = 'append')"},
		{"memory-limit-injection", 1210, "ALTER SINK canary_d SET (memory_limit = '1GB''; SET memory_limit = ''1B')"},
		{"memory-limit-backslash", 1210, "ALTER SINK canary_d SET (memory_limit = '1GB\\\\')"},
		{"flush-age-garbage", 1210, "ALTER SINK canary_d SET (flush_age = '1h; DROP SINK canary_d')"},
		{"option-twice", 1210, "ALTER SINK canary_d SET (flush_rows = 1, flush_rows = 2)"},
		{"column-mapping-iceberg", 1846, "ALTER SINK canary_i SET (column_mapping = 'name')"},
		{"check-second-statement", 1210, "ALTER SINK canary_d ADD CONSTRAINT c CHECK (1 = 1; DROP SINK canary_d)"},
		{"check-unbalanced", 1064, "ALTER SINK canary_d ADD CONSTRAINT c CHECK (id > 0))) OR ((1 = 1"},
		{"check-unterminated", 1064, "ALTER SINK canary_d ADD CONSTRAINT c CHECK (v = 'x)"},
		{"check-unnamed", 1064, "ALTER SINK canary_d ADD CHECK (id > 0)"},
		{"stacked", 1064, "ALTER SINK canary_d ADD COLUMN c INT; DROP SINK canary_d"},
		{"call-stacked", 1064, "CALL lakesql_alter_sink('canary_d', 'ADD COLUMN c INT; DROP SINK canary_d')"},
		{"call-empty-change", 1210, "CALL lakesql_alter_sink('canary_d', NULL)"},
		{"call-name-injection", 1146, "CALL lakesql_alter_sink('canary_d` SET (flush_rows = 1); --', 'SET (flush_rows = 2)')"},
		{"call-set-and-drop", 1235, "CALL lakesql_alter_sink('canary_d', 'SET (flush_rows = 5), DROP COLUMN v')"},
		{"table-is-mysql", 1235, "ALTER TABLE canary_d ADD COLUMN c INT"},
	}
	for _, e := range errs {
		registerHostile(hostileProbe{name: "alter/" + e.name, want: e.want,
			run: func(h *hostileEnv) error { return h.exec(e.sql) }})
	}
	registerHostile(
		// A CHECK that reads a file: refused, whatever the code (it is
		// not built yet, and once it is, the expression must not reach
		// the file system).
		hostileProbe{name: "alter/check-reads-file", run: func(h *hostileEnv) error {
			if err := h.exec("ALTER SINK canary_d ADD CONSTRAINT leak CHECK (length(read_text('" + h.outside + "/secret.txt')) > 0)"); err == nil {
				return h.wrong("a CHECK reading a file outside the roots was accepted")
			}
			return nil
		}},
		// Inside a transaction that writes to the sink: 1192, and the
		// transaction is rolled back, the canary untouched.
		hostileProbe{name: "alter/in-transaction", want: 1192, run: func(h *hostileEnv) error {
			conn, err := h.db.Conn(h.ctx)
			if err != nil {
				return err
			}
			defer conn.Close()
			defer conn.ExecContext(h.ctx, "ROLLBACK")
			if _, err := conn.ExecContext(h.ctx, "BEGIN"); err != nil {
				return err
			}
			if _, err := conn.ExecContext(h.ctx, "INSERT INTO canary_d VALUES (4, 'four')"); err != nil {
				return err
			}
			_, err = conn.ExecContext(h.ctx, "ALTER SINK canary_d SET (flush_rows = 10)")
			return err
		}},
		// A sink of the probes' own: options that succeed, one DuckDB may
		// refuse when the sink opens again, and the sink still writes.
		hostileProbe{name: "alter/own-sink-options", run: func(h *hostileEnv) error {
			if err := h.exec("CREATE SINK alter_probe INTO DELTA 'lake/alter_probe' (id BIGINT NOT NULL, v VARCHAR(8)) WITH (auto_compact = false)"); err != nil {
				return err
			}
			for _, q := range []string{
				"ALTER SINK alter_probe SET (flush_rows = 1, flush_bytes = '1KB', flush_age = '1s', memory_limit = '64MB')",
				"CALL lakesql_alter_sink('alter_probe', 'SET (compact_min_files = 100000)')",
				"INSERT INTO alter_probe VALUES (1, 'a'), (2, 'b'), (3, 'c')",
			} {
				if err := h.exec(q); err != nil {
					return fmt.Errorf("%s: %w", q, err)
				}
			}
			// The largest memory limit the option reads: accepted or
			// refused, the sink must go on writing.
			_ = h.exec("ALTER SINK alter_probe SET (memory_limit = '4194303TB')")
			if err := h.exec("INSERT INTO alter_probe VALUES (4, 'd')"); err != nil {
				return fmt.Errorf("the sink does not write after an oversized memory limit: %w", err)
			}
			rows, err := h.query("SELECT count(*) FROM alter_probe")
			if err != nil {
				return err
			}
			if len(rows) != 1 || rows[0][0] != "4" {
				return h.wrong("alter_probe holds %v rows, want 4", rows)
			}
			return h.exec("DROP SINK alter_probe")
		}},
	)
}
