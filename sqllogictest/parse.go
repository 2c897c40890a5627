package sqllogictest

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Kind says what a record does.
type Kind int

// The kinds of records.
const (
	KindStatement     Kind = iota + 1 // statement ok | statement error [code] [conn]
	KindQuery                         // query TYPES [sort] [label-X] [conn]
	KindHashThreshold                 // hash-threshold N
	KindHalt                          // halt
	KindRestart                       // restart
	KindRequire                       // require CAPABILITY
	KindMode                          // mode skip | mode unskip
	KindLoop                          // loop VAR START END ... endloop
)

func (k Kind) String() string {
	switch k {
	case KindStatement:
		return "statement"
	case KindQuery:
		return "query"
	case KindHashThreshold:
		return "hash-threshold"
	case KindHalt:
		return "halt"
	case KindRestart:
		return "restart"
	case KindRequire:
		return "require"
	case KindMode:
		return "mode"
	case KindLoop:
		return "loop"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// SortMode is how a query's result is ordered before it is compared.
type SortMode int

// The sort modes of the classic format.
const (
	NoSort    SortMode = iota // compare in the order the engine returned
	RowSort                   // sort the rows
	ValueSort                 // sort every value on its own
)

// Condition is a skipif or onlyif line in front of a record.
type Condition struct {
	Skip   bool   // skipif (true) or onlyif (false)
	Engine string // lower case
}

// Record is one entry of a script. Only the fields of its Kind are set.
type Record struct {
	Kind       Kind
	Line       int // line of the record's header (after its conditions), 1-based
	Conditions []Condition

	// Conn is the connection label of a statement or query; "" is the
	// default connection.
	Conn string
	// SQL is the statement or query text, lines joined by "\n".
	SQL string

	// ExpectError is set by "statement error". ErrorCode, when not 0, is the
	// MySQL error number the error must carry; ErrorMessage, when not "", is
	// a substring its message must contain (the lines after ----).
	ExpectError  bool
	ErrorCode    int
	ErrorMessage string

	// Types has one letter per result column (I integer, R float, anything
	// else text). Sort, Label and Expected belong to queries too: Expected
	// holds the lines after ----, verbatim.
	Types    string
	Sort     SortMode
	Label    string
	Expected []string

	// N is hash-threshold's value.
	N int
	// Arg is the capability of require and the mode of mode.
	Arg string

	// Var, Start, End and Body describe a loop: Body runs once for each
	// Var from Start up to End (excluded).
	Var        string
	Start, End int
	Body       []Record
}

// Script is a parsed .slt file.
type Script struct {
	Name    string
	Records []Record
}

// ParseError is a script that does not parse, with where.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Parse reads a script. A record's SQL is every line from the one after its
// header up to a blank line or a line "----"; inside a record nothing is a
// comment, so '#' in SQL or in results is kept. Between records, lines
// starting with '#' are comments.
func Parse(name, src string) (*Script, error) {
	p := &parser{name: name, lines: strings.Split(src, "\n")}
	for i, l := range p.lines {
		p.lines[i] = strings.TrimSuffix(l, "\r")
	}
	recs, err := p.block(0)
	if err != nil {
		return nil, err
	}
	return &Script{Name: name, Records: recs}, nil
}

type parser struct {
	name  string
	lines []string
	pos   int // index of the next line
}

func (p *parser) errf(line int, format string, args ...any) error {
	return &ParseError{File: p.name, Line: line, Msg: fmt.Sprintf(format, args...)}
}

func blank(l string) bool { return strings.TrimSpace(l) == "" }

// block parses records up to the end of input (depth 0) or an endloop.
func (p *parser) block(depth int) ([]Record, error) {
	var recs []Record
	var conds []Condition
	condLine := 0
	for p.pos < len(p.lines) {
		line := p.lines[p.pos]
		lineNo := p.pos + 1
		if blank(line) || strings.HasPrefix(line, "#") {
			if conds != nil {
				return nil, p.errf(condLine, "skipif/onlyif must be followed directly by the record it applies to")
			}
			p.pos++
			continue
		}
		tok := strings.Fields(line)
		p.pos++
		rec := Record{Line: lineNo}
		switch tok[0] {
		case "skipif", "onlyif":
			if len(tok) != 2 {
				return nil, p.errf(lineNo, "%s takes one engine name", tok[0])
			}
			if conds == nil {
				condLine = lineNo
			}
			conds = append(conds, Condition{Skip: tok[0] == "skipif", Engine: strings.ToLower(tok[1])})
			continue
		case "statement":
			if err := p.statement(&rec, tok, lineNo); err != nil {
				return nil, err
			}
		case "query":
			if err := p.query(&rec, tok, lineNo); err != nil {
				return nil, err
			}
		case "hash-threshold":
			if len(tok) != 2 {
				return nil, p.errf(lineNo, "hash-threshold takes one number")
			}
			n, err := strconv.Atoi(tok[1])
			if err != nil || n < 0 {
				return nil, p.errf(lineNo, "hash-threshold %q: not a number of values", tok[1])
			}
			rec.Kind, rec.N = KindHashThreshold, n
		case "halt", "restart":
			if len(tok) != 1 {
				return nil, p.errf(lineNo, "%s takes no arguments", tok[0])
			}
			rec.Kind = KindHalt
			if tok[0] == "restart" {
				rec.Kind = KindRestart
			}
		case "require":
			if len(tok) != 2 {
				return nil, p.errf(lineNo, "require takes one capability")
			}
			if depth > 0 {
				return nil, p.errf(lineNo, "require must be at the top level of a file, not in a loop")
			}
			rec.Kind, rec.Arg = KindRequire, tok[1]
		case "mode":
			if len(tok) != 2 || (tok[1] != "skip" && tok[1] != "unskip") {
				return nil, p.errf(lineNo, "mode takes skip or unskip")
			}
			rec.Kind, rec.Arg = KindMode, tok[1]
		case "loop":
			if conds != nil {
				return nil, p.errf(condLine, "skipif/onlyif cannot apply to a loop")
			}
			if err := p.loop(&rec, tok, lineNo, depth); err != nil {
				return nil, err
			}
		case "endloop":
			if len(tok) != 1 {
				return nil, p.errf(lineNo, "endloop takes no arguments")
			}
			if conds != nil {
				return nil, p.errf(condLine, "skipif/onlyif cannot apply to endloop")
			}
			if depth == 0 {
				return nil, p.errf(lineNo, "endloop without loop")
			}
			p.pos-- // the caller consumes it
			return recs, nil
		default:
			return nil, p.errf(lineNo, "unknown record %q (expected statement, query, hash-threshold, halt, restart, require, mode, loop, skipif or onlyif)", tok[0])
		}
		rec.Conditions = conds
		conds = nil
		recs = append(recs, rec)
	}
	if conds != nil {
		return nil, p.errf(condLine, "skipif/onlyif at the end of the file, with no record to apply to")
	}
	return recs, nil
}

func (p *parser) statement(rec *Record, tok []string, lineNo int) error {
	rec.Kind = KindStatement
	if len(tok) < 2 {
		return p.errf(lineNo, "statement needs ok or error")
	}
	rest := tok[2:]
	switch tok[1] {
	case "ok":
	case "error":
		rec.ExpectError = true
		if len(rest) > 0 && isNumber(rest[0]) {
			code, err := strconv.Atoi(rest[0])
			if err != nil || code <= 0 {
				return p.errf(lineNo, "statement error %s: not a MySQL error number", rest[0])
			}
			rec.ErrorCode = code
			rest = rest[1:]
		}
	default:
		return p.errf(lineNo, "statement %s: expected ok or error", tok[1])
	}
	switch len(rest) {
	case 0:
	case 1:
		rec.Conn = rest[0]
	default:
		return p.errf(lineNo, "statement: unexpected %q (a statement takes ok or error [code], then an optional connection label)", strings.Join(rest[1:], " "))
	}
	sql, sep, err := p.sql(lineNo)
	if err != nil {
		return err
	}
	rec.SQL = sql
	if sep {
		if !rec.ExpectError {
			return p.errf(lineNo, "statement ok cannot have ---- (only statement error takes an expected message)")
		}
		msg := p.untilBlank()
		if len(msg) == 0 {
			return p.errf(lineNo, "statement error: ---- with no expected message after it")
		}
		rec.ErrorMessage = strings.Join(msg, "\n")
	}
	return nil
}

func (p *parser) query(rec *Record, tok []string, lineNo int) error {
	rec.Kind = KindQuery
	if len(tok) < 2 {
		return p.errf(lineNo, "query needs its column types (for example query IT)")
	}
	for _, r := range tok[1] {
		if !unicode.IsLetter(r) {
			return p.errf(lineNo, "query %s: column types are letters (I, R, T)", tok[1])
		}
	}
	rec.Types = tok[1]
	sortSeen := false
	for _, t := range tok[2:] {
		switch {
		case t == "nosort" || t == "rowsort" || t == "valuesort":
			if sortSeen {
				return p.errf(lineNo, "query: two sort modes")
			}
			sortSeen = true
			rec.Sort = map[string]SortMode{"nosort": NoSort, "rowsort": RowSort, "valuesort": ValueSort}[t]
		case strings.HasPrefix(t, "label"):
			if rec.Label != "" {
				return p.errf(lineNo, "query: two labels")
			}
			rec.Label = t
		default:
			if rec.Conn != "" {
				return p.errf(lineNo, "query: unexpected %q (after the types: a sort mode, a label-NAME, a connection label)", t)
			}
			rec.Conn = t
		}
	}
	sql, sep, err := p.sql(lineNo)
	if err != nil {
		return err
	}
	rec.SQL = sql
	if sep {
		rec.Expected = p.untilBlank()
	}
	return nil
}

func (p *parser) loop(rec *Record, tok []string, lineNo, depth int) error {
	if len(tok) != 4 {
		return p.errf(lineNo, "loop takes a variable, a start and an end: loop i 0 10")
	}
	start, err1 := strconv.Atoi(tok[2])
	end, err2 := strconv.Atoi(tok[3])
	if err1 != nil || err2 != nil {
		return p.errf(lineNo, "loop %s %s %s: start and end must be integers", tok[1], tok[2], tok[3])
	}
	if !validVar(tok[1]) {
		return p.errf(lineNo, "loop variable %q: use letters, digits and _", tok[1])
	}
	body, err := p.block(depth + 1)
	if err != nil {
		return err
	}
	if p.pos >= len(p.lines) {
		return p.errf(lineNo, "loop without endloop")
	}
	p.pos++ // endloop
	rec.Kind, rec.Var, rec.Start, rec.End, rec.Body = KindLoop, tok[1], start, end, body
	return nil
}

// sql reads a record's SQL: the lines up to a blank line or ----. sep
// reports a ---- line (consumed).
func (p *parser) sql(header int) (sql string, sep bool, err error) {
	var lines []string
	for p.pos < len(p.lines) && !blank(p.lines[p.pos]) {
		l := p.lines[p.pos]
		p.pos++
		if strings.TrimRight(l, " \t") == "----" {
			sep = true
			break
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		return "", false, p.errf(header, "the record has no SQL")
	}
	return strings.Join(lines, "\n"), sep, nil
}

// untilBlank reads lines up to a blank line or the end.
func (p *parser) untilBlank() []string {
	var lines []string
	for p.pos < len(p.lines) && !blank(p.lines[p.pos]) {
		lines = append(lines, p.lines[p.pos])
		p.pos++
	}
	return lines
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func validVar(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}
