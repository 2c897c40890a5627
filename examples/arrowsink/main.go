// Command arrowsink streams Arrow record batches into a Delta table with the
// sqlsink Go API, no SQL: each epoch becomes one table version, a replayed
// epoch is skipped, and a rolled-back one leaves nothing.
//
//	go run -tags duckdb_arrow ./examples/arrowsink [-data DIR]
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" driver

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/deltalake"
	"github.com/lakesql/lakesql/sqlsink"
)

var schema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

func main() {
	data := flag.String("data", "", "data directory, new or empty (default: a temporary one, removed at exit)")
	flag.Parse()
	dir := *data
	if dir == "" {
		tmp, err := os.MkdirTemp("", "lakesql-arrowsink-")
		if err != nil {
			log.Fatal(err)
		}
		dir = tmp
	}
	err := run(os.Stdout, dir)
	if *data == "" {
		os.RemoveAll(dir)
	}
	if err != nil {
		log.Fatal(err)
	}
}

func run(w io.Writer, dir string) error {
	ctx := context.Background()
	dir, err := filepath.Abs(dir) // Delta tables are named by absolute path
	if err != nil {
		return err
	}
	// DuckDB writes and reads the Parquet files; the provider writes the log.
	duck, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer duck.Close()
	provider := deltalake.New(duck, deltalake.Options{})
	table := catalogadapter.TableIdent{Name: filepath.Join(dir, "lake", "orders")}
	cfg := sqlsink.Config{
		Name:     "orders", // the writer id, recorded with every epoch, derives from it
		Provider: provider,
		Table:    table,
		Schema:   schema, // creates the table if missing
		Mode:     sqlsink.ModeUpsert,
		Key:      []string{"id"},
		StateDir: filepath.Join(dir, "state", "orders"), // lets a restart clean up after a crash
		TempDir:  filepath.Join(dir, "tmp"),             // where the buffer spills
	}

	if err := firstRun(ctx, w, cfg); err != nil {
		return err
	}
	if err := secondRun(ctx, w, cfg); err != nil {
		return err
	}

	// Read the last committed version back: ScanSQL is a DuckDB query over
	// the snapshot's files.
	q, err := provider.ScanSQL(ctx, table, duck, -1, nil)
	if err != nil {
		return err
	}
	rows, err := duck.QueryContext(ctx, "SELECT id, amount, region FROM ("+q+") ORDER BY id")
	if err != nil {
		return err
	}
	defer rows.Close()
	fmt.Fprintln(w, "\nid  amount  region")
	for rows.Next() {
		var id int64
		var amount float64
		var region string
		if err := rows.Scan(&id, &amount, &region); err != nil {
			return err
		}
		fmt.Fprintf(w, "%-3d %6.1f  %s\n", id, amount, region)
	}
	return rows.Err()
}

// firstRun commits two epochs.
func firstRun(ctx context.Context, w io.Writer, cfg sqlsink.Config) error {
	s, err := open(ctx, cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	// Epoch 1: two batches, one commit.
	err = epoch(ctx, w, s, 1,
		orders([]int64{1, 2, 3}, []float64{9.5, 20, 30}, []string{"eu", "eu", "us"}),
		orders([]int64{4}, []float64{40}, []string{"us"}))
	if err != nil {
		return err
	}
	// Epoch 2: upsert mode replaces the row of a key that exists.
	return epoch(ctx, w, s, 2, orders([]int64{2, 5}, []float64{25, 50}, []string{"eu", "apac"}))
}

// secondRun is the same program after a restart: it replays epoch 2 and
// rolls back epoch 3.
func secondRun(ctx context.Context, w io.Writer, cfg sqlsink.Config) error {
	s, err := open(ctx, cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	// The new sink read its last epoch from the table itself.
	last, _ := s.LastCommittedEpoch()
	fmt.Fprintf(w, "reopened: last committed epoch %d\n", last)
	// Replaying epoch 2 succeeds and writes nothing.
	if err := epoch(ctx, w, s, 2, orders([]int64{2, 5}, []float64{25, 50}, []string{"eu", "apac"})); err != nil {
		return err
	}
	// Epoch 3 is rolled back: its rows and staged files are discarded.
	if err := s.BeginEpoch(ctx, 3); err != nil {
		return err
	}
	rec := orders([]int64{6}, []float64{60}, []string{"us"})
	err = s.Write(ctx, rec)
	rec.Release()
	if err != nil {
		return err
	}
	if err := s.RollbackEpoch(ctx, 3); err != nil {
		return err
	}
	m := s.Metrics()
	fmt.Fprintf(w, "epoch 3: rolled back\nsince reopening: %d committed, %d skipped, %d rolled back; table at version %d\n",
		m.EpochsCommitted, m.EpochsSkipped, m.EpochsRolledBack, m.LastVersion)
	return nil
}

// open creates a sink and opens it: it reaches (or creates) the table and
// recovers the last committed epoch.
func open(ctx context.Context, cfg sqlsink.Config) (*sqlsink.Sink, error) {
	s, err := sqlsink.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := s.Open(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// epoch writes batches as epoch e: BeginEpoch, Write*, PreCommit (stages the
// Parquet files, invisibly), CommitEpoch (one table version). On an error
// the epoch is rolled back.
func epoch(ctx context.Context, w io.Writer, s *sqlsink.Sink, e int64, batches ...arrow.RecordBatch) (err error) {
	defer func() {
		for _, b := range batches {
			b.Release() // the sink keeps its own references
		}
		if err != nil {
			s.RollbackEpoch(ctx, e)
		}
	}()
	if err := s.BeginEpoch(ctx, e); err != nil {
		return err
	}
	for _, b := range batches {
		if err := s.Write(ctx, b); err != nil {
			return err
		}
	}
	if err := s.PreCommit(ctx, e); err != nil {
		return err
	}
	res, err := s.CommitEpoch(ctx, e)
	if err != nil {
		return err
	}
	if res.Skipped {
		fmt.Fprintf(w, "epoch %d: skipped, the table already holds it (version %d)\n", e, res.Version)
	} else {
		fmt.Fprintf(w, "epoch %d: %d batch(es) committed as table version %d\n", e, len(batches), res.Version)
	}
	return nil
}

// orders builds a record batch of the table's schema.
func orders(ids []int64, amounts []float64, regions []string) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
	b.Field(1).(*array.Float64Builder).AppendValues(amounts, nil)
	b.Field(2).(*array.StringBuilder).AppendValues(regions, nil)
	return b.NewRecordBatch()
}
