package sinkddl

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/internal/sqlword"
)

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
	fmt.Fprintf(&b, "%s INTO %s %s", sqlquote.MySQLIdent(s.Name), sqlword.UpperASCII(s.Format), sqlquote.MySQLString(s.Location))
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
				b.WriteString(sqlquote.MySQLIdent(k))
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
	s := sqlquote.MySQLIdent(c.Name) + " " + c.SQLType
	if c.NotNull {
		s += " NOT NULL"
	}
	if c.PrimaryKey {
		s += " PRIMARY KEY"
	}
	if c.Comment != "" {
		s += " COMMENT " + sqlquote.MySQLString(c.Comment)
	}
	return s
}

// String renders the entry as it appears in PARTITION BY.
func (e PartitionExpr) String() string {
	col := sqlquote.MySQLIdent(e.Column)
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
		v = sqlword.UpperASCII(o.Value)
	case OptionIdentifier:
		v = o.Value
		if up := sqlword.UpperASCII(v); !isBareWord(v) || up == "TRUE" || up == "FALSE" || up == "NULL" {
			v = sqlquote.MySQLIdent(v)
		}
	default:
		v = sqlquote.MySQLString(o.Value)
	}
	return optionKeyText(o.Key) + " = " + v
}

func (d *DropSink) String() string {
	s := "DROP SINK "
	if d.IfExists {
		s += "IF EXISTS "
	}
	s += sqlquote.MySQLIdent(d.Name)
	if d.Purge {
		s += " PURGE"
	}
	return s
}

func (*ShowSinks) String() string { return "SHOW SINKS" }

func (s *ShowCreateSink) String() string { return "SHOW CREATE SINK " + sqlquote.MySQLIdent(s.Name) }

func (s *ShowSinkStatus) String() string {
	if s.Name == "" {
		return "SHOW SINK STATUS"
	}
	return "SHOW SINK STATUS " + sqlquote.MySQLIdent(s.Name)
}
