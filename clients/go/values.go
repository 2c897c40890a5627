package main

// Step 3: every column type of the types sink, written through each
// protocol with Go's own types as parameters and read back through each,
// value by value. (go-sql-driver binds a time.Time as a string parameter,
// so binary DATETIME parameters are the Node and JDBC clients' to test;
// binary DATETIME results are tested here.)

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
)

// valueCase is one value of one column: sent is bound as the parameter,
// want is what reading the column must give (nil: NULL).
type valueCase struct {
	col  string
	name string
	sent any
	want any
}

// kinds is how each column is scanned: the Go type a client reads it as.
var kinds = map[string]string{
	"b": "bool", "i8": "int", "u8": "int", "i16": "int", "i32": "int", "u32": "int", "i64": "int",
	"f32": "float", "f64": "float", "dec": "string", "vc": "string", "tx": "string", "js": "json",
	"vb": "bytes", "d": "time", "dt": "time", "ts": "time",
}

// nullable lists the columns that take NULL, in declaration order.
var nullable = []string{"b", "i8", "u8", "i16", "i32", "u32", "i64", "f32", "f64", "dec", "vc", "tx", "js", "vb", "d", "dt", "ts"}

func utc(y int, mo time.Month, d, h, mi, sec, us int) time.Time {
	return time.Date(y, mo, d, h, mi, sec, us*1000, time.UTC)
}

// datetimes are the DATETIME(6) and TIMESTAMP(6) values of the scenario.
var datetimes = []time.Time{
	utc(2024, 6, 15, 10, 20, 30, 1),
	utc(2024, 6, 15, 10, 20, 30, 50000),
	utc(2024, 6, 15, 10, 20, 30, 500000),
	utc(2024, 6, 15, 10, 20, 30, 123456),
	utc(1, 1, 1, 0, 0, 0, 0),
	utc(9999, 12, 31, 23, 59, 59, 999999),
	utc(1969, 1, 1, 0, 0, 0, 0),
	utc(2040, 1, 1, 0, 0, 0, 0),
}

const sixDigits = "2006-01-02 15:04:05.000000"

func valueCases() []valueCase {
	var cs []valueCase
	for _, t := range datetimes {
		var sent any = t
		if t.IsZero() {
			// The driver sends Go's zero time (0001-01-01 00:00:00 UTC) as
			// '0000-00-00', so that value goes as text.
			sent = t.Format(sixDigits)
		}
		cs = append(cs, valueCase{"dt", t.Format(sixDigits), sent, t}, valueCase{"ts", t.Format(sixDigits), sent, t})
	}
	same := func(col, name string, v any, want any) { cs = append(cs, valueCase{col, name, v, want}) }
	same("b", "true", true, true)
	same("b", "false", false, false)
	same("i8", "127", int8(127), int64(127))
	same("i8", "-128", int8(-128), int64(-128))
	same("u8", "255", uint8(255), int64(255))
	same("i16", "-32768", int16(-32768), int64(-32768))
	same("i32", "2147483647", int32(2147483647), int64(2147483647))
	same("u32", "4294967295", uint32(4294967295), int64(4294967295))
	same("i64", "9223372036854775807", int64(9223372036854775807), int64(9223372036854775807))
	same("i64", "-9223372036854775808", int64(-9223372036854775808), int64(-9223372036854775808))
	same("f32", "1.5", float32(1.5), float64(1.5))
	same("f64", "1e308", 1e308, 1e308)
	same("dec", "12345678901234.123456", "12345678901234.123456", "12345678901234.123456")
	same("dec", "-12345678901234.123456", "-12345678901234.123456", "-12345678901234.123456")
	for _, v := range []string{"it's", `a"b`, `back\slash`, "emoji 😀", "nul\x00inside"} {
		same("vc", fmt.Sprintf("%q", v), v, v)
		same("tx", fmt.Sprintf("%q", v), v, v)
	}
	same("js", `{"a": [1, 2, {"b": null}]}`, `{"a": [1, 2, {"b": null}]}`, `{"a": [1, 2, {"b": null}]}`)
	same("vb", "00 ff 27 5c", []byte{0x00, 0xff, 0x27, 0x5c}, []byte{0x00, 0xff, 0x27, 0x5c})
	same("d", "0001-01-01", "0001-01-01", utc(1, 1, 1, 0, 0, 0, 0)) // Go's zero time, as text (above)
	same("d", "9999-12-31", utc(9999, 12, 31, 0, 0, 0, 0), utc(9999, 12, 31, 0, 0, 0, 0))
	for _, c := range nullable {
		same(c, "NULL", nil, nil)
	}
	return cs
}

// protocols name the two ways in.
var protocols = []string{"text", "binary"}

func (s *scenario) db(protocol string) *sql.DB {
	if protocol == "binary" {
		return s.binary
	}
	return s.text
}

// read scans one column of one row through a protocol: the binary
// protocol needs an argument to prepare, the text one gets the id inline.
func (s *scenario) read(ctx context.Context, protocol, col string, id int64) (any, error) {
	var row *sql.Row
	q := fmt.Sprintf("SELECT `%s` FROM types WHERE id = ", col)
	if protocol == "binary" {
		row = s.binary.QueryRowContext(ctx, q+"?", id)
	} else {
		row = s.text.QueryRowContext(ctx, fmt.Sprint(q, id))
	}
	var (
		err error
		got any
	)
	switch kinds[col] {
	case "bool":
		var v sql.Null[bool]
		err, got = row.Scan(&v), nullOr(v)
	case "int":
		var v sql.Null[int64]
		err, got = row.Scan(&v), nullOr(v)
	case "float":
		var v sql.Null[float64]
		err, got = row.Scan(&v), nullOr(v)
	case "string", "json":
		var v sql.Null[string]
		err, got = row.Scan(&v), nullOr(v)
	case "bytes":
		var v []byte
		err = row.Scan(&v)
		if v != nil {
			got = v
		}
	case "time":
		var v sql.Null[time.Time]
		err, got = row.Scan(&v), nullOr(v)
	}
	return got, err
}

func nullOr[T any](v sql.Null[T]) any {
	if !v.Valid {
		return nil
	}
	return v.V
}

// same compares a value read with the value wanted; JSON as parsed JSON.
func same(col string, want, got any) bool {
	if kinds[col] == "json" && want != nil && got != nil {
		var w, g any
		if json.Unmarshal([]byte(want.(string)), &w) != nil || json.Unmarshal([]byte(got.(string)), &g) != nil {
			return false
		}
		return cmp.Equal(w, g)
	}
	return cmp.Equal(want, got)
}

// show prints a value so that a failure line says exactly what it was.
func show(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case time.Time:
		return v.Format(sixDigits) + " " + v.Location().String()
	case []byte:
		return "bytes " + hex.EncodeToString(v)
	case string:
		return fmt.Sprintf("%q", v)
	default:
		return fmt.Sprintf("%T %v", v, v)
	}
}

func (s *scenario) values() {
	id := int64(1000)
	for _, c := range valueCases() {
		for _, wp := range protocols {
			id++
			row := id
			label := fmt.Sprintf("%s %s written %s", c.col, c.name, wp)
			var written bool
			s.check(label, func(ctx context.Context) error {
				_, err := s.db(wp).ExecContext(ctx, fmt.Sprintf("INSERT INTO types (id, `%s`) VALUES (?, ?)", c.col), row, c.sent)
				written = err == nil
				return err
			})
			if !written {
				continue
			}
			for _, rp := range protocols {
				s.check(fmt.Sprintf("%s, read %s", label, rp), func(ctx context.Context) error {
					got, err := s.read(ctx, rp, c.col, row)
					if err != nil {
						return fmt.Errorf("expected %s, got %w", show(c.want), err)
					}
					if !same(c.col, c.want, got) {
						return fmt.Errorf("expected %s, got %s", show(c.want), show(got))
					}
					return nil
				})
			}
			// The text cell itself: MySQL pads DATETIME(6) to 6 digits.
			if kinds[c.col] == "time" && c.col != "d" && c.want != nil {
				s.check(fmt.Sprintf("%s, text cell", label), func(ctx context.Context) error {
					var cell string
					if err := s.textRaw.QueryRowContext(ctx, fmt.Sprintf("SELECT `%s` FROM types WHERE id = %d", c.col, row)).Scan(&cell); err != nil {
						return err
					}
					if want := c.want.(time.Time).Format(sixDigits); cell != want {
						return fmt.Errorf("expected %q, got %q", want, cell)
					}
					return nil
				})
			}
		}
	}
	s.refusals()
}

// refusals: values outside their column's range are refused with 1264
// and leave no row, through each protocol.
func (s *scenario) refusals() {
	type refusal struct {
		col, name string
		sent      any    // bound as a parameter; nil: the literal is in the SQL
		literal   string // used when sent is nil
		binary    bool   // only through the binary protocol
	}
	rs := []refusal{
		{"i64", "uint64 9223372036854775808", uint64(9223372036854775808), "", false},
		{"i64", "'99999999999999999999'", "99999999999999999999", "", false},
		{"i64", "literal -9223372036854775809", nil, "-9223372036854775809", false},
		{"i64", "DOUBLE 9.3e18", 9.3e18, "", false},
		{"u8", "256", 256, "", false},
		{"u32", "-1", -1, "", false},
		{"i64", "uint64 18446744073709551615", uint64(18446744073709551615), "", true},
	}
	id := int64(5000)
	for _, r := range rs {
		for _, p := range protocols {
			if r.binary && p != "binary" {
				continue
			}
			id++
			row := id
			s.check(fmt.Sprintf("refuse %s %s through %s", r.col, r.name, p), func(ctx context.Context) error {
				var err error
				if r.sent == nil {
					_, err = s.db(p).ExecContext(ctx, fmt.Sprintf("INSERT INTO types (id, `%s`) VALUES (?, %s)", r.col, r.literal), row)
				} else {
					_, err = s.db(p).ExecContext(ctx, fmt.Sprintf("INSERT INTO types (id, `%s`) VALUES (?, ?)", r.col), row, r.sent)
				}
				var errs []string
				if e := wantErr(err, 1264, "22003"); e != nil {
					errs = append(errs, e.Error())
				}
				if e := s.counts(ctx, fmt.Sprintf("types WHERE id = %d", row), 0); e != nil {
					errs = append(errs, "nothing inserted: "+e.Error())
				}
				if errs != nil {
					return fmt.Errorf("%s", strings.Join(errs, "; "))
				}
				return nil
			})
		}
	}
}
