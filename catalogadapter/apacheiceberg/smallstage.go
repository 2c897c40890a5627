package apacheiceberg

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesql/lakesql/catalogadapter"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

var _ catalogadapter.SmallStager = (*Provider)(nil)

// StageSmall implements catalogadapter.SmallStager with WriteBatch for a
// table on a local disk: iceberg-go's own writer is Iceberg's arrow-go
// path (pqarrow, with field ids and the spec's statistics), its local
// files are synced before it returns (syncfs.go), and the receipt records
// the stage time its names lack (stageage.go). A table on object storage
// declines (ErrNotSmall): StageSQL writes there through the read cache,
// which then serves the epoch's reads, where iceberg-go would upload
// straight from memory.
func (p *Provider) StageSmall(ctx context.Context, id catalogadapter.TableIdent, rec arrow.RecordBatch) (catalogadapter.Receipt, error) {
	ctx = p.cat.WithIO(ctx)
	if rec == nil {
		return catalogadapter.Receipt{}, fmt.Errorf("stage a small batch to %s: %w: nil record", id, catalogadapter.ErrInvalid)
	}
	tbl, _, err := p.load(ctx, id)
	if err != nil {
		return catalogadapter.Receipt{}, err
	}
	if _, err := icetable.LocalPath(tbl.Location()); err != nil {
		return catalogadapter.Receipt{}, catalogadapter.ErrNotSmall
	}
	return p.writeBatch(ctx, id, tbl, rec)
}
