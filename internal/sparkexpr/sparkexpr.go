// Package sparkexpr translates the Spark SQL scalar expressions that Delta
// tables keep (CHECK constraints, column invariants, generation
// expressions) into DuckDB SQL. It parses a small subset of Spark's
// grammar itself and writes DuckDB text only from what it parsed: column
// names are resolved against the table and quoted, literals are quoted
// again, and functions come from a fixed list. So the output is always one
// scalar expression, never a statement, whatever the input. An expression
// outside the subset is refused with ErrUnsupported naming what it met.
package sparkexpr

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/lakesql/lakesql/internal/sqlquote"
)

// ErrUnsupported: the expression uses Spark SQL outside the subset this
// package translates, or names a column the table lacks.
var ErrUnsupported = errors.New("expression outside the supported Spark SQL subset")

// maxDepth bounds nesting, so a hostile expression cannot exhaust the stack.
const maxDepth = 64

// Resolve maps a column name as the expression spells it to the table's
// column, or reports false. Spark resolves names without regard to case.
type Resolve func(name string) (column string, ok bool)

// Columns returns a Resolve over names, matched without regard to case.
func Columns(names []string) Resolve {
	byLower := make(map[string]string, len(names))
	for _, n := range names {
		byLower[strings.ToLower(n)] = n
	}
	return func(name string) (string, bool) {
		c, ok := byLower[strings.ToLower(name)]
		return c, ok
	}
}

// Translated is an expression in DuckDB SQL and the table columns it reads.
type Translated struct {
	SQL     string
	Columns []string
}

// Translate parses the Spark SQL expression src and writes it as DuckDB
// SQL, each column quoted as its table name (ident is applied to the name
// resolve returns, so a caller may map logical to physical names there).
func Translate(src string, resolve Resolve) (Translated, error) {
	toks, err := lex(src)
	if err != nil {
		return Translated{}, fmt.Errorf("%w: %q: %v", ErrUnsupported, src, err)
	}
	p := &parser{toks: toks, resolve: resolve, seen: map[string]bool{}}
	out, err := p.expr(0)
	if err == nil && p.peek().kind != tEOF {
		err = fmt.Errorf("unexpected %s", p.peek())
	}
	if err != nil {
		return Translated{}, fmt.Errorf("%w: %q: %v", ErrUnsupported, src, err)
	}
	return Translated{SQL: out, Columns: p.cols}, nil
}

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tQuoted // a backquoted identifier
	tNumber
	tString
	tOp
)

type token struct {
	kind tokKind
	text string
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of expression"
	case tString:
		return "string " + sqlquote.String(t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

// keyword tells whether t is the bare word w, in any case.
func (t token) keyword(w string) bool { return t.kind == tIdent && strings.EqualFold(t.text, w) }

var ops = []string{"<=>", "<=", ">=", "<>", "!=", "==", "||", "=", "<", ">", "+", "-", "*", "/", "%", "(", ")", ","}

func lex(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '`':
			var b strings.Builder
			j := i + 1
			for ; ; j++ {
				if j >= len(s) {
					return nil, errors.New("unterminated backquoted name")
				}
				if s[j] == '`' {
					if j+1 < len(s) && s[j+1] == '`' {
						b.WriteByte('`')
						j++
						continue
					}
					break
				}
				b.WriteByte(s[j])
			}
			out = append(out, token{tQuoted, b.String()})
			i = j + 1
		case c == '\'' || c == '"':
			str, n, err := lexString(s[i:])
			if err != nil {
				return nil, err
			}
			out = append(out, token{tString, str})
			i += n
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
				j++
			}
			if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
				k := j + 1
				if k < len(s) && (s[k] == '+' || s[k] == '-') {
					k++
				}
				if k < len(s) && s[k] >= '0' && s[k] <= '9' {
					for j = k; j < len(s) && s[j] >= '0' && s[j] <= '9'; j++ {
					}
				}
			}
			// A type suffix: 10L, 1.5D, 2BD, ...
			for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
				j++
			}
			out = append(out, token{tNumber, s[i:j]})
			i = j
		case c == '_' || c < 0x80 && unicode.IsLetter(rune(c)):
			j := i
			for j < len(s) && (s[j] == '_' || s[j] < 0x80 && (unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j])))) {
				j++
			}
			out = append(out, token{tIdent, s[i:j]})
			i = j
		default:
			matched := false
			for _, op := range ops {
				if strings.HasPrefix(s[i:], op) {
					out = append(out, token{tOp, op})
					i += len(op)
					matched = true
					break
				}
			}
			if !matched {
				return nil, fmt.Errorf("unexpected character %q", c)
			}
		}
	}
	return append(out, token{kind: tEOF}), nil
}

// lexString reads a Spark string literal (single or double quotes, with
// backslash escapes) and returns its value and length.
func lexString(s string) (string, int, error) {
	q := s[0]
	var b strings.Builder
	for j := 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == q:
			return b.String(), j + 1, nil
		case c == '\\':
			j++
			if j >= len(s) {
				return "", 0, errors.New("unterminated string")
			}
			switch e := s[j]; e {
			case '\'', '"', '\\', '%', '_':
				if e == '%' || e == '_' { // Spark keeps these escapes for LIKE
					b.WriteByte('\\')
				}
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			default:
				return "", 0, fmt.Errorf("string escape \\%c", e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, errors.New("unterminated string")
}

type parser struct {
	toks    []token
	pos     int
	resolve Resolve
	cols    []string
	seen    map[string]bool
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

func (p *parser) acceptOp(op string) bool {
	if t := p.peek(); t.kind == tOp && t.text == op {
		p.pos++
		return true
	}
	return false
}

func (p *parser) acceptWord(w string) bool {
	if p.peek().keyword(w) {
		p.pos++
		return true
	}
	return false
}

func (p *parser) expectOp(op string) error {
	if !p.acceptOp(op) {
		return fmt.Errorf("expected %q, found %s", op, p.peek())
	}
	return nil
}

func (p *parser) expectWord(w string) error {
	if !p.acceptWord(w) {
		return fmt.Errorf("expected %s, found %s", w, p.peek())
	}
	return nil
}

func (p *parser) expr(depth int) (string, error) {
	if depth > maxDepth {
		return "", errors.New("nested too deeply")
	}
	return p.or(depth + 1)
}

func (p *parser) or(d int) (string, error) {
	l, err := p.and(d)
	for err == nil && p.acceptWord("OR") {
		var r string
		if r, err = p.and(d); err == nil {
			l = "(" + l + " OR " + r + ")"
		}
	}
	return l, err
}

func (p *parser) and(d int) (string, error) {
	l, err := p.not(d)
	for err == nil && p.acceptWord("AND") {
		var r string
		if r, err = p.not(d); err == nil {
			l = "(" + l + " AND " + r + ")"
		}
	}
	return l, err
}

func (p *parser) not(d int) (string, error) {
	if p.acceptWord("NOT") {
		if d > maxDepth {
			return "", errors.New("nested too deeply")
		}
		x, err := p.not(d + 1)
		return "(NOT " + x + ")", err
	}
	return p.predicate(d)
}

// comparisons maps Spark's comparison operators to DuckDB's.
var comparisons = map[string]string{"=": "=", "==": "=", "<>": "<>", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">=", "<=>": "IS NOT DISTINCT FROM"}

func (p *parser) predicate(d int) (string, error) {
	l, err := p.concat(d)
	if err != nil {
		return "", err
	}
	if t := p.peek(); t.kind == tOp {
		if op, ok := comparisons[t.text]; ok {
			p.next()
			r, err := p.concat(d)
			return "(" + l + " " + op + " " + r + ")", err
		}
	}
	if p.acceptWord("IS") {
		neg := p.acceptWord("NOT")
		var what string
		switch {
		case p.acceptWord("NULL"):
			what = "NULL"
		case p.acceptWord("TRUE"):
			what = "TRUE"
		case p.acceptWord("FALSE"):
			what = "FALSE"
		default:
			return "", fmt.Errorf("expected NULL, TRUE or FALSE after IS, found %s", p.peek())
		}
		if neg {
			what = "NOT " + what
		}
		return "(" + l + " IS " + what + ")", nil
	}
	neg := ""
	if p.acceptWord("NOT") {
		neg = "NOT "
	}
	switch {
	case p.acceptWord("IN"):
		if err := p.expectOp("("); err != nil {
			return "", err
		}
		items, err := p.list(d)
		if err != nil {
			return "", err
		}
		return "(" + l + " " + neg + "IN (" + strings.Join(items, ", ") + "))", nil
	case p.acceptWord("BETWEEN"):
		lo, err := p.concat(d)
		if err != nil {
			return "", err
		}
		if err := p.expectWord("AND"); err != nil {
			return "", err
		}
		hi, err := p.concat(d)
		return "(" + l + " " + neg + "BETWEEN " + lo + " AND " + hi + ")", err
	case p.acceptWord("LIKE"):
		pat, err := p.concat(d)
		// Spark's LIKE escapes with a backslash, DuckDB's with none unless told.
		return "(" + l + " " + neg + "LIKE " + pat + " ESCAPE '\\')", err
	}
	if neg != "" {
		return "", fmt.Errorf("expected IN, BETWEEN or LIKE after NOT, found %s", p.peek())
	}
	return l, nil
}

// list reads expressions up to a closing parenthesis (the opening one read).
func (p *parser) list(d int) ([]string, error) {
	var items []string
	for {
		x, err := p.expr(d)
		if err != nil {
			return nil, err
		}
		items = append(items, x)
		if p.acceptOp(")") {
			return items, nil
		}
		if err := p.expectOp(","); err != nil {
			return nil, err
		}
	}
}

func (p *parser) concat(d int) (string, error) {
	l, err := p.additive(d)
	for err == nil && p.acceptOp("||") {
		var r string
		if r, err = p.additive(d); err == nil {
			l = "(" + l + " || " + r + ")"
		}
	}
	return l, err
}

func (p *parser) additive(d int) (string, error) {
	l, err := p.multiplicative(d)
	for err == nil {
		t := p.peek()
		if t.kind != tOp || (t.text != "+" && t.text != "-") {
			break
		}
		p.next()
		var r string
		if r, err = p.multiplicative(d); err == nil {
			l = "(" + l + " " + t.text + " " + r + ")"
		}
	}
	return l, err
}

func (p *parser) multiplicative(d int) (string, error) {
	l, err := p.unary(d)
	for err == nil {
		t := p.peek()
		if t.kind != tOp || (t.text != "*" && t.text != "/" && t.text != "%") {
			break
		}
		p.next()
		var r string
		if r, err = p.unary(d); err == nil {
			l = "(" + l + " " + t.text + " " + r + ")"
		}
	}
	return l, err
}

func (p *parser) unary(d int) (string, error) {
	if d > maxDepth {
		return "", errors.New("nested too deeply")
	}
	if p.acceptOp("-") {
		x, err := p.unary(d + 1)
		return "(- " + x + ")", err
	}
	if p.acceptOp("+") {
		return p.unary(d + 1)
	}
	return p.primary(d)
}

func (p *parser) primary(d int) (string, error) {
	t := p.next()
	switch t.kind {
	case tNumber:
		return number(t.text)
	case tString:
		return sqlquote.String(t.text), nil
	case tQuoted:
		return p.column(t.text)
	case tOp:
		if t.text == "(" {
			x, err := p.expr(d)
			if err != nil {
				return "", err
			}
			return "(" + x + ")", p.expectOp(")")
		}
		return "", fmt.Errorf("unexpected %s", t)
	case tIdent:
	default:
		return "", fmt.Errorf("unexpected %s", t)
	}
	switch w := strings.ToUpper(t.text); {
	case w == "TRUE" || w == "FALSE" || w == "NULL":
		return w, nil
	case (w == "DATE" || w == "TIMESTAMP" || w == "TIMESTAMP_NTZ") && p.peek().kind == tString:
		lit := p.next().text
		return "CAST(" + sqlquote.String(lit) + " AS " + map[string]string{"DATE": "DATE", "TIMESTAMP": "TIMESTAMPTZ", "TIMESTAMP_NTZ": "TIMESTAMP"}[w] + ")", nil
	case w == "CASE":
		return p.caseExpr(d)
	case (w == "CAST" || w == "TRY_CAST") && p.peek().kind == tOp && p.peek().text == "(":
		p.next()
		x, err := p.expr(d)
		if err != nil {
			return "", err
		}
		if err := p.expectWord("AS"); err != nil {
			return "", err
		}
		typ, err := p.typeName()
		if err != nil {
			return "", err
		}
		// Spark casts without ANSI mode give NULL where DuckDB would fail,
		// and a NULL fails a CHECK just as an error fails the write.
		return "TRY_CAST(" + x + " AS " + typ + ")", p.expectOp(")")
	}
	if p.peek().kind == tOp && p.peek().text == "(" {
		p.next()
		return p.call(t.text, d)
	}
	return p.column(t.text)
}

func (p *parser) column(name string) (string, error) {
	c, ok := p.resolve(name)
	if !ok {
		return "", fmt.Errorf("column %q is not in the table", name)
	}
	if !p.seen[c] {
		p.seen[c] = true
		p.cols = append(p.cols, c)
	}
	return sqlquote.Ident(c), nil
}

func (p *parser) caseExpr(d int) (string, error) {
	var b strings.Builder
	b.WriteString("(CASE")
	if !p.peek().keyword("WHEN") {
		x, err := p.expr(d)
		if err != nil {
			return "", err
		}
		b.WriteString(" " + x)
	}
	arms := 0
	for p.acceptWord("WHEN") {
		w, err := p.expr(d)
		if err != nil {
			return "", err
		}
		if err := p.expectWord("THEN"); err != nil {
			return "", err
		}
		th, err := p.expr(d)
		if err != nil {
			return "", err
		}
		b.WriteString(" WHEN " + w + " THEN " + th)
		arms++
	}
	if arms == 0 {
		return "", errors.New("CASE without WHEN")
	}
	if p.acceptWord("ELSE") {
		e, err := p.expr(d)
		if err != nil {
			return "", err
		}
		b.WriteString(" ELSE " + e)
	}
	if err := p.expectWord("END"); err != nil {
		return "", err
	}
	b.WriteString(" END)")
	return b.String(), nil
}

// functions are the Spark functions translated: DuckDB's name and the
// arities allowed (-1: one or more). Each behaves as Spark's on the
// types it accepts; a type DuckDB will not take fails when it binds.
var functions = map[string]struct {
	name  string
	arity int
}{
	"abs": {"abs", 1}, "lower": {"lower", 1}, "lcase": {"lower", 1}, "upper": {"upper", 1}, "ucase": {"upper", 1},
	"length": {"length", 1}, "char_length": {"length", 1}, "character_length": {"length", 1},
	"trim": {"trim", 1}, "ltrim": {"ltrim", 1}, "rtrim": {"rtrim", 1},
	"coalesce": {"coalesce", -1}, "greatest": {"greatest", -1}, "least": {"least", -1},
	"year": {"year", 1}, "month": {"month", 1}, "day": {"day", 1}, "dayofmonth": {"day", 1},
	"hour": {"hour", 1}, "minute": {"minute", 1}, "second": {"second", 1},
	"isnull": {"", 1}, "isnotnull": {"", 1}, "concat": {"", -1}, "to_date": {"", 1},
}

func (p *parser) call(name string, d int) (string, error) {
	f, ok := functions[strings.ToLower(name)]
	if !ok {
		return "", fmt.Errorf("function %s is not supported", name)
	}
	args, err := p.list(d)
	if err != nil {
		return "", err
	}
	if f.arity > 0 && len(args) != f.arity {
		return "", fmt.Errorf("%s takes %d argument(s), got %d", name, f.arity, len(args))
	}
	switch strings.ToLower(name) {
	case "isnull":
		return "(" + args[0] + " IS NULL)", nil
	case "isnotnull":
		return "(" + args[0] + " IS NOT NULL)", nil
	case "concat":
		// Spark's concat is NULL when an argument is; DuckDB's skips NULLs,
		// its || does not.
		return "(" + strings.Join(args, " || ") + ")", nil
	case "to_date":
		return "TRY_CAST(" + args[0] + " AS DATE)", nil
	case "greatest", "least":
		// Spark skips NULL arguments, as DuckDB does.
	}
	return f.name + "(" + strings.Join(args, ", ") + ")", nil
}

// typeNames maps Spark type names to DuckDB's.
var typeNames = map[string]string{
	"boolean": "BOOLEAN", "tinyint": "TINYINT", "byte": "TINYINT", "smallint": "SMALLINT", "short": "SMALLINT",
	"int": "INTEGER", "integer": "INTEGER", "bigint": "BIGINT", "long": "BIGINT", "float": "FLOAT", "real": "FLOAT",
	"double": "DOUBLE", "string": "VARCHAR", "date": "DATE", "timestamp": "TIMESTAMPTZ", "timestamp_ntz": "TIMESTAMP",
	"binary": "BLOB",
}

func (p *parser) typeName() (string, error) {
	t := p.next()
	if t.kind != tIdent {
		return "", fmt.Errorf("expected a type name, found %s", t)
	}
	w := strings.ToLower(t.text)
	if w == "decimal" || w == "dec" || w == "numeric" {
		prec, scale := "10", "0"
		if p.acceptOp("(") {
			n := p.next()
			if n.kind != tNumber || !digits(n.text) {
				return "", fmt.Errorf("bad decimal precision %s", n)
			}
			prec = n.text
			if p.acceptOp(",") {
				s := p.next()
				if s.kind != tNumber || !digits(s.text) {
					return "", fmt.Errorf("bad decimal scale %s", s)
				}
				scale = s.text
			}
			if err := p.expectOp(")"); err != nil {
				return "", err
			}
		}
		return "DECIMAL(" + prec + ", " + scale + ")", nil
	}
	if typ, ok := typeNames[w]; ok {
		return typ, nil
	}
	return "", fmt.Errorf("type %s is not supported", t.text)
}

func digits(s string) bool {
	if s == "" || len(s) > 3 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// number writes a Spark numeric literal in DuckDB, its type suffix as a cast.
func number(s string) (string, error) {
	body, suffix := s, ""
	for i, c := range s {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			if c == 'e' || c == 'E' {
				if i+1 < len(s) && (s[i+1] >= '0' && s[i+1] <= '9' || s[i+1] == '+' || s[i+1] == '-') {
					continue
				}
			}
			body, suffix = s[:i], strings.ToUpper(s[i:])
			break
		}
	}
	if strings.Count(body, ".") > 1 || body == "." {
		return "", fmt.Errorf("bad number %q", s)
	}
	for _, c := range body {
		if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
			return "", fmt.Errorf("bad number %q", s)
		}
	}
	cast := map[string]string{"": "", "L": "BIGINT", "S": "SMALLINT", "Y": "TINYINT", "D": "DOUBLE", "F": "FLOAT", "BD": "DECIMAL(38, 18)"}
	typ, ok := cast[suffix]
	if !ok {
		return "", fmt.Errorf("number suffix %q", suffix)
	}
	if typ == "" {
		if strings.ContainsAny(body, "eE") {
			return "CAST(" + sqlquote.String(body) + " AS DOUBLE)", nil
		}
		return body, nil
	}
	return "CAST(" + sqlquote.String(body) + " AS " + typ + ")", nil
}
