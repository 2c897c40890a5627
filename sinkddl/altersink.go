package sinkddl

// ALTER SINK: the syntax of changing a live sink's columns, options and
// CHECK constraints. What each change does is the planner's and the
// sink's; here is what may be written.

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/internal/sqlword"
)

// ColumnChangeKind names one change of a column in ALTER SINK.
type ColumnChangeKind string

// The column changes, spelled as ALTER SINK writes them.
const (
	ColumnAdd    ColumnChangeKind = "ADD COLUMN"
	ColumnModify ColumnChangeKind = "MODIFY COLUMN"
	ColumnRename ColumnChangeKind = "RENAME COLUMN"
	ColumnDrop   ColumnChangeKind = "DROP COLUMN"
)

// ColumnChange is one ADD, MODIFY, RENAME or DROP COLUMN.
type ColumnChange struct {
	Kind   ColumnChangeKind
	Column string
	// NewName is RENAME COLUMN's new name.
	NewName string
	// SQLType and Type are the type of ADD and MODIFY, as CREATE SINK
	// spells and resolves it (types.go).
	SQLType string
	Type    arrow.DataType
	// Comment is ADD COLUMN's optional comment.
	Comment string
}

// AlterSink is ALTER SINK name followed by exactly one of: column changes
// separated by commas (one table version for all of them), SET (key =
// value, ...), ADD CONSTRAINT c CHECK (expr), DROP CONSTRAINT [IF EXISTS] c.
type AlterSink struct {
	Name    string
	Columns []ColumnChange
	// Set is SET (...): keys are unique and lower case, as in WITH.
	Set []Option
	// AddCheck is ADD CONSTRAINT name CHECK (expr).
	AddCheck *CheckConstraint
	// DropConstraint is DROP CONSTRAINT [IF EXISTS] name.
	DropConstraint *DropConstraint
}

// CheckConstraint is a named CHECK constraint. Expr is the SQL boolean
// expression between the parentheses, as written (blanks around it
// trimmed): evaluating it is the sink's, and the sink refuses what it
// cannot evaluate.
type CheckConstraint struct {
	Name string
	Expr string
}

// DropConstraint is DROP CONSTRAINT [IF EXISTS] name.
type DropConstraint struct {
	Name     string
	IfExists bool
}

func (*AlterSink) lakesqlStatement() {}

func (a *AlterSink) String() string {
	var b strings.Builder
	b.WriteString("ALTER SINK " + sqlquote.MySQLIdent(a.Name) + " ")
	switch {
	case a.Set != nil:
		b.WriteString("SET (")
		for i, o := range a.Set {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(o.String())
		}
		b.WriteString(")")
	case a.AddCheck != nil:
		b.WriteString("ADD CONSTRAINT " + sqlquote.MySQLIdent(a.AddCheck.Name) + " CHECK (" + a.AddCheck.Expr + ")")
	case a.DropConstraint != nil:
		b.WriteString("DROP CONSTRAINT ")
		if a.DropConstraint.IfExists {
			b.WriteString("IF EXISTS ")
		}
		b.WriteString(sqlquote.MySQLIdent(a.DropConstraint.Name))
	default:
		for i, c := range a.Columns {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.String())
		}
	}
	return b.String()
}

// String renders the change as ALTER SINK writes it.
func (c ColumnChange) String() string {
	s := string(c.Kind) + " " + sqlquote.MySQLIdent(c.Column)
	switch c.Kind {
	case ColumnAdd, ColumnModify:
		s += " " + c.SQLType
	case ColumnRename:
		s += " TO " + sqlquote.MySQLIdent(c.NewName)
	}
	if c.Comment != "" {
		s += " COMMENT " + sqlquote.MySQLString(c.Comment)
	}
	return s
}

// alterSink parses what follows ALTER SINK.
func (p *parser) alterSink() (Statement, error) {
	a := &AlterSink{}
	var err error
	if a.Name, _, err = p.name("a sink name"); err != nil {
		return nil, err
	}
	switch {
	case p.acceptWord("SET"):
		a.Set, err = p.optionList("SET")
	case p.isWord("ADD") && p.peekWord("CONSTRAINT"):
		p.advance()
		p.advance()
		a.AddCheck, err = p.checkConstraint()
	case p.isWord("DROP") && p.peekWord("CONSTRAINT"):
		p.advance()
		p.advance()
		d := &DropConstraint{}
		if p.acceptWord("IF") {
			if err := p.expectWord("EXISTS", "expected EXISTS after IF"); err != nil {
				return nil, err
			}
			d.IfExists = true
		}
		d.Name, _, err = p.name("a constraint name")
		a.DropConstraint = d
	default:
		for {
			var c ColumnChange
			if c, err = p.columnChange(); err != nil {
				return nil, err
			}
			a.Columns = append(a.Columns, c)
			if !p.isPunct(",") {
				break
			}
			p.advance()
			if p.isWord("SET") || (p.isWord("ADD") || p.isWord("DROP")) && p.peekWord("CONSTRAINT") {
				return nil, p.defErr(p.tok, ErrUnsupported, "ALTER SINK takes SET and constraints one at a time, in statements of their own, not after column changes")
			}
		}
	}
	if err != nil {
		return nil, err
	}
	switch {
	case p.isPunct(","):
		return nil, p.defErr(p.tok, ErrUnsupported, "ALTER SINK takes SET and constraints one at a time: send the next change as a statement of its own")
	case a.Columns != nil && p.tok.kind != tokEOF && !p.isPunct(";"):
		return nil, p.syntaxErr(p.tok, "expected ',' and another column change, or end of statement")
	}
	return a, nil
}

// alterActions lists what may follow ALTER SINK name, for the errors.
const alterActions = "ADD COLUMN, MODIFY COLUMN, RENAME COLUMN, DROP COLUMN, SET, ADD CONSTRAINT or DROP CONSTRAINT"

// alterRefusals are MySQL's ALTER TABLE actions a sink does not take, with
// what to write instead.
var alterRefusals = map[string]string{
	"CHANGE":    "CHANGE COLUMN is not supported: use RENAME COLUMN and MODIFY COLUMN",
	"ALTER":     "ALTER COLUMN is not supported: column defaults are not built; MODIFY COLUMN widens a type",
	"RENAME":    "renaming a sink is not supported: DROP SINK and CREATE SINK again with the new name (the table stays)",
	"ENGINE":    "a sink has no storage engine to change",
	"CONVERT":   "character sets are not supported: text is stored as UTF-8",
	"PARTITION": "changing the partitioning of a sink is not supported",
	"ORDER":     "ORDER BY is not supported: a table's row order is not kept",
	"ALGORITHM": "ALGORITHM is not supported: every ALTER SINK is one table version",
	"LOCK":      "LOCK is not supported: ALTER SINK waits for the transactions writing to the sink",
	"FORCE":     "FORCE is not supported: OPTIMIZE SINK rewrites the table's files",
}

// columnChange reads one ADD, MODIFY, RENAME or DROP [COLUMN].
func (p *parser) columnChange() (ColumnChange, error) {
	t := p.tok
	var c ColumnChange
	word := ""
	if t.kind == tokWord {
		word = sqlword.UpperASCII(t.text)
	}
	switch word {
	case "ADD":
		p.advance()
		c.Kind = ColumnAdd
		if p.isWord("PRIMARY") || p.isWord("KEY") || p.isWord("INDEX") || p.isWord("UNIQUE") || p.isWord("FOREIGN") ||
			p.isWord("FULLTEXT") || p.isWord("SPATIAL") {
			return c, p.defErr(p.tok, ErrUnsupported, "ADD %s is not supported: a sink's key is fixed when it is created, and it has no indexes", keyWords(p.tok.text))
		}
		if p.isWord("CHECK") {
			return c, p.syntaxErr(p.tok, "a CHECK constraint needs a name: ADD CONSTRAINT name CHECK (...)")
		}
	case "MODIFY":
		p.advance()
		c.Kind = ColumnModify
	case "DROP":
		p.advance()
		c.Kind = ColumnDrop
		if p.isWord("PRIMARY") || p.isWord("KEY") || p.isWord("INDEX") || p.isWord("FOREIGN") || p.isWord("CHECK") {
			return c, p.defErr(p.tok, ErrUnsupported, "DROP %s is not supported: write DROP COLUMN name or DROP CONSTRAINT name", keyWords(p.tok.text))
		}
	case "RENAME":
		p.advance()
		if !p.isWord("COLUMN") {
			return c, p.defErr(t, ErrUnsupported, "%s", alterRefusals["RENAME"])
		}
		c.Kind = ColumnRename
	default:
		if why, ok := alterRefusals[word]; ok {
			return c, p.defErr(t, ErrUnsupported, "%s", why)
		}
		return c, p.syntaxErr(t, "expected %s", alterActions)
	}
	if !p.acceptWord("COLUMN") && c.Kind == ColumnRename {
		return c, p.syntaxErr(p.tok, "expected COLUMN after RENAME")
	}
	var err error
	if c.Column, _, err = p.name("a column name"); err != nil {
		return c, err
	}
	switch c.Kind {
	case ColumnRename:
		if err := p.expectWord("TO", "expected TO and the new name after RENAME COLUMN "+sqlquote.MySQLIdent(c.Column)); err != nil {
			return c, err
		}
		if c.NewName, _, err = p.name("the new column name"); err != nil {
			return c, err
		}
	case ColumnAdd, ColumnModify:
		if c.SQLType, c.Type, err = p.columnType(c.Column); err != nil {
			return c, err
		}
		if err := p.changeAttributes(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}

// keyWords spells the index or key a word of ADD or DROP starts.
func keyWords(word string) string {
	switch up := sqlword.UpperASCII(word); up {
	case "PRIMARY", "FOREIGN":
		return up + " KEY"
	default:
		return up
	}
}

// changeAttributes reads what may follow the type of ADD COLUMN (NULL,
// COMMENT) and of MODIFY COLUMN (nothing), refusing MySQL's other column
// attributes by name.
func (p *parser) changeAttributes(c *ColumnChange) error {
	for {
		t := p.tok
		if t.kind != tokWord {
			return nil
		}
		word := sqlword.UpperASCII(t.text)
		switch {
		case word == "NOT" && c.Kind == ColumnAdd:
			return p.defErr(t, ErrUnsupported, "column %q: NOT NULL is not supported on ADD COLUMN: rows already in the table have no value, so an added column is nullable", c.Column)
		case word == "NOT" || word == "NULL":
			if c.Kind == ColumnModify {
				return p.defErr(t, ErrUnsupported, "column %q: MODIFY COLUMN changes the type only; a column's nullability stays as it is", c.Column)
			}
			p.advance() // ADD COLUMN c INT NULL: nullable is what it is anyway
		case word == "COMMENT" && c.Kind == ColumnAdd:
			p.advance()
			ct := p.tok
			if ct.kind != tokString {
				return p.syntaxErr(ct, "expected the comment of column %q as a quoted string", c.Column)
			}
			if c.Comment != "" {
				return p.defErr(t, ErrInvalidDefinition, "column %q has two comments", c.Column)
			}
			c.Comment = ct.text
			p.advance()
		case word == "PRIMARY" || word == "KEY":
			return p.defErr(t, ErrUnsupported, "column %q: a sink's PRIMARY KEY is fixed when it is created", c.Column)
		case word == "FIRST" || word == "AFTER":
			return p.defErr(t, ErrUnsupported, "column %q: %s is not supported: columns are added at the end", c.Column, word)
		default:
			if why, ok := unsupportedColumnWords[word]; ok {
				return p.defErr(t, ErrUnsupported, "column %q: %s", c.Column, why)
			}
			return nil // the caller reports what it expected
		}
	}
}

// checkConstraint reads name CHECK (expr) after ADD CONSTRAINT. The
// expression is taken as written up to its closing parenthesis; quotes
// and backquotes may hold parentheses. A ';' outside quotes is refused:
// the expression is one expression, never a second statement.
func (p *parser) checkConstraint() (*CheckConstraint, error) {
	c := &CheckConstraint{}
	var err error
	if c.Name, _, err = p.name("a constraint name"); err != nil {
		return nil, err
	}
	if err := p.expectWord("CHECK", "expected CHECK (expression) after the constraint name: a sink's constraints are CHECK constraints"); err != nil {
		return nil, err
	}
	open := p.tok
	if !p.isPunct("(") {
		return nil, p.syntaxErr(open, "expected '(' and the expression after CHECK")
	}
	// p.tok is "(", and the lexer stands right after it.
	end, semi, ok := balancedParen(p.src, open.end)
	if !ok {
		return nil, &SyntaxError{Pos: open.pos + 1, Near: p.near(open), Msg: "expected ')' to close CHECK ("}
	}
	if semi >= 0 {
		return nil, p.defErr(token{kind: tokPunct, pos: semi, end: semi + 1}, ErrInvalidDefinition,
			"constraint %q: the CHECK expression holds a ';': it is one expression", c.Name)
	}
	c.Expr = strings.TrimSpace(p.src[open.end:end])
	if c.Expr == "" {
		return nil, p.defErr(open, ErrInvalidDefinition, "constraint %q: the CHECK expression is empty", c.Name)
	}
	p.lex.pos = end + 1
	p.tok = token{kind: tokPunct, text: ")", pos: end, end: end + 1}
	p.advance()
	return c, nil
}

// balancedParen finds the ')' that closes a '(' ending just before i,
// skipping quoted strings and names; semi is the offset of the first ';'
// outside quotes before it, or -1.
func balancedParen(s string, i int) (end, semi int, ok bool) {
	depth, semi := 1, -1
	for i < len(s) {
		switch c := s[i]; c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i, semi, true
			}
		case ';':
			if semi < 0 {
				semi = i
			}
		case '\'', '"':
			_, next, ok := unquote(s, i+1, c)
			if !ok {
				return 0, semi, false
			}
			i = next
			continue
		case '`':
			j := strings.IndexByte(s[i+1:], '`')
			if j < 0 {
				return 0, semi, false
			}
			i += j + 2
			continue
		}
		i++
	}
	return 0, semi, false
}

// peekWord reports whether the token after the current one is the word kw,
// without consuming anything.
func (p *parser) peekWord(kw string) bool {
	if p.tok.kind == tokError {
		return false
	}
	l := p.lex
	t, err := l.next()
	return err == nil && t.kind == tokWord && sqlword.Is(t.text, kw)
}
