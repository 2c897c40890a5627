package apacheiceberg

import (
	"fmt"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/stagename"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// checkStageAge refuses files staged longer ago than
// catalogadapter.StageLifetime, by the stamp their paths carry: vacuum may
// already have deleted such a file as an orphan, so committing it could
// name a file that is gone. Files without a stamp (written by iceberg-go's
// own writer, or by an older lakesql) are not judged here; vacuum goes by
// their modification time.
func (p *Provider) checkStageAge(files []icetable.StagedFile) error {
	now := p.opts.Now()
	for _, f := range files {
		at, ok := stagename.Stamp(f.Path)
		if ok && now.Sub(at) > catalogadapter.StageLifetime {
			return fmt.Errorf("%w: %s was staged at %s, more than %s ago", catalogadapter.ErrStageExpired,
				f.Path, at.Format("2006-01-02 15:04:05Z07:00"), catalogadapter.StageLifetime)
		}
	}
	return nil
}
