package apacheiceberg

import (
	"context"
	"fmt"

	ice "github.com/apache/iceberg-go"

	"github.com/lakesql/lakesql/catalogadapter"
)

var _ catalogadapter.Inspector = (*Provider)(nil)

// Stats implements catalogadapter.Inspector from the current snapshot's
// manifests: LiveFiles and SmallFiles count data files, DeleteFiles the
// live position and equality delete files (those that apply to no data
// file too: they are still read), Bytes both kinds. Iceberg has no
// checkpoints (VersionsSinceCheckpoint -1) and no transaction retention;
// OldestVersion is the oldest snapshot the metadata still holds (-1 for a
// table without snapshots, as Version).
func (p *Provider) Stats(ctx context.Context, id catalogadapter.TableIdent, smallFile int64) (catalogadapter.TableStats, error) {
	ctx = p.cat.WithIO(ctx) // one AWS configuration for every FileIO the call opens
	tbl, _, err := p.load(ctx, id)
	if err != nil {
		return catalogadapter.TableStats{}, err
	}
	st := catalogadapter.TableStats{Version: -1, OldestVersion: -1, VersionsSinceCheckpoint: -1}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return st, nil
	}
	st.Version = snap.SnapshotID
	oldest := int64(0)
	for _, s := range tbl.Metadata().Snapshots() {
		if st.OldestVersion < 0 || s.TimestampMs < oldest {
			st.OldestVersion, oldest = s.SnapshotID, s.TimestampMs
		}
	}
	if smallFile <= 0 {
		smallFile = int64(float64(p.compactTarget(tbl, 0)) * catalogadapter.DefaultSmallFileFraction)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return st, fmt.Errorf("stats of %s: %w", id, err)
	}
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		return st, fmt.Errorf("stats of %s: list manifests of snapshot %d: %w", id, snap.SnapshotID, err)
	}
	for _, m := range manifests {
		entries, err := m.FetchEntries(fsys, true)
		if err != nil {
			return st, fmt.Errorf("stats of %s: read manifest %s: %w", id, m.FilePath(), err)
		}
		for _, e := range entries {
			f := e.DataFile()
			st.Bytes += f.FileSizeBytes()
			if f.ContentType() != ice.EntryContentData {
				st.DeleteFiles++
				continue
			}
			st.LiveFiles++
			if f.FileSizeBytes() < smallFile {
				st.SmallFiles++
			}
		}
	}
	return st, nil
}
