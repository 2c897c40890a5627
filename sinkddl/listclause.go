package sinkddl

import "strings"

// List names one parenthesized list of CREATE SINK: what the CALL form of
// CREATE SINK takes as a text argument each.
type List uint8

// The lists of CREATE SINK, in the order the statement writes them.
const (
	ColumnList    List = iota // (columns [, PRIMARY KEY (...)])
	PartitionList             // PARTITION BY (...)
	OptionList                // WITH (...)
)

// Param is the list's name as a procedure argument.
func (l List) Param() string {
	return [...]string{"columns", "partition_by", "options"}[l]
}

// clause is what the statement writes before the list's text.
func (l List) clause() string {
	return [...]string{" (", " PARTITION BY (", " WITH ("}[l]
}

// read parses the list's elements, up to its closing parenthesis.
func (l List) read(p *parser, st *createState) error {
	switch l {
	case ColumnList:
		return p.columns(st)
	case PartitionList:
		return p.partitions(st)
	}
	return p.options(st.sink)
}

// ListClause parses text as the inside of the list l and returns the
// list as CREATE SINK writes it, clause and parentheses around text. The
// closing parenthesis must end the list: since tokens do not depend on
// what precedes them, text then reads the same inside the statement it is
// put in, and cannot close the list early and go on with a clause of its
// own. Errors are a *SyntaxError or a *DefinitionError whose positions
// count in text; a position past it is the end of text.
func ListClause(l List, text string) (string, error) {
	// A newline first when text may end inside a "--" or "#" comment,
	// which the newline ends.
	closing := ")"
	if strings.Contains(text, "#") || strings.Contains(text, "--") {
		closing = "\n)"
	}
	src := text + closing
	p := &parser{src: src, lex: lexer{src: src}}
	// The opening parenthesis, which the clause writes before text.
	p.tok = token{kind: tokPunct, text: "(", pos: 0, end: 0}
	err := l.read(p, &createState{sink: &CreateSink{}})
	if err == nil && p.tok.kind != tokEOF {
		err = p.syntaxErr(p.tok, "the %s argument is one list, without its parentheses: it must end here", l.Param())
	}
	switch e := err.(type) {
	case nil:
		return l.clause() + src, nil
	case *SyntaxError:
		if e.Pos > len(text) {
			c := *e
			c.Pos, c.Near = len(text)+1, ""
			err = &c
		}
	case *DefinitionError:
		if e.Pos > len(text) {
			c := *e
			c.Pos, c.Near = len(text)+1, ""
			err = &c
		}
	}
	return "", err
}
