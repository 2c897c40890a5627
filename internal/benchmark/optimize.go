package benchmark

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/deltalake"
	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/sqlsink"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// Optimize is the optimize workload: OPTIMIZE (sqlsink's Optimize, as
// OPTIMIZE SINK runs it) of a Delta table of n one-row files into files
// of the target size, one commit. The reference is DuckDB's COPY of the
// same files' rows into target-size Parquet files, without the plan, the
// statistics or the commit. Each run starts from a fresh copy of the same
// table (copied before the clock starts). The figure is rows per second.
func Optimize() Workload {
	return Workload{
		Name: "optimize", Unit: "rows/s", Target: AtLeast(0.8),
		Quick: Size{N: 1_000, Runs: 3}, Full: Size{N: 10_000, Runs: 3},
		Describe: func(n int) string {
			return fmt.Sprintf("OPTIMIZE of a Delta table of %s one-row files", formatCount(n))
		},
		Reference: "DuckDB COPY (SELECT * FROM read_parquet(the same files)) TO target-size Parquet files",
		Setup:     setupOptimize,
	}
}

// optimizeTarget is the target file size both sides write: Delta's
// default, which every run's rows fit in.
const optimizeTarget = 128 << 20

func setupOptimize(ctx context.Context, env Env, n int) (Sides, error) {
	template := filepath.Join(env.Dir, "template")
	fmt.Fprintf(env.Log, "optimize: writing a table of %s one-row files\n", formatCount(n))
	files, err := writeSmallFileTable(ctx, template, n)
	if err != nil {
		return nil, fmt.Errorf("write the table: %w", err)
	}
	refDB, ref, err := openDuckDB(ctx, filepath.Join(env.Dir, "ref-spill"))
	if err != nil {
		return nil, err
	}
	list := make([]string, len(files))
	for i, f := range files {
		list[i] = sqlquote.String(filepath.Join(template, f))
	}
	run := 0
	return sidesFuncs{
		lakesql: func(ctx context.Context) (Sample, error) {
			run++
			dir := filepath.Join(env.Dir, fmt.Sprintf("run%d", run))
			defer os.RemoveAll(dir)
			if err := copyTree(template, dir); err != nil {
				return Sample{}, err
			}
			db, err := sql.Open("duckdb", "")
			if err != nil {
				return Sample{}, err
			}
			defer db.Close()
			p := deltalake.New(db, deltalake.Options{})
			defer p.Close()
			s, err := sqlsink.New(sqlsink.Config{
				Name: "bench", Provider: p, Table: catalogadapter.TableIdent{Name: dir}, Schema: rowSchema,
				TempDir: filepath.Join(env.Dir, "spill"), DisableAutoCompact: true,
			})
			if err != nil {
				return Sample{}, err
			}
			defer s.Close()
			start := time.Now()
			out, err := s.Optimize(ctx, db, sqlsink.CompactOptions{TargetFileSize: optimizeTarget})
			if err != nil {
				return Sample{}, err
			}
			d := time.Since(start)
			if !out.Committed || out.FilesRemoved != n {
				return Sample{}, fmt.Errorf("OPTIMIZE: %+v, want the %d files compacted", out, n)
			}
			snap, err := openLatest(ctx, dir)
			if err != nil {
				return Sample{}, err
			}
			return Sample{Value: float64(n) / d.Seconds(), Extra: map[string]float64{"files_added": float64(out.FilesAdded), "live_files": float64(len(snap.Files()))}}, nil
		},
		reference: func(ctx context.Context) (Sample, error) {
			out := filepath.Join(env.Dir, "copy")
			defer os.RemoveAll(out)
			start := time.Now()
			var rows int64
			q := fmt.Sprintf("COPY (SELECT * FROM read_parquet([%s])) TO %s (FORMAT parquet, FILE_SIZE_BYTES %d)",
				strings.Join(list, ", "), sqlquote.String(out), optimizeTarget)
			if err := ref.QueryRowContext(ctx, q).Scan(&rows); err != nil {
				return Sample{}, fmt.Errorf("COPY: %w", err)
			}
			d := time.Since(start)
			if rows != int64(n) {
				return Sample{}, fmt.Errorf("COPY wrote %d rows, want %d", rows, n)
			}
			return Sample{Value: float64(n) / d.Seconds()}, nil
		},
		close: func() error { return errors.Join(ref.Close(), refDB.Close()) },
	}, nil
}

// writeSmallFileTable creates a Delta table of rowSchema at dir holding
// rows 0..n-1, one Parquet file each (arrow-go's writer), added by one
// commit, and returns the files' paths relative to dir.
func writeSmallFileTable(ctx context.Context, dir string, n int) ([]string, error) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	p := deltalake.New(db, deltalake.Options{})
	defer p.Close()
	if err := p.CreateTable(ctx, catalogadapter.TableIdent{Name: dir}, catalogadapter.TableDef{Schema: rowSchema}); err != nil {
		return nil, err
	}
	now := time.Now().UnixMilli()
	actions := make([]delta.Action, 0, n)
	files := make([]string, 0, n)
	for i := range n {
		recs := makeBatches(int64(i), 1, 1, 0)
		var buf bytes.Buffer
		fw, err := pqarrow.NewFileWriter(rowSchema, &buf,
			parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy)), pqarrow.DefaultWriterProps())
		if err == nil {
			err = fw.Write(recs[0])
			err = errors.Join(err, fw.Close())
		}
		releaseBatches(recs)
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("part-%08d.parquet", i)
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			return nil, err
		}
		files = append(files, name)
		actions = append(actions, delta.Action{Add: &delta.Add{Path: name, Size: int64(buf.Len()), ModificationTime: now, DataChange: true,
			Stats: fmt.Sprintf(`{"numRecords":1,"minValues":{"id":%d},"maxValues":{"id":%d},"nullCount":{"id":0}}`, i, i)}})
	}
	snap, err := openLatest(ctx, dir)
	if err != nil {
		return nil, err
	}
	if _, err := snap.Commit(ctx, actions, delta.CommitOptions{Operation: "WRITE"}); err != nil {
		return nil, fmt.Errorf("commit the files: %w", err)
	}
	return files, nil
}

// copyTree copies the regular files under src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}
