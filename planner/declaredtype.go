package planner

// The go-mysql-server type of a sink column. A column declared in CREATE
// SINK shows its declared type (VARCHAR(16), TINYINT UNSIGNED, JSON, ...)
// in information_schema, SHOW COLUMNS and result metadata, although the
// table stores a wider one (a plain string, a 16-bit integer); a column of
// an attached table without a declaration shows the natural MySQL type of
// its Arrow type.

import (
	"regexp"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/lakesql/lakesql/sinkddl"
)

// canonicalType splits a canonical spelling (resolveType's): a name, up to
// two parameters, UNSIGNED.
var canonicalType = regexp.MustCompile(`^([A-Z]+)(?:\((\d+)(?:,(\d+))?\))?( UNSIGNED)?$`)

// declaredType returns the go-mysql-server type of a column declared as
// sqlType and stored as at; ok is false when the spelling is not one
// resolveType gives, and the Arrow type decides.
func declaredType(sqlType string, at arrow.DataType) (t gms.Type, ok bool) {
	m := canonicalType.FindStringSubmatch(sqlType)
	if m == nil {
		return nil, false
	}
	name, unsigned := m[1], m[4] != ""
	n, hasN := int64(0), m[2] != ""
	if hasN {
		n, _ = strconv.ParseInt(m[2], 10, 64)
	}
	str := func(base query.Type, length int64) gms.Type {
		return types.MustCreateString(base, length, gms.Collation_Default)
	}
	switch name {
	case "BOOLEAN":
		return types.Boolean, true
	case "TINYINT":
		if unsigned {
			return types.Uint8, true
		}
		return types.Int8, true
	case "SMALLINT":
		if unsigned {
			return types.Uint16, true
		}
		return types.Int16, true
	case "MEDIUMINT":
		if unsigned {
			return types.Uint24, true
		}
		return types.Int24, true
	case "INT":
		if unsigned {
			return types.Uint32, true
		}
		return types.Int32, true
	case "BIGINT":
		return types.Int64, true
	case "FLOAT":
		return types.Float32, true
	case "DOUBLE":
		return types.Float64, true
	case "CHAR":
		if !hasN {
			n = 1
		}
		return str(sqltypes.Char, n), true
	case "VARCHAR":
		return str(sqltypes.VarChar, n), true
	case "TINYTEXT":
		return types.TinyText, true
	case "TEXT":
		if hasN {
			return lobType4(n*4, types.Text, types.MediumText, types.LongText), true
		}
		return types.Text, true
	case "MEDIUMTEXT":
		return types.MediumText, true
	case "LONGTEXT":
		return types.LongText, true
	case "JSON":
		return jsonText{types.LongText}, true
	case "BINARY", "VARBINARY":
		// BINARY values are stored as written, not padded with zero
		// bytes as go-mysql-server's BINARY type pads them; the column
		// shows as VARBINARY(n), which is what it holds.
		if !hasN {
			n = 1
		}
		return types.MustCreateBinary(sqltypes.VarBinary, n), true
	case "TINYBLOB":
		return types.TinyBlob, true
	case "BLOB":
		if hasN {
			return lobType4(n, types.Blob, types.MediumBlob, types.LongBlob), true
		}
		return types.Blob, true
	case "MEDIUMBLOB":
		return types.MediumBlob, true
	case "LONGBLOB":
		return types.LongBlob, true
	}
	// DECIMAL, DATE, DATETIME, TIMESTAMP: the Arrow type carries what
	// the declaration says (the fraction digits are set by the caller).
	return nil, false
}

// lobType4 is the smallest TEXT or BLOB type that holds n bytes (TINY is
// never chosen for TEXT(n) and BLOB(n), as in MySQL for n > 255).
func lobType4(n int64, small, medium, long gms.Type) gms.Type {
	switch {
	case n <= types.TextBlobMax:
		return small
	case n <= types.MediumTextBlobMax:
		return medium
	}
	return long
}

// jsonText is a JSON column: shown as json (in metadata and as the result
// field's type), held as its text. go-mysql-server's own JSON type would
// parse the text into float64s, losing the digits of large numbers;
// lakesql stores and returns the text as written (checked to be JSON).
type jsonText struct{ gms.StringType }

func (jsonText) String() string   { return "json" }
func (jsonText) Type() query.Type { return sqltypes.TypeJSON }

func (j jsonText) Equals(o gms.Type) bool {
	_, ok := o.(jsonText)
	return ok
}

var _ gms.Type = jsonText{}

// wideDecimal marks a DECIMAL column whose scale go-mysql-server cannot
// hold (above MaxDecimalScale, as Spark allows up to 38): it is read as its
// text, every digit kept.
func wideDecimal(t *arrow.Decimal128Type) bool { return t.Scale > sinkddl.MaxDecimalScale }

// describeDecimal is the text type of a wide DECIMAL: a VARCHAR long enough
// for every digit, the sign and the point.
func describeDecimal(t *arrow.Decimal128Type) gms.Type {
	return types.MustCreateString(sqltypes.VarChar, int64(t.Precision)+2, gms.Collation_Default)
}
