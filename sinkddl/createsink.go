package sinkddl

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/internal/sqlword"
)

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
		case t.kind == tokWord && unsupportedElementWords[sqlword.UpperASCII(t.text)]:
			return p.defErr(t, ErrUnsupported, "%s is not supported in a sink: a sink has columns and at most one PRIMARY KEY", sqlword.UpperASCII(t.text))
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
		switch word := sqlword.UpperASCII(t.text); word {
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
	name := sqlword.UpperASCII(t.text)
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
	tr, ok := transformNames[sqlword.LowerASCII(t.text)]
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

// options reads WITH's "(" key "=" value {"," key "=" value} ")".
func (p *parser) options(s *CreateSink) error {
	opts, err := p.optionList("WITH")
	s.Options = opts
	return err
}

// optionList reads "(" key "=" value {"," key "=" value} ")" after clause
// (WITH, SET); keys are unique.
func (p *parser) optionList(clause string) ([]Option, error) {
	var out []Option
	if err := p.expectPunct("(", "expected '(' and options after "+clause); err != nil {
		return nil, err
	}
	seen := map[string]int{}
	for {
		kt := p.tok
		if kt.kind != tokWord {
			return nil, p.syntaxErr(kt, "expected an option name")
		}
		key, err := p.optionKeyPart()
		if err != nil {
			return nil, err
		}
		for p.acceptPunct(".") {
			if p.tok.kind != tokWord && p.tok.kind != tokIdent {
				return nil, p.syntaxErr(p.tok, "expected the rest of option name %q after the dot", key)
			}
			part, err := p.optionKeyPart()
			if err != nil {
				return nil, err
			}
			key += "." + part
		}
		if first, dup := seen[key]; dup {
			return nil, p.defErr(kt, ErrInvalidDefinition, "option %q is given twice (first at position %d)", key, first)
		}
		seen[key] = kt.pos + 1
		if err := p.expectPunct("=", fmt.Sprintf("expected '=' after option %q", key)); err != nil {
			return nil, err
		}
		o, err := p.optionValue(key)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
		if p.acceptPunct(")") {
			return out, nil
		}
		if err := p.expectPunct(",", "expected ',' or ')' in the "+clause+" options"); err != nil {
			return nil, err
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
		return sqlword.LowerASCII(t.text), nil
	}
	part, end := sqlword.LowerASCII(t.text), t.end
	for p.isPunct("-") && p.tok.pos == end {
		dash := p.tok
		p.advance()
		if (p.tok.kind != tokWord && p.tok.kind != tokNumber) || p.tok.pos != dash.end {
			return "", p.syntaxErr(p.tok, "expected the rest of option name %q after '-'", part+"-")
		}
		part += "-" + sqlword.LowerASCII(p.tok.text)
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
			parts[i] = sqlquote.MySQLIdent(part)
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
		switch up := sqlword.UpperASCII(t.text); up {
		case "TRUE", "FALSE":
			o.Kind, o.Value = OptionBoolean, sqlword.LowerASCII(up)
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
