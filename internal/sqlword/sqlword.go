// Package sqlword sniffs the leading keywords of a SQL text without parsing
// it: enough to route a statement (is it CREATE SINK? a SELECT? a SET?)
// before any parser runs. Keywords compare in ASCII case only, as MySQL's
// do: Unicode folding would let "ſink" pass for SINK.
package sqlword

import "strings"

// Leading skips blanks and comments from i and returns the word there
// ("" when something else is there) and the offset after it.
func Leading(s string, i int) (string, int) {
	i, ok := SkipBlank(s, i)
	if !ok {
		return "", len(s)
	}
	j := i
	for j < len(s) && isWordByte(s[j]) {
		j++
	}
	return s[i:j], j
}

// isWordByte: the bytes a bare word is made of, with every byte of a
// multi-byte character counted in (the lexer is stricter; sniffing need not be).
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

// Is compares a word with an upper-case keyword, ignoring ASCII case
// only: Unicode folding would let "ſink" pass for SINK.
func Is(word, kw string) bool {
	if len(word) != len(kw) {
		return false
	}
	for i := 0; i < len(word); i++ {
		c := word[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c != kw[i] {
			return false
		}
	}
	return true
}

// UpperASCII upper-cases ASCII letters only.
func UpperASCII(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r - ('a' - 'A')
		}
		return r
	}, s)
}

// LowerASCII lower-cases ASCII letters only.
func LowerASCII(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}, s)
}

// SkipBlank skips whitespace and MySQL comments (/* ... */, "-- " and # to
// the end of the line) from i. It returns false, with the offset of the
// comment, when a /* comment is not closed.
func SkipBlank(s string, i int) (int, bool) {
	for i < len(s) {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '#', c == '-' && strings.HasPrefix(s[i:], "--") && (i+2 == len(s) || s[i+2] <= ' '):
			// MySQL wants a blank or control character after "--", so
			// that "x--1" stays arithmetic.
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return len(s), true
			}
			i += j + 1
		case c == '/' && strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return i, false
			}
			i += 2 + j + 2
		default:
			return i, true
		}
	}
	return i, true
}
