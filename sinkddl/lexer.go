package sinkddl

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/lakesql/lakesql/internal/sqlword"
)

type tokenKind uint8

const (
	tokEOF    tokenKind = iota
	tokWord             // a bare word: a keyword or an unquoted name
	tokIdent            // a `backquoted` name; text is unescaped
	tokString           // a 'single' or "double" quoted string; text is unescaped
	tokNumber           // an unsigned decimal integer; text is the digits
	tokPunct            // one of ( ) , = . ; - +, and in predicates < <= > >= <> !=
	tokError            // the lexer failed here; parser.lexErr says why
)

type token struct {
	kind     tokenKind
	text     string
	pos, end int // byte offsets of the token in the input
}

type lexer struct {
	src string
	pos int
	// predicate turns on what only OPTIMIZE's WHERE and VACUUM's RETAIN
	// need: the comparison operators and decimal numbers (tokNumber text
	// "1.5"). CREATE SINK never sees them, so its errors stay as they are.
	predicate bool
}

// isWordStart and isWordRune follow MySQL's unquoted identifiers: ASCII
// letters, digits, _ and $, and any character of the Basic Multilingual
// Plane beyond ASCII. A word does not start with a digit here, so that
// numbers stay numbers.
func isWordStart(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || r == '$' || r >= 0x80 && r <= 0xFFFF
}

func isWordRune(r rune) bool { return isWordStart(r) || r >= '0' && r <= '9' }

func (l *lexer) errAt(pos int, msg string) *SyntaxError {
	return &SyntaxError{Pos: pos + 1, Near: shorten(l.src[pos:]), Msg: msg}
}

func (l *lexer) next() (token, *SyntaxError) {
	start, ok := sqlword.SkipBlank(l.src, l.pos)
	if !ok {
		return token{}, l.errAt(start, "unterminated /* comment")
	}
	s := l.src
	if start == len(s) {
		l.pos = start
		return token{kind: tokEOF, pos: start, end: start}, nil
	}
	r, size := utf8.DecodeRuneInString(s[start:])
	i := start + size
	tok := token{pos: start}
	switch {
	case isWordStart(r):
		for i < len(s) {
			r, size := utf8.DecodeRuneInString(s[i:])
			if !isWordRune(r) {
				break
			}
			i += size
		}
		tok.kind, tok.text = tokWord, s[start:i]
	case r >= '0' && r <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if l.predicate && i+1 < len(s) && s[i] == '.' && s[i+1] >= '0' && s[i+1] <= '9' {
			for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			}
		}
		tok.kind, tok.text = tokNumber, s[start:i]
	case r == '`':
		var b strings.Builder
		for {
			j := strings.IndexByte(s[i:], '`')
			if j < 0 {
				return token{}, l.errAt(start, "unterminated backquoted name")
			}
			b.WriteString(s[i : i+j])
			i += j + 1
			if i < len(s) && s[i] == '`' { // `` is a literal backquote
				b.WriteByte('`')
				i++
				continue
			}
			break
		}
		tok.kind, tok.text = tokIdent, b.String()
	case r == '\'' || r == '"':
		text, end, ok := unquote(s, i, byte(r))
		if !ok {
			return token{}, l.errAt(start, "unterminated string")
		}
		i = end
		tok.kind, tok.text = tokString, text
	case strings.ContainsRune("(),=.;-+", r):
		tok.kind, tok.text = tokPunct, s[start:i]
	case l.predicate && (r == '<' || r == '>' || r == '!'):
		if i < len(s) && (s[i] == '=' || r == '<' && s[i] == '>') {
			i++
		} else if r == '!' {
			return token{}, l.errAt(start, "unexpected character '!': write NOT, or != for not equal")
		}
		tok.kind, tok.text = tokPunct, s[start:i]
	default:
		return token{}, l.errAt(start, fmt.Sprintf("unexpected character %q", r))
	}
	tok.end = i
	l.pos = i
	return tok, nil
}

// unquote reads a string literal whose opening quote q ends just before i,
// with MySQL's escapes: a doubled quote, and backslash sequences where \0 \b
// \n \r \t \Z stand for control characters, \% and \_ keep their backslash
// (they are LIKE escapes), and any other \c is c. It returns the value and
// the offset after the closing quote.
func unquote(s string, i int, q byte) (string, int, bool) {
	var b strings.Builder
	for i < len(s) {
		c := s[i]
		switch {
		case c == q:
			if i+1 < len(s) && s[i+1] == q {
				b.WriteByte(q)
				i += 2
				continue
			}
			return b.String(), i + 1, true
		case c == '\\':
			if i+1 == len(s) {
				return "", 0, false
			}
			switch e := s[i+1]; e {
			case '0':
				b.WriteByte(0)
			case 'b':
				b.WriteByte('\b')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'Z':
				b.WriteByte(0x1a)
			case '%', '_':
				b.WriteByte('\\')
				b.WriteByte(e)
			default:
				b.WriteByte(e)
			}
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", 0, false
}

// shorten cuts the text shown after "near" in an error to a readable length,
// at a character boundary.
func shorten(s string) string {
	const maxNear = 40
	if len(s) <= maxNear {
		return s
	}
	i := maxNear
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}
