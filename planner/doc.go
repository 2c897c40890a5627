// Package planner is lakesql's SQL front end over go-mysql-server: the
// engine that holds the sinks, the sessions and their transactions, the
// table adapter go-mysql-server plans INSERTs and SELECTs against, the
// route of simple SELECTs to DuckDB, the CALL procedures and the MySQL
// error codes. lakesql's own statements are parsed by sinkddl; the parser
// wrapper (parser.go) asks sinkddl.IsLakesqlStatement first, so the MySQL
// parser never sees one.
package planner
