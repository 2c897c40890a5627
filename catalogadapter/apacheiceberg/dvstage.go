package apacheiceberg

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/iceberg-go/table"

	"github.com/lakesql/lakesql/catalogadapter"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// stageDeletionVectors is StageRowDelta on a format version 3 table: the
// rows holding the epoch's keys get deletion vectors (one Puffin file,
// each DV merged with the one its data file had), the upserted rows data
// files. The DV receipt carries the snapshot the rows were found in and
// each DV's base, which Commit checks: data added since, or a base
// replaced since, is a conflict, and the sink redoes the merge.
func (p *Provider) stageDeletionVectors(ctx context.Context, id catalogadapter.TableIdent, tbl *table.Table, q catalogadapter.Querier, key []string, keysQuery, rowsQuery string) ([]catalogadapter.Receipt, error) {
	wrap := func(err error) error { return fmt.Errorf("stage deletion vectors into %s: %w", id, mapErr(err)) }
	conn, done, err := sqlConn(ctx, q)
	if err != nil {
		return nil, wrap(err)
	}
	defer done()
	dvs, err := icetable.WriteDeletionVectors(ctx, tbl, conn, keysQuery, key, icetable.DVOptions{
		CacheDir: p.cat.CacheDir(), AllowedRoots: p.opts.AllowedRoots, Now: p.opts.Now,
	})
	if err != nil {
		return nil, wrap(err)
	}
	read := dvs.ReadSnapshot
	dvReceipt, err := receiptOf(tbl.Metadata(), dvs.Files, receiptMeta{DVRead: &read}, dvs.Bases)
	if err != nil {
		return nil, errors.Join(wrap(err), p.removeFiles(ctx, tbl, dvs.Files))
	}
	rowReceipt, err := p.StageSQL(ctx, id, conn, catalogadapter.Source{Query: rowsQuery})
	if err != nil {
		return nil, errors.Join(err, p.removeFiles(ctx, tbl, dvs.Files))
	}
	return []catalogadapter.Receipt{dvReceipt, rowReceipt}, nil
}
