package sinkddl

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/internal/sqlword"
)

// arrowEqual compares Arrow types by meaning: TimestampType has unexported
// fields that cmp cannot look into.
var arrowEqual = cmp.Comparer(func(a, b arrow.DataType) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return arrow.TypeEqual(a, b)
})

var (
	tsUTC = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	tsNTZ = &arrow.TimestampType{Unit: arrow.Microsecond}
)

func dec(p, s int32) arrow.DataType { return &arrow.Decimal128Type{Precision: p, Scale: s} }

func col(name, sqlType string, t arrow.DataType) ColumnDef {
	return ColumnDef{Name: name, SQLType: sqlType, Type: t}
}

func notNull(c ColumnDef) ColumnDef { c.NotNull = true; return c }

// validCases are statements that parse; they also seed FuzzParse.
var validCases = []struct {
	name string
	sql  string
	want Statement
}{
	{
		name: "design orders",
		sql: `CREATE SINK orders INTO DELTA 'lake/orders'
  (id BIGINT NOT NULL, amount DOUBLE, region VARCHAR(16), ts TIMESTAMP, PRIMARY KEY (id))
  PARTITION BY (region)
  WITH (mode = 'upsert', writer_id = 'svc-a', target_file_size = '128MB', checkpoint_interval = 10);`,
		want: &CreateSink{
			Name: "orders", Format: FormatDelta, Location: "lake/orders",
			Columns: []ColumnDef{
				notNull(col("id", "BIGINT", arrow.PrimitiveTypes.Int64)),
				col("amount", "DOUBLE", arrow.PrimitiveTypes.Float64),
				col("region", "VARCHAR(16)", arrow.BinaryTypes.String),
				col("ts", "TIMESTAMP", tsUTC),
			},
			PrimaryKey:  []string{"id"},
			PartitionBy: []PartitionExpr{{Column: "region", Transform: TransformIdentity}},
			Options: []Option{
				{Key: "mode", Value: "upsert"},
				{Key: "writer_id", Value: "svc-a"},
				{Key: "target_file_size", Value: "128MB"},
				{Key: "checkpoint_interval", Value: "10", Kind: OptionInteger},
			},
		},
	},
	{
		name: "design events",
		sql:  "CREATE SINK events INTO ICEBERG 'analytics.events' (id BIGINT, ts TIMESTAMP) PARTITION BY (day(ts), bucket(16, id));",
		want: &CreateSink{
			Name: "events", Format: FormatIceberg, Location: "analytics.events",
			Columns: []ColumnDef{col("id", "BIGINT", arrow.PrimitiveTypes.Int64), col("ts", "TIMESTAMP", tsUTC)},
			PartitionBy: []PartitionExpr{
				{Column: "ts", Transform: TransformDay},
				{Column: "id", Transform: TransformBucket, Param: 16},
			},
		},
	},
	{
		name: "attach",
		sql:  "CREATE SINK old INTO DELTA 'lake/existing';",
		want: &CreateSink{Name: "old", Format: FormatDelta, Location: "lake/existing"},
	},
	{
		name: "if not exists, lower case, double quotes",
		sql:  `create sink if not exists Orders into iceberg "db.Orders"`,
		want: &CreateSink{IfNotExists: true, Name: "Orders", Format: FormatIceberg, Location: "db.Orders"},
	},
	{
		name: "comments everywhere",
		sql:  "/* lead */ -- line\n# hash\nCREATE /* a */ SINK -- b\n s # c\n INTO/**/DELTA 'x' ; -- trailing",
		want: &CreateSink{Name: "s", Format: FormatDelta, Location: "x"},
	},
	{
		name: "quoted and non-ASCII names",
		sql:  "CREATE SINK `my sink` INTO DELTA 'x' (`select` INT, `a``b` TEXT, größe DATE, `if` JSON)",
		want: &CreateSink{
			Name: "my sink", Format: FormatDelta, Location: "x",
			Columns: []ColumnDef{
				col("select", "INT", arrow.PrimitiveTypes.Int32),
				col("a`b", "TEXT", arrow.BinaryTypes.String),
				col("größe", "DATE", arrow.FixedWidthTypes.Date32),
				col("if", "JSON", arrow.BinaryTypes.String),
			},
		},
	},
	{
		name: "case preserved, inline key, comment",
		sql:  "Create Sink MySink Into Delta 'X' (Id BigInt Not Null Primary Key, AMOUNT decimal(10,2) comment 'euros')",
		want: &CreateSink{
			Name: "MySink", Format: FormatDelta, Location: "X",
			Columns: []ColumnDef{
				{Name: "Id", SQLType: "BIGINT", Type: arrow.PrimitiveTypes.Int64, NotNull: true, PrimaryKey: true},
				{Name: "AMOUNT", SQLType: "DECIMAL(10,2)", Type: dec(10, 2), Comment: "euros"},
			},
			PrimaryKey: []string{"Id"},
		},
	},
	{
		name: "inline KEY makes the column NOT NULL",
		sql:  "CREATE SINK s INTO DELTA 'x' (id INT KEY, v TEXT)",
		want: &CreateSink{
			Name: "s", Format: FormatDelta, Location: "x",
			Columns: []ColumnDef{
				{Name: "id", SQLType: "INT", Type: arrow.PrimitiveTypes.Int32, NotNull: true, PrimaryKey: true},
				col("v", "TEXT", arrow.BinaryTypes.String),
			},
			PrimaryKey: []string{"id"},
		},
	},
	{
		name: "table-level key first, resolved case-insensitively",
		sql:  "CREATE SINK s INTO DELTA 'x' (PRIMARY KEY (b, A), a INT, b INT, c INT)",
		want: &CreateSink{
			Name: "s", Format: FormatDelta, Location: "x",
			Columns: []ColumnDef{
				notNull(col("a", "INT", arrow.PrimitiveTypes.Int32)),
				notNull(col("b", "INT", arrow.PrimitiveTypes.Int32)),
				col("c", "INT", arrow.PrimitiveTypes.Int32),
			},
			PrimaryKey: []string{"b", "a"},
		},
	},
	{
		name: "string escapes",
		sql:  `CREATE SINK s INTO DELTA 'a\\b\'c''d\n\t\0e\%\_\z\r\b\Z' (c TEXT COMMENT "say \"hi\" ""twice""")`,
		want: &CreateSink{
			Name: "s", Format: FormatDelta, Location: "a\\b'c'd\n\t\x00e\\%\\_z\r\b\x1a",
			Columns: []ColumnDef{{Name: "c", SQLType: "TEXT", Type: arrow.BinaryTypes.String, Comment: `say "hi" "twice"`}},
		},
	},
	{
		name: "every transform",
		sql: "CREATE SINK t INTO ICEBERG 'w.t' (ts TIMESTAMP, d DATE, id BIGINT, s VARCHAR(10), n DECIMAL(12,2), dt DATETIME) " +
			"PARTITION BY (year(ts), MONTH(d), days(dt), hours(ts), bucket(8, s), truncate(4, S), truncate(100, n), identity(id), d)",
		want: &CreateSink{
			Name: "t", Format: FormatIceberg, Location: "w.t",
			Columns: []ColumnDef{
				col("ts", "TIMESTAMP", tsUTC),
				col("d", "DATE", arrow.FixedWidthTypes.Date32),
				col("id", "BIGINT", arrow.PrimitiveTypes.Int64),
				col("s", "VARCHAR(10)", arrow.BinaryTypes.String),
				col("n", "DECIMAL(12,2)", dec(12, 2)),
				col("dt", "DATETIME", tsNTZ),
			},
			PartitionBy: []PartitionExpr{
				{Column: "ts", Transform: TransformYear},
				{Column: "d", Transform: TransformMonth},
				{Column: "dt", Transform: TransformDay},
				{Column: "ts", Transform: TransformHour},
				{Column: "s", Transform: TransformBucket, Param: 8},
				{Column: "s", Transform: TransformTruncate, Param: 4},
				{Column: "n", Transform: TransformTruncate, Param: 100},
				{Column: "id", Transform: TransformIdentity},
				{Column: "d", Transform: TransformIdentity},
			},
		},
	},
	{
		name: "every option kind",
		sql: "CREATE SINK s INTO ICEBERG 'a.b' WITH (Mode = upsert, CATALOG.URI = 'http://h:1/x', storage . secret_access_key = \"s3cr3t\", " +
			"checkpoint_interval = 10, neg = -5, pos = +7, padded = 007, flag = true, other = FALSE, quoted = `some value`, kw = `TRUE`)",
		want: &CreateSink{
			Name: "s", Format: FormatIceberg, Location: "a.b",
			Options: []Option{
				{Key: "mode", Value: "upsert", Kind: OptionIdentifier},
				{Key: "catalog.uri", Value: "http://h:1/x"},
				{Key: "storage.secret_access_key", Value: "s3cr3t"},
				{Key: "checkpoint_interval", Value: "10", Kind: OptionInteger},
				{Key: "neg", Value: "-5", Kind: OptionInteger},
				{Key: "pos", Value: "7", Kind: OptionInteger},
				{Key: "padded", Value: "7", Kind: OptionInteger},
				{Key: "flag", Value: "true", Kind: OptionBoolean},
				{Key: "other", Value: "false", Kind: OptionBoolean},
				{Key: "quoted", Value: "some value", Kind: OptionIdentifier},
				{Key: "kw", Value: "TRUE", Kind: OptionIdentifier},
			},
		},
	},
	{
		name: "type spellings",
		sql: "CREATE SINK s INTO DELTA 'x' (a INT(11), b TINYINT(1), c DOUBLE PRECISION, d DECIMAL, e NUMERIC(5), f FLOAT(30), " +
			"g INT UNSIGNED, h INTEGER SIGNED, i float(10), j char, k nchar(3), l REAL, m mediumint unsigned, n TINYINT(1) UNSIGNED, " +
			"o TIMESTAMP(6), p bool, q INTEGER(10) UNSIGNED, r fixed(38,30), t nvarchar(5))",
		want: &CreateSink{
			Name: "s", Format: FormatDelta, Location: "x",
			Columns: []ColumnDef{
				col("a", "INT", arrow.PrimitiveTypes.Int32),
				col("b", "BOOLEAN", arrow.FixedWidthTypes.Boolean),
				col("c", "DOUBLE", arrow.PrimitiveTypes.Float64),
				col("d", "DECIMAL(10,0)", dec(10, 0)),
				col("e", "DECIMAL(5,0)", dec(5, 0)),
				col("f", "DOUBLE", arrow.PrimitiveTypes.Float64),
				col("g", "INT UNSIGNED", arrow.PrimitiveTypes.Int64),
				col("h", "INT", arrow.PrimitiveTypes.Int32),
				col("i", "FLOAT", arrow.PrimitiveTypes.Float32),
				col("j", "CHAR", arrow.BinaryTypes.String),
				col("k", "CHAR(3)", arrow.BinaryTypes.String),
				col("l", "DOUBLE", arrow.PrimitiveTypes.Float64),
				col("m", "MEDIUMINT UNSIGNED", arrow.PrimitiveTypes.Int32),
				col("n", "TINYINT UNSIGNED", arrow.PrimitiveTypes.Int16),
				col("o", "TIMESTAMP(6)", tsUTC),
				col("p", "BOOLEAN", arrow.FixedWidthTypes.Boolean),
				col("q", "INT UNSIGNED", arrow.PrimitiveTypes.Int64),
				col("r", "DECIMAL(38,30)", dec(38, 30)),
				col("t", "VARCHAR(5)", arrow.BinaryTypes.String),
			},
		},
	},
	{
		name: "explicit NULL and repeated NOT NULL",
		sql:  "CREATE SINK s INTO DELTA 'x' (a INT NULL, b INT NOT NULL NOT NULL, comment TEXT COMMENT 'c', date DATE, status INT)",
		want: &CreateSink{
			Name: "s", Format: FormatDelta, Location: "x",
			Columns: []ColumnDef{
				col("a", "INT", arrow.PrimitiveTypes.Int32),
				notNull(col("b", "INT", arrow.PrimitiveTypes.Int32)),
				{Name: "comment", SQLType: "TEXT", Type: arrow.BinaryTypes.String, Comment: "c"},
				col("date", "DATE", arrow.FixedWidthTypes.Date32),
				col("status", "INT", arrow.PrimitiveTypes.Int32),
			},
		},
	},
	{
		name: "attach with partitioning and options",
		sql:  "CREATE SINK s INTO ICEBERG 'a.b' PARTITION BY (bucket(4, id), Day(TS)) WITH (k = 1)",
		want: &CreateSink{
			Name: "s", Format: FormatIceberg, Location: "a.b",
			PartitionBy: []PartitionExpr{{Column: "id", Transform: TransformBucket, Param: 4}, {Column: "TS", Transform: TransformDay}},
			Options:     []Option{{Key: "k", Value: "1", Kind: OptionInteger}},
		},
	},
	{name: "drop", sql: "DROP SINK orders", want: &DropSink{Name: "orders"}},
	{name: "drop if exists purge", sql: "drop sink if exists `a``b` purge;", want: &DropSink{IfExists: true, Name: "a`b", Purge: true}},
	{name: "drop a sink named purge", sql: "DROP SINK purge", want: &DropSink{Name: "purge"}},
	{name: "drop a sink named purge, purging", sql: "DROP SINK purge PURGE", want: &DropSink{Name: "purge", Purge: true}},
	{name: "show sinks", sql: "SHOW SINKS", want: &ShowSinks{}},
	{name: "show sinks with comments", sql: "show/* c */sinks ; --", want: &ShowSinks{}},
	{name: "show create sink", sql: "SHOW CREATE SINK `my sink`;", want: &ShowCreateSink{Name: "my sink"}},
	{name: "show sink status", sql: "SHOW SINK STATUS", want: &ShowSinkStatus{}},
	{name: "show sink status of one", sql: "show sink status Orders;", want: &ShowSinkStatus{Name: "Orders"}},
}

func TestParse(t *testing.T) {
	for _, tc := range validCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.sql)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.sql, err)
			}
			if d := cmp.Diff(tc.want, got, arrowEqual); d != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tc.sql, d)
			}
			if !IsLakesqlStatement(tc.sql) {
				t.Errorf("IsLakesqlStatement(%q) = false for a statement Parse accepts", tc.sql)
			}
			checkRoundTrip(t, got)
		})
	}
}

// checkRoundTrip checks that a parsed statement renders SQL that parses back
// to an equal statement, and that rendering is then stable.
func checkRoundTrip(t testing.TB, stmt Statement) {
	t.Helper()
	text := stmt.String()
	again, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse(String()) of %#v: %v\nString() = %q", stmt, err, text)
	}
	if d := cmp.Diff(stmt, again, arrowEqual); d != "" {
		t.Fatalf("Parse(String()) differs (-first +again):\n%s\nString() = %q", d, text)
	}
	if again.String() != text {
		t.Fatalf("String() is not stable: %q then %q", text, again.String())
	}
}

func TestString(t *testing.T) {
	for _, tc := range []struct{ sql, want string }{
		{validCases[0].sql, "CREATE SINK `orders` INTO DELTA 'lake/orders' (`id` BIGINT NOT NULL, `amount` DOUBLE, `region` VARCHAR(16), " +
			"`ts` TIMESTAMP, PRIMARY KEY (`id`)) PARTITION BY (`region`) " +
			"WITH (mode = 'upsert', writer_id = 'svc-a', target_file_size = '128MB', checkpoint_interval = 10)"},
		{"create sink if not exists s into iceberg 'a' (ID int primary key comment 'it''s', v datetime(3)) partition by (days(v), bucket(2,ID), truncate(3, id), identity(v))",
			"CREATE SINK IF NOT EXISTS `s` INTO ICEBERG 'a' (`ID` INT NOT NULL PRIMARY KEY COMMENT 'it\\'s', `v` DATETIME(3)) " +
				"PARTITION BY (day(`v`), bucket(2, `ID`), truncate(3, `ID`), `v`)"},
		{"CREATE SINK s INTO DELTA 'x' WITH (a = b, c = `d e`, f = `false`, g = -0, h = true, i = \"q\")",
			"CREATE SINK `s` INTO DELTA 'x' WITH (a = b, c = `d e`, f = `false`, g = 0, h = TRUE, i = 'q')"},
		{"CREATE SINK s INTO DELTA 'tab\there\nnul\x00\\\\'", "CREATE SINK `s` INTO DELTA 'tab\\there\\nnul\\0\\\\'"},
		{"drop sink if exists x purge", "DROP SINK IF EXISTS `x` PURGE"},
		{"show sinks", "SHOW SINKS"},
		{"show create sink x", "SHOW CREATE SINK `x`"},
		{"show sink status", "SHOW SINK STATUS"},
		{"show sink status `a``b`", "SHOW SINK STATUS `a``b`"},
	} {
		stmt, err := Parse(tc.sql)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.sql, err)
		}
		if got := stmt.String(); got != tc.want {
			t.Errorf("Parse(%q).String()\n got %s\nwant %s", tc.sql, got, tc.want)
		}
	}
}

func TestIsLakesqlStatement(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want bool
	}{
		{"CREATE SINK s INTO DELTA 'x'", true},
		{"  create sink", true},
		{"CREATE SINK", true},
		{"CREATE SINK`x`", true},
		{"/* c */ CREATE SINK s", true},
		{"-- c\nDROP SINK s", true},
		{"--\tc\nDROP SINK s", true},
		{"# c\nSHOW SINKS", true},
		{"Show/**/Sinks", true},
		{"SHOW CREATE SINK s", true},
		{"\n\tSHOW\n CREATE /* x */\n SINK s", true},
		{"SHOW SINK STATUS", true},
		{"show sink status s", true},
		{"SHOW SINK STATS", true}, // ours to refuse, with our error
		{"drop sink", true},

		{"", false},
		{"   ", false},
		{"-- CREATE SINK", false},
		{"/* CREATE SINK */ SELECT 1", false},
		{"# CREATE SINK\nSELECT 1", false},
		{"--CREATE SINK s", false}, // not a comment without a blank after --
		{"/* unterminated CREATE SINK", false},
		{"CREATE TABLE t (a INT)", false},
		{"CREATE SINKS", false},
		{"CREATESINK", false},
		{"CREATE", false},
		{"SHOW TABLES", false},
		{"SHOW CREATE TABLE t", false},
		{"SHOW SINKSX", false},
		{"SHOW CREATE", false},
		{"SELECT 'CREATE SINK'", false},
		{"INSERT INTO sink VALUES (1)", false},
		{"DROP TABLE sink", false},
		{"`CREATE` SINK s", false},
		{"CREATE `SINK` s", false},
		{"CREATE ſINK s", false}, // U+017F folds to s in Unicode, not in SQL
		{"CREATE\u00a0SINK s", false},
	} {
		if got := IsLakesqlStatement(tc.sql); got != tc.want {
			t.Errorf("IsLakesqlStatement(%q) = %v, want %v", tc.sql, got, tc.want)
		}
	}
}

const long65 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

// errorCases are statements Parse refuses, with the exact message. sentinel
// is the error a *DefinitionError wraps, or nil for a *SyntaxError.
var errorCases = []struct {
	sql      string
	want     string
	sentinel error
}{
	// Statements and their keywords.
	{"", "syntax error at position 1 near end of input: expected CREATE SINK, DROP SINK or SHOW SINKS", nil},
	{"SELECT 1", "syntax error at position 1 near 'SELECT': expected CREATE SINK, DROP SINK or SHOW SINKS", nil},
	{";", "syntax error at position 1 near ';': expected CREATE SINK, DROP SINK or SHOW SINKS", nil},
	{"CREATE TABLE t (a INT)", "syntax error at position 8 near 'TABLE': expected SINK", nil},
	{"CREATE SINK orders INTO PARQUET 'x'", "syntax error at position 25 near 'PARQUET': expected DELTA or ICEBERG", nil},
	{"CREATE SINK s 'x'", "syntax error at position 15 near ''x'': expected INTO", nil},
	{"CREATE SINK INTO DELTA 'x'", "syntax error at position 13 near 'INTO': expected a sink name; INTO is a reserved word, write it in backquotes to use it as a name", nil},
	{"CREATE SINK IF s INTO DELTA 'x'", "syntax error at position 16 near 's': expected NOT EXISTS after IF", nil},
	{"CREATE SINK IF NOT s INTO DELTA 'x'", "syntax error at position 20 near 's': expected EXISTS after IF NOT", nil},
	{"CREATE SINK s INTO DELTA", "syntax error at position 25 near end of input: expected the table location as a quoted string", nil},
	{"CREATE SINK s INTO DELTA lake", "syntax error at position 26 near 'lake': expected the table location as a quoted string", nil},
	{"CREATE SINK s INTO DELTA 'x' foo", "syntax error at position 30 near 'foo': expected a column list, PARTITION BY, WITH or end of statement", nil},
	{"CREATE SINK s INTO DELTA 'x' (a INT) foo", "syntax error at position 38 near 'foo': expected PARTITION BY, WITH or end of statement", nil},
	{"CREATE SINK s INTO DELTA 'x' PARTITION BY (a) (a INT)", "syntax error at position 47 near '(': expected WITH or end of statement", nil},
	{"CREATE SINK s INTO DELTA 'x' WITH (a = 1) PARTITION BY (a)", "syntax error at position 43 near 'PARTITION': expected end of statement", nil},
	{"SHOW SINKS extra", "syntax error at position 12 near 'extra': expected end of statement", nil},
	{"SHOW SINKS; SHOW SINKS", "syntax error at position 13 near 'SHOW': expected end of input after ';': send one statement at a time", nil},
	{"SHOW SINKS;;", "syntax error at position 12 near ';': expected end of input after ';': send one statement at a time", nil},
	{"SHOW TABLES", "syntax error at position 6 near 'TABLES': expected SINKS, SINK STATUS or CREATE SINK after SHOW", nil},
	{"SHOW SINK STATS", "syntax error at position 11 near 'STATS': expected STATUS after SHOW SINK", nil},
	{"SHOW SINK STATUS 'x'", "syntax error at position 18 near ''x'': expected end of statement", nil},
	{"SHOW SINK STATUS with", "syntax error at position 18 near 'with': expected a sink name; WITH is a reserved word, write it in backquotes to use it as a name", nil},
	{"SHOW CREATE SINK", "syntax error at position 17 near end of input: expected a sink name", nil},
	{"SHOW CREATE TABLE t", "syntax error at position 13 near 'TABLE': expected SINK after SHOW CREATE", nil},
	{"DROP SINK", "syntax error at position 10 near end of input: expected a sink name", nil},
	{"DROP SINK s CASCADE", "syntax error at position 13 near 'CASCADE': expected PURGE or end of statement", nil},
	{"DROP SINK IF s", "syntax error at position 14 near 's': expected EXISTS after IF", nil},
	{"DROP TABLE t", "syntax error at position 6 near 'TABLE': expected SINK", nil},
	{"SHOW SINKS 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'", "syntax error at position 12 near ''aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...': expected end of statement", nil},

	// The lexer.
	{"CREATE SINK s INTO DELTA 'lake", "syntax error at position 26 near ''lake': unterminated string", nil},
	{`CREATE SINK s INTO DELTA 'lake\'`, `syntax error at position 26 near ''lake\'': unterminated string`, nil},
	{"CREATE SINK `s INTO DELTA 'x'", "syntax error at position 13 near '`s INTO DELTA 'x'': unterminated backquoted name", nil},
	{"CREATE SINK s /* INTO DELTA 'x'", "syntax error at position 15 near '/* INTO DELTA 'x'': unterminated /* comment", nil},
	{"CREATE SINK s@ INTO DELTA 'x'", "syntax error at position 14 near '@ INTO DELTA 'x'': unexpected character '@'", nil},
	{"CREATE SINK s INTO DELTA '\xff'", `syntax error at position 27 near '\xff': the statement is not valid UTF-8`, nil},
	{"SHOW SINK STATUS 😀", "syntax error at position 18 near '😀': unexpected character '😀'", nil},

	// Names.
	{"CREATE SINK `` INTO DELTA 'x'", "invalid sink definition at position 13 near '``': a sink name cannot be empty", ErrInvalidDefinition},
	{"CREATE SINK `a ` INTO DELTA 'x'", "invalid sink definition at position 13 near '`a `': a sink name cannot end with a space", ErrInvalidDefinition},
	{"DROP SINK `a\x00`", "invalid sink definition at position 11 near '`a\x00`': a sink name cannot contain a NUL character", ErrInvalidDefinition},
	{"SHOW CREATE SINK " + long65, "invalid sink definition at position 18 near 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...': a sink name is longer than 64 characters", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA ''", "invalid sink definition at position 26 near '''': the table location is empty", ErrInvalidDefinition},

	// Column lists.
	{"CREATE SINK s INTO DELTA 'x' ()", "syntax error at position 31 near ')': expected a column name", nil},
	{"CREATE SINK s INTO DELTA 'x' (a)", "syntax error at position 32 near ')': expected the type of column \"a\"", nil},
	{"CREATE SINK s INTO DELTA 'x' (a NOT NULL)", "syntax error at position 33 near 'NOT': expected the type of column \"a\"", nil},
	{"CREATE SINK s INTO DELTA 'x' (a COMMENT 'c')", "syntax error at position 33 near 'COMMENT': expected the type of column \"a\"", nil},
	{"CREATE SINK s INTO DELTA 'x' (a `INT`)", "syntax error at position 33 near '`INT`': expected the type of column \"a\"", nil},
	{"CREATE SINK s INTO DELTA 'x' (a INT,)", "syntax error at position 37 near ')': expected a column name", nil},
	{"CREATE SINK s INTO DELTA 'x' (a INT", "syntax error at position 36 near end of input: expected NOT NULL, NULL, PRIMARY KEY, COMMENT, ',' or ')' after column \"a\"", nil},
	{"CREATE SINK s INTO DELTA 'x' (a INT FOO)", "syntax error at position 37 near 'FOO': expected NOT NULL, NULL, PRIMARY KEY, COMMENT, ',' or ')' after column \"a\"", nil},
	{"CREATE SINK s INTO DELTA 'x' (a INT 'x')", "syntax error at position 37 near ''x'': expected NOT NULL, NULL, PRIMARY KEY, COMMENT, ',' or ')' after column \"a\"", nil},
	{"CREATE SINK s INTO DELTA 'x' (a INT NOT)", "syntax error at position 40 near ')': expected NULL after NOT", nil},
	{"CREATE SINK s INTO DELTA 'x' (a INT PRIMARY)", "syntax error at position 44 near ')': expected KEY after PRIMARY", nil},
	{"CREATE SINK s INTO DELTA 'x' (a INT COMMENT x)", "syntax error at position 45 near 'x': expected the comment of column \"a\" as a quoted string", nil},
	{"CREATE SINK s INTO DELTA 'x' (a VARCHAR(x))", "syntax error at position 41 near 'x': expected an integer parameter of type VARCHAR", nil},
	{"CREATE SINK s INTO DELTA 'x' (a DECIMAL(10 2))", "syntax error at position 44 near '2': expected ',' or ')' in the type parameters", nil},
	{"CREATE SINK s INTO DELTA 'x' (PRIMARY KEY id)", "syntax error at position 43 near 'id': expected '(' and the key columns after PRIMARY KEY", nil},
	{"CREATE SINK s INTO DELTA 'x' (a INT, PRIMARY KEY (a b))", "syntax error at position 53 near 'b': expected ',' or ')' in the PRIMARY KEY column list", nil},
	{"CREATE SINK s INTO DELTA 'x' (a INT, PRIMARY KEY (a) b)", "syntax error at position 54 near 'b': expected ',' or ')' in the column list", nil},
	{"CREATE SINK s INTO DELTA 'x' (key INT)", "unsupported feature at position 31 near 'key': KEY is not supported in a sink: a sink has columns and at most one PRIMARY KEY", ErrUnsupported},
	{"CREATE SINK s INTO DELTA 'x' (null INT)", "syntax error at position 31 near 'null': expected a column name; NULL is a reserved word, write it in backquotes to use it as a name", nil},
	{"CREATE SINK s INTO DELTA 'x' (a INT, A TEXT)", "invalid sink definition at position 38 near 'A': column \"A\" is defined twice (first at position 31)", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (a INT PRIMARY KEY, b INT PRIMARY KEY)", "invalid sink definition at position 56 near 'PRIMARY': a sink has one primary key, and this is a second one (on column \"b\")", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (a INT PRIMARY KEY, PRIMARY KEY (a))", "invalid sink definition at position 50 near 'PRIMARY': a sink has one primary key, and this is a second one", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (PRIMARY KEY (a), a INT KEY)", "invalid sink definition at position 54 near 'KEY': a sink has one primary key, and this is a second one (on column \"a\")", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (a INT, PRIMARY KEY (b))", "invalid sink definition at position 51 near 'b': PRIMARY KEY column \"b\" is not a column of sink \"s\"", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (a INT, PRIMARY KEY (a, A))", "invalid sink definition at position 54 near 'A': PRIMARY KEY lists column \"A\" twice", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (PRIMARY KEY (a))", "invalid sink definition at position 31 near 'PRIMARY': PRIMARY KEY without columns: declare the columns, or leave the column list out to attach to an existing table", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (a INT NULL NOT NULL)", "invalid sink definition at position 42 near 'NOT': column \"a\" is declared both NULL and NOT NULL", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (a INT NOT NULL NULL)", "invalid sink definition at position 46 near 'NULL': column \"a\" is declared both NOT NULL and NULL", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (a INT NULL PRIMARY KEY)", "invalid sink definition at position 31 near 'a': key column \"a\" is declared NULL, but every PRIMARY KEY column is NOT NULL", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (a INT NULL, PRIMARY KEY (A))", "invalid sink definition at position 56 near 'A': key column \"a\" is declared NULL, but every PRIMARY KEY column is NOT NULL", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (a INT COMMENT 'x' COMMENT 'y')", "invalid sink definition at position 49 near 'COMMENT': column \"a\" has two comments", ErrInvalidDefinition},

	// Unsupported column features.
	{"CREATE SINK s INTO DELTA 'x' (c INT DEFAULT 1)", "unsupported feature at position 37 near 'DEFAULT': column \"c\": DEFAULT values are not supported: a sink stores the values it is sent", ErrUnsupported},
	{"CREATE SINK s INTO DELTA 'x' (c INT NOT NULL default 1)", "unsupported feature at position 46 near 'default': column \"c\": DEFAULT values are not supported: a sink stores the values it is sent", ErrUnsupported},
	{"CREATE SINK s INTO DELTA 'x' (c INT AUTO_INCREMENT)", "unsupported feature at position 37 near 'AUTO_INCREMENT': column \"c\": AUTO_INCREMENT is not supported: a sink does not generate values", ErrUnsupported},
	{"CREATE SINK s INTO DELTA 'x' (c INT UNIQUE)", "unsupported feature at position 37 near 'UNIQUE': column \"c\": UNIQUE is not supported: a sink enforces NOT NULL and its PRIMARY KEY only", ErrUnsupported},
	{"CREATE SINK s INTO DELTA 'x' (c TEXT CHARACTER SET latin1)", "unsupported feature at position 38 near 'CHARACTER': column \"c\": character sets are not supported: text is stored as UTF-8", ErrUnsupported},
	{"CREATE SINK s INTO DELTA 'x' (c TEXT COLLATE utf8mb4_bin)", "unsupported feature at position 38 near 'COLLATE': column \"c\": collations are not supported: text is stored as UTF-8 and compared byte by byte", ErrUnsupported},
	{"CREATE SINK s INTO DELTA 'x' (c INT GENERATED ALWAYS AS (1))", "unsupported feature at position 37 near 'GENERATED': column \"c\": generated columns are not supported", ErrUnsupported},
	{"CREATE SINK s INTO DELTA 'x' (c TIMESTAMP ON UPDATE CURRENT_TIMESTAMP)", "unsupported feature at position 43 near 'ON': column \"c\": ON UPDATE is not supported: a sink does not generate values", ErrUnsupported},
	{"CREATE SINK s INTO DELTA 'x' (c INT ZEROFILL)", "unsupported feature at position 37 near 'ZEROFILL': column \"c\": ZEROFILL is not supported", ErrUnsupported},
	{"CREATE SINK s INTO DELTA 'x' (c INT, INDEX (c))", "unsupported feature at position 38 near 'INDEX': INDEX is not supported in a sink: a sink has columns and at most one PRIMARY KEY", ErrUnsupported},
	{"CREATE SINK s INTO DELTA 'x' (c INT, UNIQUE KEY (c))", "unsupported feature at position 38 near 'UNIQUE': UNIQUE is not supported in a sink: a sink has columns and at most one PRIMARY KEY", ErrUnsupported},
	{"CREATE SINK s INTO DELTA 'x' (c INT, FOREIGN KEY (c) REFERENCES t (c))", "unsupported feature at position 38 near 'FOREIGN': FOREIGN is not supported in a sink: a sink has columns and at most one PRIMARY KEY", ErrUnsupported},
	{"CREATE SINK s INTO DELTA 'x' (c INT, CONSTRAINT pk PRIMARY KEY (c))", "unsupported feature at position 38 near 'CONSTRAINT': CONSTRAINT is not supported in a sink: a sink has columns and at most one PRIMARY KEY", ErrUnsupported},

	// Column types; the type starts at position 33.
	{"CREATE SINK s INTO DELTA 'x' (c ENUM('a','b'))", "unsupported column type at position 33 near 'ENUM': column \"c\": ENUM is not supported: no Delta or Iceberg counterpart; use VARCHAR(n)", ErrUnsupportedType},
	{"CREATE SINK s INTO DELTA 'x' (c set('a'))", "unsupported column type at position 33 near 'set': column \"c\": SET is not supported: no Delta or Iceberg counterpart; use VARCHAR(n)", ErrUnsupportedType},
	{"CREATE SINK s INTO DELTA 'x' (c TIME(3))", "unsupported column type at position 33 near 'TIME': column \"c\": TIME is not supported: a MySQL TIME is a signed duration of up to 838 hours, which no Delta type holds; use BIGINT (microseconds) or VARCHAR", ErrUnsupportedType},
	{"CREATE SINK s INTO DELTA 'x' (c YEAR)", "unsupported column type at position 33 near 'YEAR': column \"c\": YEAR is not supported: no Delta or Iceberg counterpart; use SMALLINT", ErrUnsupportedType},
	{"CREATE SINK s INTO DELTA 'x' (c BIT(1))", "unsupported column type at position 33 near 'BIT': column \"c\": BIT is not supported: no Delta or Iceberg counterpart; use BIGINT, BOOLEAN or VARBINARY", ErrUnsupportedType},
	{"CREATE SINK s INTO DELTA 'x' (c GEOMETRY)", "unsupported column type at position 33 near 'GEOMETRY': column \"c\": GEOMETRY is not supported: Delta has no spatial types; store well-known binary (WKB) in a BLOB", ErrUnsupportedType},
	{"CREATE SINK s INTO DELTA 'x' (c FOO)", "unsupported column type at position 33 near 'FOO': column \"c\": unknown type FOO", ErrUnsupportedType},
	{"CREATE SINK s INTO DELTA 'x' (c BIGINT UNSIGNED)", "unsupported column type at position 33 near 'BIGINT': column \"c\": BIGINT UNSIGNED is not supported: no Delta or Iceberg integer holds 0..2^64-1; use DECIMAL(20,0), or BIGINT when values stay below 2^63", ErrUnsupportedType},
	{"CREATE SINK s INTO DELTA 'x' (c bigint(20) unsigned NOT NULL)", "unsupported column type at position 33 near 'bigint': column \"c\": BIGINT UNSIGNED is not supported: no Delta or Iceberg integer holds 0..2^64-1; use DECIMAL(20,0), or BIGINT when values stay below 2^63", ErrUnsupportedType},
	{"CREATE SINK s INTO DELTA 'x' (c DECIMAL(10,2) UNSIGNED)", "unsupported column type at position 33 near 'DECIMAL': column \"c\": DECIMAL UNSIGNED is not supported: UNSIGNED applies to integer types only", ErrUnsupportedType},
	{"CREATE SINK s INTO DELTA 'x' (c DOUBLE UNSIGNED)", "unsupported column type at position 33 near 'DOUBLE': column \"c\": DOUBLE UNSIGNED is not supported: UNSIGNED applies to integer types only", ErrUnsupportedType},
	{"CREATE SINK s INTO DELTA 'x' (c DECIMAL(39))", "unsupported column type at position 33 near 'DECIMAL': column \"c\": DECIMAL precision 39 is more than 38, the most Delta and Iceberg decimals hold", ErrUnsupportedType},
	{"CREATE SINK s INTO DELTA 'x' (c FLOAT(7,2))", "unsupported column type at position 33 near 'FLOAT': column \"c\": FLOAT(M,D) is not supported: MySQL deprecates it; use DECIMAL(M,D) or FLOAT", ErrUnsupportedType},
	{"CREATE SINK s INTO DELTA 'x' (c DOUBLE(10,2))", "unsupported column type at position 33 near 'DOUBLE': column \"c\": DOUBLE(M,D) is not supported: MySQL deprecates it; use DECIMAL(M,D) or DOUBLE", ErrUnsupportedType},
	{"CREATE SINK s INTO DELTA 'x' (c DECIMAL(5,6))", "invalid sink definition at position 33 near 'DECIMAL': column \"c\": DECIMAL scale 6 is larger than its precision 5", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (c DECIMAL(0))", "invalid sink definition at position 33 near 'DECIMAL': column \"c\": DECIMAL precision 0 is out of range (1 to 38)", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (c NUMERIC(1,2,3))", "invalid sink definition at position 33 near 'NUMERIC': column \"c\": NUMERIC takes at most two parameters, precision and scale", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (c DATETIME(7))", "invalid sink definition at position 33 near 'DATETIME': column \"c\": fractional seconds precision 7 is out of range (0 to 6)", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (c TIMESTAMP(1,2))", "invalid sink definition at position 33 near 'TIMESTAMP': column \"c\": TIMESTAMP takes one parameter, the fractional seconds precision", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (c VARCHAR)", "invalid sink definition at position 33 near 'VARCHAR': column \"c\": VARCHAR needs a length, as in VARCHAR(255)", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (c VARBINARY NOT NULL)", "invalid sink definition at position 33 near 'VARBINARY': column \"c\": VARBINARY needs a length, as in VARBINARY(255)", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (c CHAR(1,2))", "invalid sink definition at position 33 near 'CHAR': column \"c\": CHAR takes one parameter, a length", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (c DATE(3))", "invalid sink definition at position 33 near 'DATE': column \"c\": DATE takes no parameters", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (c INT(256))", "invalid sink definition at position 33 near 'INT': column \"c\": display width 256 is out of range (0 to 255)", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (c INT(1,2))", "invalid sink definition at position 33 near 'INT': column \"c\": INT takes at most one parameter, a display width", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (c FLOAT(54))", "invalid sink definition at position 33 near 'FLOAT': column \"c\": FLOAT precision 54 is out of range (0 to 53)", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (c VARCHAR(4294967296))", "invalid sink definition at position 41 near '4294967296': column \"c\": parameter 4294967296 of type VARCHAR is out of range", ErrInvalidDefinition},

	// PARTITION BY.
	{"CREATE SINK s INTO DELTA 'x' (a INT) PARTITION (a)", "syntax error at position 48 near '(': expected BY after PARTITION", nil},
	{"CREATE SINK s INTO DELTA 'x' (a INT) PARTITION BY a", "syntax error at position 51 near 'a': expected '(' and the partition columns after PARTITION BY", nil},
	{"CREATE SINK s INTO ICEBERG 'x' PARTITION BY ()", "syntax error at position 46 near ')': expected a partition column or a transform", nil},
	{"CREATE SINK s INTO ICEBERG 'x' PARTITION BY (week(ts))", "syntax error at position 46 near 'week': unknown partition transform: expected identity, year, month, day, hour, bucket or truncate", nil},
	{"CREATE SINK s INTO ICEBERG 'x' PARTITION BY (bucket(id))", "syntax error at position 53 near 'id': expected the bucket count, as in bucket(16, id)", nil},
	{"CREATE SINK s INTO ICEBERG 'x' PARTITION BY (truncate(4))", "syntax error at position 56 near ')': expected ',' and a column after the width", nil},
	{"CREATE SINK s INTO ICEBERG 'x' PARTITION BY (day(ts, 2))", "syntax error at position 52 near ',': expected ')' to close day(", nil},
	{"CREATE SINK s INTO ICEBERG 'x' PARTITION BY (day())", "syntax error at position 50 near ')': expected a partition column", nil},
	{"CREATE SINK s INTO ICEBERG 'x' PARTITION BY (day(ts)", "syntax error at position 53 near end of input: expected ',' or ')' in PARTITION BY", nil},
	{"CREATE SINK s INTO ICEBERG 'x' PARTITION BY (key)", "syntax error at position 46 near 'key': expected a partition column or a transform; KEY is a reserved word, write it in backquotes to use it as a name", nil},
	{"CREATE SINK s INTO ICEBERG 'x' PARTITION BY (bucket(0, id))", "invalid sink definition at position 53 near '0': bucket(0, ...): the bucket count must be between 1 and 2147483647", ErrInvalidDefinition},
	{"CREATE SINK s INTO ICEBERG 'x' PARTITION BY (truncate(2147483648, s))", "invalid sink definition at position 55 near '2147483648': truncate(2147483648, ...): the width must be between 1 and 2147483647", ErrInvalidDefinition},
	{"CREATE SINK s INTO ICEBERG 'x' PARTITION BY (a, A)", "invalid sink definition at position 49 near 'A': PARTITION BY lists `A` twice (first at position 46)", ErrInvalidDefinition},
	{"CREATE SINK s INTO ICEBERG 'x' PARTITION BY (bucket(2, a), bucket(2, A))", "invalid sink definition at position 60 near 'bucket': PARTITION BY lists bucket(2, `A`) twice (first at position 46)", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' (a INT) PARTITION BY (b)", "invalid sink definition at position 52 near 'b': partition column \"b\" is not a column of sink \"s\"", ErrInvalidDefinition},
	{"CREATE SINK s INTO ICEBERG 'x' (r VARCHAR(2)) PARTITION BY (day(r))", "invalid sink definition at position 65 near 'r': partition transform day needs a DATE, DATETIME or TIMESTAMP column, and column \"r\" is VARCHAR(2)", ErrInvalidDefinition},
	{"CREATE SINK s INTO ICEBERG 'x' (d DATE) PARTITION BY (hour(d))", "invalid sink definition at position 60 near 'd': partition transform hour needs a DATETIME or TIMESTAMP column, and column \"d\" is DATE", ErrInvalidDefinition},
	{"CREATE SINK s INTO ICEBERG 'x' (f DOUBLE) PARTITION BY (bucket(4, f))", "invalid sink definition at position 67 near 'f': partition transform bucket needs an integer, DECIMAL, DATE, DATETIME, TIMESTAMP, text or binary column, and column \"f\" is DOUBLE", ErrInvalidDefinition},
	{"CREATE SINK s INTO ICEBERG 'x' (d DATE) PARTITION BY (truncate(4, d))", "invalid sink definition at position 67 near 'd': partition transform truncate needs an integer, DECIMAL, text or binary column, and column \"d\" is DATE", ErrInvalidDefinition},

	// WITH.
	{"CREATE SINK s INTO DELTA 'x' WITH mode = 1", "syntax error at position 35 near 'mode': expected '(' and options after WITH", nil},
	{"CREATE SINK s INTO DELTA 'x' WITH ()", "syntax error at position 36 near ')': expected an option name", nil},
	{"CREATE SINK s INTO DELTA 'x' WITH (`mode` = 1)", "syntax error at position 36 near '`mode`': expected an option name", nil},
	{"CREATE SINK s INTO DELTA 'x' WITH (mode)", "syntax error at position 40 near ')': expected '=' after option \"mode\"", nil},
	{"CREATE SINK s INTO DELTA 'x' WITH (mode = )", "syntax error at position 43 near ')': expected the value of option \"mode\": a quoted string, an integer, TRUE, FALSE or a name", nil},
	{"CREATE SINK s INTO DELTA 'x' WITH (mode = ", "syntax error at position 43 near end of input: expected the value of option \"mode\": a quoted string, an integer, TRUE, FALSE or a name", nil},
	{"CREATE SINK s INTO DELTA 'x' WITH (a. = 1)", "syntax error at position 39 near '=': expected the rest of option name \"a\" after the dot", nil},
	{"CREATE SINK s INTO DELTA 'x' WITH (a = 1 b = 2)", "syntax error at position 42 near 'b': expected ',' or ')' in the WITH options", nil},
	{"CREATE SINK s INTO DELTA 'x' WITH (a = 1,)", "syntax error at position 42 near ')': expected an option name", nil},
	{"CREATE SINK s INTO DELTA 'x' WITH (a = -x)", "syntax error at position 41 near 'x': expected an integer after '-'", nil},
	{"CREATE SINK s INTO DELTA 'x' WITH (a = 1.5)", "syntax error at position 41 near '.': expected ',' or ')' in the WITH options", nil},
	{"CREATE SINK s INTO DELTA 'x' WITH (mode = 'a', MODE = 'b')", "invalid sink definition at position 48 near 'MODE': option \"mode\" is given twice (first at position 36)", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' WITH (a = NULL)", "invalid sink definition at position 40 near 'NULL': option \"a\": NULL is not a value; leave the option out instead", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' WITH (a = 9223372036854775808)", "invalid sink definition at position 40 near '9223372036854775808': option \"a\": integer 9223372036854775808 is out of range", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' WITH (a = -9223372036854775809)", "invalid sink definition at position 41 near '9223372036854775809': option \"a\": integer -9223372036854775809 is out of range", ErrInvalidDefinition},
	{"CREATE SINK s INTO DELTA 'x' WITH (a = ``)", "invalid sink definition at position 40 near '``': an option value cannot be empty", ErrInvalidDefinition},
}

func TestParseErrors(t *testing.T) {
	for _, tc := range errorCases {
		stmt, err := Parse(tc.sql)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want error %q", tc.sql, stmt, tc.want)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("Parse(%q) error\n got %s\nwant %s", tc.sql, err, tc.want)
		}
		var syn *SyntaxError
		var def *DefinitionError
		switch {
		case tc.sentinel == nil:
			if !errors.As(err, &syn) {
				t.Errorf("Parse(%q) = %T, want *SyntaxError", tc.sql, err)
			}
		case !errors.As(err, &def) || !errors.Is(err, tc.sentinel):
			t.Errorf("Parse(%q) = %T %v, want a *DefinitionError wrapping %v", tc.sql, err, err, tc.sentinel)
		}
		checkPosition(t, tc.sql, err)
	}
}

// checkPosition checks that an error points into the statement, at the text
// it quotes.
func checkPosition(t testing.TB, sql string, err error) {
	t.Helper()
	pos, near := 0, ""
	var syn *SyntaxError
	var def *DefinitionError
	switch {
	case errors.As(err, &syn):
		pos, near = syn.Pos, syn.Near
	case errors.As(err, &def):
		pos, near = def.Pos, def.Near
		if near == "" {
			t.Errorf("Parse(%q): a definition error near nothing: %v", sql, err)
		}
	default:
		t.Fatalf("Parse(%q) = %T %v, want *SyntaxError or *DefinitionError", sql, err, err)
	}
	if pos < 1 || pos > len(sql)+1 {
		t.Fatalf("Parse(%q): position %d outside the statement: %v", sql, pos, err)
	}
	if near == "" {
		if rest, ok := sqlword.SkipBlank(sql, pos-1); ok && rest != len(sql) {
			t.Errorf("Parse(%q): error at end of input, but input follows position %d: %v", sql, pos, err)
		}
		return
	}
	if strings.HasPrefix(near, `\x`) { // invalid UTF-8 is quoted as \xNN
		return
	}
	if !strings.HasPrefix(sql[pos-1:], strings.TrimSuffix(near, "...")) {
		t.Errorf("Parse(%q): near %q is not the text at position %d: %v", sql, near, pos, err)
	}
}

// TestColumnTypes checks every mapping the design asks for, written out
// independently of typeRules.
func TestColumnTypes(t *testing.T) {
	for _, tc := range []struct {
		mysql, canonical string
		want             arrow.DataType
	}{
		{"TINYINT", "TINYINT", arrow.PrimitiveTypes.Int8},
		{"SMALLINT", "SMALLINT", arrow.PrimitiveTypes.Int16},
		{"MEDIUMINT", "MEDIUMINT", arrow.PrimitiveTypes.Int32},
		{"INT", "INT", arrow.PrimitiveTypes.Int32},
		{"INTEGER", "INT", arrow.PrimitiveTypes.Int32},
		{"BIGINT", "BIGINT", arrow.PrimitiveTypes.Int64},
		{"BIGINT(20)", "BIGINT", arrow.PrimitiveTypes.Int64},
		{"TINYINT UNSIGNED", "TINYINT UNSIGNED", arrow.PrimitiveTypes.Int16},
		{"SMALLINT UNSIGNED", "SMALLINT UNSIGNED", arrow.PrimitiveTypes.Int32},
		{"MEDIUMINT UNSIGNED", "MEDIUMINT UNSIGNED", arrow.PrimitiveTypes.Int32},
		{"INT UNSIGNED", "INT UNSIGNED", arrow.PrimitiveTypes.Int64},
		{"int(10) unsigned", "INT UNSIGNED", arrow.PrimitiveTypes.Int64},
		{"FLOAT", "FLOAT", arrow.PrimitiveTypes.Float32},
		{"FLOAT(24)", "FLOAT", arrow.PrimitiveTypes.Float32},
		{"FLOAT(25)", "DOUBLE", arrow.PrimitiveTypes.Float64},
		{"DOUBLE", "DOUBLE", arrow.PrimitiveTypes.Float64},
		{"DOUBLE PRECISION", "DOUBLE", arrow.PrimitiveTypes.Float64},
		{"REAL", "DOUBLE", arrow.PrimitiveTypes.Float64},
		{"DECIMAL", "DECIMAL(10,0)", dec(10, 0)},
		{"DECIMAL(12)", "DECIMAL(12,0)", dec(12, 0)},
		{"DECIMAL(10,2)", "DECIMAL(10,2)", dec(10, 2)},
		{"NUMERIC(38,9)", "DECIMAL(38,9)", dec(38, 9)},
		{"DEC(3,3)", "DECIMAL(3,3)", dec(3, 3)},
		{"BOOLEAN", "BOOLEAN", arrow.FixedWidthTypes.Boolean},
		{"BOOL", "BOOLEAN", arrow.FixedWidthTypes.Boolean},
		{"TINYINT(1)", "BOOLEAN", arrow.FixedWidthTypes.Boolean},
		{"TINYINT(2)", "TINYINT", arrow.PrimitiveTypes.Int8},
		{"CHAR(3)", "CHAR(3)", arrow.BinaryTypes.String},
		{"VARCHAR(16)", "VARCHAR(16)", arrow.BinaryTypes.String},
		{"VARCHAR(0)", "VARCHAR(0)", arrow.BinaryTypes.String},
		{"TEXT", "TEXT", arrow.BinaryTypes.String},
		{"TEXT(100)", "TEXT(100)", arrow.BinaryTypes.String},
		{"TINYTEXT", "TINYTEXT", arrow.BinaryTypes.String},
		{"MEDIUMTEXT", "MEDIUMTEXT", arrow.BinaryTypes.String},
		{"LONGTEXT", "LONGTEXT", arrow.BinaryTypes.String},
		{"JSON", "JSON", arrow.BinaryTypes.String},
		{"BINARY", "BINARY", arrow.BinaryTypes.Binary},
		{"BINARY(16)", "BINARY(16)", arrow.BinaryTypes.Binary},
		{"VARBINARY(255)", "VARBINARY(255)", arrow.BinaryTypes.Binary},
		{"BLOB", "BLOB", arrow.BinaryTypes.Binary},
		{"TINYBLOB", "TINYBLOB", arrow.BinaryTypes.Binary},
		{"MEDIUMBLOB", "MEDIUMBLOB", arrow.BinaryTypes.Binary},
		{"LONGBLOB", "LONGBLOB", arrow.BinaryTypes.Binary},
		{"DATE", "DATE", arrow.FixedWidthTypes.Date32},
		{"DATETIME", "DATETIME", tsNTZ},
		{"DATETIME(6)", "DATETIME(6)", tsNTZ},
		{"TIMESTAMP", "TIMESTAMP", tsUTC},
		{"TIMESTAMP(0)", "TIMESTAMP(0)", tsUTC},
	} {
		sql := "CREATE SINK s INTO DELTA 'x' (c " + tc.mysql + ")"
		stmt, err := Parse(sql)
		if err != nil {
			t.Errorf("%s: %v", tc.mysql, err)
			continue
		}
		got := stmt.(*CreateSink).Columns[0]
		if got.SQLType != tc.canonical || !arrow.TypeEqual(got.Type, tc.want) {
			t.Errorf("%s = %s %v, want %s %v", tc.mysql, got.SQLType, got.Type, tc.canonical, tc.want)
		}
		checkRoundTrip(t, stmt)
	}
}

// TestTypeTable checks that every row of the documented table does what it
// says: accepted examples parse to the row's Arrow type, refused ones fail
// with ErrUnsupportedType naming the column and the type.
func TestTypeTable(t *testing.T) {
	rows := MySQLTypeTable()
	if len(rows) != len(typeRules) {
		t.Fatalf("MySQLTypeTable has %d rows, typeRules %d", len(rows), len(typeRules))
	}
	for _, row := range rows {
		if row.MySQL == "" || row.Example == "" {
			t.Errorf("row %+v lacks its MySQL spelling or example", row)
		}
		sql := "CREATE SINK s INTO DELTA 'x' (c " + row.Example + ")"
		stmt, err := Parse(sql)
		if row.Arrow == nil {
			if row.Notes == "" || row.ArrowName != "" || row.Delta != "" || row.Iceberg != "" {
				t.Errorf("refused row %q: want notes and no types, got %+v", row.MySQL, row)
			}
			if !errors.Is(err, ErrUnsupportedType) {
				t.Errorf("%s: got %v, want ErrUnsupportedType", row.Example, err)
				continue
			}
			typeName, _, _ := strings.Cut(row.Example, "(")
			if msg := err.Error(); !strings.Contains(msg, `column "c"`) || !strings.Contains(msg, typeName) {
				t.Errorf("%s: error %q does not name the column and the type", row.Example, msg)
			}
			continue
		}
		if row.ArrowName == "" || row.Delta == "" || row.Iceberg == "" {
			t.Errorf("row %q lacks a type name: %+v", row.MySQL, row)
		}
		if err != nil {
			t.Errorf("%s: %v", row.Example, err)
			continue
		}
		if got := stmt.(*CreateSink).Columns[0].Type; !arrow.TypeEqual(got, row.Arrow) {
			t.Errorf("%s parses to %v, the table says %v", row.Example, got, row.Arrow)
		}
	}
	// The caller owns the slice.
	rows[0].MySQL = "changed"
	if MySQLTypeTable()[0].MySQL == "changed" {
		t.Error("MySQLTypeTable returns shared rows")
	}
}

func FuzzParse(f *testing.F) {
	for _, tc := range validCases {
		f.Add(tc.sql)
	}
	for _, tc := range errorCases {
		f.Add(tc.sql)
	}
	for _, row := range MySQLTypeTable() {
		f.Add("CREATE SINK s INTO DELTA 'x' (c " + row.Example + " NOT NULL PRIMARY KEY COMMENT 'k')")
	}
	f.Fuzz(func(t *testing.T, sql string) {
		claimed := IsLakesqlStatement(sql)
		stmt, err := Parse(sql)
		if err != nil {
			_ = err.Error()
			checkPosition(t, sql, err)
			return
		}
		if !claimed {
			t.Fatalf("Parse(%q) succeeds but IsLakesqlStatement says it is not ours", sql)
		}
		checkRoundTrip(t, stmt)
	})
}
