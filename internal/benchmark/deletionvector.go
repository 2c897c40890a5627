package benchmark

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/deltalake"
	"github.com/lakesql/lakesql/sqlsink"
)

// UpsertDV is the upsert-dv workload: n/100 upserts spread evenly over an
// n-row Delta table with deletion vectors on, one epoch through an upsert
// sink that marks the replaced rows in deletion vectors. The reference is
// the copy-on-write path of the same sink code (delete_mode =
// 'copy_on_write') on a copy of the same table, in the same run. Extra
// figures: the time of SELECT count(*), sum(amount) on the table with its
// DVs, and on a copy of it after OPTIMIZE.
func UpsertDV() Workload {
	return Workload{
		Name: "upsert-dv", Unit: "upserts/s", Target: AtLeast(3),
		Quick: Size{N: 1_000_000, Runs: 3}, Full: Size{N: 10_000_000, Runs: 3},
		Describe: func(n int) string {
			return fmt.Sprintf("%s upserts spread over a %s-row table with deletion vectors, one epoch", formatCount(n/upsertShare), formatCount(n))
		},
		Reference: "the same sink with delete_mode = 'copy_on_write' on a copy of the table (rewrites every file)",
		Setup:     func(ctx context.Context, env Env, n int) (Sides, error) { return setupDV(ctx, env, n, false) },
	}
}

// DeleteDV is the delete-dv workload: a changelog epoch deleting 1% of the
// rows of an n-row table, spread over every file, with deletion vectors,
// against copy-on-write; extra figures as UpsertDV's.
func DeleteDV() Workload {
	return Workload{
		Name: "delete-dv", Unit: "deletes/s", Target: AtLeast(5),
		Quick: Size{N: 1_000_000, Runs: 3}, Full: Size{N: 10_000_000, Runs: 3},
		Describe: func(n int) string {
			return fmt.Sprintf("DELETE of %s rows (1%%) spread over a %s-row table with deletion vectors, one epoch", formatCount(n/upsertShare), formatCount(n))
		},
		Reference: "the same sink with delete_mode = 'copy_on_write' on a copy of the table (rewrites every file)",
		Setup:     func(ctx context.Context, env Env, n int) (Sides, error) { return setupDV(ctx, env, n, true) },
	}
}

// dvSide is one sink of the workload: its table, the DuckDB behind it and
// the epochs it has committed.
type dvSide struct {
	dir   string
	db    *sql.DB
	sink  *sqlsink.Sink
	epoch int64
}

func openDVSide(ctx context.Context, env Env, dir string, mode sqlsink.DeleteMode) (*dvSide, error) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, err
	}
	s, err := sqlsink.New(sqlsink.Config{
		Name: "bench", Provider: deltalake.New(db, deltalake.Options{}),
		Table: catalogadapter.TableIdent{Name: dir}, Schema: rowSchema,
		Mode: sqlsink.ModeUpsert, Key: []string{"id"}, TempDir: filepath.Join(env.Dir, "spill"),
		TableProperties: map[string]string{"delta.enableDeletionVectors": "true"},
		DeleteMode:      mode, DisableAutoCompact: true,
	})
	if err == nil {
		err = s.Open(ctx)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open sink on %s: %w", dir, err)
	}
	last, _ := s.LastCommittedEpoch()
	return &dvSide{dir: dir, db: db, sink: s, epoch: last}, nil
}

func (d *dvSide) close() error { return errors.Join(d.sink.Close(), d.db.Close()) }

// run commits one epoch of the keys first, first+100, ... (upserts, or
// deletes) and returns the keys per second.
func (d *dvSide) run(ctx context.Context, first int64, keys int, deletes bool) (float64, error) {
	recs := makeBatches(first, upsertShare, keys, int(d.epoch)+1)
	if deletes {
		recs = withDeleteOp(recs)
	}
	defer releaseBatches(recs)
	start := time.Now()
	d.epoch++
	if _, err := epoch(ctx, d.sink, d.epoch, recs); err != nil {
		return 0, err
	}
	return float64(keys) / time.Since(start).Seconds(), nil
}

// readMillis times SELECT count(*), sum(amount) over the table's rows.
func readMillis(ctx context.Context, p catalogadapter.Scanner, db *sql.DB, dir string) (float64, int64, error) {
	start := time.Now()
	q, err := p.ScanSQL(ctx, catalogadapter.TableIdent{Name: dir}, db, -1, nil)
	if err != nil {
		return 0, 0, err
	}
	var n int64
	var sum sql.NullFloat64
	if err := db.QueryRowContext(ctx, "SELECT count(*), sum(amount) FROM ("+q+")").Scan(&n, &sum); err != nil {
		return 0, 0, fmt.Errorf("read: %w", err)
	}
	return float64(time.Since(start).Microseconds()) / 1000, n, nil
}

// readCosts are the read figures of the DV table: as it is, and a copy of
// it after OPTIMIZE (which purges the DVs).
func readCosts(ctx context.Context, env Env, dir string) (map[string]float64, error) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	p := deltalake.New(db, deltalake.Options{})
	defer p.Close()
	withDV, rows, err := readMillis(ctx, p, db, dir)
	if err != nil {
		return nil, err
	}
	cp := filepath.Join(env.Dir, "optimized")
	defer os.RemoveAll(cp)
	if err := copyTree(dir, cp); err != nil {
		return nil, err
	}
	if _, err := p.Compact(ctx, catalogadapter.TableIdent{Name: cp}, db, catalogadapter.CompactOptions{}); err != nil {
		return nil, fmt.Errorf("OPTIMIZE the copy: %w", err)
	}
	optimized, rows2, err := readMillis(ctx, p, db, cp)
	if err != nil {
		return nil, err
	}
	if rows != rows2 {
		return nil, fmt.Errorf("%d rows with DVs, %d after OPTIMIZE", rows, rows2)
	}
	return map[string]float64{"read_dv_ms": withDV, "read_optimized_ms": optimized, "read_dv_over_optimized": withDV / optimized}, nil
}

func setupDV(ctx context.Context, env Env, n int, deletes bool) (Sides, error) {
	if n < upsertShare {
		return nil, fmt.Errorf("needs at least %d rows, got %d", upsertShare, n)
	}
	keys := n / upsertShare
	dvDir, cowDir := filepath.Join(env.Dir, "dv"), filepath.Join(env.Dir, "cow")
	dv, err := openDVSide(ctx, env, dvDir, sqlsink.DeleteModeDeletionVectors)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(env.Log, "deletion vectors: loading %s rows\n", formatCount(n))
	recs := makeBatches(0, 1, n, 0)
	dv.epoch++
	_, err = epoch(ctx, dv.sink, dv.epoch, recs)
	releaseBatches(recs)
	if err == nil {
		err = copyTree(dvDir, cowDir)
	}
	var cow *dvSide
	if err == nil {
		cow, err = openDVSide(ctx, env, cowDir, sqlsink.DeleteModeCopyOnWrite)
	}
	if err != nil {
		dv.close()
		return nil, fmt.Errorf("load the table: %w", err)
	}
	// Each run takes other keys (37, 137, ...; then 38, 138, ...), so
	// deletes find rows and DVs grow run by run on both sides alike.
	runs := map[*dvSide]int64{}
	side := func(d *dvSide, extra bool) func(ctx context.Context) (Sample, error) {
		return func(ctx context.Context) (Sample, error) {
			first := 37 + runs[d]
			runs[d]++
			v, err := d.run(ctx, first, keys, deletes)
			if err != nil {
				return Sample{}, err
			}
			s := Sample{Value: v}
			if extra {
				if s.Extra, err = readCosts(ctx, env, d.dir); err != nil {
					return Sample{}, err
				}
			}
			return s, nil
		}
	}
	return sidesFuncs{
		lakesql:   side(dv, true),
		reference: side(cow, false),
		close:     func() error { return errors.Join(dv.close(), cow.close()) },
	}, nil
}

// withDeleteOp turns batches into changelog deletes: an _op column of "D"
// before the columns. It releases recs.
func withDeleteOp(recs []arrow.RecordBatch) []arrow.RecordBatch {
	fields := append([]arrow.Field{{Name: sqlsink.OpColumn, Type: arrow.BinaryTypes.String}}, rowSchema.Fields()...)
	schema := arrow.NewSchema(fields, nil)
	out := make([]arrow.RecordBatch, len(recs))
	for i, r := range recs {
		b := array.NewStringBuilder(memory.NewGoAllocator())
		for range r.NumRows() {
			b.Append("D")
		}
		op := b.NewArray()
		b.Release()
		out[i] = array.NewRecordBatch(schema, append([]arrow.Array{op}, r.Columns()...), r.NumRows())
		op.Release()
		r.Release()
	}
	return out
}
