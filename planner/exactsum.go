package planner

// SUM and AVG of exact values (integers and DECIMAL) are an exact DECIMAL,
// as in MySQL: go-mysql-server sums them in float64 (9007199254740993 came
// back as 9.007199254740992e+15) and its planbuilder types every SUM and AVG
// DOUBLE. The provider's Function gives go-mysql-server exactAggregate in
// place of its SUM and AVG of an exact argument (for GROUP BY and OVER),
// and the analyzer rule retypeExactAggregates gives the columns that read
// one its DECIMAL type. The result types are MySQL's and MariaDB's
// (Item_sum_sum, Item_sum_avg): SUM is DECIMAL(p+22, s), AVG
// DECIMAL(p+4, s+4), p and s the argument's digits (19 for BIGINT, 20 for
// BIGINT UNSIGNED, ...), the precision at most 65 and the scale 30. SUM and
// AVG of anything else (FLOAT, DOUBLE, strings, dates) stay DOUBLE.

import (
	"fmt"
	"math/big"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"
)

// MySQL's DECIMAL_LONGLONG_DIGITS (the digits SUM adds) and
// div_precision_increment's default (the digits AVG adds).
const (
	sumDigits = 22
	avgDigits = 4
)

// exactResult gives the DECIMAL type of SUM (avg false) or AVG of an
// argument of type t; ok is false when t is not exact.
func exactResult(t gms.Type, avg bool) (gms.DecimalType, bool) {
	var p, s int
	switch t.Type() {
	case sqltypes.Int8, sqltypes.Uint8:
		p = 3
	case sqltypes.Int16, sqltypes.Uint16:
		p = 5
	case sqltypes.Int24, sqltypes.Uint24:
		p = 8
	case sqltypes.Int32, sqltypes.Uint32:
		p = 10
	case sqltypes.Int64:
		p = 19
	case sqltypes.Uint64:
		p = 20
	case sqltypes.Decimal:
		dt, ok := t.(gms.DecimalType)
		if !ok {
			return nil, false
		}
		p, s = int(dt.Precision()), int(dt.Scale())
	default:
		return nil, false
	}
	if avg {
		p, s = p+avgDigits, min(s+avgDigits, types.DecimalTypeMaxScale)
	} else {
		p += sumDigits
	}
	// A column type: its values are written with exactly s fraction digits.
	dt, err := types.CreateColumnDecimalType(uint8(min(p, types.DecimalTypeMaxPrecision)), uint8(s))
	return dt, err == nil
}

// exactFunction gives the provider's SUM or AVG: exactAggregate for an
// exact argument, go-mysql-server's own otherwise.
func exactFunction(name string) gms.Function {
	avg := name == "avg"
	return gms.Function1{Name: name, Fn: func(arg gms.Expression) gms.Expression {
		var agg gms.Aggregation = aggregation.NewSum(arg)
		if avg {
			agg = aggregation.NewAvg(arg)
		}
		if t, ok := exactResult(arg.Type(), avg); ok {
			return &exactAggregate{Aggregation: agg, avg: avg, typ: t}
		}
		return agg
	}}
}

// exactAggregate is SUM or AVG of an exact argument: go-mysql-server's
// aggregate (its name, argument, window and column id), with an exact
// DECIMAL result.
type exactAggregate struct {
	gms.Aggregation
	avg bool
	typ gms.DecimalType
}

var _ gms.Aggregation = (*exactAggregate)(nil)

// Type is the DECIMAL of exactResult.
func (a *exactAggregate) Type() gms.Type { return a.typ }

// IsNullable: the SUM or AVG of no rows, or of NULLs only, is NULL.
func (a *exactAggregate) IsNullable() bool { return true }

func (a *exactAggregate) wrap(e gms.Expression) *exactAggregate {
	return &exactAggregate{Aggregation: e.(gms.Aggregation), avg: a.avg, typ: a.typ}
}

// WithChildren implements gms.Expression.
func (a *exactAggregate) WithChildren(children ...gms.Expression) (gms.Expression, error) {
	e, err := a.Aggregation.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return a.wrap(e), nil
}

// WithId implements gms.IdExpression.
func (a *exactAggregate) WithId(id gms.ColumnId) gms.IdExpression {
	return a.wrap(a.Aggregation.WithId(id))
}

// WithWindow implements gms.WindowAdaptableExpression.
func (a *exactAggregate) WithWindow(w *gms.WindowDefinition) gms.WindowAdaptableExpression {
	return a.wrap(a.Aggregation.WithWindow(w))
}

func (a *exactAggregate) child() (gms.Expression, error) {
	return transform.Clone(a.Aggregation.Children()[0])
}

// NewBuffer implements gms.Aggregation.
func (a *exactAggregate) NewBuffer() (gms.AggregationBuffer, error) {
	child, err := a.child()
	if err != nil {
		return nil, err
	}
	return &exactBuffer{expr: child, avg: a.avg, scale: int32(a.typ.Scale())}, nil
}

// NewWindowFunction implements gms.WindowAdaptableExpression.
func (a *exactAggregate) NewWindowFunction() (gms.WindowFunction, error) {
	child, err := a.child()
	if err != nil {
		return nil, err
	}
	f := &exactWindow{expr: child, avg: a.avg, scale: int32(a.typ.Scale())}
	if w := a.Window(); w != nil && w.Frame != nil {
		if f.framer, err = w.Frame.NewFramer(w); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// exactValue is a non-NULL argument value as a decimal.
func exactValue(v any) (decimal.Decimal, error) {
	switch v := v.(type) {
	case decimal.Decimal:
		return v, nil
	case int64:
		return decimal.NewFromInt(v), nil
	case uint64:
		return decimal.NewFromBigInt(new(big.Int).SetUint64(v), 0), nil
	}
	// Other integers, and DECIMAL literals, which evaluate to their text.
	d, err := types.InternalDecimalType.ConvertNoBoundsCheck(v)
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("SUM or AVG of %v: %w", v, err)
	}
	return d, nil
}

// exactBuffer sums one group: in an int64 while integers fit, in a
// decimal beyond and for DECIMAL values.
type exactBuffer struct {
	expr  gms.Expression
	avg   bool
	scale int32 // AVG's
	n     int64 // non-NULL values
	small int64
	big   decimal.Decimal
}

// Update implements gms.AggregationBuffer.
func (b *exactBuffer) Update(ctx *gms.Context, row gms.Row) error {
	v, err := b.expr.Eval(ctx, row)
	if err != nil || v == nil {
		return err
	}
	b.n++
	var x int64
	switch v := v.(type) {
	case int64:
		x = v
	case int32:
		x = int64(v)
	case int8:
		x = int64(v)
	case int16:
		x = int64(v)
	case uint8:
		x = int64(v)
	case uint16:
		x = int64(v)
	case uint32:
		x = int64(v)
	default:
		d, err := exactValue(v)
		if err != nil {
			return err
		}
		b.big = b.big.Add(d)
		return nil
	}
	s := b.small + x
	if (x > 0 && s < b.small) || (x < 0 && s > b.small) {
		// int64 overflows: carry the sum so far into the decimal.
		b.big = b.big.Add(decimal.NewFromInt(b.small))
		s = x
	}
	b.small = s
	return nil
}

// Eval implements gms.AggregationBuffer.
func (b *exactBuffer) Eval(*gms.Context) (any, error) {
	if b.n == 0 {
		return nil, nil
	}
	sum := b.big.Add(decimal.NewFromInt(b.small))
	if b.avg {
		return sum.DivRound(decimal.NewFromInt(b.n), b.scale), nil
	}
	return sum, nil
}

// Dispose implements gms.Disposable (a DISTINCT argument's seen values).
func (b *exactBuffer) Dispose() { expression.Dispose(b.expr) }

// exactWindow is SUM or AVG OVER a window: prefix sums over the partition,
// so that each frame's is one subtraction.
type exactWindow struct {
	expr   gms.Expression
	avg    bool
	scale  int32
	framer gms.WindowFramer
	start  int               // the partition's first row in the buffer
	sums   []decimal.Decimal // sums[i]: of the partition's first i rows
	counts []int64           // counts[i]: their non-NULL values
}

var _ gms.WindowFunction = (*exactWindow)(nil)

// Dispose implements gms.Disposable.
func (w *exactWindow) Dispose() { expression.Dispose(w.expr) }

// DefaultFramer implements gms.WindowFunction: MySQL's default frame,
// from the partition's start to the current row.
func (w *exactWindow) DefaultFramer() gms.WindowFramer {
	if w.framer != nil {
		return w.framer
	}
	return aggregation.NewUnboundedPrecedingToCurrentRowFramer()
}

// StartPartition implements gms.WindowFunction.
func (w *exactWindow) StartPartition(ctx *gms.Context, in gms.WindowInterval, buf gms.WindowBuffer) error {
	w.Dispose()
	n := in.End - in.Start
	w.start = in.Start
	w.sums = make([]decimal.Decimal, n+1)
	w.counts = make([]int64, n+1)
	for i := 0; i < n; i++ {
		w.sums[i+1], w.counts[i+1] = w.sums[i], w.counts[i]
		v, err := w.expr.Eval(ctx, buf[in.Start+i])
		if err != nil {
			return err
		}
		if v == nil {
			continue
		}
		d, err := exactValue(v)
		if err != nil {
			return err
		}
		w.sums[i+1] = w.sums[i].Add(d)
		w.counts[i+1]++
	}
	return nil
}

// NewSlidingFrameInterval implements gms.WindowFunction; go-mysql-server
// never calls it.
func (w *exactWindow) NewSlidingFrameInterval(_, _ gms.WindowInterval) {}

// Compute implements gms.WindowFunction: the frame's sum or average, NULL
// for a frame without a value.
func (w *exactWindow) Compute(_ *gms.Context, in gms.WindowInterval, _ gms.WindowBuffer) any {
	i, j := in.Start-w.start, in.End-w.start
	if i < 0 || j >= len(w.sums) || i >= j {
		return nil
	}
	n := w.counts[j] - w.counts[i]
	if n == 0 {
		return nil
	}
	sum := w.sums[j].Sub(w.sums[i])
	if w.avg {
		return sum.DivRound(decimal.NewFromInt(n), w.scale)
	}
	return sum
}

// retypeExactAggregates is an analyzer rule: go-mysql-server's planbuilder
// types the columns that read a SUM or AVG DOUBLE (the projection above a
// GROUP BY, HAVING, ORDER BY), whatever the aggregate's type; those that
// read an exactAggregate get its DECIMAL.
func retypeExactAggregates(_ *gms.Context, _ *analyzer.Analyzer, n gms.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gms.QueryFlags) (gms.Node, transform.TreeIdentity, error) {
	ids := map[gms.ColumnId]gms.Type{}
	transform.InspectExpressions(n, func(e gms.Expression) bool {
		if a, ok := e.(*exactAggregate); ok && a.Id() != 0 {
			ids[a.Id()] = a.typ
		}
		return true
	})
	if len(ids) == 0 {
		return n, transform.SameTree, nil
	}
	return transform.NodeExprs(n, func(e gms.Expression) (gms.Expression, transform.TreeIdentity, error) {
		gf, ok := e.(*expression.GetField)
		if !ok {
			return e, transform.SameTree, nil
		}
		t, ok := ids[gf.Id()]
		if !ok || gf.Type() == t {
			return e, transform.SameTree, nil
		}
		retyped := expression.NewGetFieldWithTable(gf.Index(), int(gf.TableId()), t, gf.Database(), gf.Table(), gf.Name(), true)
		return retyped.WithId(gf.Id()).(*expression.GetField), transform.NewTree, nil
	})
}

// retypeExactAggregatesID names the rule in the analyzer's logs.
const retypeExactAggregatesID analyzer.RuleId = -1

// exactAggregatesAnalysis runs retypeExactAggregates first, before any
// rule reads a column's type.
func exactAggregatesAnalysis(a *analyzer.Analyzer) {
	for _, b := range a.Batches {
		if b.Desc == "once-before" {
			b.Rules = append([]analyzer.Rule{{Id: retypeExactAggregatesID, Apply: retypeExactAggregates}}, b.Rules...)
			return
		}
	}
	panic("go-mysql-server's analyzer has no once-before batch")
}
