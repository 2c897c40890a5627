package deltalake

import (
	"fmt"
	"net/url"
	"path"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/stagename"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// checkStageLifetime refuses adds staged longer ago than
// catalogadapter.StageLifetime by the provider's clock: VACUUM may have
// deleted such a file as an orphan, so committing it could make the table
// name a missing file. The stage time is the one the file's name carries
// (delta.WriteFiles names every file with a stagename token); a file
// without one (a receipt from before tokens carried times) is not judged.
func (p *Provider) checkStageLifetime(adds []*delta.Add) error {
	oldest := p.opts.Now().Add(-catalogadapter.StageLifetime)
	for _, a := range adds {
		name := path.Base(a.Path)
		if u, err := url.PathUnescape(name); err == nil {
			name = u
		}
		if at, ok := stagename.Stamp(name); ok && at.Before(oldest) {
			return fmt.Errorf("%w: %s was staged at %s, more than %s ago; VACUUM may have deleted it, so nothing is committed",
				catalogadapter.ErrStageExpired, a.Path, at.Format("2006-01-02 15:04:05.000Z07:00"), catalogadapter.StageLifetime)
		}
	}
	return nil
}
