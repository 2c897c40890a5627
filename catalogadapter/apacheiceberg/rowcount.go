package apacheiceberg

import (
	"context"
	"strconv"

	"github.com/lakesql/lakesql/catalogadapter"
)

var _ catalogadapter.RowCounter = (*Provider)(nil)

// RowCount implements catalogadapter.RowCounter: the current snapshot
// summary's total-records. A snapshot with delete files (an upsert's
// equality deletes) has no exact count in its metadata, as an equality
// delete may match any number of rows: the count is unknown then. A table
// without a snapshot has no rows.
func (p *Provider) RowCount(ctx context.Context, id catalogadapter.TableIdent) (int64, bool, error) {
	ctx = p.cat.WithIO(ctx)
	tbl, _, err := p.load(ctx, id)
	if err != nil {
		return 0, false, err
	}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return 0, true, nil
	}
	if snap.Summary == nil {
		return 0, false, nil
	}
	props := snap.Summary.Properties
	for _, k := range []string{"total-delete-files", "total-equality-deletes", "total-position-deletes"} {
		if v, ok := props[k]; ok && v != "0" {
			return 0, false, nil
		}
	}
	n, err := strconv.ParseInt(props["total-records"], 10, 64)
	if err != nil {
		return 0, false, nil
	}
	return n, true, nil
}
