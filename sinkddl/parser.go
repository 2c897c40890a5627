package sinkddl

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/lakesql/lakesql/internal/sqlword"
)

// reservedWords cannot be bare names: they are MySQL reserved words that
// this grammar uses or that MySQL users know cannot name a table or column.
// Backquotes make any of them a name.
var reservedWords = map[string]bool{
	"AS": true, "BY": true, "CHARACTER": true, "CHECK": true, "COLLATE": true, "CONSTRAINT": true,
	"CREATE": true, "DEFAULT": true, "DROP": true, "EXISTS": true, "FALSE": true, "FOREIGN": true,
	"FULLTEXT": true, "GENERATED": true, "IF": true, "INDEX": true, "INTO": true, "KEY": true,
	"NOT": true, "NULL": true, "ON": true, "PARTITION": true, "PRIMARY": true, "REFERENCES": true,
	"SHOW": true, "SPATIAL": true, "TRUE": true, "UNIQUE": true, "WITH": true,
}

// unsupportedColumnWords are column attributes of MySQL that a sink refuses,
// with the reason given.
var unsupportedColumnWords = map[string]string{
	"DEFAULT":                    "DEFAULT values are not supported: a sink stores the values it is sent",
	"AUTO_INCREMENT":             "AUTO_INCREMENT is not supported: a sink does not generate values",
	"UNIQUE":                     "UNIQUE is not supported: a sink enforces NOT NULL and its PRIMARY KEY only",
	"CHECK":                      "CHECK constraints are not supported: a sink enforces NOT NULL and its PRIMARY KEY only",
	"REFERENCES":                 "foreign keys are not supported: a sink enforces NOT NULL and its PRIMARY KEY only",
	"CONSTRAINT":                 "named constraints are not supported: a sink enforces NOT NULL and its PRIMARY KEY only",
	"COLLATE":                    "collations are not supported: text is stored as UTF-8 and compared byte by byte",
	"CHARACTER":                  "character sets are not supported: text is stored as UTF-8",
	"CHARSET":                    "character sets are not supported: text is stored as UTF-8",
	"GENERATED":                  "generated columns are not supported",
	"AS":                         "generated columns are not supported",
	"ON":                         "ON UPDATE is not supported: a sink does not generate values",
	"VISIBLE":                    "VISIBLE is not supported",
	"INVISIBLE":                  "INVISIBLE columns are not supported",
	"COLUMN_FORMAT":              "COLUMN_FORMAT is not supported",
	"STORAGE":                    "STORAGE is not supported",
	"SRID":                       "SRID is not supported",
	"ENGINE_ATTRIBUTE":           "ENGINE_ATTRIBUTE is not supported",
	"SECONDARY_ENGINE_ATTRIBUTE": "SECONDARY_ENGINE_ATTRIBUTE is not supported",
}

// unsupportedElementWords start an index or constraint in a column list.
var unsupportedElementWords = map[string]bool{
	"KEY": true, "INDEX": true, "UNIQUE": true, "FOREIGN": true, "CHECK": true,
	"CONSTRAINT": true, "FULLTEXT": true, "SPATIAL": true,
}

// parser is a recursive-descent parser with one token of lookahead.
type parser struct {
	src    string
	lex    lexer
	tok    token        // the next token, not yet consumed
	lexErr *SyntaxError // why tok is a tokError
}

// advance reads the next token; after a lexer error it stays on the error
// token, so that whatever the parser expects there it reports the lexer's error.
func (p *parser) advance() {
	if p.tok.kind == tokError {
		return
	}
	t, err := p.lex.next()
	if err != nil {
		p.tok, p.lexErr = token{kind: tokError, pos: err.Pos - 1, end: err.Pos - 1}, err
		return
	}
	p.tok = t
}

func (p *parser) near(t token) string {
	if t.kind == tokEOF {
		return ""
	}
	return shorten(p.src[t.pos:t.end])
}

// syntaxErr reports that t is not what the grammar allows there.
func (p *parser) syntaxErr(t token, format string, args ...any) error {
	if t.kind == tokError {
		return p.lexErr
	}
	return &SyntaxError{Pos: t.pos + 1, Near: p.near(t), Msg: fmt.Sprintf(format, args...)}
}

// defErr reports a definition refused at token t.
func (p *parser) defErr(t token, sentinel error, format string, args ...any) error {
	return &DefinitionError{Pos: t.pos + 1, Near: p.near(t), Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

func (p *parser) isWord(kw string) bool { return p.tok.kind == tokWord && sqlword.Is(p.tok.text, kw) }

func (p *parser) acceptWord(kw string) bool {
	if p.isWord(kw) {
		p.advance()
		return true
	}
	return false
}

func (p *parser) expectWord(kw, msg string) error {
	if !p.acceptWord(kw) {
		return p.syntaxErr(p.tok, "%s", msg)
	}
	return nil
}

func (p *parser) isPunct(c string) bool { return p.tok.kind == tokPunct && p.tok.text == c }

func (p *parser) acceptPunct(c string) bool {
	if p.isPunct(c) {
		p.advance()
		return true
	}
	return false
}

func (p *parser) expectPunct(c, msg string) error {
	if !p.acceptPunct(c) {
		return p.syntaxErr(p.tok, "%s", msg)
	}
	return nil
}

// name reads a bare or backquoted name; what ("a sink name") is for errors.
func (p *parser) name(what string) (string, token, error) {
	t := p.tok
	if err := p.nameToken(t, what); err != nil {
		return "", t, err
	}
	p.advance()
	return t.text, t, nil
}

// nameToken checks that t can be a name: a backquoted name, or a bare word
// that is not reserved; and that the name is one MySQL would accept.
func (p *parser) nameToken(t token, what string) error {
	switch t.kind {
	case tokWord:
		if up := sqlword.UpperASCII(t.text); reservedWords[up] {
			return p.syntaxErr(t, "expected %s; %s is a reserved word, write it in backquotes to use it as a name", what, up)
		}
	case tokIdent:
	default:
		return p.syntaxErr(t, "expected %s", what)
	}
	switch {
	case t.text == "":
		return p.defErr(t, ErrInvalidDefinition, "%s cannot be empty", what)
	case strings.IndexByte(t.text, 0) >= 0:
		return p.defErr(t, ErrInvalidDefinition, "%s cannot contain a NUL character", what)
	case strings.HasSuffix(t.text, " "):
		return p.defErr(t, ErrInvalidDefinition, "%s cannot end with a space", what)
	case utf8.RuneCountInString(t.text) > maxIdentifierLength:
		return p.defErr(t, ErrInvalidDefinition, "%s is longer than %d characters", what, maxIdentifierLength)
	}
	return nil
}

// end accepts an optional semicolon and then requires the end of the input;
// expected says what else could have followed, for the error.
func (p *parser) end(expected string) error {
	if p.acceptPunct(";") {
		if p.tok.kind != tokEOF {
			return p.syntaxErr(p.tok, "expected end of input after ';': send one statement at a time")
		}
		return nil
	}
	if p.tok.kind != tokEOF {
		return p.syntaxErr(p.tok, "expected %s", expected)
	}
	return nil
}

func (p *parser) statement() (Statement, error) {
	var (
		stmt Statement
		err  error
	)
	switch {
	case p.acceptWord("CREATE"):
		if err := p.expectWord("SINK", "expected SINK"); err != nil {
			return nil, err
		}
		return p.createSink()
	case p.acceptWord("DROP"):
		if err := p.expectWord("SINK", "expected SINK"); err != nil {
			return nil, err
		}
		stmt, err = p.dropSink()
	case p.acceptWord("SHOW"):
		stmt, err = p.show()
	case p.acceptWord("OPTIMIZE"):
		if err := p.expectWord("SINK", "expected SINK"); err != nil {
			return nil, err
		}
		stmt, err = p.optimizeSink()
	case p.acceptWord("VACUUM"):
		if err := p.expectWord("SINK", "expected SINK"); err != nil {
			return nil, err
		}
		stmt, err = p.vacuumSink()
	case p.acceptWord("ALTER"):
		if err := p.expectWord("SINK", "expected SINK"); err != nil {
			return nil, err
		}
		stmt, err = p.alterSink()
	default:
		return nil, p.syntaxErr(p.tok, "expected CREATE SINK, ALTER SINK, DROP SINK, SHOW SINKS, OPTIMIZE SINK or VACUUM SINK")
	}
	if err != nil {
		return nil, err
	}
	if err := p.end("end of statement"); err != nil {
		return nil, err
	}
	return stmt, nil
}

func (p *parser) dropSink() (Statement, error) {
	d := &DropSink{}
	if p.acceptWord("IF") {
		if err := p.expectWord("EXISTS", "expected EXISTS after IF"); err != nil {
			return nil, err
		}
		d.IfExists = true
	}
	var err error
	if d.Name, _, err = p.name("a sink name"); err != nil {
		return nil, err
	}
	d.Purge = p.acceptWord("PURGE")
	if !d.Purge && p.tok.kind != tokEOF && !p.isPunct(";") {
		return nil, p.syntaxErr(p.tok, "expected PURGE or end of statement")
	}
	return d, nil
}

func (p *parser) show() (Statement, error) {
	switch {
	case p.acceptWord("SINKS"):
		return &ShowSinks{}, nil
	case p.acceptWord("SINK"):
		if p.acceptWord("HISTORY") {
			return p.showSinkHistory()
		}
		if err := p.expectWord("STATUS", "expected STATUS or HISTORY after SHOW SINK"); err != nil {
			return nil, err
		}
		s := &ShowSinkStatus{}
		if p.tok.kind == tokWord || p.tok.kind == tokIdent {
			var err error
			if s.Name, _, err = p.name("a sink name"); err != nil {
				return nil, err
			}
		}
		return s, nil
	case p.acceptWord("CREATE"):
		if err := p.expectWord("SINK", "expected SINK after SHOW CREATE"); err != nil {
			return nil, err
		}
		name, _, err := p.name("a sink name")
		if err != nil {
			return nil, err
		}
		return &ShowCreateSink{Name: name}, nil
	}
	return nil, p.syntaxErr(p.tok, "expected SINKS, SINK STATUS or CREATE SINK after SHOW")
}

// createState is what CREATE SINK keeps beside the statement to check it
// once it is read: where each name was written, for the errors.
type createState struct {
	sink         *CreateSink
	colToks      []token // the name token of each column
	explicitNull []bool  // the column was declared NULL, which a key column cannot be
	pkSeen       bool    // a PRIMARY KEY was declared, inline or not
	pkToks       []token // the names of a table-level PRIMARY KEY
	partToks     []token // the column token of each PARTITION BY entry
	partStarts   []token // the first token of each PARTITION BY entry
}

func (p *parser) createSink() (Statement, error) {
	st := &createState{sink: &CreateSink{}}
	s := st.sink
	if p.acceptWord("IF") {
		if err := p.expectWord("NOT", "expected NOT EXISTS after IF"); err != nil {
			return nil, err
		}
		if err := p.expectWord("EXISTS", "expected EXISTS after IF NOT"); err != nil {
			return nil, err
		}
		s.IfNotExists = true
	}
	var err error
	if s.Name, _, err = p.name("a sink name"); err != nil {
		return nil, err
	}
	if err := p.expectWord("INTO", "expected INTO"); err != nil {
		return nil, err
	}
	switch {
	case p.acceptWord("DELTA"):
		s.Format = FormatDelta
	case p.acceptWord("ICEBERG"):
		s.Format = FormatIceberg
	default:
		return nil, p.syntaxErr(p.tok, "expected DELTA or ICEBERG")
	}
	loc := p.tok
	if loc.kind != tokString {
		return nil, p.syntaxErr(loc, "expected the table location as a quoted string")
	}
	if loc.text == "" {
		return nil, p.defErr(loc, ErrInvalidDefinition, "the table location is empty")
	}
	s.Location = loc.text
	p.advance()

	expected := "a column list, PARTITION BY, WITH or end of statement"
	if p.isPunct("(") {
		if err := p.columns(st); err != nil {
			return nil, err
		}
		expected = "PARTITION BY, WITH or end of statement"
	}
	if p.acceptWord("PARTITION") {
		if err := p.expectWord("BY", "expected BY after PARTITION"); err != nil {
			return nil, err
		}
		if err := p.partitions(st); err != nil {
			return nil, err
		}
		expected = "WITH or end of statement"
	}
	if p.acceptWord("WITH") {
		if err := p.options(s); err != nil {
			return nil, err
		}
		expected = "end of statement"
	}
	if err := p.end(expected); err != nil {
		return nil, err
	}
	if err := st.check(p); err != nil {
		return nil, err
	}
	return s, nil
}
