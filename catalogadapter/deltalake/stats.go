package deltalake

import (
	"context"
	"fmt"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/tableformat/delta"
)

var _ catalogadapter.Inspector = (*Provider)(nil)

// Stats implements catalogadapter.Inspector. It lists the log once, for
// the checkpoint and the oldest readable version, after the checkpoint
// this process is writing for the table, if any.
func (p *Provider) Stats(ctx context.Context, id catalogadapter.TableIdent, smallFile int64) (catalogadapter.TableStats, error) {
	tpath, _ := tablePath(id)
	if err := p.checkpoints.waitFor(ctx, tpath); err != nil {
		return catalogadapter.TableStats{}, fmt.Errorf("stats of %s: %w", id.Name, err)
	}
	t, snap, err := p.latest(ctx, id)
	if err != nil {
		return catalogadapter.TableStats{}, err
	}
	if smallFile <= 0 {
		target := p.targetFileSize(snap)
		if target <= 0 {
			target = delta.DefaultTargetFileSize
		}
		smallFile = int64(catalogadapter.DefaultSmallFileFraction * float64(target))
	}
	st := catalogadapter.TableStats{Version: snap.Version}
	for _, f := range snap.Files() {
		st.LiveFiles++
		st.Bytes += f.Size
		if f.Size < smallFile {
			st.SmallFiles++
		}
	}
	if st.TxnRetention, _, err = snap.Metadata.TxnRetention(); err != nil {
		return st, fmt.Errorf("stats of %s: %w: %w", id.Name, catalogadapter.ErrInvalid, err)
	}
	lr, err := t.LogRange(ctx)
	if err != nil {
		return st, fmt.Errorf("stats of %s: %w", id.Name, readError(id.Name, err))
	}
	// The listing may have seen a newer version than snap, or a checkpoint
	// written since: count up to snap.
	cp := min(lr.Checkpoint, snap.Version)
	cp = max(cp, snap.CheckpointVersion)
	st.VersionsSinceCheckpoint = snap.Version - cp
	// The oldest readable: the log's oldest, or the last VACUUM's when later.
	st.OldestVersion = lr.Oldest
	if vac, ok, err := p.oldestVacuumed(ctx, t, tpath, snap.Version, lr.Oldest); err != nil {
		return st, fmt.Errorf("stats of %s: %w", id.Name, readError(id.Name, err))
	} else if ok && vac > st.OldestVersion {
		st.OldestVersion = vac
	}
	return st, nil
}
