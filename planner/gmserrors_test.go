package planner

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
)

// Recognising go-mysql-server's errors by message must not catch other
// errors: a kind whose format is all verbs is recognised by Is only, and a
// pattern takes neither a prefix, a suffix, nor a wrapped error.
func TestClassifyMessage(t *testing.T) {
	registerSystemVariables()
	type want struct {
		code  int
		state string
	}
	unknown := want{mysql.ERUnknownError, mysql.SSUnknownSQLState}
	for msg, w := range map[string]want{
		// The messages go-mysql-server gives lakesql's statements.
		"Field 'id' doesn't have a default value":                                           {1364, "HY000"},
		"300 out of range for tinyint":                                                      {1264, "22003"},
		"-2147483649 out of range for int":                                                  {1264, "22003"},
		"1e+39 out of range for float":                                                      {1264, "22003"},
		"9223372036854775808 out of range for bigint":                                       {1264, "22003"},
		"256 out of range for tinyint unsigned":                                             {1264, "22003"},
		"1000 out of range for decimal(4,2)":                                                {1264, "22003"},
		"Out of range value for column of Decimal type ":                                    {1264, "22003"},
		"Incorrect datetime value: '2024-02-30'":                                            {1292, "22007"},
		"Incorrect datetime value: '2024-01-01 25:00:00'":                                   {1292, "22007"},
		`value "2040-01-01 00:00:00" is outside of timestamp range`:                         {1292, "22007"},
		"number of values does not match number of columns provided":                        {1136, "21S01"},
		"invalid string for charset utf8mb4: '[255 254 97]'":                                {1366, "HY000"},
		`column "nope" could not be found in any table in scope`:                            {1054, "42S22"},
		`table "s" does not have column "nope"`:                                             {1054, "42S22"},
		"tables cannot be created on database lakesql":                                      {1235, "42000"},
		"tables cannot be dropped on database lakesql":                                      {1235, "42000"},
		"tables cannot be renamed on database lakesql":                                      {1235, "42000"},
		"table s cannot be altered":                                                         {1235, "42000"},
		"table doesn't support TRUNCATE":                                                    {1235, "42000"},
		"table doesn't support REPLACE INTO":                                                {1235, "42000"},
		`database "lakesql" doesn't support triggers`:                                       {1235, "42000"},
		"database does not support temporary tables":                                        {1235, "42000"},
		"the table is not indexable":                                                        {1235, "42000"},
		"Variable 'lakesql_epoch' can't be set to the value of '-5'":                        {1231, "42000"},
		"Variable 'lakesql_epoch' can't be set to the value of 'soon'":                      {1232, "42000"},
		"Variable 'lakesql_epoch' can't be set to the value of '1.5'":                       {1232, "42000"},
		"Variable 'lakesql_epoch' can't be set to the value of '<nil>'":                     {1232, "42000"},
		"Variable 'autocommit' can't be set to the value of 'soon'":                         {1231, "42000"},
		"Variable 'nosuchvar' can't be set to the value of 'soon'":                          {1231, "42000"},
		"Variable 'lakesql_epoch' is a SESSION variable and can't be used with SET GLOBAL":  {1228, "HY000"},
		"Variable 'max_connections' is a GLOBAL variable and should be set with SET GLOBAL": {1229, "HY000"},
		"Variable 'version' is a read only variable":                                        {1238, "HY000"},
		"Unknown system variable 'nope'":                                                    {1193, "HY000"},
		// The MySQL parser's own errors (a PREPARE ... FROM text that does not parse).
		"syntax error at position 3 near 'x'": {1064, "42000"},
		"syntax error at position 12":         {1064, "42000"},

		// Near misses: lakesql's own messages and others that share words
		// with a kind's format.
		"sink t: DELETE is not supported yet": unknown,
		"anything at all":                     unknown,
		"":                                    unknown,
		"delta: 5 out of range for a int partition value":                                unknown,
		"protocol versions 1/2 out of range":                                             unknown,
		"sink w: out of range value for column 'tu' at row 1 (256 is not within 0..255)": unknown,
		`column "c": parameter 99 of type DECIMAL is out of range`:                       unknown,
		"300 out of range for tinyint; and more":                                         unknown,
		"sink s: 300 out of range for tinyint":                                           unknown,
		"Out of range value for column of Decimal type x":                                unknown,
		"sink s: Incorrect datetime value: '2024-02-30'":                                 unknown,
		"Incorrect datetime value: 'x': 'y'":                                             unknown,
		`sink s: column "nope" could not be found in any table in scope`:                 unknown,
		`column nope could not be found in any table in scope`:                           unknown,
		"tables cannot be created on database lakesql: disk full":                        unknown,
		"lakesql: tables cannot be created on database x":                                unknown,
		"table doesn't support TRUNCATE or anything":                                     unknown,
		"Variable 'x' can't be set to the value of 'y' (it is read only)":                unknown,
		"Unknown system variable":                                                        unknown,
		"sink s: syntax error at position 3 near 'x'":                                    unknown,
	} {
		got := ClassifyMessage(mysql.NewSQLError(mysql.ERUnknownError, mysql.SSUnknownSQLState, "%s", msg))
		if got.Num != w.code || got.State != w.state {
			t.Errorf("%q: %d (%s), want %d (%s)", msg, got.Num, got.State, w.code, w.state)
		}
	}
	// A code go-mysql-server already gave is kept.
	if got := ClassifyMessage(mysql.NewSQLError(mysql.ERDupEntry, "23000", "table doesn't support TRUNCATE")); got.Num != mysql.ERDupEntry {
		t.Errorf("a known code was changed to %d", got.Num)
	}
}

// Each kind is recognised by Is and, unless its format is too generic, by
// its own messages, and by no other kind's pattern first.
func TestGMSKindsOwnMessages(t *testing.T) {
	registerSystemVariables()
	verb := regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)
	for i, k := range gmsKinds {
		args := make([]any, len(verb.FindAllString(k.kind.Message, -1)))
		for j := range args {
			args[j] = "x"
		}
		err := k.kind.New(args...)
		code, state, ok := gmsCode(err)
		if !ok || code != k.code || state != k.state {
			t.Errorf("%q: Is gives %d (%s), want %d (%s)", err, code, state, k.code, k.state)
		}
		// Wrapped by lakesql or by go-mysql-server's insert.
		if c, _, _ := gmsCode(fmt.Errorf("sink s: %w", err)); c != k.code {
			t.Errorf("%q wrapped: %d, want %d", err, c, k.code)
		}
		if c := MySQLError(fmt.Errorf("sink s: %w", err)).Num; c != k.code {
			t.Errorf("%q: MySQLError gives %d, want %d", err, c, k.code)
		}
		if k.msg == nil {
			continue
		}
		for j, other := range gmsKinds[:i] {
			if other.msg != nil && other.msg.MatchString(err.Error()) {
				t.Errorf("%q is taken by kind %d (%q)", err, j, other.kind.Message)
			}
		}
		got := ClassifyMessage(mysql.NewSQLError(mysql.ERUnknownError, mysql.SSUnknownSQLState, "%s", err.Error()))
		if got.Num != k.code || got.State != k.state {
			t.Errorf("%q: by message %d (%s), want %d (%s)", err, got.Num, got.State, k.code, k.state)
		}
	}
}

// The errors go-mysql-server raises for lakesql's statements get MySQL's
// code and SQLSTATE (the sqllogictest suites check them over the wire).
func TestGMSErrorCodes(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	te.exec(s, `CREATE SINK s INTO DELTA 'lake/s' (id INT NOT NULL, t TINYINT, d DATE, x DECIMAL(4,2), ts TIMESTAMP)`)
	te.exec(s, `CREATE SINK u INTO DELTA 'lake/u' (id INT NOT NULL PRIMARY KEY, v VARCHAR(5)) WITH (mode = 'upsert')`)
	for _, c := range []struct {
		q     string
		code  int
		state string
	}{
		{"INSERT INTO s (id, t) VALUES (5, 300)", 1264, "22003"},
		{"INSERT INTO s (id, t) VALUES (5, -129)", 1264, "22003"},
		{"INSERT INTO s (id) VALUES (2147483648)", 1264, "22003"},
		{"INSERT INTO s (id, x) VALUES (5, 123.45)", 1264, "22003"},
		{"INSERT INTO s (id, t) SELECT 1, 300", 1264, "22003"},
		{"INSERT INTO s (id, d) VALUES (5, '2024-02-30')", 1292, "22007"},
		{"INSERT INTO s (id, d) VALUES (5, 'nope')", 1292, "22007"},
		{"INSERT INTO s (id, ts) VALUES (5, '10000-01-01 00:00:00')", 1292, "22007"},
		{"INSERT INTO s VALUES (5)", 1136, "21S01"},
		{"INSERT INTO u VALUES (5, X'FFFE61')", 1366, "HY000"},
		{"INSERT INTO s (id, t) VALUES (5)", 1136, "21S01"},
		{"SELECT nope FROM s", 1054, "42S22"},
		{"SELECT id FROM s WHERE nope = 1", 1054, "42S22"},
		{"SELECT s.nope FROM s", 1054, "42S22"},
		{"CREATE TABLE plain (id INT)", 1235, "42000"},
		{"DROP TABLE s", 1235, "42000"},
		{"TRUNCATE TABLE s", 1235, "42000"},
		{"ALTER TABLE s ADD COLUMN z INT", 1235, "42000"},
		{"RENAME TABLE s TO s2", 1235, "42000"},
		{"ALTER TABLE s RENAME TO s2", 1235, "42000"},
		{"CREATE INDEX i ON s (id)", 1235, "42000"},
		{"REPLACE INTO s (id) VALUES (1)", 1235, "42000"},
		{"REPLACE INTO u VALUES (1, 'r')", 1235, "42000"},
		{"SET lakesql_epoch = -5", 1231, "42000"},
		{"SET lakesql_epoch = 'soon'", 1232, "42000"},
		{"SET lakesql_epoch = 1.5", 1232, "42000"},
		{"SET GLOBAL lakesql_epoch = 1", 1228, "HY000"},
		{"SET autocommit = 'soon'", 1231, "42000"},
		{"SET SESSION max_connections = 5", 1229, "HY000"},
		{"SET GLOBAL nope_var = 1", 1193, "HY000"},
	} {
		_, err := te.e.Exec(context.Background(), s, c.q)
		if err == nil {
			t.Errorf("%s: succeeded", c.q)
			continue
		}
		if got := MySQLError(err); got.Num != c.code || got.State != c.state {
			t.Errorf("%s: %d (%s) %q, want %d (%s)", c.q, got.Num, got.State, got.Message, c.code, c.state)
		}
	}
	// Nothing of it was written.
	if n := te.rows(s, "SELECT count(*) FROM s")[0][0]; fmt.Sprint(n) != "0" {
		t.Errorf("s has %v rows", n)
	}
}
