// Package sqlquote quotes names and string literals for the SQL that
// lakesql writes: for DuckDB, standard SQL quoting, where the quote is
// doubled inside (Ident, String); for MySQL and the sink DDL, backquoted
// names and backslash escapes (MySQLIdent, MySQLString).
package sqlquote

import "strings"

// Ident quotes a SQL identifier for DuckDB.
func Ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// String quotes a SQL string literal for DuckDB.
func String(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
