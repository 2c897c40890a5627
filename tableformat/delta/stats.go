package delta

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// statsPrefixLength is how many characters of a string min/max are kept
// (delta.dataSkippingStringPrefixLength's default).
const statsPrefixLength = 32

// maxTieBreaker is appended to a truncated max string: it sorts after every
// other character in UTF-8 byte order, so the stored max stays an upper bound.
const maxTieBreaker = "\U0010FFFF"

type mapEntry struct {
	key   string
	value any
}

// mapEntries reads a DuckDB MAP value with string keys.
func mapEntries(v any) ([]mapEntry, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(duckdb.OrderedMap)
	if !ok {
		return nil, fmt.Errorf("unexpected %T in COPY statistics", v)
	}
	keys, vals := m.Keys(), m.Values()
	out := make([]mapEntry, len(keys))
	for i, k := range keys {
		ks, ok := k.(string)
		if !ok {
			return nil, fmt.Errorf("unexpected key %T in COPY statistics", k)
		}
		out[i] = mapEntry{ks, vals[i]}
	}
	return out, nil
}

// partitionValues turns DuckDB's partition_keys into Delta partition values.
func partitionValues(schema *StructType, cols []string, keys any) (map[string]*string, error) {
	entries, err := mapEntries(keys)
	if err != nil {
		return nil, err
	}
	got := map[string]any{}
	for _, e := range entries {
		got[e.key] = e.value
	}
	out := make(map[string]*string, len(cols))
	for _, c := range cols {
		v, ok := got[c]
		if !ok {
			return nil, fmt.Errorf("COPY reported no value for partition column %q", c)
		}
		if v == nil {
			out[c] = nil
			continue
		}
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("partition column %q: unexpected %T", c, v)
		}
		pv, err := deltaPartitionString(schema.Field(c).Type, s)
		if err != nil {
			return nil, fmt.Errorf("partition column %q: %w", c, err)
		}
		out[c] = pv
	}
	return out, nil
}

// deltaPartitionString turns DuckDB's text of a value into the protocol's
// partition value form.
func deltaPartitionString(t DataType, s string) (*string, error) {
	switch t {
	case TypeString:
		if s == "" { // the protocol cannot tell "" from null
			return nil, nil
		}
	case TypeDate:
		if _, err := time.Parse(partitionDateLayout, s); err != nil {
			return nil, noPartitionForm("date", s)
		}
	case TypeTimestamp:
		ts, err := partitionTimestamp(s, true)
		if err != nil {
			return nil, err
		}
		s = ts.Format("2006-01-02T15:04:05.000000Z")
	case TypeTimestampNTZ:
		ts, err := partitionTimestamp(s, false)
		if err != nil {
			return nil, err
		}
		s = ts.Format("2006-01-02 15:04:05.000000")
	case TypeFloat, TypeDouble:
		switch strings.ToLower(s) {
		case "inf", "infinity":
			s = "Infinity"
		case "-inf", "-infinity":
			s = "-Infinity"
		case "nan", "-nan":
			s = "NaN"
		}
	}
	return &s, nil
}

// partitionTimestamp reads DuckDB's text of a timestamp partition value,
// in UTC when utc is set. The protocol's forms have four-digit years, so a
// value DuckDB prints with "(BC)", a year past 9999 or an infinity has none.
func partitionTimestamp(s string, utc bool) (time.Time, error) {
	ts, err := parseDuckTimestamp(s)
	if err != nil {
		return time.Time{}, noPartitionForm("timestamp", s)
	}
	if utc {
		ts = ts.UTC()
	}
	if ts.Year() < 1 || ts.Year() > 9999 {
		return time.Time{}, noPartitionForm("timestamp", s)
	}
	return ts, nil
}

// noPartitionForm refuses a value the protocol's partition value forms
// cannot spell (they have years 0001 to 9999 only): written as DuckDB
// prints it, no reader could parse it, and the whole table would become
// unreadable. The caller adds the column name.
func noPartitionForm(kind, s string) error {
	return unsupported("%s partition value %q: Delta partition values hold years 0001 to 9999 only", kind, s)
}

func parseDuckTimestamp(s string) (time.Time, error) {
	for _, layout := range []string{
		"2006-01-02 15:04:05.999999999-07", "2006-01-02 15:04:05.999999999-07:00",
		"2006-01-02 15:04:05.999999999",
	} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("cannot read timestamp %q", s)
}

// fileStats builds the stats JSON of one file from DuckDB's column
// statistics: numRecords, and per leaf column minValues, maxValues and
// nullCount, nested like the schema. Partition columns are not in the file.
func fileStats(schema *StructType, parts map[string]bool, numRecords int64, colStats any) (string, error) {
	entries, err := mapEntries(colStats)
	if err != nil {
		return "", err
	}
	minV, maxV, nulls := map[string]any{}, map[string]any{}, map[string]any{}
	for _, e := range entries {
		path, err := splitColumnPath(e.key)
		if err != nil {
			return "", err
		}
		if len(path) == 0 || parts[path[0]] {
			continue
		}
		leaf := leafType(schema, path)
		if leaf == nil {
			continue // a list or map element: the protocol keeps no stats there
		}
		st, err := mapEntries(e.value)
		if err != nil {
			return "", err
		}
		var minS, maxS *string
		hasNaN := false
		for _, kv := range st {
			s, _ := kv.value.(string)
			switch kv.key {
			case "min":
				minS = &s
			case "max":
				maxS = &s
			case "has_nan":
				hasNaN = s == "true"
			case "null_count":
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return "", fmt.Errorf("null_count %q of %s", s, e.key)
				}
				setPath(nulls, path, n)
			}
		}
		// DuckDB leaves NaN out of a float column's min and max; Spark
		// orders NaN above every number, so a max without it would let a
		// reader skip the file for a NaN, or for anything above the max.
		// No bound skips nothing.
		if hasNaN {
			minS, maxS = nil, nil
		}
		if minS != nil {
			if v, ok := statValue(leaf, *minS, false); ok {
				setPath(minV, path, v)
			}
		}
		if maxS != nil {
			if v, ok := statValue(leaf, *maxS, true); ok {
				setPath(maxV, path, v)
			}
		}
	}
	return statsJSON(numRecords, minV, maxV, nulls)
}

// statsJSON is the stats JSON of one file: numRecords and the per-leaf
// bounds and null counts, nested like the schema.
func statsJSON(numRecords int64, minV, maxV, nulls map[string]any) (string, error) {
	b, err := json.Marshal(struct {
		NumRecords int64          `json:"numRecords"`
		MinValues  map[string]any `json:"minValues"`
		MaxValues  map[string]any `json:"maxValues"`
		NullCount  map[string]any `json:"nullCount"`
	}{numRecords, minV, maxV, nulls})
	return string(b), err
}

// splitColumnPath splits DuckDB's `"a"."b"` column key into names.
func splitColumnPath(key string) ([]string, error) {
	var out []string
	for len(key) > 0 {
		if key[0] != '"' {
			return nil, fmt.Errorf("unexpected column key %q", key)
		}
		var b strings.Builder
		i := 1
		for {
			if i >= len(key) {
				return nil, fmt.Errorf("unterminated column key %q", key)
			}
			if key[i] == '"' {
				if i+1 < len(key) && key[i+1] == '"' {
					b.WriteByte('"')
					i += 2
					continue
				}
				break
			}
			b.WriteByte(key[i])
			i++
		}
		out = append(out, b.String())
		key = key[i+1:]
		if strings.HasPrefix(key, ".") {
			key = key[1:]
		}
	}
	return out, nil
}

// leafType follows path through nested structs; nil if it leaves structs.
func leafType(schema *StructType, path []string) DataType {
	var t DataType = schema
	for _, name := range path {
		st, ok := t.(*StructType)
		if !ok {
			return nil
		}
		f := st.Field(name)
		if f == nil {
			return nil
		}
		t = f.Type
	}
	switch t.(type) {
	case *StructType, *ArrayType, *MapType:
		return nil
	}
	return t
}

func setPath(m map[string]any, path []string, v any) {
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}

// statValue converts DuckDB's text of a min or max into the JSON value the
// protocol stores, or reports false when the type keeps no min/max.
func statValue(t DataType, s string, isMax bool) (any, bool) {
	switch t {
	case TypeByte, TypeShort, TypeInteger, TypeLong:
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil
	case TypeFloat, TypeDouble:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, false // JSON has no NaN; without a bound nothing is skipped wrongly
		}
		return f, true
	case TypeDate:
		if _, err := time.Parse("2006-01-02", s); err != nil {
			return nil, false
		}
		return s, true
	case TypeTimestamp, TypeTimestampNTZ:
		ts, err := parseDuckTimestamp(s)
		if err != nil {
			return nil, false
		}
		ts = ts.Truncate(time.Millisecond) // the protocol keeps milliseconds
		if t == TypeTimestamp {
			return ts.UTC().Format("2006-01-02T15:04:05.000Z"), true
		}
		return ts.Format("2006-01-02T15:04:05.000"), true
	case TypeString:
		return truncateStat(s, isMax)
	}
	if _, ok := t.(DecimalType); ok {
		return json.Number(s), json.Valid([]byte(s))
	}
	return nil, false // boolean, binary: no min/max, as Spark does
}

// truncateStat keeps a prefix of a string statistic. A cut max gets a
// tie-breaker so it stays at or above every value it stands for; when the
// next character is the tie-breaker itself, the bound is dropped.
func truncateStat(s string, isMax bool) (any, bool) {
	if utf8.RuneCountInString(s) <= statsPrefixLength {
		return s, true
	}
	cut := 0
	for i := 0; i < statsPrefixLength; i++ {
		_, n := utf8.DecodeRuneInString(s[cut:])
		cut += n
	}
	if !isMax {
		return s[:cut], true
	}
	next, _ := utf8.DecodeRuneInString(s[cut:])
	if next == utf8.MaxRune {
		return nil, false
	}
	return s[:cut] + maxTieBreaker, true
}

// NumRecords returns the file's row count from its stats, if recorded.
func (a *Add) NumRecords() (int64, bool) {
	if a.Stats == "" {
		return 0, false
	}
	var st struct {
		NumRecords *int64 `json:"numRecords"`
	}
	if err := json.Unmarshal([]byte(a.Stats), &st); err != nil || st.NumRecords == nil {
		return 0, false
	}
	return *st.NumRecords, true
}
