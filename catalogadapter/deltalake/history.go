package deltalake

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/tableformat/delta"
)

var _ catalogadapter.Historian = (*Provider)(nil)

// History implements catalogadapter.Historian from the log entries still
// there, newest first. Files added and removed count every add and remove
// action, dataChange or not (an OPTIMIZE shows the files it rewrote);
// rows count only the data-changing ones (an OPTIMIZE moves rows, it adds
// and removes none), from the files' stats, or from operationMetrics when
// the stats do not tell, -1 when neither does. A commit's writer id and
// epoch are its txn action's appId and version.
func (p *Provider) History(ctx context.Context, id catalogadapter.TableIdent, limit int) ([]catalogadapter.HistoryEntry, error) {
	t, snap, err := p.latest(ctx, id)
	if err != nil {
		return nil, err
	}
	var out []catalogadapter.HistoryEntry
	for v := snap.Version; v >= 0 && (limit <= 0 || len(out) < limit); v-- {
		vi, err := t.VersionInfo(ctx, v)
		if errors.Is(err, delta.ErrNotFound) {
			break // log cleanup removed the older entries
		}
		if err != nil {
			return nil, fmt.Errorf("history of %s: %w", id.Name, readError(id.Name, err))
		}
		out = append(out, historyEntry(vi))
	}
	return out, nil
}

func historyEntry(vi delta.VersionInfo) catalogadapter.HistoryEntry {
	e := catalogadapter.HistoryEntry{
		Version:      vi.Version,
		Timestamp:    vi.Timestamp,
		Operation:    vi.Operation,
		Epoch:        -1,
		RowsAdded:    -1,
		RowsRemoved:  -1,
		FilesAdded:   int64(len(vi.Adds)),
		FilesRemoved: int64(len(vi.Removes)),
	}
	if len(vi.Txns) > 0 {
		e.WriterID, e.Epoch = vi.Txns[0].AppID, vi.Txns[0].Version
	}
	if n, ok := vi.RowsAdded(); ok {
		e.RowsAdded = n
	} else if n, ok := metric(vi.Metrics, "numOutputRows"); ok {
		e.RowsAdded = n
	}
	if n, ok := vi.RowsRemoved(); ok {
		e.RowsRemoved = n
	} else if n, ok := metric(vi.Metrics, "numDeletedRows", "numTargetRowsDeleted"); ok {
		e.RowsRemoved = n
	}
	return e
}

// metric reads the first of names operationMetrics holds as an integer.
func metric(m map[string]string, names ...string) (int64, bool) {
	for _, k := range names {
		if s, ok := m[k]; ok {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n, true
			}
		}
	}
	return 0, false
}

// VersionAt implements catalogadapter.Historian: the newest version
// committed at or before at, by the commit times History shows (binary
// search: Delta takes commit times to grow with the version).
func (p *Provider) VersionAt(ctx context.Context, id catalogadapter.TableIdent, at time.Time) (int64, error) {
	t, snap, err := p.latest(ctx, id)
	if err != nil {
		return 0, err
	}
	tpath, _ := tablePath(id) // latest checked it
	lr, err := t.LogRange(ctx)
	logOldest := lr.Oldest
	if err != nil {
		return 0, readError(tpath, err)
	}
	v, found, err := snap.VersionAt(ctx, at, logOldest)
	if err != nil {
		return 0, readError(tpath, err)
	}
	if !found {
		created := snap.Metadata.CreatedTime
		if logOldest == 0 || (created != nil && at.Before(time.UnixMilli(*created))) {
			return 0, fmt.Errorf("version of %s at %s: %w: the table's first version was committed after it",
				tpath, at.UTC().Format(time.RFC3339Nano), catalogadapter.ErrInvalid)
		}
		return 0, &catalogadapter.VersionUnavailableError{Version: logOldest - 1, Oldest: logOldest, Why: "log cleaned up"}
	}
	oldest, why, err := p.oldestReadable(ctx, t, tpath, snap.Version)
	if err != nil {
		return 0, readError(tpath, err)
	}
	if v < oldest {
		return 0, &catalogadapter.VersionUnavailableError{Version: v, Oldest: oldest, Why: why}
	}
	return v, nil
}
