package deltalake

import (
	"context"
	"errors"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// checkReadable fails with a *catalogadapter.VersionUnavailableError when
// the old snapshot snap can no longer be read whole: it is older than the
// last VACUUM left readable, or one of its files that the latest version
// no longer holds is gone (another engine's VACUUM, which records no
// oldest version). A time travel read thus never reaches DuckDB with a
// missing file.
func (p *Provider) checkReadable(ctx context.Context, t *delta.Table, tpath string, snap *delta.Snapshot) error {
	latest, err := p.fresh(ctx, t, tpath)
	if err != nil {
		return readError(tpath, err)
	}
	if snap.Version >= latest.Version {
		return nil
	}
	oldest, why, err := p.oldestReadable(ctx, t, tpath, latest.Version)
	if err != nil {
		return readError(tpath, err)
	}
	if snap.Version < oldest {
		return &catalogadapter.VersionUnavailableError{Version: snap.Version, Oldest: oldest, Why: why}
	}
	root := t.Storage().URI()
	live := make(map[string]bool, len(latest.Files()))
	for _, f := range latest.Files() {
		live[delta.CanonicalPath(root, f.Path)] = true
	}
	for _, f := range snap.Files() {
		if live[delta.CanonicalPath(root, f.Path)] {
			continue
		}
		key, err := stagedPath(f.Path)
		if err != nil {
			continue // outside the table: the scan reports it
		}
		if _, err := t.Storage().Stat(ctx, key); errors.Is(err, delta.ErrNotFound) {
			if oldest <= snap.Version {
				oldest = snap.Version + 1
			}
			return &catalogadapter.VersionUnavailableError{Version: snap.Version, Oldest: oldest, Why: "vacuumed"}
		} else if err != nil {
			return err
		}
	}
	return nil
}

// versionUnavailable turns the failure to rebuild version (a log cleaned
// up below it) into a *catalogadapter.VersionUnavailableError naming the
// oldest readable version; nil for any other failure.
func (p *Provider) versionUnavailable(ctx context.Context, t *delta.Table, tpath string, version int64, err error) error {
	var ee *delta.VersionExpiredError
	if !errors.As(err, &ee) {
		return nil
	}
	oldest := ee.Oldest
	if latest, lerr := p.fresh(ctx, t, tpath); lerr == nil {
		if o, _, oerr := p.oldestReadable(ctx, t, tpath, latest.Version); oerr == nil && o > oldest {
			oldest = o
		}
	}
	return &catalogadapter.VersionUnavailableError{Version: version, Oldest: oldest, Why: "log cleaned up"}
}
