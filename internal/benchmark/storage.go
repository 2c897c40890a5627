package benchmark

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/deltalake"
	"github.com/lakesql/lakesql/sqlsink"
)

// storageKeys is the number of keys each epoch of the storage workload
// upserts, and the table's rows per epoch.
const storageKeys = 1_000

// storageTarget is the target file size of the storage workload's table,
// small enough that an epoch's keys rewrite a few of its files, not all.
const storageTarget = 1 << 20

// Storage is the storage workload: a Delta table of 1,000·n rows through
// an upsert sink (copy-on-write), then n epochs each upserting 1,000
// consecutive keys somewhere in it (so each rewrites a file or two, and
// leaves the old ones behind), then VACUUM RETAIN 0 HOURS with the
// retention check off. The figure is what the table's folder holds then,
// data and log, against the reference: the bytes of the live data files
// alone. Both are measured, not timed; the runs only repeat the reading.
// Before the VACUUM the folder held before_vacuum_mib.
func Storage() Workload {
	return Workload{
		Name: "storage", Unit: "MiB", Target: AtMost(1.2),
		Quick: Size{N: 100, Runs: 3}, Full: Size{N: 1_000, Runs: 3},
		Describe: func(n int) string {
			return fmt.Sprintf("%s upsert epochs of %s keys into a %s-row table, then VACUUM RETAIN 0 HOURS",
				formatCount(n), formatCount(storageKeys), formatCount(n*storageKeys))
		},
		Reference: "the live data files' bytes",
		NoWarmUp:  true,
		Setup:     setupStorage,
	}
}

func setupStorage(ctx context.Context, env Env, n int) (Sides, error) {
	dir := filepath.Join(env.Dir, "orders")
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	p := deltalake.New(db, deltalake.Options{})
	defer p.Close()
	s, err := sqlsink.New(sqlsink.Config{
		Name: "bench", Provider: p, Table: catalogadapter.TableIdent{Name: dir}, Schema: rowSchema,
		Mode: sqlsink.ModeUpsert, Key: []string{"id"}, TempDir: filepath.Join(env.Dir, "spill"),
		TargetFileSize: storageTarget,
	})
	if err != nil {
		return nil, err
	}
	if err := s.Open(ctx); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	rows := n * storageKeys
	fmt.Fprintf(env.Log, "storage: loading %s rows, then %s upsert epochs\n", formatCount(rows), formatCount(n))
	err = func() error {
		recs := makeBatches(0, 1, rows, 0)
		defer releaseBatches(recs)
		_, err := epoch(ctx, s, 1, recs)
		return err
	}()
	for e := 2; err == nil && e <= n+1; e++ {
		// Consecutive keys from a start that walks the table (7 is prime to
		// n unless n is a multiple of it: then it still visits n/7 places).
		first := int64((e * 7 % n) * storageKeys)
		recs := makeBatches(first, 1, storageKeys, e)
		_, err = epoch(ctx, s, int64(e), recs)
		releaseBatches(recs)
	}
	if err != nil {
		return nil, errors.Join(err, s.Close())
	}
	before, err := treeBytes(dir)
	if err != nil {
		return nil, errors.Join(err, s.Close())
	}
	out, err := s.Vacuum(ctx, sqlsink.VacuumOptions{Retain: 0, AllowShortRetention: true})
	if err == nil {
		err = checkRowCount(ctx, p, db, dir, rows)
	}
	if err = errors.Join(err, s.Close()); err != nil {
		return nil, fmt.Errorf("vacuum: %w", err)
	}
	fmt.Fprintf(env.Log, "storage: VACUUM deleted %d files, %s bytes\n", len(out.Files), formatCount(int(out.BytesDeleted)))
	extra := map[string]float64{"before_vacuum_mib": mib(before), "files_deleted": float64(len(out.Files))}
	return sidesFuncs{
		lakesql: func(ctx context.Context) (Sample, error) {
			b, err := treeBytes(dir)
			if err != nil {
				return Sample{}, err
			}
			// What the log keeps (delta.logRetentionDuration, 30 days),
			// apart from the data files VACUUM judged.
			logBytes, err := treeBytes(filepath.Join(dir, "_delta_log"))
			if err != nil {
				return Sample{}, err
			}
			x := map[string]float64{"log_mib": mib(logBytes), "data_mib": mib(b - logBytes)}
			maps.Copy(x, extra)
			return Sample{Value: mib(b), Extra: x}, nil
		},
		reference: func(ctx context.Context) (Sample, error) {
			snap, err := openLatest(ctx, dir)
			if err != nil {
				return Sample{}, err
			}
			var live int64
			for _, f := range snap.Files() {
				live += f.Size
			}
			return Sample{Value: mib(live), Extra: map[string]float64{"live_files": float64(len(snap.Files()))}}, nil
		},
	}, nil
}

// treeBytes is the size of the regular files under dir.
func treeBytes(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		return nil
	})
	return total, err
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// checkRowCount checks that the table at dir holds n rows, read through
// the provider as SELECT reads it.
func checkRowCount(ctx context.Context, p *deltalake.Provider, db *sql.DB, dir string, n int) error {
	q, err := p.ScanSQL(ctx, catalogadapter.TableIdent{Name: dir}, db, -1, nil)
	if err != nil {
		return err
	}
	var got int64
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM ("+q+")").Scan(&got); err != nil {
		return err
	}
	if got != int64(n) {
		return fmt.Errorf("the table holds %d rows after VACUUM, want %d", got, n)
	}
	return nil
}
