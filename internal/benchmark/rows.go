package benchmark

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// rowSchema is the row every workload writes unless it says otherwise:
// (id BIGINT NOT NULL, amount DOUBLE, region VARCHAR(16), ts TIMESTAMP),
// TIMESTAMP being microseconds in UTC, as lakesql stores it.
var rowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
}, nil)

// rowColumnsSQL declares rowSchema in CREATE SINK.
const rowColumnsSQL = "(id BIGINT NOT NULL, amount DOUBLE, region VARCHAR(16), ts TIMESTAMP(6))"

// regions are the 16 values of the region column, 2 to 12 bytes long.
var regions = []string{
	"eu-west", "eu-central", "eu-north", "eu-south",
	"us-east", "us-west", "us-central", "us-gov",
	"ap-south", "ap-northeast", "ap-southeast", "ap-east",
	"sa-east", "ca-central", "me-south", "af",
}

// batchRows is the size of the Arrow batches the workloads write.
const batchRows = 64 << 10

// tsBase is 2026-01-01T00:00:00Z in microseconds; row id is tsBase + id ms.
const tsBase = int64(1_767_225_600_000_000)

// rowAmount is the amount of row id, shifted by version so that upserts
// change something.
func rowAmount(id int64, version int) float64 {
	return float64(id%100_000)/100 + float64(version)
}

// makeBatches builds the rows with the given ids (first, first+step, ...,
// n of them) as batches of batchRows; the caller releases them.
func makeBatches(first, step int64, n, version int) []arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.NewGoAllocator(), rowSchema)
	defer b.Release()
	ids := b.Field(0).(*array.Int64Builder)
	amounts := b.Field(1).(*array.Float64Builder)
	regs := b.Field(2).(*array.StringBuilder)
	tss := b.Field(3).(*array.TimestampBuilder)
	var out []arrow.RecordBatch
	for done := 0; done < n; {
		k := min(batchRows, n-done)
		ids.Reserve(k)
		amounts.Reserve(k)
		regs.Reserve(k)
		regs.ReserveData(k * 8)
		tss.Reserve(k)
		for i := range k {
			id := first + int64(done+i)*step
			ids.UnsafeAppend(id)
			amounts.UnsafeAppend(rowAmount(id, version))
			regs.Append(regions[id%int64(len(regions))])
			tss.UnsafeAppend(arrow.Timestamp(tsBase + id*1000))
		}
		out = append(out, b.NewRecordBatch())
		done += k
	}
	return out
}

func releaseBatches(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

func countRows(recs []arrow.RecordBatch) int64 {
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	return n
}
