package sinkddl

import (
	"fmt"
	"strings"
)

// describe is the predicate as the data-driven tests show it: a tree,
// one node a line.
func (p *Predicate) describe(b *strings.Builder, indent string) {
	switch p.Kind {
	case PredAnd, PredOr, PredNot:
		name := map[PredicateKind]string{PredAnd: "and", PredOr: "or", PredNot: "not"}[p.Kind]
		fmt.Fprintf(b, "\n%s%s", indent, name)
		p.Left.describe(b, indent+"  ")
		if p.Right != nil {
			p.Right.describe(b, indent+"  ")
		}
		return
	}
	kind := map[PredicateKind]string{PredCompare: "compare", PredIsNull: "is null", PredIn: "in", PredBetween: "between"}[p.Kind]
	fmt.Fprintf(b, "\n%s%s %q", indent, kind, p.Column)
	if p.Negated {
		b.WriteString(" negated")
	}
	if p.Op != "" {
		b.WriteString(" " + p.Op)
	}
	for _, v := range p.Values {
		fmt.Fprintf(b, " %s(%q)", literalKinds[v.Kind], v.Text)
	}
}

var literalKinds = [...]string{LitInteger: "integer", LitDecimal: "decimal", LitString: "string",
	LitBoolean: "boolean", LitDate: "date", LitTimestamp: "timestamp"}
