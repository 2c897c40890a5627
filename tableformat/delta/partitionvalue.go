package delta

// Partition values as partitionValues holds them (PROTOCOL.md, "Partition
// Value Serialization"): strings to Go values and back.

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/lakesql/lakesql/internal/intconv"
)

// Layouts of partition timestamps (PROTOCOL.md, "Partition Value
// Serialization"). Go's parser accepts a fractional second after the seconds
// even when the layout has none, so these also cover ".123456".
var (
	partitionTimestampLayoutsNoZone = []string{"2006-01-02 15:04:05", "2006-01-02T15:04:05"}
	partitionTimestampLayoutsZone   = []string{
		"2006-01-02T15:04:05Z07:00", "2006-01-02 15:04:05Z07:00",
		"2006-01-02T15:04:05Z0700", "2006-01-02 15:04:05Z0700",
	}
)

const (
	partitionDateLayout         = "2006-01-02"
	partitionTimestampLayout    = "2006-01-02T15:04:05.000000Z"
	partitionTimestampNTZLayout = "2006-01-02 15:04:05.000000"
)

// ParsePartitionValue converts a partitionValues entry to a Go value of
// column type t. Per PROTOCOL.md a missing value (nil) and an empty string,
// for every type, are null and return nil.
//
// Results: byte int8, short int16, integer int32, long int64, float float32,
// double float64, boolean bool (case-insensitive "true"/"false"), string
// string, binary []byte (the string's raw bytes), date time.Time at UTC
// midnight, timestamp and timestamp_ntz time.Time in UTC, decimal the
// canonical decimal string with exactly scale fractional digits (checked to
// fit; it is meant to be CAST in SQL). Floats accept NaN, Infinity and
// -Infinity. Timestamps accept "2021-01-01 00:00:00[.ffffff]", the same with
// a "T", and ISO-8601 with "Z" or an offset; a timestamp without a zone is
// taken as UTC (the protocol says "the writer's time zone", which the log
// does not record). timestamp_ntz is a wall clock: it refuses an offset and
// comes back as that wall clock in UTC. A malformed value is an error
// wrapping ErrCorruptLog; a partition column of nested type wraps
// ErrUnsupportedFeature.
func ParsePartitionValue(t DataType, v *string) (any, error) {
	if t == nil {
		return nil, errors.New("delta: partition value of a column without a type")
	}
	if v == nil || *v == "" {
		return nil, nil
	}
	s := *v
	bad := func(err error) error {
		if err != nil {
			return corrupt("partition value %q is not a valid %s: %v", s, t, err)
		}
		return corrupt("partition value %q is not a valid %s", s, t)
	}
	switch t := t.(type) {
	case PrimitiveType:
		switch t {
		case TypeByte:
			n, err := strconv.ParseInt(s, 10, 8)
			if err != nil {
				return nil, bad(nil)
			}
			return int8(n), nil
		case TypeShort:
			n, err := strconv.ParseInt(s, 10, 16)
			if err != nil {
				return nil, bad(nil)
			}
			return int16(n), nil
		case TypeInteger:
			n, err := strconv.ParseInt(s, 10, 32)
			if err != nil {
				return nil, bad(nil)
			}
			return int32(n), nil
		case TypeLong:
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, bad(nil)
			}
			return n, nil
		case TypeFloat:
			f, err := strconv.ParseFloat(s, 32)
			if err != nil {
				return nil, bad(nil)
			}
			return float32(f), nil
		case TypeDouble:
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, bad(nil)
			}
			return f, nil
		case TypeBoolean:
			switch {
			case strings.EqualFold(s, "true"):
				return true, nil
			case strings.EqualFold(s, "false"):
				return false, nil
			}
			return nil, bad(nil)
		case TypeString:
			return s, nil
		case TypeBinary:
			return []byte(s), nil
		case TypeDate:
			d, err := time.Parse(partitionDateLayout, s)
			if err != nil {
				return nil, bad(nil)
			}
			return d, nil
		case TypeTimestamp, TypeTimestampNTZ:
			ts, err := parsePartitionTimestamp(s, t == TypeTimestampNTZ)
			if err != nil {
				return nil, bad(err)
			}
			return ts, nil
		}
	case DecimalType:
		if !t.valid() {
			return nil, unsupported("partition column of type %s", t)
		}
		d, err := normalizeDecimal(s, t)
		if err != nil {
			return nil, bad(err)
		}
		return d, nil
	}
	return nil, unsupported("partition column of type %s", t)
}

func parsePartitionTimestamp(s string, ntz bool) (time.Time, error) {
	for _, layout := range partitionTimestampLayoutsNoZone {
		if ts, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return ts, nil
		}
	}
	for _, layout := range partitionTimestampLayoutsZone {
		if ts, err := time.Parse(layout, s); err == nil {
			if ntz {
				return time.Time{}, errors.New("timestamp_ntz with a time zone")
			}
			return ts.UTC(), nil
		}
	}
	return time.Time{}, errors.New("want YYYY-MM-DD HH:MM:SS[.ffffff] or ISO-8601")
}

// normalizeDecimal checks that s (plain or scientific notation, as Java's
// BigDecimal may print it) fits t and returns it with exactly t.Scale
// fractional digits, no leading zeros, no plus sign and no negative zero.
func normalizeDecimal(s string, t DecimalType) (string, error) {
	rest := s
	neg := false
	if rest != "" && (rest[0] == '+' || rest[0] == '-') {
		neg = rest[0] == '-'
		rest = rest[1:]
	}
	mant, expStr, hasExp := strings.Cut(strings.ReplaceAll(rest, "E", "e"), "e")
	intPart, fracPart, _ := strings.Cut(mant, ".")
	if intPart == "" && fracPart == "" || !allDigits(intPart) || !allDigits(fracPart) {
		return "", errors.New("not a decimal number")
	}
	exp := 0
	if hasExp {
		e, err := strconv.Atoi(expStr)
		if err != nil {
			return "", errors.New("bad exponent")
		}
		if e > 1000 || e < -1000 {
			return "", errors.New("out of range")
		}
		exp = e
	}
	// The number is 0.digits × 10^point, with point = len(intPart) + exp.
	digits := strings.TrimLeft(intPart+fracPart, "0")
	point := len(intPart) + exp - (len(intPart) + len(fracPart) - len(digits))
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		neg, point = false, 0
	}
	// Fractional digits needed: everything past the point.
	if frac := len(digits) - point; frac > t.Scale {
		return "", fmt.Errorf("more than %d fractional digits", t.Scale)
	}
	if point > t.Precision-t.Scale {
		return "", fmt.Errorf("more than %d integer digits", t.Precision-t.Scale)
	}
	var ip, fp string
	switch {
	case point <= 0:
		ip, fp = "0", strings.Repeat("0", -point)+digits
	case point >= len(digits):
		ip, fp = digits+strings.Repeat("0", point-len(digits)), ""
	default:
		ip, fp = digits[:point], digits[point:]
	}
	fp += strings.Repeat("0", t.Scale-len(fp))
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(ip)
	if t.Scale > 0 {
		b.WriteByte('.')
		b.WriteString(fp)
	}
	return b.String(), nil
}

func allDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// FormatPartitionValue is the inverse of ParsePartitionValue, for writers:
// nil gives nil (null). Integers may be any Go integer type that fits the
// column; floats float32 or float64, written with strconv 'g' -1 (NaN,
// Infinity, -Infinity as Spark spells them); booleans "true"/"false"; strings
// as is; binary []byte or string as raw bytes; dates (time.Time, its own
// calendar day) "YYYY-MM-DD"; timestamps as ISO-8601 UTC with microseconds
// ("2021-01-01T00:00:00.000000Z", the form PROTOCOL.md recommends);
// timestamp_ntz as the wall clock "2021-01-01 00:00:00.000000"; decimals
// from a string or a Go integer, in canonical form. Sub-microsecond time is
// truncated. An empty string or byte slice means null in Delta, so it is
// written as nil, as Spark does.
func FormatPartitionValue(t DataType, v any) (*string, error) {
	if t == nil {
		return nil, errors.New("delta: partition value of a column without a type")
	}
	if v == nil {
		return nil, nil
	}
	mismatch := func() error {
		return fmt.Errorf("delta: cannot write %T as a partition value of type %s", v, t)
	}
	ret := func(s string) (*string, error) { return &s, nil }
	switch t := t.(type) {
	case PrimitiveType:
		switch t {
		case TypeByte, TypeShort, TypeInteger, TypeLong:
			n, ok := intconv.ToInt64(v)
			if !ok {
				return nil, mismatch()
			}
			var lim int64 // exclusive upper bound; 0 for long
			switch t {
			case TypeByte:
				lim = math.MaxInt8 + 1
			case TypeShort:
				lim = math.MaxInt16 + 1
			case TypeInteger:
				lim = math.MaxInt32 + 1
			}
			if lim != 0 && (n < -lim || n >= lim) {
				return nil, fmt.Errorf("delta: %v out of range for a %s partition value", v, t)
			}
			return ret(strconv.FormatInt(n, 10))
		case TypeFloat, TypeDouble:
			var f float64
			switch x := v.(type) {
			case float32:
				f = float64(x)
			case float64:
				f = x
			default:
				return nil, mismatch()
			}
			bits := 64
			if t == TypeFloat {
				bits = 32
				if !math.IsInf(f, 0) && math.Abs(f) > math.MaxFloat32 {
					return nil, fmt.Errorf("delta: %v out of range for a float partition value", v)
				}
			}
			switch {
			case math.IsNaN(f):
				return ret("NaN")
			case math.IsInf(f, 1):
				return ret("Infinity")
			case math.IsInf(f, -1):
				return ret("-Infinity")
			}
			return ret(strconv.FormatFloat(f, 'g', -1, bits))
		case TypeBoolean:
			b, ok := v.(bool)
			if !ok {
				return nil, mismatch()
			}
			return ret(strconv.FormatBool(b))
		case TypeString, TypeBinary:
			var s string
			switch x := v.(type) {
			case string:
				s = x
			case []byte:
				if t != TypeBinary {
					return nil, mismatch()
				}
				s = string(x)
			default:
				return nil, mismatch()
			}
			if s == "" {
				return nil, nil
			}
			return ret(s)
		case TypeDate, TypeTimestamp, TypeTimestampNTZ:
			ts, ok := v.(time.Time)
			if !ok {
				return nil, mismatch()
			}
			if t == TypeTimestamp {
				ts = ts.UTC()
			}
			if y := ts.Year(); y < 1 || y > 9999 {
				return nil, fmt.Errorf("delta: year %d out of range for a %s partition value", y, t)
			}
			switch t {
			case TypeDate:
				return ret(ts.Format(partitionDateLayout))
			case TypeTimestamp:
				return ret(ts.Format(partitionTimestampLayout))
			default:
				return ret(ts.Format(partitionTimestampNTZLayout))
			}
		}
	case DecimalType:
		if !t.valid() {
			return nil, unsupported("partition column of type %s", t)
		}
		var s string
		if x, ok := v.(string); ok {
			s = x
		} else if n, ok := intconv.ToInt64(v); ok {
			s = strconv.FormatInt(n, 10)
		} else if u, ok := v.(uint64); ok {
			s = strconv.FormatUint(u, 10)
		} else {
			return nil, mismatch()
		}
		d, err := normalizeDecimal(s, t)
		if err != nil {
			return nil, fmt.Errorf("delta: %q is not a valid %s partition value: %w", s, t, err)
		}
		return ret(d)
	}
	return nil, unsupported("partition column of type %s", t)
}
