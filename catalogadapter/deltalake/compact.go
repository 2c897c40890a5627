package deltalake

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/backoff"
	"github.com/lakesql/lakesql/tableformat/delta"
)

var _ catalogadapter.Compactor = (*Provider)(nil)

// DefaultCompactPlans bounds the plans of one Compact whose commit lost to
// a writer that removed one of its files or changed the table's metadata.
const DefaultCompactPlans = 3

// Compact implements catalogadapter.Compactor, as Delta's OPTIMIZE does:
// per partition, the small live files (and those with a deletion vector)
// are bin-packed into groups of about the target size; DuckDB reads each
// group through the snapshot (column names, partition values and deletion
// vectors applied) and writes it as new files; one commit removes the old
// files and adds the new ones, all with dataChange false, and no txn, so
// every writer's exactly-once record stays as it was.
//
// A lost race is judged on the table as it now is: while every file the
// commit removes is still live, with the same deletion vector, and the
// metadata and protocol are unchanged (the winners only appended, or
// touched other files), the same actions are committed on the new version,
// as many times as Options.MaxRetries allows. Otherwise the files written
// are deleted and the compaction planned again, up to opts.MaxRetries
// times, then it fails with an error wrapping ErrConflict.
func (p *Provider) Compact(ctx context.Context, id catalogadapter.TableIdent, q catalogadapter.Querier, opts catalogadapter.CompactOptions) (catalogadapter.CompactOutcome, error) {
	var out catalogadapter.CompactOutcome
	if q == nil {
		return out, fmt.Errorf("compact %s: %w: nil querier", id.Name, catalogadapter.ErrInvalid)
	}
	t, tpath, err := p.table(id)
	if err != nil {
		return out, err
	}
	plans := opts.MaxRetries
	if plans <= 0 {
		plans = DefaultCompactPlans
	}
	for n := 0; ; n++ {
		snap, err := p.fresh(ctx, t, tpath)
		if err != nil {
			return out, fmt.Errorf("compact %s: %w", tpath, readError(tpath, err))
		}
		if snap.RowTrackingEnabled() {
			if opts.Operation == autoCompactOperation {
				out.Version = snap.Version
				return out, nil // not for the background to fail at each flush
			}
			return out, fmt.Errorf("compact %s: %w: OPTIMIZE of a table with row tracking enabled (rowTracking, delta.enableRowTracking): "+
				"lakesql writes no materialized row id column, so rewriting files would change the rows' stable row ids", tpath, catalogadapter.ErrUnsupported)
		}
		pl, err := p.planCompaction(snap, opts)
		if err != nil {
			return out, fmt.Errorf("compact %s at version %d: %w", tpath, snap.Version, err)
		}
		if len(pl.removed) == 0 {
			out.Version = snap.Version
			return out, nil
		}
		staged := p.opts.Now()
		adds, err := p.rewrite(ctx, q, pl)
		if err != nil {
			return out, fmt.Errorf("compact %s at version %d: %w", tpath, snap.Version, err)
		}
		res, retries, err := p.commitCompaction(ctx, t, tpath, pl, adds, opts, staged)
		out.Retries += retries
		if err == nil {
			out.Committed, out.Version, out.Partitions = true, res.Version, pl.partitions
			out.FilesRemoved, out.BytesRemoved = len(pl.removed), pl.bytes
			out.FilesAdded = len(adds)
			for _, a := range adds {
				out.BytesAdded += a.Size
				if rows, ok := a.NumRecords(); ok {
					out.Rows += rows
				}
			}
			return out, nil
		}
		if derr := t.DeleteFiles(context.WithoutCancel(ctx), adds); derr != nil {
			err = errors.Join(err, derr)
		}
		var rp *replanError
		if !errors.As(err, &rp) {
			return out, fmt.Errorf("compact %s: %w", tpath, err)
		}
		if n >= plans {
			return out, fmt.Errorf("compact %s: %w: gave up after %d plans: %w", tpath, catalogadapter.ErrConflict, n+1, err)
		}
		out.Retries++
	}
}

// replanError: the table changed under a compaction in a way its rewrite
// cannot survive; it must be planned again on the new version.
type replanError struct{ why string }

func (e *replanError) Error() string { return e.why }

// compactPlan is one compaction of a snapshot.
type compactPlan struct {
	snap   *delta.Snapshot
	target int64
	// rounds are written one WriteFiles each: the k-th group of every
	// partition, so a partitioned write makes one file per partition.
	rounds     [][]*delta.Add
	removed    []*delta.Add
	bytes      int64 // of removed
	rows       int64 // live rows of removed, -1 when some file does not tell
	partitions int
}

// planCompaction picks what a compaction of snap rewrites.
func (p *Provider) planCompaction(snap *delta.Snapshot, opts catalogadapter.CompactOptions) (compactPlan, error) {
	pl := compactPlan{snap: snap, target: opts.TargetFileSize}
	if pl.target <= 0 {
		pl.target = p.targetFileSize(snap)
	}
	if pl.target <= 0 {
		pl.target = delta.DefaultTargetFileSize
	}
	small := opts.SmallFileSize
	if small <= 0 {
		small = int64(catalogadapter.DefaultSmallFileFraction * float64(pl.target))
	}
	minFiles := max(opts.MinFiles, 2)
	schema, err := snap.Schema()
	if err != nil {
		return pl, err
	}
	pkeys, err := partitionKeys(snap)
	if err != nil {
		return pl, err
	}
	groups := map[string][]*delta.Add{}
	var keys []string
	for _, f := range snap.Files() {
		// A file with a deletion vector is rewritten whatever its size: the
		// rewrite drops its deleted rows.
		if f.Size >= small && (f.DeletionVector == nil || opts.KeepDeletionVectors) || clusteredFile(snap, f) {
			continue
		}
		k := partitionKey(pkeys, f.PartitionValues)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], f)
	}
	sort.Strings(keys)
	for _, k := range keys {
		files := groups[k]
		// A file with a deletion vector is rewritten even alone, unless
		// the caller keeps DVs.
		if len(files) < minFiles && (opts.KeepDeletionVectors || !slices.ContainsFunc(files, hasDV)) {
			continue
		}
		if opts.Partitions != nil {
			pv, err := typedPartition(snap, schema, files[0])
			if err != nil {
				return pl, err
			}
			keep, err := opts.Partitions(pv)
			if err != nil {
				return pl, fmt.Errorf("select partitions: %w", err)
			}
			if !keep {
				continue
			}
		}
		bins := binPack(files, pl.target, !opts.KeepDeletionVectors)
		if len(bins) == 0 {
			continue
		}
		pl.partitions++
		for i, b := range bins {
			if i == len(pl.rounds) {
				pl.rounds = append(pl.rounds, nil)
			}
			pl.rounds[i] = append(pl.rounds[i], b...)
			pl.removed = append(pl.removed, b...)
		}
	}
	for _, f := range pl.removed {
		pl.bytes += f.Size
		n, ok := f.NumRecords()
		if !ok || pl.rows < 0 {
			pl.rows = -1
			continue
		}
		if f.DeletionVector != nil {
			n -= f.DeletionVector.Cardinality
		}
		pl.rows += n
	}
	return pl, nil
}

func hasDV(f *delta.Add) bool { return f.DeletionVector != nil }

// partitionKey identifies a file's partition; "" and null are one value,
// as the protocol reads them.
func partitionKey(cols []string, pv map[string]*string) string {
	var b strings.Builder
	for _, c := range cols {
		if v := pv[c]; v != nil && *v != "" {
			b.WriteString("v")
			b.WriteString(*v)
		} else {
			b.WriteString("n")
		}
		b.WriteByte(0)
	}
	return b.String()
}

// binPack groups files, smallest first, into bins of at most target bytes
// of input (a file alone past it makes its own bin). A bin of one file is
// dropped unless the file has a deletion vector: rewriting it alone gains
// nothing.
func binPack(files []*delta.Add, target int64, purgeDVs bool) [][]*delta.Add {
	sorted := append([]*delta.Add(nil), files...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].Size != sorted[j].Size {
			return sorted[i].Size < sorted[j].Size
		}
		return sorted[i].Path < sorted[j].Path
	})
	var bins [][]*delta.Add
	var cur []*delta.Add
	var size int64
	flush := func() {
		if len(cur) > 1 || (len(cur) == 1 && purgeDVs && hasDV(cur[0])) {
			bins = append(bins, cur)
		}
		cur, size = nil, 0
	}
	for _, f := range sorted {
		if len(cur) > 0 && size+f.Size > target {
			flush()
		}
		cur = append(cur, f)
		size += f.Size
	}
	flush()
	return bins
}

// rewrite writes the plan's files anew: each round read through the
// snapshot and written by DuckDB as the table's data files, marked as
// moving data, not changing it.
func (p *Provider) rewrite(ctx context.Context, q catalogadapter.Querier, pl compactPlan) ([]*delta.Add, error) {
	if err := delta.PrepareDuckDB(ctx, q); err != nil {
		return nil, fmt.Errorf("prepare DuckDB: %w", err)
	}
	var all []*delta.Add
	for _, round := range pl.rounds {
		query, err := pl.snap.ScanFilesSQL(ctx, q, round)
		if err == nil {
			var adds []*delta.Add
			adds, err = pl.snap.WriteFiles(ctx, q, query, delta.WriteOptions{TargetFileSize: pl.target})
			all = append(all, adds...)
		}
		if err != nil {
			if errors.Is(err, delta.ErrUnsupportedFeature) {
				err = fmt.Errorf("%w: %w", catalogadapter.ErrUnsupported, err)
			}
			return nil, errors.Join(fmt.Errorf("rewrite %d files: %w", len(round), err),
				pl.snap.Table().DeleteFiles(context.WithoutCancel(ctx), all))
		}
	}
	var rows int64
	for _, a := range all {
		a.DataChange = false
		n, ok := a.NumRecords()
		if !ok {
			rows = -1
			break
		}
		rows += n
	}
	// The rewrite must hold the rows it replaces, no more, no fewer.
	if rows >= 0 && pl.rows >= 0 && rows != pl.rows {
		return nil, errors.Join(fmt.Errorf("rewrite of %d files wrote %d rows, they hold %d", len(pl.removed), rows, pl.rows),
			pl.snap.Table().DeleteFiles(context.WithoutCancel(ctx), all))
	}
	return all, nil
}

// commitCompaction commits the plan's removes and the rewritten adds, on
// the plan's snapshot and, after lost races the rewrite survives, on the
// newer ones. It returns a *replanError when it does not survive.
func (p *Provider) commitCompaction(ctx context.Context, t *delta.Table, tpath string, pl compactPlan, adds []*delta.Add,
	opts catalogadapter.CompactOptions, staged time.Time) (delta.CommitResult, int, error) {
	op := opts.Operation
	if op == "" {
		op = "OPTIMIZE"
	}
	predicate := []string{}
	if opts.Predicate != "" {
		predicate = append(predicate, opts.Predicate)
	}
	var added int64
	for _, a := range adds {
		added += a.Size
	}
	dvs := 0
	for _, f := range pl.removed {
		if f.DeletionVector != nil {
			dvs++
		}
	}
	co := delta.CommitOptions{
		Operation: op,
		// As Spark records an OPTIMIZE (strings: commitInfo stores them so).
		Parameters: map[string]any{"predicate": predicate, "zOrderBy": "[]", "auto": op != "OPTIMIZE"},
		Metrics: map[string]any{
			"numRemovedFiles": len(pl.removed), "numAddedFiles": len(adds),
			"numRemovedBytes": pl.bytes, "numAddedBytes": added,
			"numDeletionVectorsRemoved": dvs, "numPartitions": pl.partitions,
		},
		Now:          p.opts.Now,
		NoCheckpoint: p.opts.BackgroundCheckpoints,
	}
	snap := pl.snap
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			var err error
			if snap, err = p.fresh(ctx, t, tpath); err != nil {
				return delta.CommitResult{}, attempt, readError(tpath, err)
			}
			if why := compactionStale(pl, snap); why != "" {
				return delta.CommitResult{}, attempt, &replanError{why: why}
			}
		}
		// A stage older than its lifetime may have lost its files to a
		// vacuum: never commit it.
		if age := p.opts.Now().Sub(staged); age > catalogadapter.StageLifetime {
			return delta.CommitResult{}, attempt, fmt.Errorf("%w: the rewrite was staged %s ago", catalogadapter.ErrStageExpired, age)
		}
		if p.beforeCommit != nil {
			p.beforeCommit(attempt)
		}
		if err := ctx.Err(); err != nil {
			return delta.CommitResult{}, attempt, err
		}
		// The tombstones carry the commit's own time (VACUUM's oldest
		// readable version relies on it).
		at := p.opts.Now()
		co.Now = func() time.Time { return at }
		res, err := snap.Commit(ctx, p.compactActions(pl.removed, adds, at), co)
		if err == nil {
			p.snaps.put(tpath, snap, res.Snapshot)
			p.afterCommit(tpath, t, snap, res)
			return res, attempt, nil
		}
		var ce *delta.ConflictError
		if !errors.As(err, &ce) {
			if errors.Is(err, delta.ErrUnsupportedFeature) {
				err = fmt.Errorf("%w: %w", catalogadapter.ErrUnsupported, err)
			}
			return delta.CommitResult{}, attempt, err
		}
		if attempt >= p.opts.MaxRetries {
			return delta.CommitResult{}, attempt, fmt.Errorf("%w: gave up after %d attempts: %w", catalogadapter.ErrConflict, attempt+1, err)
		}
		// A short ceiling on the backoff: the rival is nearly always an
		// append, which the rebase above admits, and appenders that commit
		// back to back win every race against a doubling wait (a
		// compaction of a busy table would land only once they paused).
		// One compaction runs per table and process, so it herds no one.
		if err := backoff.Sleep(ctx, backoff.Equal(p.opts.BaseBackoff, min(4*p.opts.BaseBackoff, p.opts.MaxBackoff), attempt)); err != nil {
			return delta.CommitResult{}, attempt, fmt.Errorf("retry after a lost race at version %d: %w", ce.Version, err)
		}
	}
}

// compactionStale returns why snap no longer admits the plan's commit, or
// "": a file it removes is gone or has another deletion vector (its rows
// changed), or the metadata or protocol changed.
func compactionStale(pl compactPlan, snap *delta.Snapshot) string {
	if !reflect.DeepEqual(snap.Metadata, pl.snap.Metadata) {
		return fmt.Sprintf("the table's metadata changed between versions %d and %d", pl.snap.Version, snap.Version)
	}
	if !reflect.DeepEqual(snap.Protocol, pl.snap.Protocol) {
		return fmt.Sprintf("the table's protocol changed between versions %d and %d", pl.snap.Version, snap.Version)
	}
	root := snap.Table().Storage().URI()
	live := make(map[string]*delta.Add, len(snap.Files()))
	for _, f := range snap.Files() {
		live[delta.CanonicalPath(root, f.Path)] = f
	}
	for _, f := range pl.removed {
		g, ok := live[delta.CanonicalPath(root, f.Path)]
		if !ok || g.DeletionVector.UniqueID() != f.DeletionVector.UniqueID() {
			return fmt.Sprintf("file %s, which the compaction rewrites, changed between versions %d and %d",
				f.Path, pl.snap.Version, snap.Version)
		}
	}
	return ""
}

// compactActions are the compaction's tombstones and adds, none changing
// data (PROTOCOL.md: a remove with extendedFileMetadata carries the file's
// partition values, size and tags).
func (p *Provider) compactActions(removed, adds []*delta.Add, at time.Time) []delta.Action {
	now := at.UnixMilli()
	out := make([]delta.Action, 0, len(removed)+len(adds))
	for _, f := range removed {
		size, ext := f.Size, true
		out = append(out, delta.Action{Remove: &delta.Remove{
			Path:                    f.Path,
			DeletionTimestamp:       &now,
			DataChange:              false,
			ExtendedFileMetadata:    &ext,
			PartitionValues:         f.PartitionValues,
			Size:                    &size,
			Tags:                    f.Tags,
			DeletionVector:          f.DeletionVector,
			BaseRowID:               f.BaseRowID,
			DefaultRowCommitVersion: f.DefaultRowCommitVersion,
		}})
	}
	for _, a := range adds {
		out = append(out, delta.Action{Add: a})
	}
	return out
}
