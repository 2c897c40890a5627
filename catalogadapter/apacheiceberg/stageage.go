package apacheiceberg

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/stagename"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// checkStageAge refuses files staged longer ago than
// catalogadapter.StageLifetime: vacuum may already have deleted such a
// file as an orphan, so committing it could name a file that is gone. A
// file's stage time is the stamp its path carries, else the one its
// receipt recorded (files iceberg-go's own writer names; vacuum goes by
// their modification time, which is no earlier). Files of an older
// lakesql with neither are not judged.
func (p *Provider) checkStageAge(files []icetable.StagedFile) error {
	now := p.opts.Now()
	for _, f := range files {
		at, ok := stagename.Stamp(f.Path)
		if !ok && f.StagedAtMs > 0 {
			at, ok = time.UnixMilli(f.StagedAtMs), true
		}
		if ok && now.Sub(at) > catalogadapter.StageLifetime {
			return fmt.Errorf("%w: %s was staged at %s, more than %s ago", catalogadapter.ErrStageExpired,
				f.Path, at.UTC().Format("2006-01-02 15:04:05Z07:00"), catalogadapter.StageLifetime)
		}
	}
	return nil
}

// stamped is r with at recorded as the stage time of its files whose
// paths carry none.
func stamped(r catalogadapter.Receipt, at time.Time) (catalogadapter.Receipt, error) {
	if len(r.Metadata) == 0 {
		return r, nil
	}
	var rm receiptMeta
	if err := json.Unmarshal(r.Metadata, &rm); err != nil {
		return r, err
	}
	for i := range rm.Files {
		if _, ok := stagename.Stamp(rm.Files[i].Path); !ok {
			rm.Files[i].StagedAtMs = at.UnixMilli()
		}
	}
	var err error
	r.Metadata, err = json.Marshal(rm)
	return r, err
}
