package apacheiceberg

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/backoff"
	"github.com/lakesql/lakesql/internal/stagename"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

var _ catalogadapter.Vacuumer = (*Provider)(nil)

// ManifestRewriteMinSmall is how many small data manifests (under half of
// commit.manifest.target-size-bytes) the current snapshot must hold before
// Vacuum merges them: every lakesql commit adds one manifest, each of which
// a scan plan opens, so a table of continuous epochs gathers thousands;
// 16 keeps the rewrite (one REPLACE snapshot) rare on a quiet table.
const ManifestRewriteMinSmall = 16

// Vacuum implements catalogadapter.Vacuumer. In order:
//  1. the retention: opts.Retain, or the table's
//     history.expire.max-snapshot-age-ms, DefaultRetention when unset; a
//     shorter one than the table's needs AllowShortRetention;
//  2. snapshot expiry, planned against opts.Now (icetable.PlanExpiry:
//     each branch keeps MinSnapshots, or history.expire.min-snapshots-to-keep,
//     and every younger ancestor; refs stay) and committed in one
//     metadata commit pinned to the main branch's head, which also keeps
//     in table properties the exactly-once record of every writer whose
//     newest snapshot it removes; a lost race plans again;
//  3. deletion of the files only expired snapshots referenced (manifest
//     lists, manifests, data and delete files, statistics): "expired";
//  4. deletion of orphans: files under the table's data/ and metadata/
//     folders that no kept snapshot, nor the current metadata or its log,
//     names (crashed stages, metadata files the log dropped past
//     write.metadata.previous-versions-max) and that were staged, by the
//     stage time in their name, or else last modified, more than
//     StageLifetime ago: a stage in flight is never touched;
//  5. a manifest rewrite when the current snapshot holds at least
//     ManifestRewriteMinSmall small data manifests.
//
// With DryRun it commits and deletes nothing and lists what it would.
func (p *Provider) Vacuum(ctx context.Context, id catalogadapter.TableIdent, opts catalogadapter.VacuumOptions) (catalogadapter.VacuumOutcome, error) {
	ctx = p.cat.WithIO(ctx) // one AWS configuration for every FileIO the call opens
	fail := func(err error) (catalogadapter.VacuumOutcome, error) {
		return catalogadapter.VacuumOutcome{}, fmt.Errorf("vacuum %s: %w", id, mapErr(p.cat.Scrub(err)))
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	var (
		before, after *table.Table
		plan          icetable.ExpiryPlan
		out           = catalogadapter.VacuumOutcome{Version: -1}
	)
	for attempt := 0; ; attempt++ {
		tbl, _, err := p.load(ctx, id)
		if err != nil {
			return fail(err)
		}
		props := tbl.Properties()
		if v, ok := props[table.GCEnabledKey]; ok {
			if on, err := strconv.ParseBool(v); err != nil || !on {
				return fail(fmt.Errorf("%w: the table sets %s = %s: its files may be shared with other tables", catalogadapter.ErrInvalid, table.GCEnabledKey, v))
			}
		}
		retain, minKeep, err := retention(props, opts)
		if err != nil {
			return fail(err)
		}
		out.Retain = retain
		plan, err = icetable.PlanExpiry(tbl.Metadata(), now().UnixMilli(), retain.Milliseconds(), minKeep)
		if err != nil {
			return fail(err)
		}
		before, after = tbl, tbl
		if opts.DryRun || len(plan.Expired) == 0 {
			break
		}
		if after, err = p.cat.Expire(ctx, tbl, plan); err == nil {
			break
		}
		if !errors.Is(err, icetable.ErrConflict) || attempt >= p.opts.MaxRetries {
			return fail(err)
		}
		if err := backoff.Sleep(ctx, backoff.Equal(p.opts.BaseBackoff, p.opts.MaxBackoff, attempt)); err != nil {
			return fail(fmt.Errorf("retry after a lost race: %w", err))
		}
	}
	out.SnapshotsExpired = len(plan.Expired)
	kept := plan.Kept
	if !opts.DryRun {
		kept = after.Metadata().Snapshots() // with what landed since
	}
	out.OldestVersion = oldestKept(after.Metadata(), kept)
	// A dry run of an expiry counts the metadata files its commit would
	// drop from the log; the new metadata file is not there to list.
	metadata := icetable.MetadataFiles(after)
	if opts.DryRun && len(plan.Expired) > 0 {
		metadata = icetable.MetadataFilesAfterCommit(after)
	}
	files, err := p.unneeded(ctx, before, after, plan.Expired, kept, metadata, now())
	if err != nil {
		return fail(err)
	}
	out.Files = files
	for _, f := range files {
		if f.Size > 0 {
			out.BytesDeleted += f.Size
		}
	}
	if opts.DryRun {
		return out, nil
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
	}
	if err := p.removePaths(ctx, after, paths); err != nil {
		return out, fmt.Errorf("vacuum %s: delete unneeded files (a later vacuum retries): %w", id, err)
	}
	n, version, err := p.rewriteManifests(ctx, after)
	if err != nil {
		return out, fmt.Errorf("vacuum %s: rewrite manifests: %w", id, mapErr(p.cat.Scrub(err)))
	}
	out.ManifestsRewritten, out.Version = n, version
	return out, nil
}

// retention resolves opts against the table's properties.
func retention(props map[string]string, opts catalogadapter.VacuumOptions) (time.Duration, int, error) {
	own := catalogadapter.DefaultRetention
	if v, ok := props[table.MaxSnapshotAgeMsKey]; ok {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 0 {
			return 0, 0, fmt.Errorf("%w: table property %s = %q is not a count of milliseconds", catalogadapter.ErrInvalid, table.MaxSnapshotAgeMsKey, v)
		}
		own = time.Duration(ms) * time.Millisecond
	}
	retain := opts.Retain
	if retain < 0 {
		retain = own
	}
	if retain < own && !opts.AllowShortRetention {
		return 0, 0, fmt.Errorf("%w: %v is below the table's %v (%s); allow a short retention explicitly to go below it",
			catalogadapter.ErrRetention, retain, own, table.MaxSnapshotAgeMsKey)
	}
	minKeep := opts.MinSnapshots
	if minKeep <= 0 {
		minKeep = 1
		if v, ok := props[table.MinSnapshotsToKeepKey]; ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return 0, 0, fmt.Errorf("%w: table property %s = %q is not a positive count", catalogadapter.ErrInvalid, table.MinSnapshotsToKeepKey, v)
			}
			minKeep = n
		}
	}
	return retain, minKeep, nil
}

// unneeded lists the files Vacuum deletes: those only the expired
// snapshots referenced, then the orphans past the stage lifetime. before
// is the table the expiry was planned on (its metadata still holds the
// expired snapshots), after the table once it landed; metadata are the
// metadata files it still names.
func (p *Provider) unneeded(ctx context.Context, before, after *table.Table, expired, kept []table.Snapshot, metadata map[string]icetable.FileRef, now time.Time) ([]catalogadapter.VacuumedFile, error) {
	live, err := icetable.SnapshotFiles(ctx, after, kept)
	if err != nil {
		return nil, err
	}
	for k, f := range metadata {
		live[k] = f
	}
	dead, err := icetable.SnapshotFiles(ctx, before, expired)
	if err != nil {
		return nil, err
	}
	stored, err := icetable.ListTableFiles(ctx, after)
	if err != nil {
		return nil, err
	}
	sizes := map[string]int64{}
	for _, s := range stored {
		sizes[icetable.FileKey(s.Path)] = s.Size
	}
	var out []catalogadapter.VacuumedFile
	for k, f := range dead {
		if _, ok := live[k]; ok {
			continue
		}
		size := f.Size
		if s, ok := sizes[k]; ok {
			size = s
		}
		out = append(out, catalogadapter.VacuumedFile{Path: f.Path, Size: size, Reason: "expired"})
	}
	cutoff := now.Add(-catalogadapter.StageLifetime)
	for _, s := range stored {
		k := icetable.FileKey(s.Path)
		if _, ok := live[k]; ok {
			continue
		}
		if _, ok := dead[k]; ok {
			continue
		}
		if s.Rel == "" || !mayBeOrphan(s.Rel) {
			continue // spelled unlike the location, or not a kind of file a table names
		}
		at, stamped := stagename.Stamp(s.Rel)
		if !stamped {
			at = s.ModTime
		}
		if at.IsZero() || !at.Before(cutoff) {
			continue // may be a stage in flight, or a commit's new metadata
		}
		out = append(out, catalogadapter.VacuumedFile{Path: s.Path, Size: s.Size, Reason: "orphan"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// mayBeOrphan tells whether a file at rel (relative to the table's
// location) is of a kind Vacuum may delete when nothing names it: any file
// under data/, and under metadata/ only metadata files, manifests, manifest
// lists and statistics. Other files there belong to someone else: the
// Hadoop catalog's version-hint.text, which no metadata names, above all.
func mayBeOrphan(rel string) bool {
	if strings.HasPrefix(rel, "data/") {
		return true
	}
	for _, ext := range []string{".metadata.json", ".avro", ".puffin", ".stats"} {
		if strings.HasSuffix(rel, ext) {
			return true
		}
	}
	return false
}

// oldestKept is the oldest snapshot still on the main branch's line, -1
// for a table without snapshots.
func oldestKept(meta table.Metadata, kept []table.Snapshot) int64 {
	head := meta.SnapshotByName(table.MainBranch)
	if head == nil {
		return -1
	}
	ids := map[int64]bool{}
	for _, s := range kept {
		ids[s.SnapshotID] = true
	}
	oldest := head.SnapshotID
	for _, s := range table.AncestorsOf(head.SnapshotID, meta.SnapshotByID) {
		if !ids[s.SnapshotID] {
			break
		}
		oldest = s.SnapshotID
	}
	return oldest
}

// rewriteManifests merges the current snapshot's data manifests when at
// least ManifestRewriteMinSmall of them are small, in one REPLACE
// snapshot that changes no row and no exactly-once record (its summary
// names no writer). It returns how many manifests it replaced and the
// snapshot it made (-1: none).
func (p *Provider) rewriteManifests(ctx context.Context, tbl *table.Table) (int, int64, error) {
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return 0, -1, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return 0, -1, err
	}
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		return 0, -1, fmt.Errorf("list manifests of snapshot %d: %w", snap.SnapshotID, err)
	}
	target := int64(tbl.Properties().GetInt(table.ManifestTargetSizeBytesKey, table.ManifestTargetSizeBytesDefault))
	n := 0
	for _, m := range manifests {
		if m.ManifestContent() == ice.ManifestContentData && m.Length() < target/2 {
			n++
		}
	}
	if n < ManifestRewriteMinSmall {
		return 0, -1, nil
	}
	tx := tbl.NewTransaction()
	res, err := tx.RewriteManifests(ctx)
	if err != nil {
		return 0, -1, err
	}
	if res.IsNoOp() {
		return 0, -1, nil
	}
	call, cancel := p.cat.Bound(ctx)
	next, err := tx.Commit(call)
	err = p.cat.Timed(call, ctx, err)
	cancel()
	if err != nil {
		if icetable.IsConflict(err) {
			return 0, -1, nil // writers kept winning: the next vacuum merges them
		}
		return 0, -1, err
	}
	return len(res.RewrittenManifests), next.CurrentSnapshot().SnapshotID, nil
}
