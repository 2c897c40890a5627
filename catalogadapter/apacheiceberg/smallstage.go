package apacheiceberg

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesql/lakesql/catalogadapter"
)

var _ catalogadapter.SmallStager = (*Provider)(nil)

// StageSmall implements catalogadapter.SmallStager with WriteBatch:
// iceberg-go's own writer is Iceberg's arrow-go path (pqarrow, with field
// ids and the spec's statistics), and a local file it writes is synced
// before it returns (syncfs.go), as StageSQL's are. Its files carry no
// stage stamp; VACUUM judges them by their modification time, which is
// the stage's.
func (p *Provider) StageSmall(ctx context.Context, id catalogadapter.TableIdent, rec arrow.RecordBatch) (catalogadapter.Receipt, error) {
	return p.WriteBatch(ctx, id, rec)
}
