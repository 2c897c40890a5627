package planner

// Schema evolution by INSERT (schema_evolution = 'add_columns'): an INSERT
// or REPLACE whose column list names columns the sink lacks adds them,
// typed by their VALUES literals, in the commit of its epoch.
// go-mysql-server plans the statement against the columns the sink shows
// it (database.GetTableInsensitive), so the sink shows the session the
// new ones too: those its open epoch added already (sqlsink's
// PendingColumns), then those the running statement brings. The rows
// reach the sink as a batch with those columns, and sqlsink adds them in
// the epoch's commit (Delta: the same version; Iceberg: the same metadata
// commit). After the commit the definition takes them (adoptEvolved).

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/internal/sqlword"
	"github.com/lakesql/lakesql/sinkddl"
	"github.com/lakesql/lakesql/sinkdef"
	"github.com/lakesql/lakesql/sqlsink"
)

// newColumns returns the columns sink h shows the session beyond its
// table's: the open epoch's pending ones, then the running statement's
// new ones. Only a sink with schema_evolution = 'add_columns' has any.
func (s *Session) newColumns(ctx *gms.Context, h *sinkHandle, sink *sqlsink.Sink) ([]arrow.Field, error) {
	if sink.Config().SchemaEvolution != sqlsink.EvolveAddColumns {
		return nil, nil
	}
	var out []arrow.Field
	if s.writes(h) {
		out = sink.PendingColumns()
	}
	ins := s.evolvingInsert(ctx.Query())
	if ins == nil || !strings.EqualFold(ins.Table.Name.String(), h.rec.Name) ||
		(!ins.Table.DbQualifier.IsEmpty() && !strings.EqualFold(ins.Table.DbQualifier.String(), DatabaseName)) {
		return out, nil
	}
	known := map[string]bool{}
	for _, f := range sink.Schema().Fields() {
		known[strings.ToLower(f.Name)] = true
	}
	for _, f := range out {
		known[strings.ToLower(f.Name)] = true
	}
	for j, c := range ins.Columns {
		name := c.String()
		if known[strings.ToLower(name)] || strings.HasPrefix(name, "_") {
			continue // a metadata column never evolves: go-mysql-server refuses it (1054)
		}
		known[strings.ToLower(name)] = true
		if sink.Config().Mode == sqlsink.ModeUpsert && h.def != nil && h.def.Format == sinkddl.FormatIceberg {
			// sqlsink's equality-delete upsert stages the table's columns only.
			return nil, fmt.Errorf("%w: INSERT of column %s, which Iceberg upsert sink %s lacks (schema evolution by INSERT is built for Delta upsert sinks and append sinks); ALTER SINK %s ADD COLUMN %s <type> first",
				ErrNotSupported, name, h.rec.Name, sqlquote.MySQLIdent(h.rec.Name), sqlquote.MySQLIdent(name))
		}
		t, err := inferColumn(ins, j)
		if err != nil {
			return nil, unknownColumn(h, name, err)
		}
		out = append(out, arrow.Field{Name: name, Type: t, Nullable: true})
	}
	return out, nil
}

// evolvingInsert returns query parsed when it is an INSERT or REPLACE
// with a column list (the last one parsed is kept: go-mysql-server asks
// for the sink more than once per statement), or nil.
func (s *Session) evolvingInsert(query string) *ast.Insert {
	w, _ := sqlword.Leading(query, 0)
	if !sqlword.Is(w, "INSERT") && !sqlword.Is(w, "REPLACE") {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.evolveParse.query == query {
		return s.evolveParse.ins
	}
	st, err := gms.GlobalParser.ParseSimple(query)
	ins, ok := st.(*ast.Insert)
	if err != nil || !ok || len(ins.Columns) == 0 {
		ins = nil
	}
	s.evolveParse.query, s.evolveParse.ins = query, ins
	return ins
}

// unknownColumn is the refusal of a new column whose type cannot be
// inferred: the column stays unknown, as without the option (1054).
func unknownColumn(h *sinkHandle, col string, why error) error {
	return mysql.NewSQLError(mysql.ERBadFieldError, "42S22",
		"Unknown column '%s' in 'sink %s': schema_evolution = 'add_columns' cannot add it: %v; ALTER SINK %s ADD COLUMN %s <type> first",
		col, h.rec.Name, why, sqlquote.MySQLIdent(h.rec.Name), sqlquote.MySQLIdent(col))
}

// literalKind is the MySQL type of a literal, widest last among numbers.
type literalKind int

const (
	litNull literalKind = iota
	litBool
	litInt
	litDecimal
	litDouble
	litString
)

// literalType is a literal's type: its kind, and for an integer or a
// decimal its digits before and after the point.
type literalType struct {
	kind          literalKind
	digits, scale int
}

// inferColumn returns the type of the insert's column j from its values
// in every row: MySQL's types of the literals, the wider one where rows
// differ (an integer and a decimal give a decimal that holds both, any
// number and a double give a double).
func inferColumn(ins *ast.Insert, j int) (arrow.DataType, error) {
	values, ok := ins.Rows.(*ast.AliasedValues)
	if !ok {
		return nil, fmt.Errorf("%w: its type is inferred from VALUES literals only, not from INSERT ... SELECT", ErrNotSupported)
	}
	var acc literalType
	for r, tuple := range values.Values {
		if j >= len(tuple) {
			continue // the column count error is go-mysql-server's
		}
		lt, err := literalOf(tuple[j])
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", r+1, err)
		}
		if acc, err = widerLiteral(acc, lt); err != nil {
			return nil, fmt.Errorf("row %d: %w", r+1, err)
		}
	}
	switch acc.kind {
	case litNull:
		return nil, fmt.Errorf("its values are all NULL, which give it no type")
	case litBool:
		return arrow.FixedWidthTypes.Boolean, nil
	case litInt:
		return arrow.PrimitiveTypes.Int64, nil
	case litDouble:
		return arrow.PrimitiveTypes.Float64, nil
	case litString:
		return arrow.BinaryTypes.String, nil
	}
	p := acc.digits + acc.scale
	if p > sinkddl.MaxDecimalPrecision || acc.scale > sinkddl.MaxDecimalScale {
		return nil, fmt.Errorf("its values need DECIMAL(%d,%d), beyond DECIMAL(%d,%d)", p, acc.scale, sinkddl.MaxDecimalPrecision, sinkddl.MaxDecimalScale)
	}
	return &arrow.Decimal128Type{Precision: int32(p), Scale: int32(acc.scale)}, nil
}

// literalOf returns the type of a VALUES expression that is a literal.
func literalOf(e ast.Expr) (literalType, error) {
	switch v := e.(type) {
	case *ast.NullVal:
		return literalType{kind: litNull}, nil
	case ast.BoolVal:
		return literalType{kind: litBool}, nil
	case *ast.UnaryExpr:
		if n, ok := v.Expr.(*ast.SQLVal); ok && (n.Type == ast.IntVal || n.Type == ast.FloatVal) &&
			(v.Operator == ast.UMinusStr || v.Operator == ast.UPlusStr) {
			return literalOf(n)
		}
	case *ast.SQLVal:
		text := strings.TrimLeft(string(v.Val), "+-")
		switch v.Type {
		case ast.StrVal:
			return literalType{kind: litString}, nil
		case ast.IntVal:
			digits := len(strings.TrimLeft(text, "0"))
			if n, ok := new(big.Int).SetString(string(v.Val), 10); ok && !n.IsInt64() {
				return literalType{kind: litDecimal, digits: digits}, nil // MySQL: beyond BIGINT, a DECIMAL
			}
			return literalType{kind: litInt, digits: max(digits, 1)}, nil
		case ast.FloatVal:
			if strings.ContainsAny(text, "eE") {
				return literalType{kind: litDouble}, nil
			}
			whole, frac, _ := strings.Cut(text, ".")
			return literalType{kind: litDecimal, digits: max(len(strings.TrimLeft(whole, "0")), 1), scale: len(frac)}, nil
		case ast.ValArg:
			return literalType{}, fmt.Errorf("a placeholder (?) gives it no type")
		}
	}
	return literalType{}, fmt.Errorf("%s is not a literal its type can be inferred from", ast.String(e))
}

// widerLiteral merges the types of two values of one column.
func widerLiteral(a, b literalType) (literalType, error) {
	switch {
	case a.kind == litNull:
		return b, nil
	case b.kind == litNull:
		return a, nil
	}
	numeric := func(k literalKind) bool { return k == litInt || k == litDecimal || k == litDouble }
	if a.kind != b.kind && !(numeric(a.kind) && numeric(b.kind)) {
		return literalType{}, fmt.Errorf("its values mix %s and %s", a.kind, b.kind)
	}
	return literalType{kind: max(a.kind, b.kind), digits: max(a.digits, b.digits), scale: max(a.scale, b.scale)}, nil
}

func (k literalKind) String() string {
	return [...]string{"NULL", "a boolean", "an integer", "a decimal", "a double", "a string"}[k]
}

// sqlTypeOf spells the type of an inferred column as CREATE SINK does.
func sqlTypeOf(t arrow.DataType) string {
	switch t := t.(type) {
	case *arrow.BooleanType:
		return "BOOLEAN"
	case *arrow.Int64Type:
		return "BIGINT"
	case *arrow.Float64Type:
		return "DOUBLE"
	case *arrow.Decimal128Type:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale)
	}
	return "LONGTEXT"
}

// evolvedColumns are a sink's pending columns as ADD COLUMN changes of its
// definition.
func evolvedColumns(pending []arrow.Field) []sinkddl.ColumnChange {
	out := make([]sinkddl.ColumnChange, len(pending))
	for i, f := range pending {
		out[i] = sinkddl.ColumnChange{Kind: sinkddl.ColumnAdd, Column: f.Name, SQLType: sqlTypeOf(f.Type), Type: f.Type}
	}
	return out
}

// markEvolving records in the registry, before the commit that adds the
// columns adds, the definition it leads to (markPending): a crash between
// the commit and adoptEvolved leaves it pending, and the next start takes
// it when the table has the columns.
func (e *Engine) markEvolving(h *sinkHandle, adds []sinkddl.ColumnChange) error {
	if len(adds) == 0 {
		return nil
	}
	h.openMu.Lock()
	next := sinkdef.WithColumns(h.def, adds, nil)
	h.openMu.Unlock()
	return e.markPending(h, next)
}

// adoptEvolved makes the sink's definition take the columns its last
// commit added: the registry records them (as ALTER SINK ADD COLUMN
// would), and go-mysql-server's schema is built again. The open sink has
// taken the table's new schema already.
func (e *Engine) adoptEvolved(ctx context.Context, h *sinkHandle, adds []sinkddl.ColumnChange) error {
	sink, err := h.open(ctx)
	if err != nil {
		return err
	}
	h.openMu.Lock()
	next := sinkdef.WithColumns(h.def, adds, sink.Schema())
	h.def, h.spec = next, e.backends.Define(next, h.rec.Path)
	h.gschema, h.rules, h.values = nil, nil, nil
	h.openMu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	h.rec.Statement, h.rec.Pending = next.String(), ""
	h.rec.Columns = storedColumns(sink.Schema())
	return e.saveLocked()
}
