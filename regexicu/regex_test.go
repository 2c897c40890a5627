package regex

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// call is one use of a Regex: compile pattern with flags, set text, then op.
type call struct {
	name    string
	pattern string
	flags   RegexFlags
	text    string
	op      string // like (Matches), instr, instrEnd (IndexOf), substr, replace, compile
	start   int
	occ     int
	repl    string
	want    string
}

// sameAsBefore's wants were produced by the module this one replaces
// (github.com/dolthub/go-icu-regex v0.0.0-20250327004329-6799764f2dad,
// ICU 68 in WASM) on the same calls: "true"/"false" for Matches, the
// position for IndexOf, "str:" and the result (or "none") for Substring
// and Replace, "ok" for a compiled pattern, "err:" and the message.
var sameAsBefore = []call{
	{"anchored", "^[a-z]+[0-9]+$", 0, "abc123", "like", 0, 0, "", "true"},
	{"anchoredNo", "^[a-z]+[0-9]+$", 0, "abc12x", "like", 0, 0, "", "false"},
	{"caseSensitive", "abc", 0, "ABC", "like", 0, 0, "", "false"},
	{"caseInsensitive", "abc", 2, "ABC", "like", 0, 0, "", "true"},
	{"caseInsensitiveUnicode", "ÉCOLE", 2, "école", "like", 0, 0, "", "true"},
	{"caseInsensitiveSharpS", "STRASSE", 2, "straße", "like", 0, 0, "", "true"},
	{"multilineOff", "^b", 0, "a\nb", "like", 0, 0, "", "false"},
	{"multilineOn", "^b", 8, "a\nb", "like", 0, 0, "", "true"},
	{"multilineDollar", "a$", 8, "a\nb", "like", 0, 0, "", "true"},
	{"dotAllOff", "a.b", 0, "a\nb", "like", 0, 0, "", "false"},
	{"dotAllOn", "a.b", 32, "a\nb", "like", 0, 0, "", "true"},
	{"unixLinesOff", "a.b", 0, "a\rb", "like", 0, 0, "", "false"},
	{"unixLinesOn", "a.b", 1, "a\rb", "like", 0, 0, "", "true"},
	{"comments", "a b # a comment", 4, "ab", "like", 0, 0, "", "true"},
	{"commentsOff", "a b # a comment", 0, "ab", "like", 0, 0, "", "false"},
	{"literal", "a.c", 16, "abc", "like", 0, 0, "", "false"},
	{"literalMatch", "a.c", 16, "xa.cx", "like", 0, 0, "", "true"},
	{"unicodeWordOff", "\\bb", 0, "a'b", "like", 0, 0, "", "true"},
	{"unknownEscapeLax", "\\q", 0, "q", "like", 0, 0, "", "true"},
	{"unknownEscapeStrict", "\\q", 512, "q", "like", 0, 0, "", "err:the given regular expression is invalid"},
	{"emptyText", "a*", 0, "", "like", 0, 0, "", "true"},
	{"emptyTextNo", "a", 0, "", "like", 0, 0, "", "false"},
	{"matchesStart", "^b", 0, "ab", "like", 1, 0, "", "false"},
	{"matchesStartPast", "b", 0, "ab", "like", 2, 0, "", "false"},
	{"matchesStartOut", "b", 0, "ab", "like", 3, 0, "", "err:unexpected UErrorCode from uregex_find/uregex_findNext: 8"},
	{"matchesOcc2", "a", 0, "aba", "like", 0, 2, "", "true"},
	{"matchesOcc3", "a", 0, "aba", "like", 0, 3, "", "false"},
	{"classUnicode", "^\\p{L}+$", 0, "héllo", "like", 0, 0, "", "true"},
	{"posixClass", "^[[:alpha:]]+$", 0, "abc", "like", 0, 0, "", "true"},
	{"backrefPattern", "(a)\\1", 0, "xaa", "like", 0, 0, "", "true"},
	{"nulInText", "b", 0, "a\x00b", "like", 0, 0, "", "true"},
	{"instrOcc2", "dog", 0, "dog cat dog", "instr", 1, 2, "", "9"},
	{"instrOcc2End", "dog", 0, "dog cat dog", "instrEnd", 1, 2, "", "12"},
	{"instrOcc1End", "dog", 0, "dog cat dog", "instrEnd", 1, 1, "", "4"},
	{"instrOcc3", "dog", 0, "dog cat dog", "instr", 1, 3, "", "0"},
	{"instrOcc0", "dog", 0, "dog cat dog", "instr", 1, 0, "", "1"},
	{"instrStart5", "dog", 0, "dog cat dog", "instr", 5, 1, "", "9"},
	{"instrStartLen", "dog", 0, "dog cat dog", "instr", 11, 1, "", "0"},
	{"instrStartLenPlus1", "$", 0, "dog", "instr", 4, 1, "", "4"},
	{"instrStartOut", "dog", 0, "dog cat dog", "instr", 100, 1, "", "0"},
	{"instrStart0", "dog", 0, "dog cat dog", "instr", 0, 1, "", "1"},
	{"instrNone", "z", 0, "dog", "instr", 1, 1, "", "0"},
	{"instrUnicode", "ö", 0, "héllo wörld", "instr", 1, 1, "", "8"},
	{"instrUnicodeEnd", "ö", 0, "héllo wörld", "instrEnd", 1, 1, "", "9"},
	{"instrAstral", "b", 0, "a😀b", "instr", 1, 1, "", "4"},
	{"instrAstralOcc2", "😀", 0, "a😀b😀", "instr", 1, 2, "", "5"},
	{"instrAstralStart", "b", 0, "a😀b", "instr", 3, 1, "", "4"},
	{"instrEmptyMatchOcc2", "b*", 0, "abc", "instr", 1, 2, "", "2"},
	{"instrEmptyMatchOcc3", "b*", 0, "abc", "instr", 1, 3, "", "3"},
	{"instrEmptyText", "^$", 0, "", "instr", 1, 1, "", "1"},
	{"instrCI", "DOG", 2, "a dog", "instr", 1, 1, "", "3"},
	{"substrOcc3", "[a-z]+", 0, "abc def ghi", "substr", 1, 3, "", "str:ghi"},
	{"substrOcc4", "[a-z]+", 0, "abc def ghi", "substr", 1, 4, "", "none"},
	{"substrOcc0", "[a-z]+", 0, "abc def ghi", "substr", 1, 0, "", "str:abc"},
	{"substrStart2", "[a-z]+", 0, "abc def ghi", "substr", 2, 1, "", "str:bc"},
	{"substrStartOut", "[a-z]+", 0, "abc", "substr", 10, 1, "", "none"},
	{"substrStart0", "[a-z]+", 0, "abc", "substr", 0, 1, "", "str:abc"},
	{"substrUnicode", "w.r", 0, "héllo wörld", "substr", 1, 1, "", "str:wör"},
	{"substrAstral", "a.b", 0, "xa😀b", "substr", 1, 1, "", "str:a😀b"},
	{"substrAstralDot", ".", 0, "😀x", "substr", 1, 1, "", "str:😀"},
	{"substrEmpty", "x*", 0, "abc", "substr", 1, 1, "", "str:"},
	{"substrGroupWhole", "(a)(b)", 0, "zab", "substr", 1, 1, "", "str:ab"},
	{"replaceAll", "[a-z]", 0, "a b c", "replace", 1, 0, "X", "str:X X X"},
	{"replaceOcc2", "[a-z]", 0, "a b c", "replace", 1, 2, "X", "str:a X c"},
	{"replaceOcc1", "[a-z]", 0, "a b c", "replace", 1, 1, "X", "str:X b c"},
	{"replaceOcc3", "[a-z]", 0, "a b c", "replace", 1, 3, "X", "str:a b X"},
	{"replaceOcc4", "[a-z]", 0, "a b c", "replace", 1, 4, "X", "str:a b c"},
	{"replaceStart3All", "[a-z]", 0, "a b c", "replace", 3, 0, "X", "str:a X X"},
	{"replaceStart3Occ1", "[a-z]", 0, "a b c", "replace", 3, 1, "X", "str:a X c"},
	{"replaceStart3Occ2", "[a-z]", 0, "a b c", "replace", 3, 2, "X", "str:a b X"},
	{"replaceStart2", "b", 0, "abc", "replace", 2, 0, "X", "str:aXc"},
	{"replaceStartLen", "c", 0, "abc", "replace", 3, 0, "X", "str:abX"},
	{"replaceStartLenPlus1", "$", 0, "abc", "replace", 4, 0, "X", "str:abcX"},
	{"replaceStartOutUnicode", "é", 0, "ééé", "replace", 5, 0, "X", "str:"},
	{"replaceStartOutUnicode2", "é", 0, "ééé", "replace", 6, 0, "X", "str:"},
	{"replaceNoMatch", "z", 0, "abc", "replace", 1, 0, "X", "str:abc"},
	{"replaceNoMatchStart", "a", 0, "abc", "replace", 2, 0, "X", "str:abc"},
	{"replaceBackrefs", "(\\w+) (\\w+)", 0, "hello world", "replace", 1, 0, "$2 $1", "str:world hello"},
	{"replaceEscapedDollar", "o", 0, "foo", "replace", 1, 0, "\\$", "str:f$$"},
	{"replaceGroup0", "o+", 0, "foo", "replace", 1, 0, "[$0]", "str:f[oo]"},
	{"replaceEmptyMatches", "x*", 0, "abc", "replace", 1, 0, "-", "str:-a-b-c-"},
	{"replaceEmptyMatchesOcc2", "x*", 0, "abc", "replace", 1, 2, "-", "str:a-bc"},
	{"replaceDelete", "[aeiou]", 0, "education", "replace", 1, 0, "", "str:dctn"},
	{"replaceUnicode", "ö", 0, "héllo wörld", "replace", 1, 0, "o", "str:héllo world"},
	{"replaceUnicodeStart", "l", 0, "héllo wörld", "replace", 4, 0, "L", "str:hélLo wörLd"},
	{"replaceAstral", "😀", 0, "a😀b😀c", "replace", 1, 2, "🙂", "str:a😀b🙂c"},
	{"replaceAstralStart", ".", 0, "😀😀x", "replace", 3, 0, "_", "str:😀__"},
	{"replaceCI", "A", 2, "aAbA", "replace", 1, 0, "x", "str:xxbx"},
	{"replaceLonger", "a", 0, "aaaa", "replace", 1, 0, "bbbbbbbbbb", "str:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"},
	{"replaceEmptyText", "a", 0, "", "replace", 1, 0, "x", "str:"},
	{"replaceMultiline", "^", 8, "a\nb\nc", "replace", 1, 0, "> ", "str:> a\n> b\n> c"},
	{"invalidParen", "(", 0, "x", "compile", 0, 0, "", "err:the given regular expression is invalid"},
	{"invalidBracket", "[a", 0, "x", "compile", 0, 0, "", "err:the given regular expression is invalid"},
	{"invalidRepeat", "a{2,1}", 0, "x", "compile", 0, 0, "", "err:the given regular expression is invalid"},
	{"invalidStar", "*", 0, "x", "compile", 0, 0, "", "err:the given regular expression is invalid"},
	{"invalidBackslash", "\\", 0, "x", "compile", 0, 0, "", "err:the given regular expression is invalid"},
	{"invalidProperty", "\\p{Nope}", 0, "x", "compile", 0, 0, "", "err:the given regular expression is invalid"},
	{"invalidFlag", "a", 1048576, "x", "compile", 0, 0, "", "err:the given regular expression is invalid"},
	{"validCompile", "a|b", 0, "x", "compile", 0, 0, "", "ok"},
	{"invalidBackref", "(a)\\2", 0, "x", "compile", 0, 0, "", "err:the given regular expression is invalid"},
}

// run makes c's calls on re and renders the outcome as the wants are.
func (c call) run(t *testing.T, re Regex) string {
	t.Helper()
	ctx := context.Background()
	if err := re.SetRegexString(ctx, c.pattern, c.flags); err != nil {
		return "err:" + err.Error()
	}
	if c.op == "compile" {
		return "ok"
	}
	if err := re.SetMatchString(ctx, c.text); err != nil {
		return "err:" + err.Error()
	}
	switch c.op {
	case "like":
		ok, err := re.Matches(ctx, c.start, c.occ)
		if err != nil {
			return "err:" + err.Error()
		}
		return strconv.FormatBool(ok)
	case "instr", "instrEnd":
		i, err := re.IndexOf(ctx, c.start, c.occ, c.op == "instrEnd")
		if err != nil {
			return "err:" + err.Error()
		}
		return strconv.Itoa(i)
	case "substr":
		s, ok, err := re.Substring(ctx, c.start, c.occ)
		if err != nil {
			return "err:" + err.Error()
		}
		if !ok {
			return "none"
		}
		return "str:" + s
	case "replace":
		s, err := re.Replace(ctx, c.repl, c.start, c.occ)
		if err != nil {
			return "err:" + err.Error()
		}
		return "str:" + s
	}
	t.Fatalf("unknown op %q", c.op)
	return ""
}

func TestSameAsBefore(t *testing.T) {
	for _, c := range sameAsBefore {
		t.Run(c.name, func(t *testing.T) {
			re := CreateRegex(1024)
			defer re.Close()
			if got := c.run(t, re); got != c.want {
				t.Errorf("%s on %q: got %q, want %q", c.op, c.text, got, c.want)
			}
		})
	}
}

// TestReuse runs every call on one Regex, as go-mysql-server does when it
// caches a compiled pattern and sets a new text per row: nothing may leak
// from one pattern or text into the next.
func TestReuse(t *testing.T) {
	re := CreateRegex(0)
	defer re.Close()
	for _, c := range sameAsBefore {
		if got := c.run(t, re); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	// A long text after short ones, and back.
	ctx := context.Background()
	if err := re.SetRegexString(ctx, "b+", RegexFlags_None); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("a", 100000) + "bbb"
	for _, text := range []string{"ab", long, "xbx"} {
		if err := re.SetMatchString(ctx, text); err != nil {
			t.Fatal(err)
		}
		got, ok, err := re.Substring(ctx, 1, 1)
		want := strings.Trim(text, "ax")
		if err != nil || !ok || got != want {
			t.Errorf("Substring on a %d-byte text: %q %v %v, want %q", len(text), got, ok, err, want)
		}
	}
}

func TestNotYetSet(t *testing.T) {
	ctx := context.Background()
	re := CreateRegex(0)
	defer re.Close()
	if err := re.SetMatchString(ctx, "a"); !ErrRegexNotYetSet.Is(err) {
		t.Errorf("SetMatchString before a pattern: %v", err)
	}
	if _, err := re.IndexOf(ctx, 1, 1, false); !ErrRegexNotYetSet.Is(err) {
		t.Errorf("IndexOf before a pattern: %v", err)
	}
	if err := re.SetRegexString(ctx, "a", RegexFlags_None); err != nil {
		t.Fatal(err)
	}
	if _, err := re.Matches(ctx, 0, 0); !ErrMatchNotYetSet.Is(err) {
		t.Errorf("Matches before a text: %v", err)
	}
	if _, _, err := re.Substring(ctx, 1, 1); !ErrMatchNotYetSet.Is(err) {
		t.Errorf("Substring before a text: %v", err)
	}
	if _, err := re.Replace(ctx, "b", 1, 0); !ErrMatchNotYetSet.Is(err) {
		t.Errorf("Replace before a text: %v", err)
	}
	// A refused pattern leaves none set.
	if err := re.SetRegexString(ctx, "(", RegexFlags_None); !ErrInvalidRegex.Is(err) {
		t.Fatalf("invalid pattern: %v", err)
	}
	if err := re.SetMatchString(ctx, "a"); !ErrRegexNotYetSet.Is(err) {
		t.Errorf("SetMatchString after a refused pattern: %v", err)
	}
	if re.StringBufferSize() != 0 {
		t.Errorf("StringBufferSize: %d", re.StringBufferSize())
	}
	sized := CreateRegex(524288)
	defer sized.Close()
	if got := sized.StringBufferSize(); got != 524288 {
		t.Errorf("StringBufferSize: %d", got)
	}
}

// TestLeakHandler drops a Regex without closing it: its finalizer must call
// the handler (not panic), and a closed one must not.
func TestLeakHandler(t *testing.T) {
	var leaks atomic.Int32
	SetRegexLeakHandler(func() { leaks.Add(1) })
	defer SetRegexLeakHandler(nil)
	func() {
		closed := CreateRegex(0)
		_ = closed.SetRegexString(context.Background(), "a", RegexFlags_None)
		_ = closed.Close()
		leaked := CreateRegex(0)
		_ = leaked.SetRegexString(context.Background(), "a", RegexFlags_None)
	}()
	for i := 0; i < 50 && leaks.Load() == 0; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if n := leaks.Load(); n != 1 {
		t.Errorf("leak handler called %d times, want 1", n)
	}
}

// TestConcurrent runs the table on several goroutines at once, each with a
// Regex of its own (how go-mysql-server uses them), and hammers one shared
// Regex from all of them: its calls must stay memory-safe and error-free
// (run with -race; what a shared text yields interleaves by design).
func TestConcurrent(t *testing.T) {
	shared := CreateRegex(0)
	defer shared.Close()
	ctx := context.Background()
	if err := shared.SetRegexString(ctx, "b+", RegexFlags_None); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			re := CreateRegex(0)
			defer re.Close()
			for _, c := range sameAsBefore {
				if got := c.run(t, re); got != c.want {
					t.Errorf("%s: got %q, want %q", c.name, got, c.want)
				}
				if err := shared.SetMatchString(ctx, c.text); err != nil {
					t.Errorf("shared SetMatchString: %v", err)
				}
				if _, err := shared.Replace(ctx, "x", 1, 0); err != nil {
					t.Errorf("shared Replace: %v", err)
				}
			}
		}()
	}
	wg.Wait()
}
