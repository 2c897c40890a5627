package sinkddl

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lakesql/lakesql/internal/datadriven"
)

// The cases of testdata/*.txt, by command:
//   - parse: the statement's canonical text, then every field of its syntax
//     tree (describe); it must round-trip and be claimed by IsLakesqlStatement.
//   - error: the error Parse returns, its type and sentinel on the first line
//     and its text on the second; it must point into the statement.
//   - types: for each input line, a column type: its canonical spelling and
//     its Arrow type.
//   - is-lakesql: whether IsLakesqlStatement claims the input.
//   - list columns|partition_by|options: the clause ListClause makes of the
//     input, or its error.
//
// go test ./sinkddl -rewrite rewrites the expected blocks from the output.
// The inputs also seed FuzzParse.
func TestData(t *testing.T) {
	datadriven.RunFiles(t, "testdata/*.txt", func(t *testing.T, c *datadriven.Case) string {
		switch c.Cmd {
		case "parse":
			stmt, err := Parse(c.Input)
			if err != nil {
				return describeError(err)
			}
			if !IsLakesqlStatement(c.Input) {
				t.Errorf("%s: IsLakesqlStatement is false for a statement Parse accepts", c.Pos)
			}
			checkRoundTrip(t, stmt)
			return stmt.String() + "\n" + describe(stmt)
		case "error":
			stmt, err := Parse(c.Input)
			if err != nil {
				checkPosition(t, c.Input, err)
				return describeError(err)
			}
			return "no error: " + stmt.String()
		case "types":
			var b strings.Builder
			for _, typ := range strings.Split(c.Input, "\n") {
				stmt, err := Parse("CREATE SINK s INTO DELTA 'x' (c " + typ + ")")
				if err != nil {
					fmt.Fprintf(&b, "%s: %v\n", typ, err)
					continue
				}
				checkRoundTrip(t, stmt)
				col := stmt.(*CreateSink).Columns[0]
				fmt.Fprintf(&b, "%s: %s -> %v\n", typ, col.SQLType, col.Type)
			}
			return b.String()
		case "is-lakesql":
			return fmt.Sprint(IsLakesqlStatement(c.Input))
		case "list":
			for _, l := range []List{ColumnList, PartitionList, OptionList} {
				if _, ok := c.Arg(l.Param()); ok {
					clause, err := ListClause(l, c.Input)
					if err != nil {
						return describeError(err)
					}
					return clause
				}
			}
			t.Fatalf("%s: list takes columns, partition_by or options", c.Pos)
		}
		t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
		return ""
	})
}

// sentinels names the errors a *DefinitionError wraps.
var sentinels = []struct {
	name string
	err  error
}{
	{"ErrUnsupported", ErrUnsupported},
	{"ErrInvalidDefinition", ErrInvalidDefinition},
	{"ErrUnsupportedType", ErrUnsupportedType},
	{"ErrTooBigScale", ErrTooBigScale},
}

// describeError is the error's type (and sentinel) on one line, its text
// on the next.
func describeError(err error) string {
	kind := fmt.Sprintf("%T", err)
	if def, ok := err.(*DefinitionError); ok {
		kind = "DefinitionError " + def.Err.Error()
		for _, s := range sentinels {
			if def.Err == s.err {
				kind = "DefinitionError " + s.name
			}
		}
	} else if _, ok := err.(*SyntaxError); ok {
		kind = "SyntaxError"
	}
	return kind + "\n" + err.Error()
}

// optionKinds names the OptionKind values.
var optionKinds = [...]string{OptionString: "string", OptionInteger: "integer", OptionBoolean: "boolean", OptionIdentifier: "identifier"}

// describe writes out every field of a statement, one line per column,
// partition and option, strings quoted as Go quotes them.
func describe(stmt Statement) string {
	var b strings.Builder
	switch s := stmt.(type) {
	case *CreateSink:
		fmt.Fprintf(&b, "create sink %q into %s %q", s.Name, s.Format, s.Location)
		if s.IfNotExists {
			b.WriteString(" if not exists")
		}
		for _, c := range s.Columns {
			fmt.Fprintf(&b, "\ncolumn %q %s -> %v", c.Name, c.SQLType, c.Type)
			if c.NotNull {
				b.WriteString(", not null")
			}
			if c.PrimaryKey {
				b.WriteString(", primary key")
			}
			if c.Comment != "" {
				fmt.Fprintf(&b, ", comment %q", c.Comment)
			}
		}
		if s.PrimaryKey != nil {
			fmt.Fprintf(&b, "\nprimary key %q", s.PrimaryKey)
		}
		for _, p := range s.PartitionBy {
			if p.Param != 0 {
				fmt.Fprintf(&b, "\npartition %s(%d, %q)", p.Transform, p.Param, p.Column)
			} else {
				fmt.Fprintf(&b, "\npartition %s(%q)", p.Transform, p.Column)
			}
		}
		for _, o := range s.Options {
			fmt.Fprintf(&b, "\noption %s = %q, %s", o.Key, o.Value, optionKinds[o.Kind])
		}
	case *DropSink:
		fmt.Fprintf(&b, "drop sink %q", s.Name)
		if s.IfExists {
			b.WriteString(" if exists")
		}
		if s.Purge {
			b.WriteString(" purge")
		}
	case *ShowSinks:
		b.WriteString("show sinks")
	case *ShowCreateSink:
		fmt.Fprintf(&b, "show create sink %q", s.Name)
	case *ShowSinkStatus:
		fmt.Fprintf(&b, "show sink status %q", s.Name)
	case *OptimizeSink:
		fmt.Fprintf(&b, "optimize sink %q", s.Name)
		if s.Where != nil {
			s.Where.describe(&b, "  ")
		}
	case *VacuumSink:
		fmt.Fprintf(&b, "vacuum sink %q", s.Name)
		if s.HasRetain {
			fmt.Fprintf(&b, " retain %v hours", s.RetainHours)
		}
		if s.DryRun {
			b.WriteString(" dry run")
		}
	case *ShowSinkHistory:
		fmt.Fprintf(&b, "show sink history %q", s.Name)
		if s.HasLimit {
			fmt.Fprintf(&b, " limit %d", s.Limit)
		}
	case *AlterSink:
		fmt.Fprintf(&b, "alter sink %q", s.Name)
		for _, c := range s.Columns {
			fmt.Fprintf(&b, "\n%s %q", strings.ToLower(string(c.Kind)), c.Column)
			if c.NewName != "" {
				fmt.Fprintf(&b, " to %q", c.NewName)
			}
			if c.Type != nil {
				fmt.Fprintf(&b, " %s -> %v", c.SQLType, c.Type)
			}
			if c.Comment != "" {
				fmt.Fprintf(&b, ", comment %q", c.Comment)
			}
		}
		for _, o := range s.Set {
			fmt.Fprintf(&b, "\nset %s = %q, %s", o.Key, o.Value, optionKinds[o.Kind])
		}
		if c := s.AddCheck; c != nil {
			fmt.Fprintf(&b, "\nadd constraint %q check %q", c.Name, c.Expr)
		}
		if d := s.DropConstraint; d != nil {
			fmt.Fprintf(&b, "\ndrop constraint %q", d.Name)
			if d.IfExists {
				b.WriteString(" if exists")
			}
		}
	default:
		fmt.Fprintf(&b, "%#v", stmt)
	}
	return b.String()
}
