package sinkddl

// The predicate of OPTIMIZE SINK ... WHERE: a small grammar of its own, so
// that no user text ever reaches DuckDB (whose functions read files).
//
//	or      := and {OR and}
//	and     := not {AND not}
//	not     := NOT not | '(' or ')' | column test
//	test    := op literal | IS [NOT] NULL | [NOT] IN (literal, ...)
//	         | [NOT] BETWEEN literal AND literal
//	op      := = | <> | != | < | <= | > | >=
//	literal := [-]integer | [-]decimal | 'string' | TRUE | FALSE
//	         | DATE 'YYYY-MM-DD' | TIMESTAMP 'YYYY-MM-DD hh:mm:ss[.ffffff]'

import (
	"strings"
	"time"

	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/internal/sqlword"
)

// PredicateKind is what a Predicate node tests.
type PredicateKind uint8

// The kinds of Predicate nodes.
const (
	PredCompare PredicateKind = iota // Column Op Values[0]
	PredIsNull                       // Column IS [NOT] NULL
	PredIn                           // Column [NOT] IN (Values...)
	PredBetween                      // Column [NOT] BETWEEN Values[0] AND Values[1]
	PredAnd                          // Left AND Right
	PredOr                           // Left OR Right
	PredNot                          // NOT Left
)

// Predicate is a node of a WHERE predicate on partition columns.
type Predicate struct {
	Kind   PredicateKind
	Column string    // the tests': as written
	Op     string    // PredCompare: = <> < <= > >= (!= is read as <>)
	Values []Literal // PredCompare: one; PredIn: one or more; PredBetween: two
	// Negated: IS NOT NULL, NOT IN, NOT BETWEEN.
	Negated     bool
	Left, Right *Predicate // PredAnd, PredOr; PredNot uses Left
}

// LiteralKind is the kind of a Literal.
type LiteralKind uint8

// The kinds of literals a predicate compares with.
const (
	LitInteger   LiteralKind = iota // Text: an optional minus and digits
	LitDecimal                      // Text: an optional minus, digits, '.', digits
	LitString                       // Text: the unescaped value
	LitBoolean                      // Text: "TRUE" or "FALSE"
	LitDate                         // Text: YYYY-MM-DD
	LitTimestamp                    // Text: YYYY-MM-DD hh:mm:ss[.ffffff], UTC
)

// Literal is a constant of a predicate.
type Literal struct {
	Kind LiteralKind
	Text string
}

// The layouts of DATE and TIMESTAMP literals; a timestamp is UTC.
const (
	dateLayout      = "2006-01-02"
	timestampLayout = "2006-01-02 15:04:05.999999999"
)

// Columns returns the columns the predicate names, each once, in the order
// they first appear.
func (p *Predicate) Columns() []string {
	var out []string
	seen := map[string]bool{}
	var walk func(*Predicate)
	walk = func(n *Predicate) {
		if n == nil {
			return
		}
		if n.Kind <= PredBetween && !seen[n.Column] {
			seen[n.Column] = true
			out = append(out, n.Column)
		}
		walk(n.Left)
		walk(n.Right)
	}
	walk(p)
	return out
}

// String renders the predicate as canonical SQL: parentheses only where
// precedence needs them (NOT binds tighter than AND, AND than OR).
func (p *Predicate) String() string {
	var b strings.Builder
	p.write(&b)
	return b.String()
}

// precedence orders the nodes for String: higher binds tighter.
func (p *Predicate) precedence() int {
	switch p.Kind {
	case PredOr:
		return 1
	case PredAnd:
		return 2
	case PredNot:
		return 3
	}
	return 4
}

func (p *Predicate) write(b *strings.Builder) {
	child := func(c *Predicate, min int) {
		if c.precedence() < min {
			b.WriteByte('(')
			c.write(b)
			b.WriteByte(')')
			return
		}
		c.write(b)
	}
	switch p.Kind {
	case PredAnd, PredOr:
		op := " AND "
		if p.Kind == PredOr {
			op = " OR "
		}
		// Left-associative: a right child of the same operator keeps its
		// parentheses, so the tree reads back as it is.
		child(p.Left, p.precedence())
		b.WriteString(op)
		child(p.Right, p.precedence()+1)
		return
	case PredNot:
		b.WriteString("NOT ")
		child(p.Left, 3)
		return
	}
	b.WriteString(sqlquote.MySQLIdent(p.Column))
	not := ""
	if p.Negated {
		not = "NOT "
	}
	switch p.Kind {
	case PredCompare:
		b.WriteString(" " + p.Op + " " + p.Values[0].String())
	case PredIsNull:
		b.WriteString(" IS " + not + "NULL")
	case PredIn:
		b.WriteString(" " + not + "IN (")
		for i, v := range p.Values {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(v.String())
		}
		b.WriteByte(')')
	case PredBetween:
		b.WriteString(" " + not + "BETWEEN " + p.Values[0].String() + " AND " + p.Values[1].String())
	}
}

// String renders the literal as SQL.
func (l Literal) String() string {
	switch l.Kind {
	case LitString:
		return sqlquote.MySQLString(l.Text)
	case LitDate:
		return "DATE " + sqlquote.MySQLString(l.Text)
	case LitTimestamp:
		return "TIMESTAMP " + sqlquote.MySQLString(l.Text)
	}
	return l.Text
}

// predicate parses a WHERE predicate; the lexer is in predicate mode.
func (p *parser) predicate() (*Predicate, error) {
	return p.predOr(0)
}

// maxPredicateDepth bounds the nesting of parentheses and NOTs, so that a
// hostile predicate cannot exhaust the stack.
const maxPredicateDepth = 64

func (p *parser) predOr(depth int) (*Predicate, error) {
	left, err := p.predAnd(depth)
	if err != nil {
		return nil, err
	}
	for p.acceptWord("OR") {
		right, err := p.predAnd(depth)
		if err != nil {
			return nil, err
		}
		left = &Predicate{Kind: PredOr, Left: left, Right: right}
	}
	return left, nil
}

func (p *parser) predAnd(depth int) (*Predicate, error) {
	left, err := p.predNot(depth)
	if err != nil {
		return nil, err
	}
	for p.acceptWord("AND") {
		right, err := p.predNot(depth)
		if err != nil {
			return nil, err
		}
		left = &Predicate{Kind: PredAnd, Left: left, Right: right}
	}
	return left, nil
}

func (p *parser) predNot(depth int) (*Predicate, error) {
	if depth >= maxPredicateDepth {
		return nil, p.syntaxErr(p.tok, "the predicate nests deeper than %d levels", maxPredicateDepth)
	}
	if p.acceptWord("NOT") {
		inner, err := p.predNot(depth + 1)
		if err != nil {
			return nil, err
		}
		return &Predicate{Kind: PredNot, Left: inner}, nil
	}
	if p.acceptPunct("(") {
		inner, err := p.predOr(depth + 1)
		if err != nil {
			return nil, err
		}
		if err := p.expectPunct(")", "expected AND, OR or ')'"); err != nil {
			return nil, err
		}
		return inner, nil
	}
	t := p.tok
	if t.kind == tokWord && p.tok.end < len(p.src) && p.src[p.tok.end] == '(' {
		return nil, p.syntaxErr(t, "expected a partition column: the predicate takes no function calls")
	}
	col, _, err := p.name("a partition column")
	if err != nil {
		return nil, err
	}
	return p.predTest(col)
}

// predTest parses what follows the column of a test.
func (p *parser) predTest(col string) (*Predicate, error) {
	n := &Predicate{Column: col}
	if p.tok.kind == tokPunct {
		switch op := p.tok.text; op {
		case "=", "<>", "!=", "<", "<=", ">", ">=":
			if op == "!=" {
				op = "<>"
			}
			p.advance()
			v, err := p.literal()
			if err != nil {
				return nil, err
			}
			n.Kind, n.Op, n.Values = PredCompare, op, []Literal{v}
			return n, nil
		}
	}
	if p.acceptWord("IS") {
		n.Kind = PredIsNull
		n.Negated = p.acceptWord("NOT")
		if err := p.expectWord("NULL", "expected NULL after IS"); err != nil {
			return nil, err
		}
		return n, nil
	}
	n.Negated = p.acceptWord("NOT")
	switch {
	case p.acceptWord("IN"):
		n.Kind = PredIn
		if err := p.expectPunct("(", "expected ( after IN"); err != nil {
			return nil, err
		}
		for {
			v, err := p.literal()
			if err != nil {
				return nil, err
			}
			n.Values = append(n.Values, v)
			if !p.acceptPunct(",") {
				break
			}
		}
		if err := p.expectPunct(")", "expected , or ) in the IN list"); err != nil {
			return nil, err
		}
		return n, nil
	case p.acceptWord("BETWEEN"):
		n.Kind = PredBetween
		lo, err := p.literal()
		if err != nil {
			return nil, err
		}
		if err := p.expectWord("AND", "expected AND in BETWEEN ... AND ..."); err != nil {
			return nil, err
		}
		hi, err := p.literal()
		if err != nil {
			return nil, err
		}
		n.Values = []Literal{lo, hi}
		return n, nil
	}
	if n.Negated {
		return nil, p.syntaxErr(p.tok, "expected IN or BETWEEN after NOT")
	}
	return nil, p.syntaxErr(p.tok, "expected a comparison (= <> != < <= > >=), IS [NOT] NULL, [NOT] IN or [NOT] BETWEEN after the column")
}

// literal parses a constant of the predicate.
func (p *parser) literal() (Literal, error) {
	t := p.tok
	switch {
	case p.isPunct("-"):
		p.advance()
		n := p.tok
		if n.kind != tokNumber {
			return Literal{}, p.syntaxErr(n, "expected a number after -")
		}
		p.advance()
		return numberLiteral("-" + n.text), nil
	case t.kind == tokNumber:
		p.advance()
		return numberLiteral(t.text), nil
	case t.kind == tokString:
		p.advance()
		return Literal{Kind: LitString, Text: t.text}, nil
	case p.isWord("TRUE"), p.isWord("FALSE"):
		p.advance()
		return Literal{Kind: LitBoolean, Text: sqlword.UpperASCII(t.text)}, nil
	case p.isWord("NULL"):
		return Literal{}, p.syntaxErr(t, "NULL compares as unknown: write IS NULL or IS NOT NULL")
	case p.isWord("DATE"), p.isWord("TIMESTAMP"):
		kind, layout, shape := LitDate, dateLayout, "YYYY-MM-DD"
		if p.isWord("TIMESTAMP") {
			kind, layout, shape = LitTimestamp, timestampLayout, "YYYY-MM-DD hh:mm:ss[.ffffff]"
		}
		p.advance()
		s := p.tok
		if s.kind != tokString {
			return Literal{}, p.syntaxErr(s, "expected a quoted value after %s", sqlword.UpperASCII(t.text))
		}
		v, err := time.Parse(layout, s.text)
		if err != nil {
			return Literal{}, p.syntaxErr(s, "%s %s is not a valid %s (%s)",
				sqlword.UpperASCII(t.text), sqlquote.MySQLString(s.text), sqlword.LowerASCII(t.text), shape)
		}
		p.advance()
		if kind == LitDate {
			return Literal{Kind: LitDate, Text: v.Format(dateLayout)}, nil
		}
		return Literal{Kind: LitTimestamp, Text: v.Format(timestampLayout)}, nil
	}
	return Literal{}, p.syntaxErr(t, "expected a literal: a number, a quoted string, TRUE, FALSE, DATE '...' or TIMESTAMP '...'")
}

// numberLiteral is an integer or a decimal as written, leading zeros kept
// out so that the text is canonical.
func numberLiteral(text string) Literal {
	neg := strings.HasPrefix(text, "-")
	digits := strings.TrimPrefix(text, "-")
	intPart, frac, isDec := strings.Cut(digits, ".")
	intPart = strings.TrimLeft(intPart, "0")
	if intPart == "" {
		intPart = "0"
	}
	out := intPart
	if isDec {
		out += "." + frac
	}
	if neg && strings.Trim(out, "0.") != "" {
		out = "-" + out
	}
	if isDec {
		return Literal{Kind: LitDecimal, Text: out}
	}
	return Literal{Kind: LitInteger, Text: out}
}
