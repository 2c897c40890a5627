package planner

import (
	"time"
	_ "unsafe" // go:linkname

	_ "github.com/dolthub/go-mysql-server/sql/types"
)

// go-mysql-server holds TIMESTAMP to MySQL's own storage range (1970 to
// 2038), a limit of MySQL's 4-byte TIMESTAMP. A lakesql TIMESTAMP is a Delta
// timestamp or an Iceberg timestamptz, which span the years 0001 to 9999,
// and tables other engines write hold such values: the range here is
// theirs, that of DATETIME. go-mysql-server reads these two bounds wherever
// it checks a TIMESTAMP (conversion, MinimumTime, MaximumTime).

//go:linkname gmsMinTimestamp github.com/dolthub/go-mysql-server/sql/types.datetimeTypeMinTimestamp
var gmsMinTimestamp time.Time

//go:linkname gmsMaxTimestamp github.com/dolthub/go-mysql-server/sql/types.datetimeTypeMaxTimestamp
var gmsMaxTimestamp time.Time

func init() {
	gmsMinTimestamp = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	gmsMaxTimestamp = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
}
