package regex

// The cgo side: ICU4C's uregex C API (unicode/uregex.h), whose symbols
// urename.h maps to the installed version's (uregex_open_72 on ICU 72).

/*
#cgo LDFLAGS: -licui18n -licuuc -licudata
#include <stdlib.h>
#include <unicode/uregex.h>

// The append calls advance a destination pointer and capacity they are
// handed by address; these take them by value, so Go passes no pointer to
// a pointer.
static int32_t lq_append_replacement(URegularExpression *re, const UChar *repl, int32_t replLen,
		UChar *dest, int32_t capacity, UErrorCode *status) {
	return uregex_appendReplacement(re, repl, replLen, &dest, &capacity, status);
}

static int32_t lq_append_tail(URegularExpression *re, UChar *dest, int32_t capacity, UErrorCode *status) {
	return uregex_appendTail(re, &dest, &capacity, status);
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unicode/utf16"
	"unsafe"
)

// errClosed is returned when a closed Regex is given a new pattern.
var errClosed = errors.New("go-icu-regex: the Regex is closed")

// icuRegex is the Regex over one URegularExpression.
type icuRegex struct {
	// mu keeps the C side memory-safe should two goroutines share a Regex
	// (go-mysql-server caches one per expression): results would still
	// interleave, but ICU never reads a text freed under it.
	mu sync.Mutex
	re *C.URegularExpression
	// text is the C copy of the match text: ICU reads it in place, so it
	// lives until the next SetMatchString or Close.
	text    *C.UChar
	textLen int
	textCap int
	hasText bool

	bufferSize uint32
	closed     bool
}

var _ Regex = (*icuRegex)(nil)

// failed is ICU's U_FAILURE: errors are positive, warnings negative.
func failed(status C.UErrorCode) bool { return status > C.U_ZERO_ERROR }

// utf16Ptr returns a pointer ICU accepts for s, never nil: ICU refuses a
// nil pointer even for an empty string.
func utf16Ptr(s []uint16) *C.UChar {
	if len(s) == 0 {
		s = []uint16{0}
	}
	return (*C.UChar)(unsafe.Pointer(&s[0]))
}

// SetRegexString implements Regex.
func (r *icuRegex) SetRegexString(_ context.Context, regexStr string, flags RegexFlags) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errClosed
	}
	r.closeRegex()
	pattern := utf16.Encode([]rune(regexStr))
	var status C.UErrorCode
	var p *C.UChar // nil for an empty pattern, which ICU refuses
	if len(pattern) > 0 {
		p = utf16Ptr(pattern)
	}
	// uregex_open copies the pattern, so Go memory may hold it.
	re := C.uregex_open(p, C.int32_t(len(pattern)), C.uint32_t(flags), nil, &status)
	if failed(status) {
		if re != nil {
			C.uregex_close(re)
		}
		return ErrInvalidRegex.New()
	}
	r.re = re
	return nil
}

// SetMatchString implements Regex.
func (r *icuRegex) SetMatchString(_ context.Context, matchStr string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.re == nil {
		return ErrRegexNotYetSet.New()
	}
	text := utf16.Encode([]rune(matchStr))
	if need := max(len(text), 1); need > r.textCap {
		C.free(unsafe.Pointer(r.text))
		r.text = (*C.UChar)(C.malloc(C.size_t(need) * C.size_t(unsafe.Sizeof(C.UChar(0)))))
		r.textCap = need
	}
	copy(r.textSlice(len(text)), text)
	r.textLen = len(text)
	var status C.UErrorCode
	C.uregex_setText(r.re, r.text, C.int32_t(r.textLen), &status)
	if failed(status) {
		r.hasText = false
		return fmt.Errorf("unexpected UErrorCode from uregex_setText: %d", status)
	}
	r.hasText = true
	return nil
}

// textSlice is the first n code units of the C text buffer.
func (r *icuRegex) textSlice(n int) []uint16 {
	return unsafe.Slice((*uint16)(unsafe.Pointer(r.text)), r.textCap)[:n]
}

// ready checks that a pattern and a text are set.
func (r *icuRegex) ready() error {
	if r.re == nil {
		return ErrRegexNotYetSet.New()
	}
	if !r.hasText {
		return ErrMatchNotYetSet.New()
	}
	return nil
}

// seek finds the occurrence-th match searching from the 0-based start
// (-1: from where the last search stopped, which is ICU's meaning). It
// returns whether there is one and the end of the match before it (0 when
// none), which is where Replace resumes copying.
func (r *icuRegex) seek(start, occurrence int, status *C.UErrorCode) (found bool, endOfPrevious int) {
	found = C.uregex_find(r.re, C.int32_t(start), status) != 0
	for i := 1; i < occurrence && found; i++ {
		endOfPrevious = int(C.uregex_end(r.re, 0, status))
		found = C.uregex_findNext(r.re, status) != 0
	}
	return found, endOfPrevious
}

// bounds returns the current match's start and end.
func (r *icuRegex) bounds(status *C.UErrorCode) (start, end int, err error) {
	start = int(C.uregex_start(r.re, 0, status))
	end = int(C.uregex_end(r.re, 0, status))
	if failed(*status) {
		return 0, 0, fmt.Errorf("unexpected UErrorCode from uregex_find/uregex_findNext: %d", *status)
	}
	return start, end, nil
}

// IndexOf implements Regex. A start past the text finds nothing.
func (r *icuRegex) IndexOf(_ context.Context, start int, occurrence int, endIndex bool) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.ready(); err != nil {
		return 0, err
	}
	var status C.UErrorCode
	if found, _ := r.seek(start-1, occurrence, &status); !found {
		return 0, nil
	}
	s, e, err := r.bounds(&status)
	if err != nil {
		return 0, err
	}
	if endIndex {
		return e + 1, nil
	}
	return s + 1, nil
}

// Matches implements Regex. Unlike the others, a start past the text is
// an error.
func (r *icuRegex) Matches(_ context.Context, start int, occurrence int) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.ready(); err != nil {
		return false, err
	}
	var status C.UErrorCode
	found, _ := r.seek(start, occurrence, &status)
	if failed(status) {
		return false, fmt.Errorf("unexpected UErrorCode from uregex_find/uregex_findNext: %d", status)
	}
	return found, nil
}

// Substring implements Regex.
func (r *icuRegex) Substring(_ context.Context, start int, occurrence int) (string, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.ready(); err != nil {
		return "", false, err
	}
	var status C.UErrorCode
	if found, _ := r.seek(start-1, occurrence, &status); !found {
		return "", false, nil
	}
	s, e, err := r.bounds(&status)
	if err != nil {
		return "", false, err
	}
	return string(utf16.Decode(r.textSlice(r.textLen)[s:e])), true, nil
}

// Replace implements Regex, as MySQL's REGEXP_REPLACE does it: the text
// before the first replaced match is copied as is, from position on every
// match (occurrence 0) or only the occurrence-th is replaced, the rest is
// copied. A position past the text's UTF-16 length yields "" (what the
// replaced module returned); go-mysql-server refuses positions past its
// byte length first.
func (r *icuRegex) Replace(_ context.Context, replacementStr string, position int, occurrence int) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.ready(); err != nil {
		return "", err
	}
	text := r.textSlice(r.textLen)
	start := position - 1
	var status C.UErrorCode
	found, endOfPrevious := r.seek(start, occurrence, &status)
	if failed(status) {
		return "", nil
	}
	if !found {
		return string(utf16.Decode(text)), nil
	}
	repl := utf16.Encode([]rune(replacementStr))
	out := make([]uint16, 0, len(text))
	out = append(out, text[:max(endOfPrevious, start)]...)
	for {
		out = appendICU(out, &status, func(dest *C.UChar, capacity C.int32_t, st *C.UErrorCode) C.int32_t {
			return C.lq_append_replacement(r.re, utf16Ptr(repl), C.int32_t(len(repl)), dest, capacity, st)
		})
		if occurrence != 0 || failed(status) || C.uregex_findNext(r.re, &status) == 0 {
			break
		}
	}
	out = appendICU(out, &status, func(dest *C.UChar, capacity C.int32_t, st *C.UErrorCode) C.int32_t {
		return C.lq_append_tail(r.re, dest, capacity, st)
	})
	if failed(status) {
		return "", fmt.Errorf("regexp replace: unexpected UErrorCode %d", status)
	}
	return string(utf16.Decode(out)), nil
}

// appendICU runs an ICU append call into out's spare capacity, growing out
// and calling again when ICU reports the room short (it then returns the
// length it needs and has not moved on).
func appendICU(out []uint16, status *C.UErrorCode, call func(dest *C.UChar, capacity C.int32_t, status *C.UErrorCode) C.int32_t) []uint16 {
	for {
		st := *status
		spare := out[len(out):cap(out)]
		var dest *C.UChar
		if len(spare) > 0 {
			dest = (*C.UChar)(unsafe.Pointer(&spare[0]))
		}
		n := int(call(dest, C.int32_t(len(spare)), &st))
		if st == C.U_BUFFER_OVERFLOW_ERROR {
			out = slices.Grow(out, n)
			continue
		}
		*status = st
		if failed(st) {
			return out
		}
		return out[:len(out)+n]
	}
}

// StringBufferSize implements Regex.
func (r *icuRegex) StringBufferSize() uint32 { return r.bufferSize }

// Close implements Regex.
func (r *icuRegex) Close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closeRegex()
	C.free(unsafe.Pointer(r.text))
	r.text, r.textCap = nil, 0
	r.closed = true
	runtime.SetFinalizer(r, nil)
	return nil
}

// closeRegex drops the pattern and, with it, the text.
func (r *icuRegex) closeRegex() {
	if r.re != nil {
		C.uregex_close(r.re)
		r.re = nil
	}
	r.hasText = false
	r.textLen = 0
}
