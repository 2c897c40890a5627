package sqllogictest

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseRecords(t *testing.T) {
	// The line numbers on the right are the ones the records must carry.
	src := `# a comment before anything
hash-threshold 8

statement ok
CREATE SINK s INTO DELTA 'lake/s'
  (id BIGINT NOT NULL,
   v VARCHAR(20))

statement ok con2
INSERT INTO s VALUES (1, '# not a comment')

# comment
statement error
INSERT INTO nope VALUES (1)

statement error 1146 con2
SELECT * FROM nope
----
nope
not found

skipif sqlite
onlyif lakesql
query IT rowsort label-a con2
SELECT id, v
FROM s
----
1
# not a comment

query I
SELECT id FROM s WHERE id > 5

query I valuesort
SELECT 1
----
1 values hashing to b026324c6904b2a9cb4b88d6d61c81d1

loop i 0 3
statement ok
INSERT INTO s VALUES (${i}, 'x')

loop j 1 2
halt
endloop
endloop
require delta
mode skip
restart
mode unskip
halt`
	got, err := Parse("t.slt", src)
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{
		{Kind: KindHashThreshold, Line: 2, N: 8},
		{Kind: KindStatement, Line: 4, SQL: "CREATE SINK s INTO DELTA 'lake/s'\n  (id BIGINT NOT NULL,\n   v VARCHAR(20))"},
		{Kind: KindStatement, Line: 9, Conn: "con2", SQL: "INSERT INTO s VALUES (1, '# not a comment')"},
		{Kind: KindStatement, Line: 13, ExpectError: true, SQL: "INSERT INTO nope VALUES (1)"},
		{Kind: KindStatement, Line: 16, ExpectError: true, ErrorCode: 1146, Conn: "con2", SQL: "SELECT * FROM nope",
			ErrorMessage: "nope\nnot found"},
		{Kind: KindQuery, Line: 24, Conditions: []Condition{{Skip: true, Engine: "sqlite"}, {Engine: "lakesql"}},
			Types: "IT", Sort: RowSort, Label: "label-a", Conn: "con2", SQL: "SELECT id, v\nFROM s",
			Expected: []string{"1", "# not a comment"}},
		{Kind: KindQuery, Line: 31, Types: "I", SQL: "SELECT id FROM s WHERE id > 5"},
		{Kind: KindQuery, Line: 34, Types: "I", Sort: ValueSort, SQL: "SELECT 1",
			Expected: []string{"1 values hashing to b026324c6904b2a9cb4b88d6d61c81d1"}},
		{Kind: KindLoop, Line: 39, Var: "i", Start: 0, End: 3, Body: []Record{
			{Kind: KindStatement, Line: 40, SQL: "INSERT INTO s VALUES (${i}, 'x')"},
			{Kind: KindLoop, Line: 43, Var: "j", Start: 1, End: 2, Body: []Record{{Kind: KindHalt, Line: 44}}},
		}},
		{Kind: KindRequire, Line: 47, Arg: "delta"},
		{Kind: KindMode, Line: 48, Arg: "skip"},
		{Kind: KindRestart, Line: 49},
		{Kind: KindMode, Line: 50, Arg: "unskip"},
		{Kind: KindHalt, Line: 51},
	}
	if diff := cmp.Diff(want, got.Records); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}

func TestParseCRLFAndTrailingSeparator(t *testing.T) {
	got, err := Parse("crlf.slt", "query T\r\nSELECT 'a;b'\r\n----   \r\na;b\r\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{{Kind: KindQuery, Line: 1, Types: "T", SQL: "SELECT 'a;b'", Expected: []string{"a;b"}}}
	if diff := cmp.Diff(want, got.Records); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		src  string
		line int
		msg  string
	}{
		{"statement ok\n\n", 1, "no SQL"},
		{"statement\nSELECT 1", 1, "ok or error"},
		{"statement maybe\nSELECT 1", 1, "expected ok or error"},
		{"statement ok\nSELECT 1\n----\nx", 1, "statement ok cannot have ----"},
		{"statement error\nSELECT 1\n----\n", 1, "no expected message"},
		{"statement ok con1 con2\nSELECT 1", 1, "unexpected"},
		{"\n\nquery\nSELECT 1", 3, "column types"},
		{"query I-T\nSELECT 1", 1, "letters"},
		{"query I rowsort nosort\nSELECT 1", 1, "two sort modes"},
		{"query I a b\nSELECT 1", 1, "unexpected \"b\""},
		{"hash-threshold x", 1, "not a number"},
		{"halt now", 1, "no arguments"},
		{"mode fast", 1, "skip or unskip"},
		{"loop i 0\nendloop", 1, "loop takes"},
		{"loop i a b\nendloop", 1, "integers"},
		{"loop i 0 2\nhalt\n", 1, "without endloop"},
		{"halt\nendloop", 2, "endloop without loop"},
		{"loop i 0 2\nrequire x\nendloop", 2, "top level"},
		{"skipif\nhalt", 1, "one engine"},
		{"onlyif mysql\n\nhalt", 1, "followed directly"},
		{"halt\nskipif mysql", 2, "end of the file"},
		{"skipif mysql\nloop i 0 1\nendloop", 1, "cannot apply to a loop"},
		{"\nselect 1", 2, `unknown record "select"`},
	} {
		_, err := Parse("bad.slt", tc.src)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%q: got %v, want a *ParseError", tc.src, err)
			continue
		}
		if pe.Line != tc.line || !strings.Contains(pe.Msg, tc.msg) || !strings.HasPrefix(err.Error(), "bad.slt:") {
			t.Errorf("%q: got %q at line %d, want line %d containing %q", tc.src, err, pe.Line, tc.line, tc.msg)
		}
	}
}

// FuzzParseScript checks that any input parses or fails with a located
// error, never panics, and that every record's line lies in the input.
func FuzzParseScript(f *testing.F) {
	for _, s := range []string{
		"statement ok\nSELECT 1\n",
		"query IT rowsort con2\nSELECT 1, 'a # b'\n----\n1\ta # b\n",
		"statement error 1146\nSELECT * FROM x\n----\nnot found\n",
		"loop i 0 3\nstatement ok\nINSERT INTO s VALUES (${i})\n\nendloop\n",
		"skipif sqlite\nonlyif mysql\nhalt\n",
		"hash-threshold 2\nmode skip\nrestart\nmode unskip\nrequire delta\n",
		"query I\nSELECT 1\n----\n3 values hashing to 0123456789abcdef0123456789abcdef\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		script, err := Parse("f.slt", src)
		n := strings.Count(src, "\n") + 1
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if pe.Line < 1 || pe.Line > n {
				t.Fatalf("error line %d outside 1..%d: %v", pe.Line, n, err)
			}
			return
		}
		var check func([]Record)
		check = func(recs []Record) {
			for _, r := range recs {
				if r.Line < 1 || r.Line > n {
					t.Fatalf("record %v at line %d outside 1..%d", r.Kind, r.Line, n)
				}
				if (r.Kind == KindStatement || r.Kind == KindQuery) && r.SQL == "" {
					t.Fatalf("%v at line %d has no SQL", r.Kind, r.Line)
				}
				check(r.Body)
			}
		}
		check(script.Records)
	})
}
