// Package sqlquote quotes names and string literals for the SQL that
// lakesql writes for DuckDB: standard SQL quoting, where the quote is
// doubled inside. (MySQL quoting, with backslash escapes and backquoted
// names, is the DDL formatter's, in planner.)
package sqlquote

import "strings"

// Ident quotes a SQL identifier for DuckDB.
func Ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// String quotes a SQL string literal for DuckDB.
func String(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
