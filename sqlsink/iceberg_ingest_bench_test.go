package sqlsink

// Ingest throughput of the sink into Iceberg against iceberg-go alone.
//
//	LAKESQL_BENCH=1 go test -tags duckdb_arrow -run TestIngestRatioIceberg -v -timeout 30m ./sqlsink/
//
// Both sides get the same pre-built Arrow batches (10M rows of id BIGINT,
// amount DOUBLE, region VARCHAR with 16 values, ts TIMESTAMP[us, UTC], in
// batches of 64k rows), so batch generation is never timed, and both
// write an unpartitioned table of a fresh SQLite catalog.
//
// The sink side times sqlsink end to end: New, Open (creates the table),
// BeginEpoch, one Write per batch, PreCommit, CommitEpoch (one snapshot
// with the epoch record), Close. It runs twice: as configured by default
// (DuckDB's COPY writes the Parquet files, iceberg-go reads their
// footers), and with Options.IcebergGoWriter (DuckDB hands the rows to
// iceberg-go's writer as Arrow).
//
// The reference is iceberg-go's own Table.AppendTable of the same batches:
// it writes the same Parquet files with the same writer and commits one
// snapshot, without a buffer, an epoch record or a retry loop.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/apacheiceberg"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

const (
	icebergBenchRows      = 10_000_000
	icebergBenchBatchRows = 64 << 10
)

var icebergBenchSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
}, nil)

func icebergBenchBatches(rows int) []arrow.RecordBatch {
	mem := memory.NewGoAllocator()
	b := array.NewRecordBuilder(mem, icebergBenchSchema)
	defer b.Release()
	regions := make([]string, 16)
	for i := range regions {
		regions[i] = fmt.Sprintf("region-%02d", i)
	}
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	var out []arrow.RecordBatch
	for done := 0; done < rows; {
		n := min(icebergBenchBatchRows, rows-done)
		for i := done; i < done+n; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.Float64Builder).Append(float64(i%100000) / 7)
			b.Field(2).(*array.StringBuilder).Append(regions[i%16])
			b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(base + int64(i)*1000))
		}
		out = append(out, b.NewRecordBatch())
		done += n
	}
	return out
}

func icebergBenchSink(ctx context.Context, dir string, recs []arrow.RecordBatch, opts apacheiceberg.Options) (time.Duration, error) {
	start := time.Now()
	cat, err := icetable.OpenCatalog(ctx, icetable.CatalogConfig{DataDir: dir})
	if err != nil {
		return 0, err
	}
	defer cat.Close()
	s, err := New(Config{
		Name: "bench", Provider: apacheiceberg.New(cat, opts), Table: catalogadapter.TableIdent{Namespace: []string{"db"}, Name: "bench"},
		Schema: icebergBenchSchema, TempDir: filepath.Join(dir, "spill"),
	})
	if err != nil {
		return 0, err
	}
	if err := s.Open(ctx); err != nil {
		return 0, err
	}
	defer s.Close()
	if err := s.BeginEpoch(ctx, 1); err != nil {
		return 0, err
	}
	for _, r := range recs {
		if err := s.Write(ctx, r); err != nil {
			return 0, err
		}
	}
	if err := s.PreCommit(ctx, 1); err != nil {
		return 0, err
	}
	res, err := s.CommitEpoch(ctx, 1)
	if err != nil {
		return 0, err
	}
	if res.Rows != icebergBenchRows {
		return 0, fmt.Errorf("sink committed %d rows", res.Rows)
	}
	if err := s.Close(); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

func benchIcebergGo(ctx context.Context, dir string, recs []arrow.RecordBatch) (time.Duration, error) {
	start := time.Now()
	cat, err := icetable.OpenCatalog(ctx, icetable.CatalogConfig{DataDir: dir})
	if err != nil {
		return 0, err
	}
	defer cat.Close()
	is, err := icetable.SchemaFromArrow(icebergBenchSchema)
	if err != nil {
		return 0, err
	}
	tbl, err := cat.CreateTable(ctx, table.Identifier{"db", "bench"}, icetable.TableDef{Schema: is})
	if err != nil {
		return 0, err
	}
	at := array.NewTableFromRecords(icebergBenchSchema, recs)
	defer at.Release()
	tbl, err = tbl.AppendTable(ctx, at, icebergBenchBatchRows, nil)
	if err != nil {
		return 0, err
	}
	if n := tbl.CurrentSnapshot().Summary.Properties["added-records"]; n != fmt.Sprint(icebergBenchRows) {
		return 0, fmt.Errorf("iceberg-go appended %s rows", n)
	}
	return time.Since(start), nil
}

// TestIngestRatioIceberg measures; it asserts nothing about speed.
func TestIngestRatioIceberg(t *testing.T) {
	if os.Getenv("LAKESQL_BENCH") != "1" {
		t.Skip("set LAKESQL_BENCH=1 to measure ingest throughput")
	}
	ctx := context.Background()
	recs := icebergBenchBatches(icebergBenchRows)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	const rounds = 2
	var sink, sinkGo, ref time.Duration
	best := func(cur *time.Duration, d time.Duration, err error) {
		if err != nil {
			t.Fatal(err)
		}
		if *cur == 0 || d < *cur {
			*cur = d
		}
	}
	for i := 0; i < rounds; i++ {
		d, err := benchIcebergGo(ctx, t.TempDir(), recs)
		best(&ref, d, err)
		d, err = icebergBenchSink(ctx, t.TempDir(), recs, apacheiceberg.Options{})
		best(&sink, d, err)
		d, err = icebergBenchSink(ctx, t.TempDir(), recs, apacheiceberg.Options{IcebergGoWriter: true})
		best(&sinkGo, d, err)
	}
	rate := func(d time.Duration) float64 { return float64(icebergBenchRows) / d.Seconds() }
	t.Logf("sqlsink -> Iceberg (DuckDB COPY):        %.2fM rows/s (%v, best of %d)", rate(sink)/1e6, sink.Round(time.Millisecond), rounds)
	t.Logf("sqlsink -> Iceberg (iceberg-go writer):  %.2fM rows/s (%v, best of %d)", rate(sinkGo)/1e6, sinkGo.Round(time.Millisecond), rounds)
	t.Logf("iceberg-go Table.AppendTable:            %.2fM rows/s (%v, best of %d)", rate(ref)/1e6, ref.Round(time.Millisecond), rounds)
	t.Logf("ratio: %.2f (target >= 0.9); with iceberg-go's writer: %.2f", rate(sink)/rate(ref), rate(sinkGo)/rate(ref))
}
