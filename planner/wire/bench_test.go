package wire_test

// INSERT throughput over the MySQL wire against go-mysql-server's own
// ceiling, and the latency of single-row autocommit INSERTs: `lakesql
// bench`'s ingest-wire and commit-latency workloads (internal/benchmark),
// run here from go test. (An external test package: internal/benchmark
// imports planner/wire.)
//
//	LAKESQL_BENCH=1 go test -tags duckdb_arrow -run TestWireInsertRatio -v ./planner/wire
//	go test -tags duckdb_arrow -run '^$' -bench WireInsert -benchtime 3x ./planner/wire
//
// Both servers run in this process on loopback TCP and get the same
// statements through go-sql-driver/mysql on one connection: BEGIN,
// INSERTs of 1000 rows each, COMMIT. lakesql writes into an append-mode
// Delta sink, COMMIT included in its time; the reference is a plain
// go-mysql-server whose table counts the rows it is given and drops them:
// parsing, analysis, value conversion and the wire are all it costs, which
// is the front end's ceiling.

import (
	"testing"

	"github.com/lakesql/lakesql/internal/benchmark"
)

const (
	// benchRows is one epoch's rows: 150 INSERTs of 1000 rows.
	benchRows = 150_000
	// benchAutocommit is the number of timed single-row autocommit INSERTs.
	benchAutocommit = 300
)

// TestWireInsertRatio runs lakesql and the discarding reference
// interleaved, then the autocommit INSERTs against the floor of a durable
// commit, as `lakesql bench --only ingest-wire,commit-latency` does, and
// prints the medians, their ratios and the commits' p50 and p99. It never
// asserts on timing. LAKESQL_BENCH=1 turns it on; LAKESQL_BENCH_RUNS sets
// the runs per side.
func TestWireInsertRatio(t *testing.T) {
	benchmark.RunRatio(t, map[string]int{"ingest-wire": benchRows, "commit-latency": benchAutocommit},
		benchmark.IngestWire(), benchmark.CommitLatency())
}

// BenchmarkWireInsert times one epoch (BEGIN, the INSERTs, COMMIT) per
// iteration on each server; building the statements is not timed.
func BenchmarkWireInsert(b *testing.B) {
	b.Run("lakesql", func(b *testing.B) { benchmark.RunLakesql(b, benchmark.IngestWire(), benchRows) })
	b.Run("discard", func(b *testing.B) { benchmark.RunReference(b, benchmark.IngestWire(), benchRows) })
}
