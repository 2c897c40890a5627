package sinkddl

// The statements of table maintenance: OPTIMIZE SINK, VACUUM SINK and
// SHOW SINK HISTORY. What they do is the planner's; here is their syntax.

import (
	"strconv"

	"github.com/lakesql/lakesql/internal/sqlquote"
)

// OptimizeSink is OPTIMIZE SINK name [WHERE predicate]: it bin-packs the
// table's small files. Where, when set, keeps the partitions it holds for;
// it may name partition columns only, which the planner checks.
type OptimizeSink struct {
	Name  string
	Where *Predicate
}

// VacuumSink is VACUUM SINK name [RETAIN n HOURS] [DRY RUN]. RetainHours
// is the number as written, an integer or a decimal; the parser keeps a
// negative one (RETAIN -1 HOURS) for the planner to refuse with its code.
type VacuumSink struct {
	Name        string
	RetainHours float64
	HasRetain   bool
	DryRun      bool
}

// ShowSinkHistory is SHOW SINK HISTORY name [LIMIT n]: the table's
// versions, newest first. LIMIT 0 shows none, as in MySQL.
type ShowSinkHistory struct {
	Name     string
	Limit    int64
	HasLimit bool
}

func (*OptimizeSink) lakesqlStatement()    {}
func (*VacuumSink) lakesqlStatement()      {}
func (*ShowSinkHistory) lakesqlStatement() {}

func (o *OptimizeSink) String() string {
	s := "OPTIMIZE SINK " + sqlquote.MySQLIdent(o.Name)
	if o.Where != nil {
		s += " WHERE " + o.Where.String()
	}
	return s
}

func (v *VacuumSink) String() string {
	s := "VACUUM SINK " + sqlquote.MySQLIdent(v.Name)
	if v.HasRetain {
		s += " RETAIN " + strconv.FormatFloat(v.RetainHours, 'f', -1, 64) + " HOURS"
	}
	if v.DryRun {
		s += " DRY RUN"
	}
	return s
}

func (h *ShowSinkHistory) String() string {
	s := "SHOW SINK HISTORY " + sqlquote.MySQLIdent(h.Name)
	if h.HasLimit {
		s += " LIMIT " + strconv.FormatInt(h.Limit, 10)
	}
	return s
}

// optimizeSink parses what follows OPTIMIZE SINK.
func (p *parser) optimizeSink() (Statement, error) {
	o := &OptimizeSink{}
	var err error
	if o.Name, _, err = p.name("a sink name"); err != nil {
		return nil, err
	}
	if p.isWord("WHERE") {
		p.lex.predicate = true
		p.advance()
		if o.Where, err = p.predicate(); err != nil {
			return nil, err
		}
	} else if p.tok.kind != tokEOF && !p.isPunct(";") {
		return nil, p.syntaxErr(p.tok, "expected WHERE or end of statement")
	}
	return o, nil
}

// vacuumSink parses what follows VACUUM SINK.
func (p *parser) vacuumSink() (Statement, error) {
	v := &VacuumSink{}
	var err error
	if v.Name, _, err = p.name("a sink name"); err != nil {
		return nil, err
	}
	if p.isWord("RETAIN") {
		p.lex.predicate = true // decimals
		p.advance()
		neg := p.acceptPunct("-")
		t := p.tok
		if t.kind != tokNumber {
			return nil, p.syntaxErr(t, "expected a number of hours after RETAIN")
		}
		n, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			return nil, p.syntaxErr(t, "RETAIN %s HOURS: the number is out of range", t.text)
		}
		if neg && n != 0 {
			n = -n
		}
		v.RetainHours, v.HasRetain = n, true
		p.advance()
		if err := p.expectWord("HOURS", "expected HOURS after the number of RETAIN"); err != nil {
			return nil, err
		}
	}
	if p.acceptWord("DRY") {
		if err := p.expectWord("RUN", "expected RUN after DRY"); err != nil {
			return nil, err
		}
		v.DryRun = true
	}
	if p.tok.kind != tokEOF && !p.isPunct(";") {
		switch {
		case v.DryRun:
			return nil, p.syntaxErr(p.tok, "expected end of statement")
		case v.HasRetain:
			return nil, p.syntaxErr(p.tok, "expected DRY RUN or end of statement")
		}
		return nil, p.syntaxErr(p.tok, "expected RETAIN n HOURS, DRY RUN or end of statement")
	}
	return v, nil
}

// showSinkHistory parses what follows SHOW SINK HISTORY.
func (p *parser) showSinkHistory() (Statement, error) {
	h := &ShowSinkHistory{}
	var err error
	if h.Name, _, err = p.name("a sink name"); err != nil {
		return nil, err
	}
	if p.acceptWord("LIMIT") {
		t := p.tok
		if t.kind != tokNumber {
			return nil, p.syntaxErr(t, "expected a number of rows after LIMIT")
		}
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return nil, p.syntaxErr(t, "LIMIT %s is out of range", t.text)
		}
		h.Limit, h.HasLimit = n, true
		p.advance()
	} else if p.tok.kind != tokEOF && !p.isPunct(";") {
		return nil, p.syntaxErr(p.tok, "expected LIMIT or end of statement")
	}
	return h, nil
}
