// Package regex is lakesql's stand-in for github.com/dolthub/go-icu-regex:
// the API go-mysql-server v0.20.0 calls for REGEXP, REGEXP_LIKE,
// REGEXP_INSTR, REGEXP_SUBSTR and REGEXP_REPLACE, over the system's ICU4C
// uregex functions through cgo. The module it replaces compiles an embedded
// ICU WASM module when it initialises (a third of a second at every start);
// here nothing runs at init, and ICU loads its data on the first pattern.
//
// Positions are 1-based and counted in UTF-16 code units, as ICU counts
// them and as the replaced module returned them.
package regex

import (
	"context"
	"runtime"
	"sync/atomic"

	"gopkg.in/src-d/go-errors.v1"
)

// Regex is one compiled pattern and the text it is matched against. It is
// for one goroutine at a time and must be closed.
type Regex interface {
	// SetRegexString compiles the pattern with the flags, replacing any
	// earlier pattern (and forgetting the text). It must come first.
	SetRegexString(ctx context.Context, regexStr string, flags RegexFlags) error
	// SetMatchString sets the text the other methods work on.
	SetMatchString(ctx context.Context, matchStr string) error
	// IndexOf returns the 1-based position of the start of the
	// occurrence-th match at or after start (1-based), or the position just
	// after it when endIndex is set; 0 when there is no such match.
	IndexOf(ctx context.Context, start int, occurrence int, endIndex bool) (int, error)
	// Matches reports whether the pattern finds an occurrence-th match
	// searching from the 0-based start.
	Matches(ctx context.Context, start int, occurrence int) (bool, error)
	// Replace returns the text with the occurrence-th match at or after
	// position (1-based) replaced, or every match from there when
	// occurrence is 0. The replacement may name groups as $1 and escape $
	// as \$.
	Replace(ctx context.Context, replacementStr string, position int, occurrence int) (string, error)
	// Substring returns the occurrence-th match at or after start
	// (1-based), and false when there is none.
	Substring(ctx context.Context, start int, occurrence int) (string, bool, error)
	// StringBufferSize returns the string buffer size CreateRegex was given.
	StringBufferSize() uint32
	// Close releases the ICU objects. Using the Regex afterwards is an error.
	Close() error
}

var (
	// ErrRegexNotYetSet is returned when a method needs a pattern and none
	// was set.
	ErrRegexNotYetSet = errors.NewKind("SetRegexString must be called before any other function")
	// ErrMatchNotYetSet is returned when a method needs the text and none
	// was set.
	ErrMatchNotYetSet = errors.NewKind("SetMatchString must be called as there is nothing to match against")
	// ErrInvalidRegex is returned when ICU refuses a pattern.
	ErrInvalidRegex = errors.NewKind("the given regular expression is invalid")
)

// ShouldPanic makes the finalizer of a Regex that was never closed panic,
// unless SetRegexLeakHandler set a handler.
var ShouldPanic = true

var leakHandler atomic.Pointer[func()]

// SetRegexLeakHandler sets the function the finalizer of a Regex that was
// never closed calls instead of panicking.
func SetRegexLeakHandler(handler func()) {
	leakHandler.Store(&handler)
}

// RegexFlags are ICU's URegexpFlag values; combine them with |.
type RegexFlags uint32

// The flags, with ICU's values (uregex.h).
const (
	// RegexFlags_None is no flag.
	RegexFlags_None RegexFlags = 0
	// RegexFlags_Unix_Lines makes only \n a line end for ., ^ and $.
	RegexFlags_Unix_Lines RegexFlags = 1
	// RegexFlags_Case_Insensitive matches regardless of case.
	RegexFlags_Case_Insensitive RegexFlags = 2
	// RegexFlags_Comments allows white space and #-comments in the pattern.
	RegexFlags_Comments RegexFlags = 4
	// RegexFlags_Multiline makes ^ and $ match at line ends inside the text.
	RegexFlags_Multiline RegexFlags = 8
	// RegexFlags_Literal takes the pattern as literal text.
	RegexFlags_Literal RegexFlags = 16
	// RegexFlags_Dot_All lets . match line terminators.
	RegexFlags_Dot_All RegexFlags = 32
	// RegexFlags_Unicode_Word makes \b follow Unicode TR 29 word boundaries.
	RegexFlags_Unicode_Word RegexFlags = 256
	// RegexFlags_Error_On_Unknown_Escapes refuses backslash-escaped letters
	// with no meaning.
	RegexFlags_Error_On_Unknown_Escapes RegexFlags = 512
)

// CreateRegex returns a Regex with no pattern yet. stringBufferInBytes is
// kept for StringBufferSize only: buffers here are sized to each text.
func CreateRegex(stringBufferInBytes uint32) Regex {
	r := &icuRegex{bufferSize: stringBufferInBytes}
	runtime.SetFinalizer(r, func(r *icuRegex) {
		if r.closed {
			return
		}
		if h := leakHandler.Load(); h != nil && *h != nil {
			(*h)()
		} else if ShouldPanic {
			panic("go-icu-regex: a Regex was never closed")
		}
		_ = r.Close()
	})
	return r
}
