package planner

// lakesql's own statements (CREATE SINK, DROP SINK, SHOW SINKS, SHOW CREATE
// SINK, SHOW SINK STATUS): their syntax tree, a hand-written lexer and
// recursive-descent parser, and the canonical SQL each statement renders.
//
// The grammar is small and its errors must point at the exact token, name the
// column and say what lakesql expected; a hand-written parser gives that
// directly, where going through the MySQL parser would mean translating its
// errors and positions back. Everything that is not a lakesql statement is
// left to go-mysql-server: IsLakesqlStatement decides which is which.

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
)

// Statement is a parsed lakesql statement. String renders it as canonical
// SQL: keywords in upper case, identifiers in backquotes, types in their
// canonical spelling. Parsing that text gives back an equal statement.
type Statement interface {
	fmt.Stringer
	lakesqlStatement()
}

// The table formats a sink writes.
const (
	FormatDelta   = "delta"
	FormatIceberg = "iceberg"
)

// The partition transforms, named as Iceberg names them. Delta tables
// partition by identity only; refusing the other transforms for a Delta sink
// belongs to the layer that resolves the definition against the format.
const (
	TransformIdentity = "identity"
	TransformYear     = "year"
	TransformMonth    = "month"
	TransformDay      = "day"
	TransformHour     = "hour"
	TransformBucket   = "bucket"
	TransformTruncate = "truncate"
)

// CreateSink is CREATE SINK [IF NOT EXISTS] name INTO DELTA|ICEBERG
// 'location' [(columns [, PRIMARY KEY (...)])] [PARTITION BY (...)]
// [WITH (key = value, ...)]. Without Columns the sink attaches to an
// existing table and takes its schema.
type CreateSink struct {
	IfNotExists bool
	Name        string // as written: names are case-preserving
	Format      string // FormatDelta or FormatIceberg
	Location    string // as written; resolving it against the data directory is the planner's job
	Columns     []ColumnDef
	// PrimaryKey lists the key columns in key order, whether they were
	// declared inline (ColumnDef.PrimaryKey) or with a table-level PRIMARY
	// KEY (...), spelled as their column definitions spell them.
	PrimaryKey  []string
	PartitionBy []PartitionExpr
	Options     []Option // in the order written; keys are unique
}

// ColumnDef is one column of CREATE SINK. A PRIMARY KEY column is NOT NULL,
// as in MySQL. DEFAULT, AUTO_INCREMENT, character sets and constraints other
// than NOT NULL and PRIMARY KEY are refused with ErrUnsupported.
type ColumnDef struct {
	Name    string
	SQLType string         // canonical MySQL spelling: "BIGINT", "VARCHAR(16)", "DECIMAL(10,2)", "INT UNSIGNED"
	Type    arrow.DataType // what the sink receives, see MySQLTypeTable
	NotNull bool
	// PrimaryKey records that the key was declared inline on this column, so
	// that String renders the statement the way it was written; the key
	// itself is CreateSink.PrimaryKey.
	PrimaryKey bool
	Comment    string
}

// PartitionExpr is one entry of PARTITION BY: a column, or a transform of
// one. Param is the bucket count of bucket(N, col) or the width of
// truncate(W, col), and 0 otherwise.
type PartitionExpr struct {
	Column    string
	Transform string // one of the Transform constants
	Param     int
}

// OptionKind is the kind of literal an option value was written as; it is
// kept so that SHOW CREATE SINK renders what the user wrote, and so that the
// consumer of an option can refuse the wrong kind with a clear error.
type OptionKind uint8

const (
	OptionString     OptionKind = iota // 'text' or "text"
	OptionInteger                      // 42, -1; Value holds the decimal digits
	OptionBoolean                      // TRUE or FALSE; Value is "true" or "false"
	OptionIdentifier                   // a bare or backquoted name, such as upsert; Value keeps its case
)

// Option is one key = value of WITH (...). Keys are case-insensitive and
// stored in lower case; dotted keys such as catalog.uri are one key.
// Whether a key means anything is decided by the sink, not by the parser.
type Option struct {
	Key   string
	Value string
	Kind  OptionKind
}

// DropSink is DROP SINK [IF EXISTS] name [PURGE]. Dropping a sink forgets
// its definition and leaves the table and its data where they are, so other
// engines keep reading it and a later CREATE SINK can attach to it again.
// PURGE also deletes the table: its data files and its log or metadata.
type DropSink struct {
	IfExists bool
	Name     string
	Purge    bool
}

// ShowSinks is SHOW SINKS: one row per sink.
type ShowSinks struct{}

// ShowCreateSink is SHOW CREATE SINK name: the sink's definition as a
// CREATE SINK statement, secrets masked.
type ShowCreateSink struct {
	Name string
}

// ShowSinkStatus is SHOW SINK STATUS [name]: metrics, last committed epoch,
// table version and health of one sink, or of every sink when Name is "".
type ShowSinkStatus struct {
	Name string
}

func (*CreateSink) lakesqlStatement()     {}
func (*DropSink) lakesqlStatement()       {}
func (*ShowSinks) lakesqlStatement()      {}
func (*ShowCreateSink) lakesqlStatement() {}
func (*ShowSinkStatus) lakesqlStatement() {}

// Sentinel errors a *DefinitionError wraps, besides ErrUnsupportedType.
var (
	// ErrUnsupported: valid MySQL that lakesql does not implement, such as
	// DEFAULT or AUTO_INCREMENT on a column.
	ErrUnsupported = errors.New("unsupported feature")
	// ErrInvalidDefinition: a definition that contradicts itself or breaks a
	// limit, such as a column defined twice or an option given twice.
	ErrInvalidDefinition = errors.New("invalid sink definition")
)

// SyntaxError is input that does not follow the grammar of a lakesql
// statement. Its text has the shape of go-mysql-server's parse errors, so
// that a client sees one style; the front end reports it as ER_PARSE_ERROR.
type SyntaxError struct {
	Pos  int    // 1-based byte offset of the offending token: it starts at sql[Pos-1:]
	Near string // the offending token as written, shortened; "" at the end of the input
	Msg  string // what lakesql expected instead
}

func (e *SyntaxError) Error() string {
	if e.Near == "" {
		return fmt.Sprintf("syntax error at position %d near end of input: %s", e.Pos, e.Msg)
	}
	return fmt.Sprintf("syntax error at position %d near '%s': %s", e.Pos, e.Near, e.Msg)
}

// DefinitionError is a statement that parses but cannot be accepted: an
// unsupported type or feature, or an invalid definition. Err is
// ErrUnsupportedType, ErrUnsupported or ErrInvalidDefinition, for errors.Is.
type DefinitionError struct {
	Pos  int    // 1-based byte offset of the token the error is about
	Near string // that token as written, shortened
	Msg  string // names the column or option concerned
	Err  error
}

func (e *DefinitionError) Error() string {
	return fmt.Sprintf("%v at position %d near '%s': %s", e.Err, e.Pos, e.Near, e.Msg)
}

func (e *DefinitionError) Unwrap() error { return e.Err }

// maxIdentifierLength is MySQL's limit on table and column names, in characters.
const maxIdentifierLength = 64

// IsLakesqlStatement reports whether sql starts, after blanks and comments,
// with CREATE SINK, DROP SINK, SHOW SINKS, SHOW SINK or SHOW CREATE SINK.
// Those statements are lakesql's to parse, errors included, and everything
// else belongs to the MySQL parser. It only looks at the leading keywords,
// so it is cheap enough to run on every query.
func IsLakesqlStatement(sql string) bool {
	first, i := leadingWord(sql, 0)
	second, i := leadingWord(sql, i)
	switch {
	case keywordIs(first, "CREATE"), keywordIs(first, "DROP"):
		return keywordIs(second, "SINK")
	case keywordIs(first, "SHOW"):
		if keywordIs(second, "SINKS") || keywordIs(second, "SINK") {
			return true
		}
		third, _ := leadingWord(sql, i)
		return keywordIs(second, "CREATE") && keywordIs(third, "SINK")
	}
	return false
}

// leadingWord skips blanks and comments from i and returns the word there
// ("" when something else is there) and the offset after it.
func leadingWord(s string, i int) (string, int) {
	i, ok := skipBlank(s, i)
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

// keywordIs compares a word with an upper-case keyword, ignoring ASCII case
// only: Unicode folding would let "ſink" pass for SINK.
func keywordIs(word, kw string) bool {
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

func asciiUpper(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r - ('a' - 'A')
		}
		return r
	}, s)
}

func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}, s)
}

// skipBlank skips whitespace and MySQL comments (/* ... */, "-- " and # to
// the end of the line) from i. It returns false, with the offset of the
// comment, when a /* comment is not closed.
func skipBlank(s string, i int) (int, bool) {
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

// Parse parses one lakesql statement, optionally followed by a semicolon.
// Errors are a *SyntaxError or a *DefinitionError; Parse never panics.
func Parse(sql string) (Statement, error) {
	if i := invalidUTF8(sql); i >= 0 {
		return nil, &SyntaxError{Pos: i + 1, Near: fmt.Sprintf(`\x%02x`, sql[i]), Msg: "the statement is not valid UTF-8"}
	}
	p := &parser{src: sql, lex: lexer{src: sql}}
	p.advance()
	return p.statement()
}

// invalidUTF8 returns the offset of the first byte that is not valid UTF-8, or -1.
func invalidUTF8(s string) int {
	if utf8.ValidString(s) {
		return -1
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

type tokenKind uint8

const (
	tokEOF    tokenKind = iota
	tokWord             // a bare word: a keyword or an unquoted name
	tokIdent            // a `backquoted` name; text is unescaped
	tokString           // a 'single' or "double" quoted string; text is unescaped
	tokNumber           // an unsigned decimal integer; text is the digits
	tokPunct            // one of ( ) , = . ; - +
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
	start, ok := skipBlank(l.src, l.pos)
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

func (p *parser) isWord(kw string) bool { return p.tok.kind == tokWord && keywordIs(p.tok.text, kw) }

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
		if up := asciiUpper(t.text); reservedWords[up] {
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
	default:
		return nil, p.syntaxErr(p.tok, "expected CREATE SINK, DROP SINK or SHOW SINKS")
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
		if err := p.expectWord("STATUS", "expected STATUS after SHOW SINK"); err != nil {
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

// columns reads "(" element {"," element} ")", where an element is a column
// definition or a table-level PRIMARY KEY (...).
func (p *parser) columns(st *createState) error {
	p.advance() // (
	var firstPK token
	for {
		t := p.tok
		switch {
		case p.isWord("PRIMARY"):
			p.advance()
			if err := p.expectWord("KEY", "expected KEY after PRIMARY"); err != nil {
				return err
			}
			if st.pkSeen {
				return p.defErr(t, ErrInvalidDefinition, "a sink has one primary key, and this is a second one")
			}
			st.pkSeen, firstPK = true, t
			if err := p.expectPunct("(", "expected '(' and the key columns after PRIMARY KEY"); err != nil {
				return err
			}
			for {
				name, nt, err := p.name("a key column name")
				if err != nil {
					return err
				}
				st.sink.PrimaryKey = append(st.sink.PrimaryKey, name)
				st.pkToks = append(st.pkToks, nt)
				if p.acceptPunct(")") {
					break
				}
				if err := p.expectPunct(",", "expected ',' or ')' in the PRIMARY KEY column list"); err != nil {
					return err
				}
			}
		case t.kind == tokWord && unsupportedElementWords[asciiUpper(t.text)]:
			return p.defErr(t, ErrUnsupported, "%s is not supported in a sink: a sink has columns and at most one PRIMARY KEY", asciiUpper(t.text))
		default:
			if err := p.columnDef(st); err != nil {
				return err
			}
		}
		if p.acceptPunct(")") {
			break
		}
		if err := p.expectPunct(",", "expected ',' or ')' in the column list"); err != nil {
			return err
		}
	}
	if len(st.sink.Columns) == 0 {
		return p.defErr(firstPK, ErrInvalidDefinition,
			"PRIMARY KEY without columns: declare the columns, or leave the column list out to attach to an existing table")
	}
	return nil
}

// columnDef reads: name type {attribute}.
func (p *parser) columnDef(st *createState) error {
	name, nt, err := p.name("a column name")
	if err != nil {
		return err
	}
	for i, prev := range st.sink.Columns {
		if strings.EqualFold(prev.Name, name) {
			return p.defErr(nt, ErrInvalidDefinition, "column %q is defined twice (first at position %d)", name, st.colToks[i].pos+1)
		}
	}
	col := ColumnDef{Name: name}
	if col.SQLType, col.Type, err = p.columnType(name); err != nil {
		return err
	}
	explicitNull := false
	for {
		t := p.tok
		if p.isPunct(",") || p.isPunct(")") {
			break
		}
		if t.kind != tokWord {
			return p.syntaxErr(t, "expected NOT NULL, NULL, PRIMARY KEY, COMMENT, ',' or ')' after column %q", name)
		}
		switch word := asciiUpper(t.text); word {
		case "NOT":
			p.advance()
			if err := p.expectWord("NULL", "expected NULL after NOT"); err != nil {
				return err
			}
			if explicitNull {
				return p.defErr(t, ErrInvalidDefinition, "column %q is declared both NULL and NOT NULL", name)
			}
			col.NotNull = true
		case "NULL":
			if col.NotNull {
				return p.defErr(t, ErrInvalidDefinition, "column %q is declared both NOT NULL and NULL", name)
			}
			explicitNull = true
			p.advance()
		case "PRIMARY", "KEY":
			p.advance()
			if word == "PRIMARY" {
				if err := p.expectWord("KEY", "expected KEY after PRIMARY"); err != nil {
					return err
				}
			}
			if col.PrimaryKey {
				continue // MySQL accepts the attribute repeated
			}
			if st.pkSeen {
				return p.defErr(t, ErrInvalidDefinition, "a sink has one primary key, and this is a second one (on column %q)", name)
			}
			st.pkSeen, col.PrimaryKey = true, true
			st.sink.PrimaryKey = []string{name}
			st.pkToks = nil
		case "COMMENT":
			p.advance()
			c := p.tok
			if c.kind != tokString {
				return p.syntaxErr(c, "expected the comment of column %q as a quoted string", name)
			}
			if col.Comment != "" {
				return p.defErr(t, ErrInvalidDefinition, "column %q has two comments", name)
			}
			col.Comment = c.text
			p.advance()
		default:
			if why, ok := unsupportedColumnWords[word]; ok {
				return p.defErr(t, ErrUnsupported, "column %q: %s", name, why)
			}
			return p.syntaxErr(t, "expected NOT NULL, NULL, PRIMARY KEY, COMMENT, ',' or ')' after column %q", name)
		}
	}
	st.sink.Columns = append(st.sink.Columns, col)
	st.colToks = append(st.colToks, nt)
	st.explicitNull = append(st.explicitNull, explicitNull)
	return nil
}

// columnType reads a type: a word, DOUBLE PRECISION, optional integer
// parameters in parentheses, then UNSIGNED, SIGNED or ZEROFILL.
func (p *parser) columnType(col string) (string, arrow.DataType, error) {
	t := p.tok
	if t.kind != tokWord {
		return "", nil, p.syntaxErr(t, "expected the type of column %q", col)
	}
	name := asciiUpper(t.text)
	if _, attr := unsupportedColumnWords[name]; attr || reservedWords[name] || name == "COMMENT" {
		// (a NOT NULL) lacks its type; saying "unknown type NOT" would mislead.
		return "", nil, p.syntaxErr(t, "expected the type of column %q", col)
	}
	p.advance()
	if name == "DOUBLE" {
		p.acceptWord("PRECISION")
	}
	known, refused := lookupType(name)
	if !known {
		return "", nil, p.defErr(t, ErrUnsupportedType, "column %q: unknown type %s", col, name)
	}
	if refused != nil {
		// Stop here: ENUM('a','b') and friends need not be read to be refused.
		return "", nil, p.defErr(t, ErrUnsupportedType, "column %q: %s", col, refused.refusal(name).msg)
	}
	var args []uint32
	if p.acceptPunct("(") {
		for {
			n := p.tok
			if n.kind != tokNumber {
				return "", nil, p.syntaxErr(n, "expected an integer parameter of type %s", name)
			}
			v, err := strconv.ParseUint(n.text, 10, 32)
			if err != nil {
				return "", nil, p.defErr(n, ErrInvalidDefinition, "column %q: parameter %s of type %s is out of range", col, n.text, name)
			}
			args = append(args, uint32(v))
			p.advance()
			if p.acceptPunct(")") {
				break
			}
			if err := p.expectPunct(",", "expected ',' or ')' in the type parameters"); err != nil {
				return "", nil, err
			}
		}
	}
	unsigned := false
	for {
		m := p.tok
		switch {
		case p.acceptWord("UNSIGNED"):
			unsigned = true
			continue
		case p.acceptWord("SIGNED"):
			continue
		case p.isWord("ZEROFILL"):
			return "", nil, p.defErr(m, ErrUnsupported, "column %q: ZEROFILL is not supported", col)
		}
		break
	}
	sqlType, dt, problem := resolveType(name, args, unsigned)
	if problem != nil {
		return "", nil, p.defErr(t, problem.err, "column %q: %s", col, problem.msg)
	}
	return sqlType, dt, nil
}

// transformNames maps the spellings of a transform to its name; Spark SQL
// writes the plural forms.
var transformNames = map[string]string{
	"identity": TransformIdentity,
	"year":     TransformYear, "years": TransformYear,
	"month": TransformMonth, "months": TransformMonth,
	"day": TransformDay, "days": TransformDay,
	"hour": TransformHour, "hours": TransformHour,
	"bucket":   TransformBucket,
	"truncate": TransformTruncate,
}

// transformParams describes the integer parameter of the transforms that take one.
var transformParams = map[string]struct{ noun, example string }{
	TransformBucket:   {"bucket count", "bucket(16, id)"},
	TransformTruncate: {"width", "truncate(4, name)"},
}

// partitions reads "(" expr {"," expr} ")" where expr is col, transform(col),
// bucket(N, col) or truncate(W, col).
func (p *parser) partitions(st *createState) error {
	if err := p.expectPunct("(", "expected '(' and the partition columns after PARTITION BY"); err != nil {
		return err
	}
	for {
		t := p.tok
		e, colTok, err := p.partitionExpr()
		if err != nil {
			return err
		}
		for i, prev := range st.sink.PartitionBy {
			if prev.Transform == e.Transform && prev.Param == e.Param && strings.EqualFold(prev.Column, e.Column) {
				return p.defErr(t, ErrInvalidDefinition, "PARTITION BY lists %s twice (first at position %d)", e.String(), st.partStarts[i].pos+1)
			}
		}
		st.sink.PartitionBy = append(st.sink.PartitionBy, e)
		st.partToks = append(st.partToks, colTok)
		st.partStarts = append(st.partStarts, t)
		if p.acceptPunct(")") {
			return nil
		}
		if err := p.expectPunct(",", "expected ',' or ')' in PARTITION BY"); err != nil {
			return err
		}
	}
}

// partitionExpr reads one entry of PARTITION BY and returns it with the
// token of its column.
func (p *parser) partitionExpr() (PartitionExpr, token, error) {
	t := p.tok
	if t.kind == tokIdent {
		p.advance()
	}
	if t.kind == tokWord {
		p.advance()
		if !p.isPunct("(") {
			err := p.nameToken(t, "a partition column or a transform")
			return PartitionExpr{Column: t.text, Transform: TransformIdentity}, t, err
		}
	}
	if t.kind != tokWord {
		err := p.nameToken(t, "a partition column or a transform")
		return PartitionExpr{Column: t.text, Transform: TransformIdentity}, t, err
	}
	p.advance() // (
	var e PartitionExpr
	tr, ok := transformNames[asciiLower(t.text)]
	if !ok {
		return e, t, p.syntaxErr(t, "unknown partition transform: expected identity, year, month, day, hour, bucket or truncate")
	}
	e.Transform = tr
	if param, ok := transformParams[tr]; ok {
		n := p.tok
		if n.kind != tokNumber {
			return e, t, p.syntaxErr(n, "expected the %s, as in %s", param.noun, param.example)
		}
		v, err := strconv.ParseUint(n.text, 10, 64)
		if err != nil || v < 1 || v > math.MaxInt32 {
			return e, t, p.defErr(n, ErrInvalidDefinition, "%s(%s, ...): the %s must be between 1 and %d", tr, n.text, param.noun, math.MaxInt32)
		}
		e.Param = int(v)
		p.advance()
		if err := p.expectPunct(",", fmt.Sprintf("expected ',' and a column after the %s", param.noun)); err != nil {
			return e, t, err
		}
	}
	var colTok token
	var err error
	if e.Column, colTok, err = p.name("a partition column"); err != nil {
		return e, t, err
	}
	if err := p.expectPunct(")", fmt.Sprintf("expected ')' to close %s(", tr)); err != nil {
		return e, t, err
	}
	return e, colTok, nil
}

// options reads "(" key "=" value {"," key "=" value} ")".
func (p *parser) options(s *CreateSink) error {
	if err := p.expectPunct("(", "expected '(' and options after WITH"); err != nil {
		return err
	}
	seen := map[string]int{}
	for {
		kt := p.tok
		if kt.kind != tokWord {
			return p.syntaxErr(kt, "expected an option name")
		}
		key, err := p.optionKeyPart()
		if err != nil {
			return err
		}
		for p.acceptPunct(".") {
			if p.tok.kind != tokWord && p.tok.kind != tokIdent {
				return p.syntaxErr(p.tok, "expected the rest of option name %q after the dot", key)
			}
			part, err := p.optionKeyPart()
			if err != nil {
				return err
			}
			key += "." + part
		}
		if first, dup := seen[key]; dup {
			return p.defErr(kt, ErrInvalidDefinition, "option %q is given twice (first at position %d)", key, first)
		}
		seen[key] = kt.pos + 1
		if err := p.expectPunct("=", fmt.Sprintf("expected '=' after option %q", key)); err != nil {
			return err
		}
		o, err := p.optionValue(key)
		if err != nil {
			return err
		}
		s.Options = append(s.Options, o)
		if p.acceptPunct(")") {
			return nil
		}
		if err := p.expectPunct(",", "expected ',' or ')' in the WITH options"); err != nil {
			return err
		}
	}
}

// optionKeyPart reads one part of an option name, in lower case: a word,
// words joined by '-' with no space around it (catalog.s3.access-key-id,
// as Iceberg spells its properties), or a `backquoted` name.
func (p *parser) optionKeyPart() (string, error) {
	t := p.tok
	p.advance()
	if t.kind == tokIdent {
		if t.text == "" {
			return "", p.syntaxErr(t, "an option name part must not be empty")
		}
		return asciiLower(t.text), nil
	}
	part, end := asciiLower(t.text), t.end
	for p.isPunct("-") && p.tok.pos == end {
		dash := p.tok
		p.advance()
		if (p.tok.kind != tokWord && p.tok.kind != tokNumber) || p.tok.pos != dash.end {
			return "", p.syntaxErr(p.tok, "expected the rest of option name %q after '-'", part+"-")
		}
		part += "-" + asciiLower(p.tok.text)
		end = p.tok.end
		p.advance()
	}
	return part, nil
}

// optionKeyText renders an option name so that it reads back the same:
// each dotted part bare when it lexes as words joined by '-', else
// backquoted.
func optionKeyText(key string) string {
	parts := strings.Split(key, ".")
	for i, part := range parts {
		plain := part != ""
		for j, w := range strings.Split(part, "-") {
			if !isBareWord(w) && (j == 0 || !isDigits(w)) {
				plain = false
			}
		}
		if !plain {
			parts[i] = quoteIdent(part)
		}
	}
	return strings.Join(parts, ".")
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

func (p *parser) optionValue(key string) (Option, error) {
	t := p.tok
	o := Option{Key: key}
	switch t.kind {
	case tokString:
		o.Kind, o.Value = OptionString, t.text
	case tokNumber:
		o.Kind = OptionInteger
		v, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return o, p.defErr(t, ErrInvalidDefinition, "option %q: integer %s is out of range", key, t.text)
		}
		o.Value = strconv.FormatInt(v, 10)
	case tokPunct:
		if t.text != "-" && t.text != "+" {
			break
		}
		p.advance()
		n := p.tok
		if n.kind != tokNumber {
			return o, p.syntaxErr(n, "expected an integer after '%s'", t.text)
		}
		v, err := strconv.ParseInt(t.text+n.text, 10, 64)
		if err != nil {
			return o, p.defErr(n, ErrInvalidDefinition, "option %q: integer %s%s is out of range", key, t.text, n.text)
		}
		o.Kind, o.Value = OptionInteger, strconv.FormatInt(v, 10)
		p.advance()
		return o, nil
	case tokWord:
		switch up := asciiUpper(t.text); up {
		case "TRUE", "FALSE":
			o.Kind, o.Value = OptionBoolean, asciiLower(up)
		case "NULL":
			return o, p.defErr(t, ErrInvalidDefinition, "option %q: NULL is not a value; leave the option out instead", key)
		default:
			o.Kind, o.Value = OptionIdentifier, t.text
		}
	case tokIdent:
		if err := p.nameToken(t, "an option value"); err != nil {
			return o, err
		}
		o.Kind, o.Value = OptionIdentifier, t.text
	}
	if t.kind == tokPunct || t.kind == tokEOF || t.kind == tokError {
		return o, p.syntaxErr(t, "expected the value of option %q: a quoted string, an integer, TRUE, FALSE or a name", key)
	}
	p.advance()
	return o, nil
}

// check validates what needs the whole statement: that the key and
// partition columns are columns, and that each transform suits its column.
// Names are rewritten to the spelling of their column definition.
func (st *createState) check(p *parser) error {
	s := st.sink
	if len(s.Columns) == 0 {
		return nil // attaching: the table's schema is checked when it is read
	}
	find := func(name string) int {
		for i, c := range s.Columns {
			if strings.EqualFold(c.Name, name) {
				return i
			}
		}
		return -1
	}
	if st.pkToks != nil { // a table-level key
		for i, name := range s.PrimaryKey {
			c := find(name)
			if c < 0 {
				return p.defErr(st.pkToks[i], ErrInvalidDefinition, "PRIMARY KEY column %q is not a column of sink %q", name, s.Name)
			}
			for _, prev := range s.PrimaryKey[:i] {
				if prev == s.Columns[c].Name {
					return p.defErr(st.pkToks[i], ErrInvalidDefinition, "PRIMARY KEY lists column %q twice", name)
				}
			}
			s.PrimaryKey[i] = s.Columns[c].Name
		}
	}
	for i, name := range s.PrimaryKey {
		c := find(name)
		if st.explicitNull[c] {
			at := st.colToks[c]
			if st.pkToks != nil {
				at = st.pkToks[i]
			}
			return p.defErr(at, ErrInvalidDefinition, "key column %q is declared NULL, but every PRIMARY KEY column is NOT NULL", s.Columns[c].Name)
		}
		s.Columns[c].NotNull = true
	}
	for i := range s.PartitionBy {
		e := &s.PartitionBy[i]
		c := find(e.Column)
		if c < 0 {
			return p.defErr(st.partToks[i], ErrInvalidDefinition, "partition column %q is not a column of sink %q", e.Column, s.Name)
		}
		col := s.Columns[c]
		e.Column = col.Name
		if need := transformNeeds(e.Transform, col.Type); need != "" {
			return p.defErr(st.partToks[i], ErrInvalidDefinition, "partition transform %s needs %s, and column %q is %s", e.Transform, need, col.Name, col.SQLType)
		}
	}
	return nil
}

// transformNeeds returns "" when transform applies to a column of type t,
// and otherwise the kind of column it needs, following the Iceberg spec.
func transformNeeds(transform string, t arrow.DataType) string {
	var id arrow.Type = arrow.NULL
	if t != nil {
		id = t.ID()
	}
	isInt := id == arrow.INT8 || id == arrow.INT16 || id == arrow.INT32 || id == arrow.INT64
	isText := id == arrow.STRING || id == arrow.BINARY
	switch transform {
	case TransformYear, TransformMonth, TransformDay:
		if id != arrow.DATE32 && id != arrow.TIMESTAMP {
			return "a DATE, DATETIME or TIMESTAMP column"
		}
	case TransformHour:
		if id != arrow.TIMESTAMP {
			return "a DATETIME or TIMESTAMP column"
		}
	case TransformBucket:
		if !isInt && !isText && id != arrow.DECIMAL128 && id != arrow.DATE32 && id != arrow.TIMESTAMP {
			return "an integer, DECIMAL, DATE, DATETIME, TIMESTAMP, text or binary column"
		}
	case TransformTruncate:
		if !isInt && !isText && id != arrow.DECIMAL128 {
			return "an integer, DECIMAL, text or binary column"
		}
	}
	return ""
}

// quoteIdent backquotes a name, doubling backquotes inside it.
func quoteIdent(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

// quoteString renders a string literal that the lexer reads back to s.
func quoteString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`\'`)
		case 0:
			b.WriteString(`\0`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case 0x1a:
			b.WriteString(`\Z`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// isBareWord reports whether s lexes as one bare word.
func isBareWord(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	for i, r := range s {
		if i == 0 && !isWordStart(r) || !isWordRune(r) {
			return false
		}
	}
	return true
}

func (s *CreateSink) String() string {
	var b strings.Builder
	b.WriteString("CREATE SINK ")
	if s.IfNotExists {
		b.WriteString("IF NOT EXISTS ")
	}
	fmt.Fprintf(&b, "%s INTO %s %s", quoteIdent(s.Name), asciiUpper(s.Format), quoteString(s.Location))
	if len(s.Columns) > 0 {
		b.WriteString(" (")
		inline := false
		for i, c := range s.Columns {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.String())
			inline = inline || c.PrimaryKey
		}
		if len(s.PrimaryKey) > 0 && !inline {
			b.WriteString(", PRIMARY KEY (")
			for i, k := range s.PrimaryKey {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(quoteIdent(k))
			}
			b.WriteString(")")
		}
		b.WriteString(")")
	}
	if len(s.PartitionBy) > 0 {
		b.WriteString(" PARTITION BY (")
		for i, e := range s.PartitionBy {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(e.String())
		}
		b.WriteString(")")
	}
	if len(s.Options) > 0 {
		b.WriteString(" WITH (")
		for i, o := range s.Options {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(o.String())
		}
		b.WriteString(")")
	}
	return b.String()
}

// String renders the column as it appears in CREATE SINK.
func (c ColumnDef) String() string {
	s := quoteIdent(c.Name) + " " + c.SQLType
	if c.NotNull {
		s += " NOT NULL"
	}
	if c.PrimaryKey {
		s += " PRIMARY KEY"
	}
	if c.Comment != "" {
		s += " COMMENT " + quoteString(c.Comment)
	}
	return s
}

// String renders the entry as it appears in PARTITION BY.
func (e PartitionExpr) String() string {
	col := quoteIdent(e.Column)
	switch e.Transform {
	case TransformIdentity, "":
		return col
	case TransformBucket, TransformTruncate:
		return fmt.Sprintf("%s(%d, %s)", e.Transform, e.Param, col)
	}
	return fmt.Sprintf("%s(%s)", e.Transform, col)
}

// String renders key = value as it appears in WITH (...).
func (o Option) String() string {
	var v string
	switch o.Kind {
	case OptionInteger:
		v = o.Value
	case OptionBoolean:
		v = asciiUpper(o.Value)
	case OptionIdentifier:
		v = o.Value
		if up := asciiUpper(v); !isBareWord(v) || up == "TRUE" || up == "FALSE" || up == "NULL" {
			v = quoteIdent(v)
		}
	default:
		v = quoteString(o.Value)
	}
	return optionKeyText(o.Key) + " = " + v
}

func (d *DropSink) String() string {
	s := "DROP SINK "
	if d.IfExists {
		s += "IF EXISTS "
	}
	s += quoteIdent(d.Name)
	if d.Purge {
		s += " PURGE"
	}
	return s
}

func (*ShowSinks) String() string { return "SHOW SINKS" }

func (s *ShowCreateSink) String() string { return "SHOW CREATE SINK " + quoteIdent(s.Name) }

func (s *ShowSinkStatus) String() string {
	if s.Name == "" {
		return "SHOW SINK STATUS"
	}
	return "SHOW SINK STATUS " + quoteIdent(s.Name)
}
