package planner

// Values checked as the statement gave them, before go-mysql-server
// converts them to a column's type. Its conversions lose data at the
// edges without an error: a string or a DOUBLE beyond int64 wraps to
// -2^63, an UPDATE clamps a value out of range to the type's end, ''
// becomes 0, '0000-00-00' becomes year 0, and NaN or an infinity passes
// into a DOUBLE. MySQL's strict mode refuses each of these, and so does
// lakesql, here: from the value itself (a literal, a string, a parameter,
// an expression's result) and the column's declared type, whatever
// go-mysql-server type the schema shows.

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"

	"github.com/lakesql/lakesql/internal/intconv"
)

// ErrIncorrectValue marks a value that is not one of its column's type at
// all, such as 'abc', ” or NaN for a number (MySQL's 1366).
var ErrIncorrectValue = errors.New("incorrect value")

// ErrIncorrectDate marks a date MySQL's strict mode refuses, such as the
// zero date '0000-00-00' (MySQL's 1292 with NO_ZERO_DATE).
var ErrIncorrectDate = errors.New("incorrect date value")

// valueKind is which check a column's values get.
type valueKind uint8

const (
	uncheckedValue valueKind = iota // go-mysql-server's conversion is exact
	integerValue
	floatValue // FLOAT: float32
	doubleValue
	decimalValue
	dateValue // DATE, DATETIME, TIMESTAMP
)

// valueRule is what a column accepts before conversion.
type valueRule struct {
	kind     valueKind
	min, max int64 // integerValue: the declared type's range
	typeName string
}

// valueRuleFor returns the rule of a column from its Arrow type and its
// declared type (empty for a sink attached without columns).
func valueRuleFor(t arrow.DataType, declared string) valueRule {
	if r, ok := integerRanges[declared]; ok {
		return valueRule{kind: integerValue, min: r[0], max: r[1], typeName: declared}
	}
	switch t.(type) {
	case *arrow.BooleanType:
		return valueRule{kind: integerValue, min: 0, max: 1, typeName: "BOOLEAN"}
	case *arrow.Int8Type:
		return valueRule{kind: integerValue, min: math.MinInt8, max: math.MaxInt8, typeName: "TINYINT"}
	case *arrow.Int16Type:
		return valueRule{kind: integerValue, min: math.MinInt16, max: math.MaxInt16, typeName: "SMALLINT"}
	case *arrow.Int32Type:
		return valueRule{kind: integerValue, min: math.MinInt32, max: math.MaxInt32, typeName: "INT"}
	case *arrow.Int64Type:
		return valueRule{kind: integerValue, min: math.MinInt64, max: math.MaxInt64, typeName: "BIGINT"}
	case *arrow.Float32Type:
		return valueRule{kind: floatValue, typeName: "FLOAT"}
	case *arrow.Float64Type:
		return valueRule{kind: doubleValue, typeName: "DOUBLE"}
	case *arrow.Decimal128Type:
		return valueRule{kind: decimalValue, typeName: "DECIMAL"}
	case *arrow.Date32Type:
		return valueRule{kind: dateValue, typeName: "DATE"}
	case *arrow.TimestampType:
		return valueRule{kind: dateValue, typeName: "DATETIME"}
	}
	return valueRule{}
}

// maxIntDigits bounds the decimal exponent of a value that may still fit
// 64 bits (2^64 has 20 digits), so that a string such as '1e999999999' is
// refused without computing it.
const maxIntDigits = 20

// check returns an error naming the column and the row (1-based, within
// the statement) when v, as the statement gave it, is not a value of the
// column; nil when go-mysql-server may convert it.
func (r valueRule) check(ctx *gms.Context, v any, column string, row int) error {
	if v == nil || r.kind == uncheckedValue {
		return nil
	}
	switch r.kind {
	case integerValue:
		return r.checkInteger(v, column, row)
	case floatValue, doubleValue:
		return r.checkFloat(v, column, row)
	case decimalValue:
		return r.checkDecimal(v, column, row)
	case dateValue:
		return r.checkDate(ctx, v, column, row)
	}
	return nil
}

// normal returns a value check accepted in the form go-mysql-server
// converts right: an integer column's float or decimal as its integer,
// rounded half away from zero as MySQL rounds it. go-mysql-server's own
// conversion of a float to an unsigned type refuses valid values at the
// ends (255.0 and 0.0 into TINYINT UNSIGNED).
func (r valueRule) normal(v any) any {
	if r.kind != integerValue {
		return v
	}
	switch x := v.(type) {
	case float32:
		return int64(math.Round(float64(x)))
	case float64:
		return int64(math.Round(x))
	case decimal.Decimal:
		return x.Round(0).IntPart()
	}
	return v
}

func (r valueRule) outOfRange(given, column string, row int) error {
	if r.kind == integerValue {
		return fmt.Errorf("%w for column '%s' at row %d (%s is not within %d..%d, the range of %s)",
			ErrOutOfRange, column, row, given, r.min, r.max, r.typeName)
	}
	return fmt.Errorf("%w for column '%s' at row %d (%s does not fit %s)", ErrOutOfRange, column, row, given, r.typeName)
}

func (r valueRule) incorrect(given, column string, row int) error {
	return fmt.Errorf("%w for column '%s' at row %d: %s is not a %s value", ErrIncorrectValue, column, row, given, r.typeName)
}

// quoted is a string value as an error message shows it: in quotes, as
// MySQL does, and cut short.
func quoted(s string) string {
	const most = 64
	if utf8.RuneCountInString(s) > most {
		s = string([]rune(s)[:most]) + "..."
	}
	return "'" + s + "'"
}

// numberString trims a string as MySQL does and reports whether what is
// left is a number (numberText: digits with an optional point, sign and
// exponent; Go's parsers also take "inf", "NaN", hexadecimal floats and
// underscores, which MySQL does not).
func numberString(s string) (string, bool) {
	s = strings.TrimSpace(s)
	return s, numberText.MatchString(s)
}

func (r valueRule) checkInteger(v any, column string, row int) error {
	switch x := v.(type) {
	case bool:
		return nil
	case uint:
		return r.uintInRange(uint64(x), column, row)
	case uint64:
		return r.uintInRange(x, column, row)
	case float32:
		return r.floatInRange(float64(x), column, row)
	case float64:
		return r.floatInRange(x, column, row)
	case decimal.Decimal:
		return r.decimalInRange(x, x.String(), column, row)
	case string:
		s, ok := numberString(x)
		if !ok {
			return r.incorrect(quoted(x), column, row)
		}
		d, err := decimal.NewFromString(s)
		if err != nil {
			return r.incorrect(quoted(x), column, row)
		}
		return r.decimalInRange(d, quoted(x), column, row)
	default:
		// The other integer types: every value of theirs is an int64.
		if n, ok := intconv.ToInt64(x); ok {
			return r.intInRange(n, column, row)
		}
	}
	return nil
}

func (r valueRule) intInRange(n int64, column string, row int) error {
	if n < r.min || n > r.max {
		return r.outOfRange(strconv.FormatInt(n, 10), column, row)
	}
	return nil
}

func (r valueRule) uintInRange(n uint64, column string, row int) error {
	if n > math.MaxInt64 || int64(n) > r.max {
		return r.outOfRange(strconv.FormatUint(n, 10), column, row)
	}
	return nil
}

// floatInRange rounds as MySQL (and go-mysql-server) do, half away from
// zero, and compares with the range: float64(max)+1 is exact for every
// range up to 32 bits, and for int64 it is 2^63, the first value out.
func (r valueRule) floatInRange(f float64, column string, row int) error {
	given := strconv.FormatFloat(f, 'g', -1, 64)
	if math.IsNaN(f) {
		return r.incorrect(given, column, row)
	}
	rf := math.Round(f)
	if math.IsInf(f, 0) || rf < float64(r.min) || rf >= float64(r.max)+1 {
		return r.outOfRange(given, column, row)
	}
	return nil
}

func (r valueRule) decimalInRange(d decimal.Decimal, given, column string, row int) error {
	if d.IsZero() {
		return nil
	}
	// The number of digits before the point, without computing the value.
	magnitude := int64(d.NumDigits()) + int64(d.Exponent())
	if magnitude > maxIntDigits {
		return r.outOfRange(given, column, row)
	}
	if magnitude < 0 { // below 0.1: rounds to 0
		return nil
	}
	n := d.Round(0)
	if n.LessThan(decimal.NewFromInt(r.min)) || n.GreaterThan(decimal.NewFromInt(r.max)) {
		return r.outOfRange(given, column, row)
	}
	return nil
}

func (r valueRule) checkFloat(v any, column string, row int) error {
	var f float64
	given := ""
	switch x := v.(type) {
	case float32:
		f = float64(x)
	case float64:
		f = x
	case decimal.Decimal:
		f, _ = x.Float64()
		given = x.String()
	case string:
		s, ok := numberString(x)
		if !ok {
			return r.incorrect(quoted(x), column, row)
		}
		// A number beyond float64 parses to an infinity (and ErrRange).
		f, _ = strconv.ParseFloat(s, 64)
		given = quoted(x)
	default:
		return nil
	}
	if given == "" {
		given = strconv.FormatFloat(f, 'g', -1, 64)
	}
	if math.IsNaN(f) {
		return r.incorrect(given, column, row)
	}
	if math.IsInf(f, 0) || (r.kind == floatValue && math.IsInf(float64(float32(f)), 0)) {
		return r.outOfRange(given, column, row)
	}
	return nil
}

// checkDecimal leaves the range to go-mysql-server, which refuses a value
// beyond the precision (1264), and refuses what is not a number at all.
func (r valueRule) checkDecimal(v any, column string, row int) error {
	switch x := v.(type) {
	case float32:
		return r.checkFloat(float64(x), column, row)
	case float64:
		if math.IsNaN(x) {
			return r.incorrect("NaN", column, row)
		}
		if math.IsInf(x, 0) {
			return r.outOfRange(strconv.FormatFloat(x, 'g', -1, 64), column, row)
		}
	case string:
		if _, ok := numberString(x); !ok {
			return r.incorrect(quoted(x), column, row)
		}
	}
	return nil
}

// checkDate refuses a date before year 1: go-mysql-server turns the zero
// date, which strict mode refuses, into year 0, and Delta and Iceberg dates
// start at 0001-01-01.
func (r valueRule) checkDate(ctx *gms.Context, v any, column string, row int) error {
	t, ok := v.(time.Time)
	if !ok {
		cv, _, err := types.DatetimeMaxPrecision.Convert(ctx, v)
		if err != nil {
			return nil // go-mysql-server's own conversion refuses it, with 1292
		}
		if t, ok = cv.(time.Time); !ok {
			return nil
		}
	}
	if t.Year() < 1 {
		given := fmt.Sprint(v)
		if s, isString := v.(string); isString {
			given = quoted(s)
		}
		return fmt.Errorf("%w: %s for column '%s' at row %d (a %s holds years 0001 to 9999; MySQL's strict mode refuses the zero date)",
			ErrIncorrectDate, given, column, row, r.typeName)
	}
	return nil
}
