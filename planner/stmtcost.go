package planner

// Bounds on what a statement may cost go-mysql-server to analyse. Its
// analyzer is superlinear in the depth of an expression (each arithmetic
// node works its type out from its whole subtree, over and over: 1,000
// terms of 1+1+… take 0.9 s, 10,000 a minute, 100,000 hours; a chain of
// %'s is worse still) and exponential in the nesting of subqueries (ten
// levels take 0.9 s, fourteen 7 s), and its work is never interrupted. The
// parsed statement is measured before it is planned, and refused beyond
// these bounds, which sit where the measured cost is still about a second
// (see the README's Security section for the curve).

import (
	"errors"
	"fmt"
	"reflect"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

const (
	// MaxExpressionDepth bounds how deep expressions nest (operators,
	// functions, CASE, lists): a chain of 1,000 ORs or NOTs analyses in
	// about 0.03 s.
	MaxExpressionDepth = 1000
	// MaxArithmeticDepth bounds the arithmetic and bit operators on one
	// path from the top of an expression to a value: 64 %'s in a chain
	// analyse in about 0.13 s, 64 +'s in 0.015 s.
	MaxArithmeticDepth = 64
	// MaxArithmeticNesting bounds the sum, over a statement's arithmetic
	// and bit operators, of the operators above each in its expression
	// (eight times that for %, whose analysis costs that much more): many
	// chains within MaxArithmeticDepth add up.
	MaxArithmeticNesting = 250_000
	// MaxSelectNesting bounds how deep subqueries in expressions nest
	// (scalar, IN, EXISTS; derived tables in FROM are not counted).
	MaxSelectNesting = 10
	// MaxSubqueryWeight bounds the sum, over a statement's subqueries, of
	// 2 to the power of each one's nesting level (1 for a subquery of the
	// top SELECT): the analysis of a chain doubles with each level, and
	// many chains add up. One chain MaxSelectNesting deep weighs 2,046.
	MaxSubqueryWeight = 4096
	// MaxStatementNodes bounds the nodes of a parsed statement (every
	// value, operator, list and clause): a 100,000-row INSERT ... VALUES
	// of up to 8 columns is within it.
	MaxStatementNodes = 1_000_000
)

// MySQL's codes for a statement too costly to analyse, which vitess does
// not name.
const (
	erStackOverrun      = 1436 // ER_STACK_OVERRUN_NEED_MORE
	erTooHighNestSelect = 1473 // ER_TOO_HIGH_LEVEL_OF_NESTING_FOR_SELECT
)

// ErrTooComplex marks a statement refused before analysis for its size or
// the depth of its expressions: MySQL's 1436, the code MySQL gives a
// statement whose expressions nest deeper than its stack allows.
var ErrTooComplex = errors.New("statement too complex to analyse")

// ErrSelectNesting marks a statement whose subqueries nest too deep:
// MySQL's 1473.
var ErrSelectNesting = errors.New("Too high level of nesting for select")

// CheckCost refuses a parsed statement beyond the bounds above (an error
// wrapping ErrTooComplex or ErrSelectNesting). It stops
// at the first bound crossed, so its own work (and recursion) is bounded
// by them too.
func CheckCost(st ast.Statement) error {
	w := &costWalk{}
	return w.enter(st, costPos{})
}

type costWalk struct {
	nodes      int
	arith      int // the running sum MaxArithmeticNesting bounds
	subqueries int // the running sum MaxSubqueryWeight bounds
}

// costPos is where a node sits: the expressions, arithmetic operators and
// subqueries above it, itself included; table says its parent is a table
// expression (a subquery there is a derived table).
type costPos struct {
	exprs, arith, selects int
	table                 bool
}

func (w *costWalk) enter(n ast.SQLNode, pos costPos) error {
	w.nodes++
	if w.nodes > MaxStatementNodes {
		return fmt.Errorf("%w: it has more than %d nodes (values, operators, lists, clauses)", ErrTooComplex, MaxStatementNodes)
	}
	if _, ok := n.(ast.Expr); ok {
		pos.exprs++
		if pos.exprs > MaxExpressionDepth {
			return fmt.Errorf("%w: its expressions nest more than %d levels deep", ErrTooComplex, MaxExpressionDepth)
		}
	}
	switch n := n.(type) {
	case *ast.BinaryExpr:
		pos.arith++
		if pos.arith > MaxArithmeticDepth {
			return fmt.Errorf("%w: more than %d arithmetic or bit operators nest within one another", ErrTooComplex, MaxArithmeticDepth)
		}
		weight := 1
		if n.Operator == ast.ModStr {
			weight = 8
		}
		w.arith += (pos.arith - 1) * weight
		if w.arith > MaxArithmeticNesting {
			return fmt.Errorf("%w: its arithmetic operators nest more than %d deep in all (the operators above each, summed)", ErrTooComplex, MaxArithmeticNesting)
		}
	case *ast.Subquery:
		if pos.table {
			// A derived table: go-mysql-server analyses nested ones
			// in linear time (50 deep take milliseconds).
			break
		}
		pos.selects++
		if pos.selects > MaxSelectNesting {
			return fmt.Errorf("%w: subqueries nest more than %d levels deep", ErrSelectNesting, MaxSelectNesting)
		}
		w.subqueries += 1 << pos.selects
		if w.subqueries > MaxSubqueryWeight {
			return fmt.Errorf("%w: its subqueries weigh more than %d in all (each 2 to the power of its nesting level)", ErrSelectNesting, MaxSubqueryWeight)
		}
	}
	_, pos.table = n.(*ast.AliasedTableExpr)
	if _, ok := n.(ast.WalkableSQLNode); !ok {
		return w.enterFields(n, pos)
	}
	// Walk calls the visitor on n itself first, then on each child: the
	// children are entered one level down.
	self := true
	return ast.Walk(func(c ast.SQLNode) (bool, error) {
		if self {
			self = false
			return true, nil
		}
		return false, w.enter(c, pos)
	}, n)
}

var sqlNodeType = reflect.TypeFor[ast.SQLNode]()

// enterFields enters the children of a node vitess cannot walk (EXPLAIN's
// statement, CALL's arguments, ...): its fields that hold nodes, or
// slices of them.
func (w *costWalk) enterFields(n ast.SQLNode, pos costPos) error {
	v := reflect.ValueOf(n)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	for i := range v.NumField() {
		if err := w.enterValue(v.Field(i), pos); err != nil {
			return err
		}
	}
	return nil
}

func (w *costWalk) enterValue(f reflect.Value, pos costPos) error {
	switch {
	case !f.CanInterface():
		return nil
	case f.Kind() == reflect.Slice && f.Type().Elem().Implements(sqlNodeType):
		for j := range f.Len() {
			if err := w.enterValue(f.Index(j), pos); err != nil {
				return err
			}
		}
	case f.Type().Implements(sqlNodeType):
		if (f.Kind() == reflect.Pointer || f.Kind() == reflect.Interface) && f.IsNil() {
			return nil
		}
		if c, ok := f.Interface().(ast.SQLNode); ok {
			return w.enter(c, pos)
		}
	}
	return nil
}
