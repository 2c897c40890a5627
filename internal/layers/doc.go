// Package layers holds lakesql's layering rule and the test that keeps the
// import graph to it (layers_test.go runs `go list` over the module).
//
// From the top: programs (cmd, examples) → the SQL front ends (planner,
// planner/wire, sinkddl, driver, sqllogictest) → the sink engine (sqlsink) → the
// provider contract and its backends (catalogadapter/...) → table formats
// (tableformat/...) → leaves (internal/...). A package imports its own
// layer, the layer right below, and leaves; never a layer above, never past
// the next one down. Test harnesses (internal/benchmark, internal/deltatest)
// may import any layer, and only programs import them.
//
// Imports that skip a layer today are listed in the test as debts, to be
// paid by the structure re-cut; the test fails on a new one, and on a paid
// one still listed.
package layers
