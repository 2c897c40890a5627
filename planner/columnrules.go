package planner

// What a column's declared type says beyond its Arrow type. A sink's table
// stores a TINYINT UNSIGNED as a 16-bit integer, a BOOLEAN as a boolean,
// VARCHAR(n) and TEXT as plain strings, JSON as text, and the
// go-mysql-server schema uses those wider types, so the rules of the
// declared type are checked here, row by row, as MySQL's strict mode does:
// a value out of the type's range fails its statement with 1264, a longer
// value with 1406, text that is not JSON with 3140. DATETIME(p) and
// TIMESTAMP(p) are stored at microseconds; p sets the go-mysql-server
// type, which rounds and shows values with p digits.

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"unicode/utf8"

	"github.com/lakesql/lakesql/internal/intconv"
	"github.com/lakesql/lakesql/sinkddl"
)

// ErrDataTooLong marks a value longer than its column's declared length.
var ErrDataTooLong = errors.New("data too long")

// ErrOutOfRange marks a number outside its column's declared type.
var ErrOutOfRange = errors.New("out of range value")

// ErrInvalidJSON marks text for a JSON column that is not JSON.
var ErrInvalidJSON = errors.New("invalid JSON text")

// columnRule is what a column's declared type requires of a value.
type columnRule struct {
	maxLen int  // 0: no declared length
	bytes  bool // maxLen counts bytes, not characters
	ranged bool
	min    int64
	max    int64
	json   bool
}

// Integer types stored in a wider Arrow type, and their MySQL ranges.
// TINYINT and SMALLINT are wider in Iceberg tables only (Iceberg has no 8-
// or 16-bit integer); in Delta ones go-mysql-server's own type checks them
// first.
var integerRanges = map[string][2]int64{
	"BOOLEAN":            {0, 1}, // stored as a boolean: 0 and 1 only
	"TINYINT":            {-1 << 7, 1<<7 - 1},
	"SMALLINT":           {-1 << 15, 1<<15 - 1},
	"TINYINT UNSIGNED":   {0, 255},
	"SMALLINT UNSIGNED":  {0, 65535},
	"MEDIUMINT":          {-1 << 23, 1<<23 - 1},
	"MEDIUMINT UNSIGNED": {0, 1<<24 - 1},
	"INT UNSIGNED":       {0, 1<<32 - 1},
}

// The byte limits of MySQL's text and blob types.
var byteLimits = map[string]int{
	"TINYTEXT": 255, "TEXT": 65535, "MEDIUMTEXT": 1<<24 - 1,
	"TINYBLOB": 255, "BLOB": 65535, "MEDIUMBLOB": 1<<24 - 1,
}

var (
	// CHAR and BINARY without a length mean a length of 1, as in MySQL.
	sizedType = regexp.MustCompile(`^(CHAR|VARCHAR|BINARY|VARBINARY)(?:\((\d+)\))?$`)
	// TEXT(n) and BLOB(n) are the smallest type that holds n characters
	// (4 bytes each in utf8mb4) or bytes.
	lobType  = regexp.MustCompile(`^(TEXT|BLOB)\((\d+)\)$`)
	timeType = regexp.MustCompile(`^(DATETIME|TIMESTAMP)(?:\((\d)\))?$`)
)

// ruleFor returns the rule of a canonical MySQL type spelling.
func ruleFor(sqlType string) columnRule {
	if r, ok := integerRanges[sqlType]; ok {
		return columnRule{ranged: true, min: r[0], max: r[1]}
	}
	if n, ok := byteLimits[sqlType]; ok {
		return columnRule{maxLen: n, bytes: true}
	}
	if sqlType == "JSON" {
		return columnRule{json: true}
	}
	if m := sizedType.FindStringSubmatch(sqlType); m != nil {
		n := 1
		if m[2] != "" {
			n, _ = strconv.Atoi(m[2])
		}
		return columnRule{maxLen: n, bytes: m[1] == "BINARY" || m[1] == "VARBINARY"}
	}
	if m := lobType.FindStringSubmatch(sqlType); m != nil {
		n, _ := strconv.Atoi(m[2])
		if m[1] == "TEXT" {
			n *= 4
		}
		for _, limit := range []int{255, 65535, 1<<24 - 1} {
			if n <= limit {
				return columnRule{maxLen: limit, bytes: true}
			}
		}
	}
	return columnRule{}
}

// columnRules returns the rules of the definition's columns, by name. A
// sink that attached without columns declares none.
func columnRules(def *sinkddl.CreateSink) map[string]columnRule {
	out := map[string]columnRule{}
	if def == nil {
		return out
	}
	for _, c := range def.Columns {
		if r := ruleFor(c.SQLType); r != (columnRule{}) {
			out[c.Name] = r
		}
	}
	return out
}

// fractionDigits returns the declared fractional-second digits of the
// definition's DATETIME and TIMESTAMP columns, by name (0 when none are
// written, as in MySQL).
func fractionDigits(def *sinkddl.CreateSink) map[string]int {
	out := map[string]int{}
	if def == nil {
		return out
	}
	for _, c := range def.Columns {
		if m := timeType.FindStringSubmatch(c.SQLType); m != nil {
			p := 0
			if m[2] != "" {
				p = int(m[2][0] - '0')
			}
			out[c.Name] = p
		}
	}
	return out
}

// check returns an error naming the column and the row (1-based, within
// the statement) when v breaks the rule.
func (r columnRule) check(v any, column string, row int) error {
	if v == nil {
		return nil
	}
	if r.ranged {
		n, ok := intconv.ToInt64(v)
		if b, isBool := v.(bool); isBool {
			n, ok = 0, true
			if b {
				n = 1
			}
		}
		if ok && (n < r.min || n > r.max) {
			return fmt.Errorf("%w for column '%s' at row %d (%d is not within %d..%d)", ErrOutOfRange, column, row, n, r.min, r.max)
		}
	}
	var text []byte
	switch v := v.(type) {
	case string:
		text = []byte(v)
	case []byte:
		text = v
	default:
		return nil
	}
	if r.maxLen > 0 {
		n, unit := len(text), "bytes"
		if !r.bytes {
			n, unit = utf8.RuneCount(text), "characters"
		}
		if n > r.maxLen {
			return fmt.Errorf("%w for column '%s' at row %d (%d %s, the column holds %d)", ErrDataTooLong, column, row, n, unit, r.maxLen)
		}
	}
	if r.json && !json.Valid(text) {
		return fmt.Errorf("%w for column '%s' at row %d", ErrInvalidJSON, column, row)
	}
	return nil
}
