package deltalake

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/tableformat/delta"
)

var _ catalogadapter.Vacuumer = (*Provider)(nil)

// Operations and parameters of the commits VACUUM records, as Spark names
// them; oldestVersionParam is lakesql's own, read back by oldestVacuumed.
const (
	opVacuumStart      = "VACUUM START"
	opVacuumEnd        = "VACUUM END"
	oldestVersionParam = "oldestReadableVersion"
)

// stageGrace is how much longer than catalogadapter.StageLifetime VACUUM
// leaves an unreferenced stage alone: a commit that checked a stage's age
// just inside the lifetime still lands a moment later, and another
// process's clock may run behind this one's.
const stageGrace = time.Hour

// Vacuum implements catalogadapter.Vacuumer. It keeps every file the
// latest version holds and every file a tombstone removed after the
// cutoff (now less the retention) names, and deletes the other files
// under the table root (delta.PlanVacuum: not the log, not hidden paths,
// not a fresh stage). Like Spark it records itself in the log, before
// deleting ("VACUUM START": retentionCheckEnabled, specifiedRetentionMillis,
// defaultRetentionMillis; numFilesToDelete, sizeOfDataToDelete) and after
// ("VACUUM END": status, oldestReadableVersion; numDeletedFiles,
// numVacuumedDirectories): commits of commitInfo alone, so no txn record
// changes. DryRun commits and deletes nothing.
func (p *Provider) Vacuum(ctx context.Context, id catalogadapter.TableIdent, opts catalogadapter.VacuumOptions) (catalogadapter.VacuumOutcome, error) {
	t, tpath, err := p.table(id)
	if err != nil {
		return catalogadapter.VacuumOutcome{}, err
	}
	fail := func(err error) (catalogadapter.VacuumOutcome, error) {
		return catalogadapter.VacuumOutcome{}, fmt.Errorf("vacuum %s: %w", tpath, err)
	}
	clock := opts.Now
	if clock == nil {
		clock = p.opts.Now
	}
	now := clock()
	snap, err := p.fresh(ctx, t, tpath)
	if err != nil {
		return fail(readError(tpath, err))
	}
	// The write protocol first, whatever the features (vacuumProtocolCheck):
	// a feature we do not know may need files we would take for orphans.
	if err := snap.CheckWritable(); err != nil {
		return fail(fmt.Errorf("%w: %w", catalogadapter.ErrUnsupported, err))
	}
	tableRetain := delta.TombstoneRetention(snap.Metadata.Configuration)
	retain := opts.Retain
	if retain < 0 {
		retain = tableRetain
	}
	if retain < tableRetain && !opts.AllowShortRetention {
		return fail(fmt.Errorf("%w: RETAIN %s is below the table's delta.deletedFileRetentionDuration of %s; "+
			"a reader or writer still using an older version could lose its files (turn the retention check off to force it)",
			catalogadapter.ErrRetention, retain, tableRetain))
	}
	cutoff := now.Add(-retain)
	plan, err := t.PlanVacuum(ctx, delta.VacuumPlanOptions{Cutoff: cutoff, StageCutoff: now.Add(-catalogadapter.StageLifetime - stageGrace)})
	if err != nil {
		return fail(readError(tpath, err))
	}
	oldest, err := oldestAfterVacuum(ctx, t, plan.Snapshot.Version, cutoff)
	if err != nil {
		return fail(readError(tpath, err))
	}
	out := catalogadapter.VacuumOutcome{Retain: retain, BytesDeleted: plan.Bytes, OldestVersion: oldest, Version: -1}
	keys := make([]string, len(plan.Files))
	for i, f := range plan.Files {
		out.Files = append(out.Files, catalogadapter.VacuumedFile{Path: f.Key, Size: f.Size, Reason: f.Reason})
		keys[i] = f.Key
	}
	if opts.DryRun {
		return out, nil
	}
	_, err = p.commitInfoOnly(ctx, t, tpath, now, opVacuumStart, map[string]any{
		"retentionCheckEnabled":    !opts.AllowShortRetention,
		"specifiedRetentionMillis": retain.Milliseconds(),
		"defaultRetentionMillis":   tableRetain.Milliseconds(),
	}, map[string]any{"numFilesToDelete": len(keys), "sizeOfDataToDelete": plan.Bytes})
	if err != nil {
		return fail(err)
	}
	derr := t.DeleteKeys(ctx, keys)
	status := "COMPLETED"
	if derr != nil {
		status = "FAILED"
	}
	// The END is recorded even when deleting failed, so the oldest version
	// (some files of older ones may be gone) is known.
	end, err := p.commitInfoOnly(context.WithoutCancel(ctx), t, tpath, clock(), opVacuumEnd, map[string]any{
		"status":           status,
		oldestVersionParam: oldest,
	}, map[string]any{"numDeletedFiles": len(keys), "numVacuumedDirectories": plan.Directories})
	if derr != nil {
		return fail(errors.Join(derr, err))
	}
	if err != nil {
		return fail(err)
	}
	p.vacuums.put(tpath, end, oldest)
	out.Version = end
	return out, nil
}

// oldestAfterVacuum is the oldest version whose files a vacuum with this
// cutoff keeps: the one current at the cutoff (the newest committed at or
// before it; its files were removed, if at all, by later commits, whose
// tombstones carry their commit time, after the cutoff), or the oldest
// the log holds when every version is younger.
func oldestAfterVacuum(ctx context.Context, t *delta.Table, latest int64, cutoff time.Time) (int64, error) {
	lr, err := t.LogRange(ctx)
	logOldest := lr.Oldest
	if err != nil {
		return 0, err
	}
	v, found, err := t.VersionAt(ctx, cutoff, logOldest, latest)
	if err != nil {
		return 0, err
	}
	if !found || v < logOldest {
		return logOldest, nil
	}
	return v, nil
}

// commitInfoOnly commits an entry holding commitInfo alone (VACUUM's
// records), on the latest version, retrying lost races: it depends on
// nothing another commit can change.
func (p *Provider) commitInfoOnly(ctx context.Context, t *delta.Table, tpath string, at time.Time, op string, params, metrics map[string]any) (int64, error) {
	for attempt := 0; ; attempt++ {
		snap, err := p.fresh(ctx, t, tpath)
		if err != nil {
			return 0, readError(tpath, err)
		}
		res, err := snap.Commit(ctx, nil, delta.CommitOptions{Operation: op, Parameters: params, Metrics: metrics,
			Now: func() time.Time { return at }, NoCheckpoint: p.opts.BackgroundCheckpoints})
		if err == nil {
			p.snaps.put(tpath, snap, res.Snapshot)
			p.afterCommit(tpath, t, snap, res)
			return res.Version, nil
		}
		if !errors.Is(err, delta.ErrConflict) || attempt >= p.opts.MaxRetries {
			return 0, fmt.Errorf("record %s: %w", op, err)
		}
	}
}

// vacuumCache remembers, per table, what oldestVacuumed found: the oldest
// version the last vacuum left readable, and how far the log was searched.
type vacuumCache struct {
	mu sync.Mutex
	m  map[string]vacuumMark
}

type vacuumMark struct {
	searched int64 // versions up to this one were searched
	found    bool
	oldest   int64
}

func (c *vacuumCache) get(path string) (vacuumMark, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.m[path]
	return m, ok
}

func (c *vacuumCache) put(path string, searched, oldest int64) {
	c.set(path, vacuumMark{searched: searched, found: true, oldest: oldest})
}

func (c *vacuumCache) set(path string, m vacuumMark) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]vacuumMark{}
	}
	if cur, ok := c.m[path]; ok && cur.searched > m.searched {
		return
	}
	c.m[path] = m
}

// oldestReadable is the oldest version of the table both its log can
// rebuild and its files still serve: the later of the log's oldest
// (delta.Table.LogRange) and the last vacuum's (oldestVacuumed). why
// names what bounds it.
func (p *Provider) oldestReadable(ctx context.Context, t *delta.Table, tpath string, latest int64) (oldest int64, why string, err error) {
	lr, err := t.LogRange(ctx)
	logOldest := lr.Oldest
	if err != nil {
		return 0, "", err
	}
	vac, ok, err := p.oldestVacuumed(ctx, t, tpath, latest, logOldest)
	if err != nil {
		return 0, "", err
	}
	if ok && vac > logOldest {
		return vac, "vacuumed", nil
	}
	return logOldest, "log cleaned up", nil
}

// oldestVacuumed finds the oldest version the table's last VACUUM left
// readable, searching the log back from latest to the last VACUUM END
// (the versions searched before are remembered, so each is read once per
// process). lakesql's records it (oldestReadableVersion); for another
// engine's (Spark's) it is the version current at its VACUUM START's time
// less the retention it names. ok is false when no vacuum is in the log.
func (p *Provider) oldestVacuumed(ctx context.Context, t *delta.Table, tpath string, latest, logOldest int64) (int64, bool, error) {
	mark, cached := p.vacuums.get(tpath)
	stop := logOldest - 1
	if cached && mark.searched >= stop {
		stop = mark.searched
	}
	var endSeen bool
	for v := latest; v > stop; v-- {
		vi, err := t.VersionInfo(ctx, v)
		if errors.Is(err, delta.ErrNotFound) {
			break // log cleanup got there first
		}
		if err != nil {
			return 0, false, err
		}
		switch {
		case vi.Operation == opVacuumEnd:
			if s, ok := vi.Parameters[oldestVersionParam]; ok {
				if n, err := strconv.ParseInt(s, 10, 64); err == nil {
					p.vacuums.put(tpath, latest, n)
					return n, true, nil
				}
			}
			endSeen = true
		case vi.Operation == opVacuumStart && endSeen:
			ms := vi.Parameters["specifiedRetentionMillis"]
			if ms == "" {
				ms = vi.Parameters["defaultRetentionMillis"]
			}
			retain, err := strconv.ParseInt(ms, 10, 64)
			if err != nil {
				endSeen = false // unreadable: look for an older one
				continue
			}
			n, err := oldestAfterVacuum(ctx, t, v, vi.Timestamp.Add(-time.Duration(retain)*time.Millisecond))
			if err != nil {
				return 0, false, err
			}
			p.vacuums.put(tpath, latest, n)
			return n, true, nil
		}
	}
	if cached && mark.found {
		p.vacuums.set(tpath, vacuumMark{searched: latest, found: true, oldest: mark.oldest})
		return mark.oldest, true, nil
	}
	p.vacuums.set(tpath, vacuumMark{searched: latest})
	return 0, false, nil
}
