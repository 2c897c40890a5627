// Package benchmark is `lakesql bench`: workloads that measure lakesql
// against a reference doing the same job in the same process (DuckDB
// writing Parquet, go-mysql-server discarding rows, iceberg-go appending),
// so that every figure is a ratio that holds on a shared, noisy machine
// where absolute times do not.
//
// A workload is set up once, then its two sides run interleaved, lakesql
// (A) then the reference (B), A B A B, after one untimed warm-up pair. A
// result is the median of each side's runs, their spread, the ratio of the
// medians and the target that ratio should meet. Nothing here asserts on
// timing: the output is for people and for the README.
//
// The Go benchmarks of the layers below (sqlsink, planner/wire,
// catalogadapter/apacheiceberg, tableformat/delta) run these workloads
// too, from external test packages, through RunLakesql, RunReference,
// RunRatio and HistoryTable: one implementation of each.
package benchmark
