package planner

// What go-mysql-server's wire handler says about a result column and a
// sink column's declaration knows better: NOT NULL and PRI, a BOOLEAN is 1 wide (so that
// JDBC's getObject returns a Boolean, not a number), and a TIMESTAMP(p)
// has p decimals (the handler gives p for DATETIME only, so mysql2 read
// .000001 as .1). And the text of a DATETIME(p) or TIMESTAMP(p) value has
// exactly p fraction digits, as in MySQL (the handler drops trailing zeros).

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/lakesql/lakesql/sinkddl"
)

// DescribeFields corrects the result fields that come from sink columns.
func (e *Engine) DescribeFields(fields []*querypb.Field) {
	for _, f := range fields {
		// go-mysql-server's projections name the table, not always its
		// database.
		if (f.Database != "" && !strings.EqualFold(f.Database, DatabaseName)) || f.OrgTable == "" {
			continue
		}
		h, ok := e.lookup(f.OrgTable)
		if !ok {
			continue
		}
		h.openMu.Lock()
		sch := h.gschema
		h.openMu.Unlock()
		i := sch.IndexOfColName(f.OrgName)
		if i < 0 {
			continue
		}
		// The projection lost what the column says (go-mysql-server
		// gives every projected column as nullable and not a key).
		if !sch[i].Nullable {
			f.Flags |= uint32(querypb.MySqlFlag_NOT_NULL_FLAG)
		}
		if sch[i].PrimaryKey {
			f.Flags |= uint32(querypb.MySqlFlag_PRI_KEY_FLAG)
		}
		switch t := sch[i].Type; {
		case t == types.Boolean:
			f.ColumnLength = 1
		case t.Type() == sqltypes.Timestamp:
			if dt, ok := t.(interface{ Precision() int }); ok {
				f.Decimals = uint32(dt.Precision())
			}
		}
	}
}

// PadFractions gives every DATETIME and TIMESTAMP value of the rows exactly
// as many fraction digits as its field's Decimals.
func PadFractions(fields []*querypb.Field, rows [][]sqltypes.Value) {
	for c, f := range fields {
		if (f.Type != sqltypes.Datetime && f.Type != sqltypes.Timestamp) || f.Decimals == 0 || f.Decimals > sinkddl.MaxFraction {
			continue
		}
		for _, row := range rows {
			if c >= len(row) || row[c].IsNull() {
				continue
			}
			if s, ok := padFraction(row[c].ToString(), int(f.Decimals)); ok {
				row[c] = sqltypes.MakeTrusted(f.Type, []byte(s))
			}
		}
	}
}

// padFraction pads "2006-01-02 15:04:05[.f]" to p fraction digits; ok is
// false when s has that many already or is not such a value.
func padFraction(s string, p int) (string, bool) {
	if len(s) < len("2006-01-02 15:04:05") {
		return "", false
	}
	dot := strings.IndexByte(s, '.')
	if dot < 0 {
		return s + "." + strings.Repeat("0", p), true
	}
	have := len(s) - dot - 1
	if have >= p {
		return "", false
	}
	return s + strings.Repeat("0", p-have), true
}
