package delta

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// recordStats is fileStats for a file WriteRecord writes: the same
// statistics, taken from the Arrow columns instead of DuckDB's COPY
// report. Bounds are found on typed values and then spelled as DuckDB
// prints them, so statValue applies the very rules of the DuckDB path.
// data holds the file's columns under the names of schema (the file
// layout's), partition columns left out.
func recordStats(schema *StructType, parts map[string]bool, data arrow.RecordBatch) (string, error) {
	st := &statsSet{min: map[string]any{}, max: map[string]any{}, nulls: map[string]any{}}
	k := 0
	for _, f := range schema.Fields {
		if parts[f.Name] {
			continue
		}
		if err := st.column([]string{f.Name}, f.Type, data.Column(k), nil); err != nil {
			return "", err
		}
		k++
	}
	return statsJSON(data.NumRows(), st.min, st.max, st.nulls)
}

type statsSet struct{ min, max, nulls map[string]any }

// column adds the statistics of the leaves of col, of type t at path;
// valid, when not nil, is whether each row's enclosing structs are all
// non-null (a leaf under a null struct counts as null, as in Parquet).
func (st *statsSet) column(path []string, t DataType, col arrow.Array, valid []bool) error {
	switch tt := t.(type) {
	case *StructType:
		sc := col.(*array.Struct)
		inner := make([]bool, sc.Len())
		for i := range inner {
			inner[i] = sc.IsValid(i) && (valid == nil || valid[i])
		}
		for j, f := range tt.Fields {
			if err := st.column(append(append([]string(nil), path...), f.Name), f.Type, sc.Field(j), inner); err != nil {
				return err
			}
		}
		return nil
	case *ArrayType, *MapType:
		return nil // the protocol keeps no stats inside lists and maps
	}
	b := leafBounds(t, col, valid)
	setPath(st.nulls, path, b.nulls)
	if b.hasNaN || !b.found {
		return nil // see fileStats: NaN leaves a float column without bounds
	}
	if v, ok := statValue(t, b.minText, false); ok {
		setPath(st.min, path, v)
	}
	if v, ok := statValue(t, b.maxText, true); ok {
		setPath(st.max, path, v)
	}
	return nil
}

// bounds is one leaf's null count and bounds, as DuckDB would print them.
type bounds struct {
	nulls            int64
	found            bool // a non-null value was seen
	hasNaN           bool
	minText, maxText string
}

func leafBounds(t DataType, col arrow.Array, valid []bool) bounds {
	var b bounds
	var live []int
	for i := 0; i < col.Len(); i++ {
		if col.IsNull(i) || (valid != nil && !valid[i]) {
			b.nulls++
			continue
		}
		live = append(live, i)
	}
	if len(live) == 0 {
		return b
	}
	b.found = true
	var lo, hi int
	switch c := col.(type) {
	case *array.Int8:
		lo, hi = extremes(live, func(i, j int) bool { return c.Value(i) < c.Value(j) })
		b.minText, b.maxText = strconv.FormatInt(int64(c.Value(lo)), 10), strconv.FormatInt(int64(c.Value(hi)), 10)
	case *array.Int16:
		lo, hi = extremes(live, func(i, j int) bool { return c.Value(i) < c.Value(j) })
		b.minText, b.maxText = strconv.FormatInt(int64(c.Value(lo)), 10), strconv.FormatInt(int64(c.Value(hi)), 10)
	case *array.Int32:
		lo, hi = extremes(live, func(i, j int) bool { return c.Value(i) < c.Value(j) })
		b.minText, b.maxText = strconv.FormatInt(int64(c.Value(lo)), 10), strconv.FormatInt(int64(c.Value(hi)), 10)
	case *array.Int64:
		lo, hi = extremes(live, func(i, j int) bool { return c.Value(i) < c.Value(j) })
		b.minText, b.maxText = strconv.FormatInt(c.Value(lo), 10), strconv.FormatInt(c.Value(hi), 10)
	case *array.Float32:
		b.floatBounds(live, func(i int) float64 { return float64(c.Value(i)) }, 32)
	case *array.Float64:
		b.floatBounds(live, c.Value, 64)
	case *array.String:
		lo, hi = extremes(live, func(i, j int) bool { return c.Value(i) < c.Value(j) })
		b.minText, b.maxText = c.Value(lo), c.Value(hi)
	case *array.Date32:
		lo, hi = extremes(live, func(i, j int) bool { return c.Value(i) < c.Value(j) })
		b.minText, _ = dateText(int32(c.Value(lo)))
		b.maxText, _ = dateText(int32(c.Value(hi)))
	case *array.Timestamp:
		lo, hi = extremes(live, func(i, j int) bool { return c.Value(i) < c.Value(j) })
		b.minText, _ = timestampText(int64(c.Value(lo)))
		b.maxText, _ = timestampText(int64(c.Value(hi)))
	case *array.Decimal128:
		lo, hi = extremes(live, func(i, j int) bool { return c.Value(i).Less(c.Value(j)) })
		scale := int(t.(DecimalType).Scale)
		b.minText, b.maxText = decimalText(c.Value(lo).BigInt(), scale), decimalText(c.Value(hi).BigInt(), scale)
	default:
		b.found = false // boolean, binary: no bounds (statValue keeps none)
	}
	return b
}

// extremes returns the rows holding the least and the greatest value.
func extremes(rows []int, less func(i, j int) bool) (lo, hi int) {
	lo, hi = rows[0], rows[0]
	for _, r := range rows[1:] {
		if less(r, lo) {
			lo = r
		}
		if less(hi, r) {
			hi = r
		}
	}
	return lo, hi
}

// floatBounds finds a float column's bounds, noting NaN; -0 sorts below
// +0, as Parquet's statistics order them.
func (b *bounds) floatBounds(rows []int, value func(int) float64, bits int) {
	first := true
	var lo, hi float64
	for _, r := range rows {
		v := value(r)
		if math.IsNaN(v) {
			b.hasNaN = true
			continue
		}
		if first {
			lo, hi, first = v, v, false
			continue
		}
		if v < lo || (v == lo && math.Signbit(v)) {
			lo = v
		}
		if v > hi || (v == hi && !math.Signbit(v)) {
			hi = v
		}
	}
	if first {
		b.found = false
		return
	}
	b.minText, b.maxText = floatText(lo, bits), floatText(hi, bits)
}

// floatText spells a bound as DuckDB's statistics do: the shortest text
// that reads back as the value, unless that text is ambiguous for a
// float32 (strconv takes it, DuckDB does not): it lies exactly on the
// rounding boundary between the value and its neighbour (34240050 for
// 34240048, read back only by rounding the tie to even), or the value
// lies exactly halfway between two shortest candidates (57833.8125
// between 57833.812 and 57833.813). Then the value is spelled as the
// float64 it is, as DuckDB does. (DuckDB also spells a few float32 values
// above 10^8 so, whose shortest text is not ambiguous: every reader reads
// both spellings back as the same float32.)
func floatText(v float64, bits int) string {
	short := strconv.FormatFloat(v, 'g', -1, bits)
	if bits != 32 || v == 0 || math.IsInf(v, 0) {
		return short
	}
	exact := strconv.FormatFloat(v, 'g', -1, 64)
	if d := significand(exact); len(d) == len(significand(short))+1 && d[len(d)-1] == '5' {
		return exact
	}
	r, ok := new(big.Rat).SetString(short)
	if !ok {
		return short
	}
	f := float32(v)
	for _, n := range []float32{math.Nextafter32(f, float32(math.Inf(1))), math.Nextafter32(f, float32(math.Inf(-1)))} {
		if math.IsInf(float64(n), 0) {
			continue
		}
		mid := new(big.Rat).Add(new(big.Rat).SetFloat64(v), new(big.Rat).SetFloat64(float64(n)))
		if mid.Quo(mid, big.NewRat(2, 1)).Cmp(r) == 0 {
			return exact
		}
	}
	return short
}

// significand is the significant digits of a 'g' formatted number.
func significand(s string) string {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimLeft(strings.ReplaceAll(strings.TrimPrefix(s, "-"), ".", ""), "0")
	return s
}

// dateText spells days since 1970 as DuckDB does, for years 1 to 9999
// (DuckDB marks earlier years "(BC)", which the protocol cannot hold).
func dateText(days int32) (string, bool) {
	d := time.Unix(int64(days)*86400, 0).UTC()
	if d.Year() < 1 {
		return "", false
	}
	return d.Format("2006-01-02"), true
}

// timestampText spells microseconds since 1970 as DuckDB prints a
// timestamp at UTC, for years 1 to 9999.
func timestampText(us int64) (string, bool) {
	ts := time.UnixMicro(us).UTC()
	if ts.Year() < 1 {
		return "", false
	}
	return ts.Format("2006-01-02 15:04:05.999999"), true
}

// decimalText spells an unscaled decimal with scale fraction digits, as
// DuckDB prints a DECIMAL: "-1.50", "0.05", "15".
func decimalText(n *big.Int, scale int) string {
	neg := n.Sign() < 0
	digits := new(big.Int).Abs(n).String()
	if scale > 0 {
		if len(digits) <= scale {
			digits = strings.Repeat("0", scale-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}
