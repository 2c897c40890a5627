package apacheiceberg_test

// Ingest throughput of the sink into Iceberg against iceberg-go alone:
// `lakesql bench`'s ingest-iceberg workload (internal/benchmark), run with
// the provider's default writer (DuckDB's COPY writes the Parquet files,
// iceberg-go reads their footers) and with Options.IcebergGoWriter
// (DuckDB hands the rows to iceberg-go's writer as Arrow). The reference
// is iceberg-go appending the same batches itself. (An external test
// package: internal/benchmark imports apacheiceberg.)
//
//	LAKESQL_BENCH=1 go test -tags duckdb_arrow -run TestIngestRatio -v -timeout 30m ./catalogadapter/apacheiceberg/

import (
	"testing"

	"github.com/lakesql/lakesql/internal/benchmark"
)

// TestIngestRatio measures; it asserts nothing about speed.
func TestIngestRatio(t *testing.T) {
	benchmark.RunRatio(t, nil, benchmark.IngestIceberg(), benchmark.IngestIcebergGoWriter())
}
