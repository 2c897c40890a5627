package benchmark

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/apacheiceberg"
	"github.com/lakesql/lakesql/sqlsink"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// IngestIceberg is workload 8: n rows as one epoch through sqlsink into a
// new Iceberg table of the default catalog (iceberg-go's SQL catalog on
// SQLite in the data directory), against iceberg-go appending the same
// Arrow batches to a new table of the same catalog itself
// (Transaction.AppendTable, then Commit). Both sides create their table
// inside the timed part.
func IngestIceberg() Workload {
	return Workload{
		Name: "ingest-iceberg", Unit: "rows/s", Target: AtLeast(0.9),
		Quick: Size{N: 1_000_000, Runs: 3}, Full: Size{N: 10_000_000, Runs: 5},
		Describe:  func(n int) string { return formatCount(n) + " rows, one epoch, Iceberg (SQLite catalog)" },
		Reference: "iceberg-go: CreateTable, Transaction.AppendTable of the same Arrow batches, Commit",
		Setup: func(ctx context.Context, env Env, n int) (Sides, error) {
			return setupIngestIceberg(ctx, env, n, apacheiceberg.Options{})
		},
	}
}

// IngestIcebergGoWriter is IngestIceberg with the provider handing the
// rows to iceberg-go's Parquet writer as Arrow (Options.IcebergGoWriter)
// instead of DuckDB's COPY writing the files. Not in All: apacheiceberg's
// TestIngestRatio runs it next to IngestIceberg.
func IngestIcebergGoWriter() Workload {
	w := IngestIceberg()
	w.Name = "ingest-iceberg-gowriter"
	w.Describe = func(n int) string {
		return formatCount(n) + " rows, one epoch, Iceberg (SQLite catalog), iceberg-go's writer"
	}
	w.Setup = func(ctx context.Context, env Env, n int) (Sides, error) {
		return setupIngestIceberg(ctx, env, n, apacheiceberg.Options{IcebergGoWriter: true})
	}
	return w
}

func setupIngestIceberg(ctx context.Context, env Env, n int, opts apacheiceberg.Options) (Sides, error) {
	cat, err := icetable.OpenCatalog(ctx, icetable.CatalogConfig{DataDir: env.Dir})
	if err != nil {
		return nil, err
	}
	provider := apacheiceberg.New(cat, opts)
	stored, err := apacheiceberg.StoredSchema(rowSchema)
	if err != nil {
		cat.Close()
		return nil, err
	}
	iceSchema, err := icetable.SchemaFromArrow(rowSchema)
	if err != nil {
		cat.Close()
		return nil, err
	}
	// The same columns under the schema the table reports, without a copy.
	raw := makeBatches(0, 1, n, 0)
	recs := make([]arrow.RecordBatch, len(raw))
	for i, r := range raw {
		recs[i] = array.NewRecordBatch(stored, r.Columns(), r.NumRows())
	}
	releaseBatches(raw)
	run := 0
	return sidesFuncs{
		lakesql: func(ctx context.Context) (Sample, error) {
			run++
			id := catalogadapter.TableIdent{Namespace: []string{"bench"}, Name: fmt.Sprintf("lakesql%d", run)}
			start := time.Now()
			s, err := sqlsink.New(sqlsink.Config{
				Name: "bench", Provider: provider, Table: id, Schema: stored,
				TempDir: filepath.Join(env.Dir, "spill"),
			})
			if err != nil {
				return Sample{}, err
			}
			res, err := writeEpoch(ctx, s, 1, recs)
			if err != nil {
				return Sample{}, err
			}
			d := time.Since(start)
			if res.Rows != int64(n) {
				return Sample{}, fmt.Errorf("commit result %+v, want %d rows", res, n)
			}
			return Sample{Value: float64(n) / d.Seconds()}, dropIcebergTable(ctx, cat, table.Identifier{"bench", id.Name})
		},
		reference: func(ctx context.Context) (Sample, error) {
			ident := table.Identifier{"bench", fmt.Sprintf("reference%d", run)}
			start := time.Now()
			tbl, err := cat.CreateTable(ctx, ident, icetable.TableDef{Schema: iceSchema})
			if err != nil {
				return Sample{}, err
			}
			at := array.NewTableFromRecords(stored, recs)
			defer at.Release()
			tx := tbl.NewTransaction()
			if err := tx.AppendTable(ctx, at, batchRows, nil); err != nil {
				return Sample{}, fmt.Errorf("AppendTable: %w", err)
			}
			tbl, err = tx.Commit(ctx)
			if err != nil {
				return Sample{}, fmt.Errorf("commit: %w", err)
			}
			d := time.Since(start)
			snap := tbl.CurrentSnapshot()
			if snap == nil || snap.Summary == nil || snap.Summary.Properties["total-records"] != strconv.Itoa(n) {
				return Sample{}, fmt.Errorf("iceberg-go's snapshot %+v, want %d records", snap, n)
			}
			return Sample{Value: float64(n) / d.Seconds()}, dropIcebergTable(ctx, cat, ident)
		},
		close: func() error {
			releaseBatches(recs)
			return cat.Close()
		},
	}, nil
}

// dropIcebergTable drops a table and deletes its files, so that runs do
// not fill the disk.
func dropIcebergTable(ctx context.Context, cat *icetable.Catalog, ident table.Identifier) error {
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return err
	}
	dir, err := icetable.LocalPath(tbl.Location())
	if err != nil {
		return err
	}
	return errors.Join(cat.Iceberg().DropTable(ctx, ident), os.RemoveAll(dir))
}
