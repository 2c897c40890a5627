package sqlsink_test

// Ingest throughput of the sink against plain DuckDB: `lakesql bench`'s
// ingest-arrow workload (internal/benchmark.IngestArrow), run here as Go
// benchmarks. (An external test package: internal/benchmark imports
// sqlsink.)
//
//	go test -tags duckdb_arrow -run '^$' -bench 'Ingest' -benchtime 3x ./sqlsink/
//	LAKESQL_BENCH=1 go test -tags duckdb_arrow -run TestIngestRatio -v ./sqlsink/
//
// BenchmarkIngestArrow is the sink's side: 10M rows as one epoch into a
// fresh Delta table, the sink's whole life timed. BenchmarkIngestDuckDBCopy
// is the reference: DuckDB writing the same Arrow batches to Parquet with
// one COPY, the floor of what writing these rows with DuckDB costs.

import (
	"testing"

	"github.com/lakesql/lakesql/internal/benchmark"
)

const benchRows = 10_000_000

func BenchmarkIngestArrow(b *testing.B) {
	benchmark.RunLakesql(b, benchmark.IngestArrow(false), benchRows)
}

func BenchmarkIngestDuckDBCopy(b *testing.B) {
	benchmark.RunReference(b, benchmark.IngestArrow(false), benchRows)
}

// TestIngestRatio runs the sink and the DuckDB reference interleaved, as
// `lakesql bench --only ingest-arrow` does, and prints the medians and
// their ratio (target >= 0.85). It never asserts on timing.
// LAKESQL_BENCH=1 turns it on; LAKESQL_BENCH_RUNS sets the runs per side.
func TestIngestRatio(t *testing.T) {
	benchmark.RunRatio(t, nil, benchmark.IngestArrow(false))
}

// TestIngestRatioIceberg is the ingest throughput of the sink into Iceberg
// against iceberg-go alone: `lakesql bench`'s ingest-iceberg workload, run
// with the provider's default writer (DuckDB's COPY writes the Parquet
// files, iceberg-go reads their footers) and with Options.IcebergGoWriter
// (DuckDB hands the rows to iceberg-go's writer as Arrow). The reference
// is iceberg-go appending the same batches itself.
//
//	LAKESQL_BENCH=1 go test -tags duckdb_arrow -run TestIngestRatioIceberg -v -timeout 30m ./sqlsink/
func TestIngestRatioIceberg(t *testing.T) {
	benchmark.RunRatio(t, nil, benchmark.IngestIceberg(), benchmark.IngestIcebergGoWriter())
}
