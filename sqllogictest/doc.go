// Package sqllogictest runs sqllogictest (.slt) files against lakesql: the
// embedded engine through the "lakesql" database/sql driver, or a server
// (lakesql serve, or any MySQL server) through go-sql-driver/mysql. It is
// what `lakesql test` runs; it is written here, not borrowed, because the
// common harnesses split SQL at '#' inside strings and at line ends.
//
// # Format
//
// Records are separated by blank lines. Between records, a line starting
// with '#' is a comment; inside a record every line is content.
//
//	statement ok [CONN]
//	statement error [CODE] [CONN]     any error; CODE: its MySQL error number
//	SQL (any number of lines)
//	----                              (error only) the lines up to a blank line
//	expected message                  must be a substring of the error message
//
//	query TYPES [nosort|rowsort|valuesort] [label-NAME] [CONN]
//	SQL
//	----
//	results
//
// TYPES has one letter per column: I (integer), R (float, written with three
// decimals), T or anything else (text). NULL is written NULL and the empty
// string (empty). Results are one value per line (the classic layout) or one
// row per line with values separated by tabs or spaces, or the line
// "N values hashing to MD5" (the MD5 of every value followed by a newline).
// rowsort and valuesort sort both sides before comparing. A query with no
// ---- expects no rows. Queries with the same label must give the same
// result.
//
// Other records: hash-threshold N (failures show results of more than N
// values as a hash); halt (stop the file); skipif ENGINE and onlyif ENGINE in
// front of a record (this engine is lakesql, and mysql too since lakesql
// speaks its dialect, and so are the run's labels, Options.Labels: the
// project's suites mark with lakesql-s3 what differs when Delta sinks live
// on object storage); and DuckDB's extensions: connection labels (CONN, any
// name: each is its own session; none is the default session); restart
// (close every session, reopen the engine on the same data directory, see
// Options.Restart for servers); loop VAR START END ... endloop (END
// excluded, ${VAR} replaced in SQL and results); require CAPABILITY (skip
// the rest of the file, counted as skipped, when the capability is missing);
// mode skip and mode unskip; and __TEST_DIR__, replaced by a folder of its
// own for each file, under which sink locations are allowed (a local one,
// or one on object storage with Options.TestDirRoot).
//
// Statements and queries are counted as passed, failed or skipped; each
// failure is reported with file:line, the SQL, what was expected and what
// happened.
package sqllogictest
