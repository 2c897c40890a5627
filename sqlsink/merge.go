package sqlsink

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/sqlquote"
)

// mergeUpsert stages an upsert epoch:
//  1. collapse the buffer per key, last arrival wins;
//  2. a backend that takes row deltas (catalogadapter.RowDeltaStager, e.g.
//     Iceberg) gets the epoch's keys as equality deletes plus the rows
//     that upsert, and nothing is rewritten; otherwise, or when it cannot
//     serve the key, copy-on-write:
//  3. find the table files that can hold those keys: prune by min/max
//     statistics of the first key column, then check for real;
//  4. stage one set of files holding those files' rows without the keys,
//     plus the collapsed rows that upsert.
//
// The returned removes name the rewritten files; they and the receipts go
// into one commit.
func (s *Sink) mergeUpsert(ctx context.Context) ([]catalogadapter.Receipt, []string, error) {
	b := s.buf
	q := b.conn
	if err := b.materialize(ctx); err != nil {
		return nil, nil, err
	}
	keys := make([]string, len(s.cfg.Key))
	for i, k := range s.cfg.Key {
		keys[i] = sqlquote.Ident(k)
	}
	keyList := strings.Join(keys, ", ")
	collapse := fmt.Sprintf(`CREATE OR REPLACE TEMP TABLE collapsed AS
		SELECT * FROM buf QUALIFY row_number() OVER (PARTITION BY %s ORDER BY %s DESC) = 1`, keyList, seqColumn)
	if _, err := q.ExecContext(ctx, collapse); err != nil {
		return nil, nil, fmt.Errorf("collapse epoch by key: %w", err)
	}
	defer q.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS collapsed")

	var n int64
	if err := q.QueryRowContext(ctx, "SELECT count(*) FROM collapsed").Scan(&n); err != nil {
		return nil, nil, err
	}
	if n == 0 {
		return nil, nil, nil
	}
	if rd, ok := s.cfg.Provider.(catalogadapter.RowDeltaStager); ok {
		receipts, err := rd.StageRowDelta(ctx, s.cfg.Table, q, s.cfg.Key,
			"SELECT "+keyList+" FROM collapsed",
			fmt.Sprintf("SELECT %s FROM collapsed WHERE %s = %d", b.selectList(), opBufCol, OpUpsert))
		if err == nil {
			return receipts, nil, nil
		}
		if !errors.Is(err, catalogadapter.ErrUnsupported) {
			return nil, nil, err
		}
		// The table cannot take equality deletes on this key: rewrite files.
	}
	scanner := s.cfg.Provider.(catalogadapter.Scanner) // open refused a provider without one
	merge, err := s.mergeFunc(ctx)
	if err != nil {
		return nil, nil, err
	}
	for redo := 0; ; redo++ {
		receipts, removes, version, err := merge(ctx, scanner, keys)
		if err == nil || redo >= maxMergeRedos || ctx.Err() != nil {
			return receipts, removes, err
		}
		if errors.Is(err, catalogadapter.ErrVersionUnavailable) {
			continue // a VACUUM took the version read: read the latest
		}
		// A file the merge read may have left the table meanwhile: an
		// OPTIMIZE took it out and a VACUUM with a short retention deleted
		// it. Then the table has moved on, and the merge reads it again;
		// an error on a table that has not moved is the error.
		if now, _, lerr := scanner.Files(ctx, s.cfg.Table); lerr != nil || now == version {
			return nil, nil, err
		}
	}
}

// rewriteKeys is the copy-on-write half of an upsert merge: it stages the
// files holding the epoch's keys rewritten without them, plus the rows that
// upsert, read at the version it returns.
func (s *Sink) rewriteKeys(ctx context.Context, scanner catalogadapter.Scanner, keys []string) ([]catalogadapter.Receipt, []string, int64, error) {
	b := s.buf
	q := b.conn
	keyList := strings.Join(keys, ", ")
	version, files, err := scanner.Files(ctx, s.cfg.Table)
	if err != nil {
		return nil, nil, -1, fmt.Errorf("list table files: %w", err)
	}
	s.requires = []catalogadapter.Requirement{catalogadapter.NoNewDataSince(version)}
	candidates, err := s.pruneByStats(ctx, files)
	if err != nil {
		return nil, nil, version, err
	}
	affected, err := s.filesWithKeys(ctx, scanner, version, candidates, keyList)
	if err != nil {
		return nil, nil, version, err
	}
	var parts []string
	if len(affected) > 0 {
		scan, err := scanner.ScanSQL(ctx, s.cfg.Table, q, version, affected)
		if err != nil {
			return nil, nil, version, fmt.Errorf("read files to rewrite: %w", err)
		}
		on := make([]string, len(keys))
		for i, k := range keys {
			on[i] = fmt.Sprintf("t.%s = c.%s", k, k)
		}
		parts = append(parts, fmt.Sprintf("SELECT %s FROM (%s) AS t ANTI JOIN collapsed AS c ON %s",
			s.qualified("t"), scan, strings.Join(on, " AND ")))
	}
	parts = append(parts, fmt.Sprintf("SELECT %s FROM collapsed WHERE %s = %d", b.selectList(), opBufCol, OpUpsert))
	// The union's column types are DuckDB's to resolve: the stager asks.
	r, err := s.stage(ctx, catalogadapter.Source{Query: strings.Join(parts, " UNION ALL ")})
	if err != nil {
		return nil, nil, version, err
	}
	if r.Rows == 0 && len(affected) == 0 {
		// Only deletes of keys the table does not hold: nothing to write,
		// but the epoch is still recorded by the commit.
		return []catalogadapter.Receipt{r}, nil, version, nil
	}
	return []catalogadapter.Receipt{r}, affected, version, nil
}

// qualified lists the buffer's columns read from the table's files under
// alias; a column the epoch adds (Config.SchemaEvolution) is in none of
// them and reads NULL.
func (s *Sink) qualified(alias string) string {
	added := map[string]bool{}
	for _, c := range s.evolving {
		if c.Kind == catalogadapter.AddColumn {
			added[c.Column] = true
		}
	}
	cols := make([]string, len(s.buf.cols))
	for i, c := range s.buf.cols {
		cols[i] = alias + "." + sqlquote.Ident(c.name)
		if added[c.name] {
			cols[i] = "CAST(NULL AS " + c.duckType + ") AS " + sqlquote.Ident(c.name)
		}
	}
	return strings.Join(cols, ", ")
}

// pruneByStats keeps the files whose min/max of the first key column (or
// partition value) overlap the epoch's keys. Files without bounds are kept:
// pruning only ever skips files that cannot hold a key.
func (s *Sink) pruneByStats(ctx context.Context, files []catalogadapter.DataFile) ([]catalogadapter.DataFile, error) {
	k := s.cfg.Key[0]
	var lo, hi any
	row := s.buf.conn.QueryRowContext(ctx, fmt.Sprintf("SELECT min(%[1]s), max(%[1]s) FROM collapsed", sqlquote.Ident(k)))
	if err := row.Scan(&lo, &hi); err != nil {
		return nil, fmt.Errorf("key range: %w", err)
	}
	var out []catalogadapter.DataFile
	for _, f := range files {
		if pv, ok := f.Partition[k]; ok {
			if pv != nil && (less(pv, lo) || less(hi, pv)) {
				continue
			}
			out = append(out, f)
			continue
		}
		fmin, okMin := f.Min[k]
		fmax, okMax := f.Max[k]
		if okMin && okMax && (less(fmax, lo) || less(hi, fmin)) {
			continue
		}
		out = append(out, f)
	}
	return out, nil
}

// less compares two bounds when both are numbers or both strings; any
// other pair is "not less", which keeps the file.
func less(a, b any) bool {
	af, aok := toFloat(a)
	bf, bok := toFloat(b)
	if aok && bok {
		return af < bf
	}
	as, aok := a.(string)
	bs, bok := b.(string)
	if aok && bok {
		return as < bs
	}
	return false
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case int16:
		return float64(x), true
	case int8:
		return float64(x), true
	case int:
		return float64(x), true
	}
	return 0, false
}

// filesWithKeys checks the candidate files for real: it returns the paths
// of those that hold at least one of the epoch's keys.
func (s *Sink) filesWithKeys(ctx context.Context, scanner catalogadapter.Scanner, version int64,
	candidates []catalogadapter.DataFile, keyList string) ([]string, error) {
	if len(candidates) == 0 {
		return nil, nil
	}
	q := s.buf.conn
	branches := make([]string, 0, len(candidates))
	for _, f := range candidates {
		scan, err := scanner.ScanSQL(ctx, s.cfg.Table, q, version, []string{f.Path})
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f.Path, err)
		}
		branches = append(branches, fmt.Sprintf("SELECT %s AS __lakesql_file, %s FROM (%s)",
			sqlquote.String(f.Path), keyList, scan))
	}
	query := fmt.Sprintf("SELECT DISTINCT __lakesql_file FROM (%s) SEMI JOIN collapsed USING (%s)",
		strings.Join(branches, " UNION ALL "), keyList)
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("find files holding the keys: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
