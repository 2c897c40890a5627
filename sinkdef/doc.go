// Package sinkdef opens a sink from its definition: it resolves a CREATE
// SINK (sinkddl) against the data directory and the allowed roots, reads
// its WITH options once into a Definition kept with the sink, and opens
// the sqlsink.Sink over the provider of its format (a Delta table, local
// or on object storage; a table of an Iceberg catalog).
//
// It is the wiring layer: the one package above the sink engine that
// imports the provider backends (catalogadapter/...) and the table
// formats (tableformat/...), and it owns what they open once and share
// between sinks (Backends: the Iceberg catalogs, the Delta providers of
// each set of storage options). The SQL front ends reach the engine
// through it and sqlsink, never a backend or a table format.
package sinkdef
