// Package planner turns SQL text into what lakesql executes. So far it holds
// the parser of lakesql's own statements (CREATE SINK, DROP SINK, SHOW SINKS,
// SHOW CREATE SINK, SHOW SINK STATUS) and the mapping of MySQL column types
// to Arrow; the go-mysql-server integration will sit on top of them. The
// parser wrapper asks IsLakesqlStatement first, so the MySQL parser never
// sees a lakesql statement and errors in one come from here, with positions.
package planner
