package sqlsink

// Reading a sink's table, through its provider, for the front ends: they
// reach the table through the sink, never its provider.

import (
	"context"

	"github.com/lakesql/lakesql/catalogadapter"
)

// ScanSQL returns a DuckDB query over the rows of the table's current
// version, run on q; ok is false when the provider cannot scan its
// tables.
func (s *Sink) ScanSQL(ctx context.Context, q catalogadapter.Querier) (query string, ok bool, err error) {
	sc, ok := s.cfg.Provider.(catalogadapter.Scanner)
	if !ok {
		return "", false, nil
	}
	query, err = sc.ScanSQL(ctx, s.cfg.Table, q, -1, nil)
	return query, true, err
}

// RowCount returns the rows of the table's current version as its
// metadata tells them, never by a scan; known is false when it does not
// tell, or the provider cannot count.
func (s *Sink) RowCount(ctx context.Context) (rows int64, known bool, err error) {
	rc, ok := s.cfg.Provider.(catalogadapter.RowCounter)
	if !ok {
		return 0, false, nil
	}
	return rc.RowCount(ctx, s.cfg.Table)
}
