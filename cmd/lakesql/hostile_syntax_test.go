package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// Probes of the categories the server already handled before the security
// issue: syntax garbage, huge and deeply nested statements, invalid UTF-8
// and NUL, and corrupt Delta logs.

// syntaxTokens are the pieces garbage statements are made of; ')' is left
// out, so a statement that opens a parenthesis never parses.
var syntaxTokens = []string{
	"SELECT", "FROM", "WHERE", "INSERT", "INTO", "VALUES", "CREATE", "SINK", "DROP", "TABLE",
	"(", ",", ";", "*", "+", "-", "/", "=", "<>", "AND", "OR", "NOT", "NULL", "1", "-9e999",
	"'str'", "'", `"`, "`", "@", "@@", "?", ":=", "\\", "#", "--", "/*", "*/", "0x", "x'",
	"DELTA", "ICEBERG", "WITH", "PARTITION", "BY", "CALL", "lakesql_commit", "canary_d",
	"UNION", "JOIN", "ON", "GROUP", "ORDER", "LIMIT", "SET", "lakesql_epoch", "KILL", "LOAD",
}

func init() {
	rng := rand.New(rand.NewPCG(15, 1))
	for i := range 300 {
		var b strings.Builder
		b.WriteString(syntaxTokens[rng.IntN(5)])
		b.WriteString(" (")
		for range 1 + rng.IntN(40) {
			b.WriteByte(' ')
			b.WriteString(syntaxTokens[rng.IntN(len(syntaxTokens))])
		}
		q := b.String()
		registerHostile(hostileProbe{name: fmt.Sprintf("syntax/garbage-%03d", i), want: 1064,
			run: func(h *hostileEnv) error { return h.exec(q) }})
	}
	for i := range 100 {
		buf := make([]byte, 1+rng.IntN(300))
		for j := range buf {
			buf[j] = byte(rng.UintN(256))
		}
		// A leading '(' that is never closed keeps random bytes from
		// being a statement by chance.
		q := "SELECT (" + strings.ReplaceAll(string(buf), ")", "")
		registerHostile(hostileProbe{name: fmt.Sprintf("syntax/bytes-%03d", i), want: 1064,
			run: func(h *hostileEnv) error { return h.exec(q) }})
	}

	registerHostile(
		hostileProbe{name: "syntax/huge-literal", run: func(h *hostileEnv) error {
			const n = 8 << 20
			rows, err := h.query("SELECT LENGTH('" + strings.Repeat("x", n) + "')")
			if err != nil {
				return err
			}
			if len(rows) != 1 || rows[0][0] != fmt.Sprint(n) {
				return h.wrong("LENGTH of an 8 MiB literal = %v", rows)
			}
			return nil
		}},
		hostileProbe{name: "syntax/huge-in-list", run: func(h *hostileEnv) error {
			ids := make([]string, 50000)
			for i := range ids {
				ids[i] = fmt.Sprint(i)
			}
			rows, err := h.query("SELECT count(*) FROM canary_d WHERE id IN (" + strings.Join(ids, ",") + ")")
			if err != nil {
				return err
			}
			if len(rows) != 1 || rows[0][0] != "3" {
				return h.wrong("count over a 50,000-item IN list = %v", rows)
			}
			return nil
		}},
		hostileProbe{name: "syntax/nested-parens-50", run: func(h *hostileEnv) error {
			rows, err := h.query("SELECT " + strings.Repeat("(", 50) + "7" + strings.Repeat(")", 50))
			if err != nil {
				return err
			}
			if len(rows) != 1 || rows[0][0] != "7" {
				return h.wrong("50 nested parentheses = %v", rows)
			}
			return nil
		}},
		// The parser's nesting bound (vitess) answers before any analysis.
		hostileProbe{name: "syntax/nested-parens-100000", want: 1064, run: func(h *hostileEnv) error {
			return h.exec("SELECT " + strings.Repeat("(", 100000) + "7" + strings.Repeat(")", 100000))
		}},
		hostileProbe{name: "syntax/nested-subqueries-50", run: func(h *hostileEnv) error {
			q := "SELECT id FROM canary_d WHERE id = 2"
			for i := range 50 {
				q = fmt.Sprintf("SELECT id FROM (%s) t%d", q, i)
			}
			rows, err := h.query(q)
			if err != nil {
				return err
			}
			if len(rows) != 1 || rows[0][0] != "2" {
				return h.wrong("50 nested subqueries = %v", rows)
			}
			return nil
		}},
		hostileProbe{name: "syntax/unclosed-quote-1mib", want: 1064, run: func(h *hostileEnv) error {
			return h.exec("SELECT '" + strings.Repeat("a", 1<<20))
		}},
		hostileProbe{name: "syntax/empty", want: 1065, run: func(h *hostileEnv) error {
			return h.exec(" ")
		}},
		hostileProbe{name: "syntax/comment-only", want: 1065, run: func(h *hostileEnv) error {
			return h.exec("/* nothing */")
		}},
		hostileProbe{name: "syntax/multi-statement", want: 1064, run: func(h *hostileEnv) error {
			return h.exec("SELECT 1; DROP SINK canary_d")
		}},
	)

	// Invalid UTF-8 and NUL, in a scratch sink of their own.
	registerHostile(
		hostileProbe{name: "utf8/invalid-in-insert", want: 1366, run: func(h *hostileEnv) error {
			if err := h.exec("CREATE SINK IF NOT EXISTS utf8_scratch INTO DELTA 'lake/utf8_scratch' (id BIGINT NOT NULL, v VARCHAR(32))"); err != nil {
				return h.wrong("create the scratch sink: %v", err)
			}
			return h.exec("INSERT INTO utf8_scratch VALUES (1, 'a\xff\xfeb')")
		}},
		hostileProbe{name: "utf8/invalid-bound-parameter", want: 1366, run: func(h *hostileEnv) error {
			if err := h.exec("CREATE SINK IF NOT EXISTS utf8_scratch INTO DELTA 'lake/utf8_scratch' (id BIGINT NOT NULL, v VARCHAR(32))"); err != nil {
				return h.wrong("create the scratch sink: %v", err)
			}
			return h.exec("INSERT INTO utf8_scratch VALUES (?, ?)", 2, "\xc3\x28")
		}},
		hostileProbe{name: "utf8/invalid-identifier", want: 1146, run: func(h *hostileEnv) error {
			return h.exec("SELECT * FROM `t\xff`")
		}},
		hostileProbe{name: "utf8/nul-in-identifier", want: 1146, run: func(h *hostileEnv) error {
			return h.exec("SELECT * FROM `canary\x00_d`")
		}},
		hostileProbe{name: "utf8/nul-outside-quotes", want: 1064, run: func(h *hostileEnv) error {
			return h.exec("SELECT 1 \x00 FROM canary_d")
		}},
		hostileProbe{name: "utf8/nul-in-value-round-trip", run: func(h *hostileEnv) error {
			if err := h.exec("CREATE SINK IF NOT EXISTS nul_scratch INTO DELTA 'lake/nul_scratch' (id BIGINT NOT NULL, v VARCHAR(32))"); err != nil {
				return h.wrong("create the scratch sink: %v", err)
			}
			if err := h.exec("INSERT INTO nul_scratch VALUES (1, ?)", "a\x00b"); err != nil {
				return err
			}
			rows, err := h.query("SELECT HEX(v) FROM nul_scratch WHERE id = 1")
			if err != nil {
				return err
			}
			if len(rows) != 1 || rows[0][0] != "610062" {
				return h.wrong("a NUL inside a value came back as %v", rows)
			}
			return nil
		}},
	)

	// Corrupt Delta logs: each variant gets a table of its own, created by
	// the sink, then damaged on disk; reading it must fail clearly, and the
	// canaries are untouched.
	corrupt := []struct {
		name  string
		entry string // the content of version 1
	}{
		{"truncated-json", `{"add":{"path":"x.parquet","size":`},
		{"not-json", "\x00\x01\x02 garbage \xff"},
		{"unknown-action-shape", `{"add":"a string"}`},
		{"reader-feature", `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["hostileFeature"],"writerFeatures":["hostileFeature"]}}`},
		{"huge-version-number", `{"commitInfo":{"version":99999999999999999999999}}` + "\n" + `{"add":{"path":"x.parquet","size":-1,"partitionValues":{},"modificationTime":0,"dataChange":true}}`},
		{"missing-file", `{"add":{"path":"does-not-exist.parquet","size":10,"partitionValues":{},"modificationTime":0,"dataChange":true}}`},
	}
	for _, c := range corrupt {
		sink := "corrupt_" + strings.ReplaceAll(c.name, "-", "_")
		want := hostileCorruptCode
		if c.name == "reader-feature" {
			want = 1235 // not corrupt: a feature lakesql does not implement
		}
		registerHostile(hostileProbe{name: "corruptlog/" + c.name, want: want, run: func(h *hostileEnv) error {
			if err := h.exec("CREATE SINK " + sink + " INTO DELTA 'lake/" + sink + "' (id BIGINT NOT NULL)"); err != nil {
				return h.wrong("create %s: %v", sink, err)
			}
			entry := filepath.Join(h.data, "lake", sink, "_delta_log", "00000000000000000001.json")
			if err := os.WriteFile(entry, []byte(c.entry), 0o644); err != nil {
				return h.wrong("damage the log: %v", err)
			}
			_, err := h.query("SELECT count(*) FROM " + sink)
			return err
		}})
	}
	// A version missing from the middle of the log, in a copy of a table
	// (the process that wrote the table has its versions in memory).
	registerHostile(hostileProbe{name: "corruptlog/gap", want: hostileCorruptCode, run: func(h *hostileEnv) error {
		if err := h.exec("CREATE SINK corrupt_gap INTO DELTA 'lake/corrupt_gap' (id BIGINT NOT NULL)"); err != nil {
			return h.wrong("create: %v", err)
		}
		for i := range 3 {
			if err := h.exec(fmt.Sprintf("INSERT INTO corrupt_gap VALUES (%d)", i)); err != nil {
				return h.wrong("insert: %v", err)
			}
		}
		copied := filepath.Join(h.data, "lake", "corrupt_gap_copy")
		if err := os.CopyFS(copied, os.DirFS(filepath.Join(h.data, "lake", "corrupt_gap"))); err != nil {
			return h.wrong("copy the table: %v", err)
		}
		if err := os.Remove(filepath.Join(copied, "_delta_log", "00000000000000000002.json")); err != nil {
			return h.wrong("remove a version: %v", err)
		}
		return h.exec("CREATE SINK corrupt_gap_copy INTO DELTA 'lake/corrupt_gap_copy'")
	}})
}

// hostileCorruptCode is what reading a table whose log cannot be replayed
// answers: MySQL's ER_TABLE_CORRUPT.
const hostileCorruptCode = 1877
