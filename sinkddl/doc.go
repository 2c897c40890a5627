// Package sinkddl is lakesql's own statement language: CREATE SINK, ALTER
// SINK (altersink.go), DROP SINK, SHOW SINKS, SHOW CREATE SINK, SHOW SINK
// STATUS and the maintenance statements. It holds their syntax tree (statement.go), a hand-written lexer (lexer.go) and
// recursive-descent parser (parser.go, createsink.go), the canonical SQL
// each statement renders (format.go), and the MySQL column types a sink
// takes (types.go). It imports nothing of go-mysql-server: the front end
// (planner) asks IsLakesqlStatement first, so the MySQL parser never sees a
// lakesql statement and errors in one come from here, with positions.
//
// The grammar is small and its errors must point at the exact token, name
// the column and say what lakesql expected; a hand-written parser gives
// that directly, where going through the MySQL parser would mean
// translating its errors and positions back.
package sinkddl
