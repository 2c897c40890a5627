package planner

// SELECT ... INTO OUTFILE and INTO DUMPFILE, in place of go-mysql-server's
// (which opens the name it was given): the file is created through
// createFile (filefuncs.go), and written as MySQL writes it.
//
// OUTFILE writes one line per row: LINES STARTING BY, the fields separated
// by FIELDS TERMINATED BY, LINES TERMINATED BY. A field is its value's
// text as a client receives it, enclosed in FIELDS ENCLOSED BY (with
// OPTIONALLY, only string columns); NULL is the escape character followed
// by N, or the word NULL when there is none. With an escape character, it
// precedes itself, NUL (written as 0), the first character of the line
// terminator, and the enclosing character in an enclosed field, the first
// character of the field terminator in one that is not. DUMPFILE writes one row's values, NULL as nothing,
// with no separator and no escaping; more than one row is 1172.

import (
	"bufio"
	"errors"
	"io"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// buildInto runs an INTO OUTFILE or DUMPFILE; other INTOs (variables)
// are go-mysql-server's.
func (s *strictBuilder) buildInto(ctx *gms.Context, n *plan.Into, row gms.Row) (gms.RowIter, error) {
	name := n.Outfile
	if name == "" {
		name = n.Dumpfile
	}
	if name == "" {
		return nil, nil
	}
	e, err := sessionEngine(ctx)
	if err != nil {
		return nil, err
	}
	iter, err := s.build.Build(ctx, n.Child, row)
	if err != nil {
		return nil, err
	}
	f, remove, err := e.createFile(name)
	if err != nil {
		iter.Close(ctx)
		return nil, err
	}
	w := bufio.NewWriter(f)
	var rows int
	if n.Outfile != "" {
		rows, err = writeOutfile(ctx, w, n, iter)
	} else {
		rows, err = writeDumpfile(ctx, w, n.Child.Schema(), iter)
	}
	if cerr := iter.Close(ctx); err == nil {
		err = cerr
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		remove()
		return nil, err
	}
	return gms.RowsToRowIter(gms.Row{types.NewOkResult(rows)}), nil
}

// fieldText is v's text as a client receives it.
func fieldText(ctx *gms.Context, t gms.Type, v any) ([]byte, error) {
	sv, err := t.SQL(ctx, nil, v)
	if err != nil {
		return nil, err
	}
	return sv.Raw(), nil
}

func writeOutfile(ctx *gms.Context, w *bufio.Writer, n *plan.Into, iter gms.RowIter) (int, error) {
	sch := n.Child.Schema()
	esc, enc := n.FieldsEscapedBy, n.FieldsEnclosedBy
	// What the escape character precedes in a value, in an enclosed
	// field and in one that is not.
	var special [2]map[byte]bool
	for i := range special {
		special[i] = map[byte]bool{0: true}
		if esc == "" {
			continue
		}
		special[i][esc[0]] = true
		if n.LinesTerminatedBy != "" {
			special[i][n.LinesTerminatedBy[0]] = true
		}
	}
	if enc != "" {
		special[1][enc[0]] = true
	}
	if n.FieldsTerminatedBy != "" {
		special[0][n.FieldsTerminatedBy[0]] = true
	}
	rows := 0
	for {
		r, err := iter.Next(ctx)
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows++
		w.WriteString(n.LinesStartingBy)
		for i, v := range r {
			if i > 0 {
				w.WriteString(n.FieldsTerminatedBy)
			}
			if v == nil {
				if esc == "" {
					w.WriteString("NULL")
				} else {
					w.WriteString(esc + "N")
				}
				continue
			}
			text, err := fieldText(ctx, sch[i].Type, v)
			if err != nil {
				return rows, err
			}
			enclose := enc != "" && (!n.FieldsEnclosedByOpt || types.IsText(sch[i].Type) || types.IsEnum(sch[i].Type) || types.IsSet(sch[i].Type))
			in := special[0]
			if enclose {
				in = special[1]
				w.WriteString(enc)
			}
			for _, c := range text {
				if esc != "" && in[c] {
					w.WriteByte(esc[0])
					if c == 0 {
						c = '0'
					}
				}
				w.WriteByte(c)
			}
			if enclose {
				w.WriteString(enc)
			}
		}
		w.WriteString(n.LinesTerminatedBy)
	}
}

func writeDumpfile(ctx *gms.Context, w *bufio.Writer, sch gms.Schema, iter gms.RowIter) (int, error) {
	r, err := iter.Next(ctx)
	if errors.Is(err, io.EOF) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if _, err := iter.Next(ctx); !errors.Is(err, io.EOF) {
		if err != nil {
			return 0, err
		}
		return 0, gms.ErrMoreThanOneRow.New()
	}
	for i, v := range r {
		if v == nil {
			continue
		}
		text, err := fieldText(ctx, sch[i].Type, v)
		if err != nil {
			return 0, err
		}
		w.Write(text)
	}
	return 1, nil
}
