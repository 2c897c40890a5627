//go:build duckdb_arrow

// Package duckarrow is lakesql's one door to DuckDB's Arrow interface
// (Arrow record batches in and out of a DuckDB connection). duckdb-go
// compiles that interface only under the duckdb_arrow build tag; keeping
// every use behind this package lets a build without the tag fail in one
// place, with an error that names the fix (notag.go).
package duckarrow

import (
	"database/sql/driver"

	"github.com/duckdb/duckdb-go/v2"
)

// Arrow is a DuckDB connection's Arrow interface.
type Arrow = duckdb.Arrow

// FromConn returns the Arrow interface of a DuckDB driver connection.
func FromConn(c driver.Conn) (*Arrow, error) { return duckdb.NewArrowFromConn(c) }
