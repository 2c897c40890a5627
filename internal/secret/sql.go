package secret

import "strings"

// maxDepth bounds how deep MaskSQL looks into literals that hold SQL text
// that holds literals (a procedure's options argument, for one).
const maxDepth = 4

// MaskSQL returns a statement's text with its secrets masked:
//   - the value after a secret-looking name and '=' (storage.secret_access_key
//     = '…', catalog.`token` = …, password=…), quoted or bare;
//   - every string after IDENTIFIED (CREATE USER … IDENTIFIED BY '…'), up to
//     the next ',' or ';';
//   - passwords in URIs and secret-looking URI parameters inside strings
//     (storage.endpoint = 'http://u:p@h', catalog.uri = '…?password=…');
//   - all of this again inside strings and comments, which may hold SQL
//     (CALL lakesql_create_sink(…, 'storage.secret_access_key = ”…”')).
//
// Everything else is kept as written.
func MaskSQL(q string) string { return maskSQL(q, 0) }

// maskText masks a string literal's or a comment's content. Text with no
// '@', '=' or quote holds nothing to mask, and is passed over at once (a
// statement may carry megabytes of plain literal).
func maskText(s string, depth int) string {
	if !strings.ContainsAny(s, "@='\"`") {
		return s
	}
	s = MaskURI(s)
	if depth < maxDepth {
		s = maskSQL(s, depth+1)
	}
	return s
}

func maskSQL(q string, depth int) string {
	var b strings.Builder
	// name: the last token was a secret-looking name; armed: and '='
	// followed, so the next token is its value; identified: strings are
	// masked until ',' or ';'.
	name, armed, identified := false, false, false
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			b.WriteByte(c)
			i++
			continue
		case strings.HasPrefix(q[i:], "/*"):
			end := strings.Index(q[i+2:], "*/")
			inner, next := q[i+2:], len(q)
			if end >= 0 {
				inner, next = q[i+2:i+2+end], i+4+end
			}
			b.WriteString("/*" + maskText(inner, depth))
			if end >= 0 {
				b.WriteString("*/")
			}
			i = next
			continue
		case c == '#' || strings.HasPrefix(q[i:], "--") && (i+2 == len(q) || strings.IndexByte(" \t\r\n", q[i+2]) >= 0):
			start := i + 1
			if c == '-' {
				start = i + 2
			}
			end := strings.IndexByte(q[start:], '\n')
			next := len(q)
			if end >= 0 {
				next = start + end
			}
			b.WriteString(q[i:start] + maskText(q[start:next], depth))
			i = next
			continue
		case c == '\'' || c == '"' || c == '`':
			j := closeQuote(q, i)
			if armed || name || (identified && c != '`') {
				// A value: a quoted name right after a secret name is
				// refused SQL, but it may still be a secret.
				b.WriteString(string(c) + Mask + string(c))
				name, armed = false, false
				i = j
				continue
			}
			content := unquote(q[i:j], c)
			name = IsSecretName(content)
			if masked := maskText(content, depth); masked != content {
				b.WriteString(quote(masked, c))
			} else {
				b.WriteString(q[i:j])
			}
			i = j
			continue
		}
		if armed {
			// A bare value: up to where a value could not go on.
			j := i
			for j < len(q) && strings.IndexByte(" \t\r\n,();&'\"`", q[j]) < 0 {
				j++
			}
			if j == i {
				j++
			}
			b.WriteString(Mask)
			name, armed = false, false
			i = j
			continue
		}
		if isWordStart(c) {
			j := i + 1
			for j < len(q) && (isWordStart(q[j]) || q[j] == '-') {
				j++
			}
			word := q[i:j]
			b.WriteString(word)
			name = IsSecretName(word)
			if strings.EqualFold(word, "IDENTIFIED") {
				identified = true
			}
			i = j
			continue
		}
		switch {
		case c == '=' || strings.HasPrefix(q[i:], ":="):
			armed = name
		case c == ',' || c == ';':
			identified = false
			fallthrough
		default:
			armed = false
		}
		name = false
		if c == ':' && armed {
			b.WriteString(":=")
			i += 2
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// isWordStart reports whether c may be part of a name or a bare value: a
// letter, digit, '_', '$', '.' or any byte of a non-ASCII character.
func isWordStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c == '.' || c >= 0x80
}

// closeQuote returns the index after the quoted text that starts at
// q[i]: its closing quote, a doubled quote or (outside backquotes) a
// backslash escaping one; an unterminated one runs to the end.
func closeQuote(q string, i int) int {
	c := q[i]
	for j := i + 1; j < len(q); j++ {
		switch {
		case q[j] == '\\' && c != '`':
			j++
		case q[j] == c:
			if j+1 < len(q) && q[j+1] == c {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(q)
}

// unquote returns the content of a quoted text, doubled quotes and
// backslash escapes of the quote undone (other escapes are kept).
func unquote(lit string, c byte) string {
	s := lit[1:]
	if len(s) > 0 && s[len(s)-1] == c {
		s = s[:len(s)-1]
	}
	q := string(c)
	s = strings.ReplaceAll(s, q+q, q)
	if c != '`' {
		s = strings.ReplaceAll(s, `\`+q, q)
	}
	return s
}

// quote quotes s with c, doubling c inside.
func quote(s string, c byte) string {
	q := string(c)
	return q + strings.ReplaceAll(s, q, q+q) + q
}
