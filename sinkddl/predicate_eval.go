package sinkddl

// Evaluating a WHERE predicate over one partition's values, with SQL's
// three-valued logic: a comparison with NULL is unknown, and only a true
// predicate keeps the partition.

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"
)

// ErrPredicate marks a predicate that cannot be evaluated over a
// partition: a column it names is not among the values, or a literal
// cannot be compared with the column's type.
var ErrPredicate = errors.New("cannot evaluate the predicate")

// truth is a value of SQL's three-valued logic.
type truth int8

const (
	unknown truth = iota
	isFalse
	isTrue
)

func truthOf(b bool) truth {
	if b {
		return isTrue
	}
	return isFalse
}

func (t truth) not() truth {
	switch t {
	case isTrue:
		return isFalse
	case isFalse:
		return isTrue
	}
	return unknown
}

// Eval reports whether the predicate is true for a partition whose values
// are given by column (nil for null). Values are those the table's
// backend reports: int8 to int64 (and unsigned), float32, float64, string
// (also a Delta decimal's digits), bool, []byte, time.Time (a date is its
// midnight UTC). Column names match case-insensitively when no exact key
// exists. Unknown is false: the partition is not kept.
func (p *Predicate) Eval(values map[string]any) (bool, error) {
	t, err := p.eval(values)
	return t == isTrue, err
}

func (p *Predicate) eval(values map[string]any) (truth, error) {
	switch p.Kind {
	case PredAnd, PredOr:
		l, err := p.Left.eval(values)
		if err != nil {
			return unknown, err
		}
		r, err := p.Right.eval(values)
		if err != nil {
			return unknown, err
		}
		if p.Kind == PredAnd {
			return and3(l, r), nil
		}
		return and3(l.not(), r.not()).not(), nil
	case PredNot:
		t, err := p.Left.eval(values)
		return t.not(), err
	}
	v, err := lookupValue(values, p.Column)
	if err != nil {
		return unknown, err
	}
	var t truth
	switch p.Kind {
	case PredIsNull:
		t = truthOf(v == nil)
	case PredCompare:
		t, err = compareTruth(v, p.Op, p.Values[0], p.Column)
	case PredIn:
		t = isFalse
		for _, lit := range p.Values {
			eq, err := compareTruth(v, "=", lit, p.Column)
			if err != nil {
				return unknown, err
			}
			if eq == isTrue {
				t = isTrue
				break
			}
			if eq == unknown {
				t = unknown
			}
		}
	case PredBetween:
		lo, err := compareTruth(v, ">=", p.Values[0], p.Column)
		if err != nil {
			return unknown, err
		}
		hi, err := compareTruth(v, "<=", p.Values[1], p.Column)
		if err != nil {
			return unknown, err
		}
		t = and3(lo, hi)
	}
	if err != nil {
		return unknown, err
	}
	if p.Negated {
		t = t.not()
	}
	return t, nil
}

// and3 is AND in three-valued logic (OR is NOT (NOT l AND NOT r)).
func and3(l, r truth) truth {
	switch {
	case l == isFalse || r == isFalse:
		return isFalse
	case l == isTrue && r == isTrue:
		return isTrue
	}
	return unknown
}

func lookupValue(values map[string]any, col string) (any, error) {
	if v, ok := values[col]; ok {
		return v, nil
	}
	for k, v := range values {
		if strings.EqualFold(k, col) {
			return v, nil
		}
	}
	return nil, fmt.Errorf("%w: column %s is not a partition column", ErrPredicate, col)
}

// compareTruth compares a partition value with a literal.
func compareTruth(v any, op string, lit Literal, col string) (truth, error) {
	if v == nil {
		return unknown, nil
	}
	c, err := compareValue(v, lit)
	if err != nil {
		return unknown, fmt.Errorf("%w: column %s: %w", ErrPredicate, col, err)
	}
	switch op {
	case "=":
		return truthOf(c == 0), nil
	case "<>":
		return truthOf(c != 0), nil
	case "<":
		return truthOf(c < 0), nil
	case "<=":
		return truthOf(c <= 0), nil
	case ">":
		return truthOf(c > 0), nil
	case ">=":
		return truthOf(c >= 0), nil
	}
	return unknown, fmt.Errorf("%w: operator %s", ErrPredicate, op)
}

// compareValue returns -1, 0 or 1 as v is below, equal to or above lit.
func compareValue(v any, lit Literal) (int, error) {
	switch x := v.(type) {
	case int8:
		return compareRat(new(big.Rat).SetInt64(int64(x)), lit)
	case int16:
		return compareRat(new(big.Rat).SetInt64(int64(x)), lit)
	case int32:
		return compareRat(new(big.Rat).SetInt64(int64(x)), lit)
	case int64:
		return compareRat(new(big.Rat).SetInt64(x), lit)
	case int:
		return compareRat(new(big.Rat).SetInt64(int64(x)), lit)
	case uint8:
		return compareRat(new(big.Rat).SetUint64(uint64(x)), lit)
	case uint16:
		return compareRat(new(big.Rat).SetUint64(uint64(x)), lit)
	case uint32:
		return compareRat(new(big.Rat).SetUint64(uint64(x)), lit)
	case uint64:
		return compareRat(new(big.Rat).SetUint64(x), lit)
	case float32:
		// The literal as a float32, as the column stores it: 1.1 equals
		// the float32 nearest 1.1.
		f, err := literalFloat(lit)
		if err != nil {
			return 0, err
		}
		return compareFloat(float64(x), float64(float32(f))), nil
	case float64:
		f, err := literalFloat(lit)
		if err != nil {
			return 0, err
		}
		return compareFloat(x, f), nil
	case bool:
		n := int64(0)
		if x {
			n = 1
		}
		return compareRat(new(big.Rat).SetInt64(n), lit)
	case string:
		if lit.Kind == LitString {
			return strings.Compare(x, lit.Text), nil
		}
		if lit.Kind == LitDate || lit.Kind == LitTimestamp {
			return 0, fmt.Errorf("a text value cannot be compared with %s", lit)
		}
		// A number: the text is a decimal's digits (Delta decimals).
		r, ok := new(big.Rat).SetString(x)
		if !ok {
			return 0, fmt.Errorf("the value %q is not a number to compare with %s", x, lit)
		}
		return compareRat(r, lit)
	case []byte:
		if lit.Kind != LitString {
			return 0, fmt.Errorf("a binary value can only be compared with a quoted string, not %s", lit)
		}
		return strings.Compare(string(x), lit.Text), nil
	case time.Time:
		t, err := literalTime(lit)
		if err != nil {
			return 0, err
		}
		return x.Compare(t), nil
	}
	return 0, fmt.Errorf("a partition value of type %T cannot be compared", v)
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// literalRat is a number literal's exact value; a quoted string is read as
// a number too, as MySQL reads '5' compared with a number.
func literalRat(lit Literal) (*big.Rat, error) {
	switch lit.Kind {
	case LitInteger, LitDecimal, LitString:
		if r, ok := new(big.Rat).SetString(strings.TrimSpace(lit.Text)); ok {
			return r, nil
		}
	case LitBoolean:
		if lit.Text == "TRUE" {
			return big.NewRat(1, 1), nil
		}
		return new(big.Rat), nil
	}
	return nil, fmt.Errorf("a number cannot be compared with %s", lit)
}

func compareRat(v *big.Rat, lit Literal) (int, error) {
	r, err := literalRat(lit)
	if err != nil {
		return 0, err
	}
	return v.Cmp(r), nil
}

func literalFloat(lit Literal) (float64, error) {
	r, err := literalRat(lit)
	if err != nil {
		return 0, err
	}
	f, _ := r.Float64()
	return f, nil
}

// literalTime reads a DATE or TIMESTAMP literal, or a quoted string in
// either layout, as UTC.
func literalTime(lit Literal) (time.Time, error) {
	switch lit.Kind {
	case LitDate, LitTimestamp, LitString:
		for _, layout := range []string{timestampLayout, dateLayout} {
			if t, err := time.Parse(layout, lit.Text); err == nil {
				return t, nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("a date or time cannot be compared with %s", lit)
}
