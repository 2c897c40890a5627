package deltalake

import (
	"context"

	"github.com/lakesql/lakesql/catalogadapter"
)

var _ catalogadapter.RowCounter = (*Provider)(nil)

// RowCount implements catalogadapter.RowCounter: the sum of the active
// files' numRecords stats, less their deletion vectors' cardinality, from
// the cached snapshot. One file without numRecords makes the count unknown.
func (p *Provider) RowCount(ctx context.Context, id catalogadapter.TableIdent) (int64, bool, error) {
	_, snap, err := p.latest(ctx, id)
	if err != nil {
		return 0, false, err
	}
	var total int64
	for _, a := range snap.Files() {
		n, ok := a.NumRecords()
		if !ok {
			return 0, false, nil
		}
		if a.DeletionVector != nil {
			n -= a.DeletionVector.Cardinality
		}
		total += n
	}
	return total, true, nil
}
