package sinkddl

// Column types: how a MySQL type written in CREATE SINK becomes an Arrow type
// (what the front end hands to the sink) and, through it, a Delta and an
// Iceberg type. typeRules below is the only place these mappings are written
// down: the parser resolves types with it, and MySQLTypeTable renders it for
// the README, so the documentation cannot drift from the behaviour.

import (
	"errors"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
)

// ErrUnsupportedType marks a column type lakesql cannot store without loss in
// Delta or Iceberg (ENUM, TIME, BIGINT UNSIGNED, ...) or does not know at all.
// The error that wraps it names the column and the type; the front end uses
// errors.Is to pick the MySQL error code.
var ErrUnsupportedType = errors.New("unsupported column type")

// MaxDecimalPrecision is the largest DECIMAL precision a sink accepts. MySQL
// allows 65, but Delta and Iceberg decimals stop at 38 digits.
const MaxDecimalPrecision = 38

// ErrTooBigScale marks a DECIMAL scale above MaxDecimalScale (MySQL's 1425).
var ErrTooBigScale = errors.New("too big scale")

// MaxDecimalScale is the largest DECIMAL scale, MySQL's (and so
// go-mysql-server's) limit.
const MaxDecimalScale = 30

// MaxFraction is the largest number of fractional-second digits MySQL allows
// in DATETIME(p) and TIMESTAMP(p); Arrow stores them all at microseconds.
const MaxFraction = 6

// maxDisplayWidth is MySQL's limit for an integer display width such as INT(11).
const maxDisplayWidth = 255

// TypeMapping is one row of the type table: a MySQL column type, the Arrow
// type a sink receives for it, and the types it becomes in the table formats.
// A refused type has a nil Arrow and empty ArrowName, Delta and Iceberg; its
// Notes say why and what to use instead.
type TypeMapping struct {
	MySQL     string         // the spellings accepted, e.g. "DECIMAL(p,s), NUMERIC(p,s)"
	Example   string         // one spelling CREATE SINK accepts (or refuses, for a refused row)
	Arrow     arrow.DataType // the Arrow type of Example; nil when refused
	ArrowName string         // the Arrow type in general, e.g. "decimal128(p, s)"
	Delta     string         // the Delta schema type, e.g. "decimal(p,s)"
	Iceberg   string         // the Iceberg schema type, e.g. "decimal(p,s)"
	Notes     string         // caveats, or for a refused type the reason and an alternative
}

// MySQLTypeTable returns the type table in the order the README shows it: the
// accepted types first, then the refused ones. The caller owns the slice.
func MySQLTypeTable() []TypeMapping {
	out := make([]TypeMapping, 0, len(typeRules))
	for _, r := range typeRules {
		out = append(out, TypeMapping{
			MySQL:     r.mysql,
			Example:   r.example,
			Arrow:     r.arrow,
			ArrowName: r.arrowName,
			Delta:     r.delta,
			Iceberg:   r.iceberg,
			Notes:     r.notes,
		})
	}
	return out
}

// paramKind says which parenthesised parameters a type takes and what they mean.
type paramKind uint8

const (
	paramNone           paramKind = iota // DATE, JSON, TINYTEXT: no parentheses
	paramWidth                           // INT(11): an optional display width, ignored as MySQL 8 does
	paramLengthOptional                  // CHAR[(n)], BINARY[(n)], TEXT[(n)], BLOB[(n)]
	paramLengthRequired                  // VARCHAR(n), VARBINARY(n): MySQL requires the length
	paramFraction                        // DATETIME[(p)], TIMESTAMP[(p)]: 0..6 fractional digits
	paramDecimal                         // DECIMAL[(p[,s])]
	paramFloat                           // FLOAT[(p)]: p chooses single or double precision
	paramDouble                          // DOUBLE, REAL: no parameters (DOUBLE(M,D) is refused)
	paramRefused                         // the type is refused, whatever follows it
)

// signedness says whether a rule applies to the signed type, the UNSIGNED
// one, or both (MEDIUMINT fits Int32 either way).
type signedness uint8

const (
	signedOnly signedness = iota
	unsignedOnly
	eitherSign
)

func (s signedness) allows(unsigned bool) bool {
	switch s {
	case signedOnly:
		return !unsigned
	case unsignedOnly:
		return unsigned
	}
	return true
}

// typeRule maps a family of MySQL spellings to one Arrow type, and carries
// the text of its row in the type table.
type typeRule struct {
	names  []string // upper-case spellings; names[0] is the canonical one
	sign   signedness
	params paramKind
	// arrow is the Arrow type; for DECIMAL, whose type depends on the
	// parameters, it is the type of example.
	arrow arrow.DataType

	mysql, example, arrowName, delta, iceberg, notes string
}

var (
	timestampNTZ = &arrow.TimestampType{Unit: arrow.Microsecond}
	timestampUTC = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
)

// typeRules is the single source of the type mapping (see the file comment).
var typeRules = []typeRule{
	{names: []string{"BOOLEAN", "BOOL"}, params: paramNone, arrow: arrow.FixedWidthTypes.Boolean,
		mysql: "BOOLEAN, BOOL, TINYINT(1)", example: "BOOLEAN", arrowName: "boolean", delta: "boolean", iceberg: "boolean",
		notes: "TINYINT(1) is how MySQL spells a boolean, so it is one here too: 0 and 1 only (1264 otherwise); TINYINT(1) UNSIGNED stays an integer"},
	{names: []string{"TINYINT"}, params: paramWidth, arrow: arrow.PrimitiveTypes.Int8,
		mysql: "TINYINT", example: "TINYINT", arrowName: "int8", delta: "byte", iceberg: "int",
		notes: "Iceberg has no 8-bit integer"},
	{names: []string{"TINYINT"}, sign: unsignedOnly, params: paramWidth, arrow: arrow.PrimitiveTypes.Int16,
		mysql: "TINYINT UNSIGNED", example: "TINYINT UNSIGNED", arrowName: "int16", delta: "short", iceberg: "int",
		notes: "widened so that 0..255 fits; values outside it are refused (1264)"},
	{names: []string{"SMALLINT"}, params: paramWidth, arrow: arrow.PrimitiveTypes.Int16,
		mysql: "SMALLINT", example: "SMALLINT", arrowName: "int16", delta: "short", iceberg: "int",
		notes: "Iceberg has no 16-bit integer"},
	{names: []string{"SMALLINT"}, sign: unsignedOnly, params: paramWidth, arrow: arrow.PrimitiveTypes.Int32,
		mysql: "SMALLINT UNSIGNED", example: "SMALLINT UNSIGNED", arrowName: "int32", delta: "integer", iceberg: "int",
		notes: "widened so that 0..65535 fits; values outside it are refused (1264)"},
	{names: []string{"MEDIUMINT"}, sign: eitherSign, params: paramWidth, arrow: arrow.PrimitiveTypes.Int32,
		mysql: "MEDIUMINT [UNSIGNED]", example: "MEDIUMINT UNSIGNED", arrowName: "int32", delta: "integer", iceberg: "int",
		notes: "both ranges fit 32 bits; values outside MySQL's range are refused (1264)"},
	{names: []string{"INT", "INTEGER"}, params: paramWidth, arrow: arrow.PrimitiveTypes.Int32,
		mysql: "INT, INTEGER", example: "INT", arrowName: "int32", delta: "integer", iceberg: "int",
		notes: "a display width such as INT(11) is accepted and ignored, as in MySQL 8"},
	{names: []string{"INT", "INTEGER"}, sign: unsignedOnly, params: paramWidth, arrow: arrow.PrimitiveTypes.Int64,
		mysql: "INT UNSIGNED, INTEGER UNSIGNED", example: "INT UNSIGNED", arrowName: "int64", delta: "long", iceberg: "long",
		notes: "widened so that 0..4294967295 fits; values outside it are refused (1264)"},
	{names: []string{"BIGINT"}, params: paramWidth, arrow: arrow.PrimitiveTypes.Int64,
		mysql: "BIGINT", example: "BIGINT", arrowName: "int64", delta: "long", iceberg: "long",
		notes: "values beyond -2^63..2^63-1 are refused (1264) in every form: a string, a DOUBLE such as 2^63, a DECIMAL, a uint64 parameter, integer arithmetic"},
	{names: []string{"FLOAT"}, params: paramFloat, arrow: arrow.PrimitiveTypes.Float32,
		mysql: "FLOAT, FLOAT(p) with p ≤ 24", example: "FLOAT", arrowName: "float32", delta: "float", iceberg: "float",
		notes: "FLOAT(p) with 25 ≤ p ≤ 53 is DOUBLE, as in MySQL; FLOAT(M,D) is refused; a value beyond float32 and ±infinity are refused (1264), NaN (1366)"},
	{names: []string{"DOUBLE", "REAL"}, params: paramDouble, arrow: arrow.PrimitiveTypes.Float64,
		mysql: "DOUBLE, DOUBLE PRECISION, REAL", example: "DOUBLE PRECISION", arrowName: "float64", delta: "double", iceberg: "double",
		notes: "DOUBLE(M,D) is refused; NaN (1366) and ±infinity (1264) are refused, as MySQL has neither"},
	{names: []string{"DECIMAL", "NUMERIC", "DEC", "FIXED"}, params: paramDecimal,
		arrow: &arrow.Decimal128Type{Precision: 10, Scale: 2},
		mysql: "DECIMAL(p,s), NUMERIC(p,s), DEC(p,s), FIXED(p,s)", example: "DECIMAL(10,2)", arrowName: "decimal128(p, s)",
		delta: "decimal(p,s)", iceberg: "decimal(p,s)",
		notes: fmt.Sprintf("(p) means (p,0) and no parameters (10,0); p ≤ %d, s ≤ %d; text that is not a number is refused (1366); a column of an attached table with a larger scale (Spark allows 38) reads as its text, a varchar(p+2)", MaxDecimalPrecision, MaxDecimalScale)},
	{names: []string{"CHAR", "NCHAR"}, params: paramLengthOptional, arrow: arrow.BinaryTypes.String,
		mysql: "CHAR(n), NCHAR(n)", example: "CHAR(2)", arrowName: "utf8", delta: "string", iceberg: "string",
		notes: "the table stores a plain string; lakesql checks the length in characters (1406 when longer), as MySQL's strict mode does"},
	{names: []string{"VARCHAR", "NVARCHAR"}, params: paramLengthRequired, arrow: arrow.BinaryTypes.String,
		mysql: "VARCHAR(n), NVARCHAR(n)", example: "VARCHAR(16)", arrowName: "utf8", delta: "string", iceberg: "string",
		notes: "the table stores a plain string; lakesql checks the length in characters (1406 when longer), as MySQL's strict mode does"},
	{names: []string{"TEXT"}, params: paramLengthOptional, arrow: arrow.BinaryTypes.String,
		mysql: "TEXT[(n)]", example: "TEXT", arrowName: "utf8", delta: "string", iceberg: "string",
		notes: "at most 65535 bytes (TEXT(n): the smallest TEXT type that holds n characters); longer values are refused (1406)"},
	{names: []string{"TINYTEXT"}, params: paramNone, arrow: arrow.BinaryTypes.String,
		mysql: "TINYTEXT", example: "TINYTEXT", arrowName: "utf8", delta: "string", iceberg: "string",
		notes: "at most 255 bytes; longer values are refused (1406)"},
	{names: []string{"MEDIUMTEXT"}, params: paramNone, arrow: arrow.BinaryTypes.String,
		mysql: "MEDIUMTEXT", example: "MEDIUMTEXT", arrowName: "utf8", delta: "string", iceberg: "string",
		notes: "at most 16777215 bytes; longer values are refused (1406)"},
	{names: []string{"LONGTEXT"}, params: paramNone, arrow: arrow.BinaryTypes.String,
		mysql: "LONGTEXT", example: "LONGTEXT", arrowName: "utf8", delta: "string", iceberg: "string"},
	{names: []string{"JSON"}, params: paramNone, arrow: arrow.BinaryTypes.String,
		mysql: "JSON", example: "JSON", arrowName: "utf8", delta: "string", iceberg: "string",
		notes: "stored and returned as its JSON text, as written; text that is not JSON is refused (3140); shows as json"},
	{names: []string{"BINARY"}, params: paramLengthOptional, arrow: arrow.BinaryTypes.Binary,
		mysql: "BINARY(n)", example: "BINARY(16)", arrowName: "binary", delta: "binary", iceberg: "binary",
		notes: "the table stores plain binary; lakesql checks the length in bytes (1406 when longer); BINARY values are not padded, so the column shows as varbinary(n)"},
	{names: []string{"VARBINARY"}, params: paramLengthRequired, arrow: arrow.BinaryTypes.Binary,
		mysql: "VARBINARY(n)", example: "VARBINARY(255)", arrowName: "binary", delta: "binary", iceberg: "binary",
		notes: "the table stores plain binary; lakesql checks the length in bytes (1406 when longer); BINARY values are not padded"},
	{names: []string{"BLOB"}, params: paramLengthOptional, arrow: arrow.BinaryTypes.Binary,
		mysql: "BLOB[(n)]", example: "BLOB", arrowName: "binary", delta: "binary", iceberg: "binary",
		notes: "at most 65535 bytes (BLOB(n): the smallest BLOB type that holds n bytes); longer values are refused (1406)"},
	{names: []string{"TINYBLOB"}, params: paramNone, arrow: arrow.BinaryTypes.Binary,
		mysql: "TINYBLOB", example: "TINYBLOB", arrowName: "binary", delta: "binary", iceberg: "binary",
		notes: "at most 255 bytes; longer values are refused (1406)"},
	{names: []string{"MEDIUMBLOB"}, params: paramNone, arrow: arrow.BinaryTypes.Binary,
		mysql: "MEDIUMBLOB", example: "MEDIUMBLOB", arrowName: "binary", delta: "binary", iceberg: "binary",
		notes: "at most 16777215 bytes; longer values are refused (1406)"},
	{names: []string{"LONGBLOB"}, params: paramNone, arrow: arrow.BinaryTypes.Binary,
		mysql: "LONGBLOB", example: "LONGBLOB", arrowName: "binary", delta: "binary", iceberg: "binary"},
	{names: []string{"DATE"}, params: paramNone, arrow: arrow.FixedWidthTypes.Date32,
		mysql: "DATE", example: "DATE", arrowName: "date32", delta: "date", iceberg: "date",
		notes: "0001-01-01 to 9999-12-31; the zero date '0000-00-00' is refused (1292), as in MySQL's strict mode"},
	{names: []string{"DATETIME"}, params: paramFraction, arrow: timestampNTZ,
		mysql: "DATETIME[(p)]", example: "DATETIME(3)", arrowName: "timestamp[us]", delta: "timestamp_ntz", iceberg: "timestamp",
		notes: "a wall-clock time without zone; Delta needs the timestampNtz table feature; a value is rounded to p fraction digits when written (none without p, as in MySQL) and shown with exactly p on every path"},
	{names: []string{"TIMESTAMP"}, params: paramFraction, arrow: timestampUTC,
		mysql: "TIMESTAMP[(p)]", example: "TIMESTAMP", arrowName: "timestamp[us, tz=UTC]", delta: "timestamp", iceberg: "timestamptz",
		notes: "an instant, stored in UTC; a value is rounded to p fraction digits when written (none without p, as in MySQL) and shown with exactly p on every path; years 0001 to 9999, as Delta and Iceberg hold them, not MySQL's 1970 to 2038 (a limit of MySQL's own storage)"},

	// Refused types: parsing stops at them with ErrUnsupportedType.
	{names: []string{"BIGINT"}, sign: unsignedOnly, params: paramRefused,
		mysql: "BIGINT UNSIGNED", example: "BIGINT UNSIGNED",
		notes: "no Delta or Iceberg integer holds 0..2^64-1; use DECIMAL(20,0), or BIGINT when values stay below 2^63"},
	{names: []string{"TIME"}, params: paramRefused,
		mysql: "TIME", example: "TIME",
		notes: "a MySQL TIME is a signed duration of up to 838 hours, which no Delta type holds; use BIGINT (microseconds) or VARCHAR"},
	{names: []string{"YEAR"}, params: paramRefused,
		mysql: "YEAR", example: "YEAR",
		notes: "no Delta or Iceberg counterpart; use SMALLINT"},
	{names: []string{"BIT"}, params: paramRefused,
		mysql: "BIT(n)", example: "BIT(8)",
		notes: "no Delta or Iceberg counterpart; use BIGINT, BOOLEAN or VARBINARY"},
	{names: []string{"ENUM"}, params: paramRefused,
		mysql: "ENUM(...)", example: "ENUM('a','b')",
		notes: "no Delta or Iceberg counterpart; use VARCHAR(n)"},
	{names: []string{"SET"}, params: paramRefused,
		mysql: "SET(...)", example: "SET('a','b')",
		notes: "no Delta or Iceberg counterpart; use VARCHAR(n)"},
	{names: []string{"GEOMETRY", "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION", "GEOMCOLLECTION"},
		params: paramRefused,
		mysql:  "GEOMETRY, POINT, LINESTRING, POLYGON, MULTIPOINT, MULTILINESTRING, MULTIPOLYGON, GEOMETRYCOLLECTION", example: "POINT",
		notes: "Delta has no spatial types; store well-known binary (WKB) in a BLOB"},
}

// typeProblem is why a type was refused; the parser adds the column, the
// position and the error type.
type typeProblem struct {
	err error // ErrUnsupportedType or ErrInvalidDefinition
	msg string
}

func refuse(err error, format string, args ...any) *typeProblem {
	return &typeProblem{err: err, msg: fmt.Sprintf(format, args...)}
}

// lookupType reports whether name (upper case) is a type of the table at all,
// and returns its rule when every rule of that name refuses it, so that the
// parser can stop at ENUM before trying to read ENUM's parameter list.
func lookupType(name string) (known bool, refused *typeRule) {
	for i := range typeRules {
		r := &typeRules[i]
		if !slices.Contains(r.names, name) {
			continue
		}
		if r.params != paramRefused {
			return true, nil
		}
		if !known {
			known, refused = true, r
		}
	}
	return known, refused
}

// resolveType turns a type as written (upper-case name, integer parameters,
// UNSIGNED or not) into its canonical spelling and its Arrow type. The
// canonical spelling re-parses to the same type.
func resolveType(name string, args []uint32, unsigned bool) (string, arrow.DataType, *typeProblem) {
	// TINYINT(1) is the boolean of MySQL and of its connectors.
	if name == "TINYINT" && !unsigned && len(args) == 1 && args[0] == 1 {
		name, args = "BOOLEAN", nil
	}
	written := name
	if unsigned {
		written += " UNSIGNED"
	}
	known := false
	for i := range typeRules {
		r := &typeRules[i]
		if !slices.Contains(r.names, name) {
			continue
		}
		known = true
		if r.sign.allows(unsigned) {
			return r.resolve(written, args, unsigned)
		}
	}
	if known && unsigned {
		return "", nil, refuse(ErrUnsupportedType, "%s is not supported: UNSIGNED applies to integer types only", written)
	}
	return "", nil, refuse(ErrUnsupportedType, "unknown type %s", written)
}

// refusal is the message for a refused type.
func (r *typeRule) refusal(written string) *typeProblem {
	return refuse(ErrUnsupportedType, "%s is not supported: %s", written, r.notes)
}

func (r *typeRule) resolve(written string, args []uint32, unsigned bool) (string, arrow.DataType, *typeProblem) {
	canon := r.names[0]
	switch r.params {
	case paramRefused:
		return "", nil, r.refusal(written)
	case paramNone, paramDouble:
		if len(args) > 0 {
			if r.params == paramDouble && len(args) == 2 {
				return "", nil, refuse(ErrUnsupportedType, "%s(M,D) is not supported: MySQL deprecates it; use DECIMAL(M,D) or DOUBLE", written)
			}
			return "", nil, refuse(ErrInvalidDefinition, "%s takes no parameters", written)
		}
		return canon, r.arrow, nil
	case paramWidth:
		if len(args) > 1 {
			return "", nil, refuse(ErrInvalidDefinition, "%s takes at most one parameter, a display width", written)
		}
		if len(args) == 1 && args[0] > maxDisplayWidth {
			return "", nil, refuse(ErrInvalidDefinition, "display width %d is out of range (0 to %d)", args[0], maxDisplayWidth)
		}
		if unsigned {
			canon += " UNSIGNED"
		}
		return canon, r.arrow, nil
	case paramLengthOptional, paramLengthRequired:
		if len(args) > 1 {
			return "", nil, refuse(ErrInvalidDefinition, "%s takes one parameter, a length", written)
		}
		if len(args) == 0 {
			if r.params == paramLengthRequired {
				return "", nil, refuse(ErrInvalidDefinition, "%s needs a length, as in %s(255)", written, written)
			}
			return canon, r.arrow, nil
		}
		return fmt.Sprintf("%s(%d)", canon, args[0]), r.arrow, nil
	case paramFraction:
		if len(args) > 1 {
			return "", nil, refuse(ErrInvalidDefinition, "%s takes one parameter, the fractional seconds precision", written)
		}
		if len(args) == 0 {
			return canon, r.arrow, nil
		}
		if args[0] > MaxFraction {
			return "", nil, refuse(ErrInvalidDefinition, "fractional seconds precision %d is out of range (0 to %d)", args[0], MaxFraction)
		}
		return fmt.Sprintf("%s(%d)", canon, args[0]), r.arrow, nil
	case paramDecimal:
		p, s := uint32(10), uint32(0)
		switch len(args) {
		case 0:
		case 1:
			p = args[0]
		case 2:
			p, s = args[0], args[1]
		default:
			return "", nil, refuse(ErrInvalidDefinition, "%s takes at most two parameters, precision and scale", written)
		}
		if p < 1 {
			return "", nil, refuse(ErrInvalidDefinition, "DECIMAL precision %d is out of range (1 to %d)", p, MaxDecimalPrecision)
		}
		if p > MaxDecimalPrecision {
			return "", nil, refuse(ErrUnsupportedType, "DECIMAL precision %d is more than %d, the most Delta and Iceberg decimals hold", p, MaxDecimalPrecision)
		}
		if s > p {
			return "", nil, refuse(ErrInvalidDefinition, "DECIMAL scale %d is larger than its precision %d", s, p)
		}
		if s > MaxDecimalScale {
			return "", nil, refuse(ErrTooBigScale, "DECIMAL scale %d is more than %d, the most MySQL allows", s, MaxDecimalScale)
		}
		return fmt.Sprintf("DECIMAL(%d,%d)", p, s), &arrow.Decimal128Type{Precision: int32(p), Scale: int32(s)}, nil
	case paramFloat:
		switch len(args) {
		case 0:
			return canon, r.arrow, nil
		case 1:
			switch p := args[0]; {
			case p <= 24:
				return canon, r.arrow, nil
			case p <= 53:
				return resolveType("DOUBLE", nil, false)
			default:
				return "", nil, refuse(ErrInvalidDefinition, "FLOAT precision %d is out of range (0 to 53)", p)
			}
		case 2:
			return "", nil, refuse(ErrUnsupportedType, "%s(M,D) is not supported: MySQL deprecates it; use DECIMAL(M,D) or FLOAT", written)
		}
		return "", nil, refuse(ErrInvalidDefinition, "%s takes at most one parameter, a precision", written)
	}
	return "", nil, refuse(ErrUnsupportedType, "unknown type %s", written)
}
