// Package layers holds lakesql's layering rule and the test that keeps the
// import graph to it (layers_test.go runs `go list` over the module).
//
// From the top: programs (cmd, examples) → the SQL front ends (planner,
// planner/wire, driver, sqllogictest) → the wiring (sinkdef) → the sink
// engine (sqlsink) → the provider contract and its backends
// (catalogadapter/...) → table formats (tableformat/...) → leaves
// (internal/..., and sinkddl, the statement language). A package imports
// its own layer, the layer right below, and leaves; never a layer above,
// never past the next one down. The wiring sits half a layer above the
// engine, so the front ends import it and sqlsink; it alone may import
// every layer below it (it picks a sink's backend and table format). Test
// harnesses (internal/benchmark, internal/deltatest) may import any
// layer, and only programs import them.
//
// Imports that skip a layer today are listed in the test as debts, to be
// paid by the structure re-cut; the test fails on a new one, and on a paid
// one still listed.
package layers
