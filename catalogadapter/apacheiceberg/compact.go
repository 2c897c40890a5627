package apacheiceberg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/backoff"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

var _ catalogadapter.Compactor = (*Provider)(nil)

// DefaultCompactPlans bounds the plans of one Compact when
// CompactOptions.MaxRetries is 0: a plan is redone only when a concurrent
// commit removed one of its files or added position deletes.
const DefaultCompactPlans = 5

// compactPlan is what one compaction rewrites, read at one snapshot.
type compactPlan struct {
	tbl        *table.Table
	snap       *table.Snapshot
	spec       int // partition spec and schema the plan was made with
	schema     int
	target     int64
	partitions int
	rewrite    []ice.DataFile // data files to replace
	deletes    []ice.DataFile // delete files dead once they are replaced
	dvs        []ice.DataFile // deletion vectors of the replaced files
	bytes      int64          // of rewrite
}

// Compact implements catalogadapter.Compactor. It plans on the current
// snapshot: per partition of the current spec, a data file is a candidate
// when it is small or delete files apply to it; a partition is rewritten
// when it holds at least MinFiles candidates or one with deletes. The
// candidates' rows are read through our DuckDB scan of that snapshot
// (deletes applied), written by our copy path into files of the target
// size, and committed as one replace snapshot that also drops the delete
// files no remaining data file needs. The new files keep the plan
// snapshot's sequence number, so equality deletes committed meanwhile (an
// upsert's) still apply to their rows: those, and appends, never make it
// fail. A concurrent commit that removed a planned file, or added position
// deletes, makes it plan again.
func (p *Provider) Compact(ctx context.Context, id catalogadapter.TableIdent, q catalogadapter.Querier, opts catalogadapter.CompactOptions) (catalogadapter.CompactOutcome, error) {
	ctx = p.cat.WithIO(ctx) // one AWS configuration for every FileIO the call opens
	fail := func(err error) (catalogadapter.CompactOutcome, error) {
		return catalogadapter.CompactOutcome{}, fmt.Errorf("compact %s: %w", id, mapErr(p.cat.Scrub(err)))
	}
	if q == nil {
		return fail(fmt.Errorf("%w: nil querier", catalogadapter.ErrInvalid))
	}
	conn, done, err := sqlConn(ctx, q)
	if err != nil {
		return fail(err)
	}
	defer done()
	plans := opts.MaxRetries
	if plans <= 0 {
		plans = DefaultCompactPlans
	}
	retries := 0
	for attempt := 0; ; attempt++ {
		tbl, _, err := p.load(ctx, id)
		if err != nil {
			return fail(err)
		}
		plan, err := p.planCompaction(ctx, tbl, opts)
		if err != nil {
			return fail(err)
		}
		if len(plan.rewrite) == 0 {
			return catalogadapter.CompactOutcome{Retries: retries}, nil
		}
		added, err := p.writeCompacted(ctx, conn, plan)
		if err != nil {
			return fail(err)
		}
		out, err := p.commitCompaction(ctx, id, plan, added, opts)
		out.Retries += retries
		retries = out.Retries
		var replan *replanError
		switch {
		case err == nil:
			return out, nil
		case errors.As(err, &replan):
			if rerr := p.removeFiles(ctx, tbl, added); rerr != nil {
				return fail(errors.Join(err, rerr))
			}
			retries++
			if attempt+1 >= plans {
				return fail(fmt.Errorf("%w: gave up after %d plans: %w", catalogadapter.ErrConflict, attempt+1, err))
			}
			continue
		case errors.Is(err, catalogadapter.ErrConflict):
			return fail(errors.Join(err, p.removeFiles(ctx, tbl, added)))
		}
		return fail(err) // the outcome is unknown: the files stay, vacuum judges them
	}
}

// replanError: the table changed under the plan in a way the plan cannot
// survive; Compact plans again.
type replanError struct{ why string }

func (e *replanError) Error() string { return "the table changed under the compaction: " + e.why }

// planCompaction chooses the files to rewrite at tbl's current snapshot.
func (p *Provider) planCompaction(ctx context.Context, tbl *table.Table, opts catalogadapter.CompactOptions) (compactPlan, error) {
	plan := compactPlan{tbl: tbl, snap: tbl.CurrentSnapshot(), spec: tbl.Metadata().DefaultPartitionSpec(), schema: tbl.Schema().ID}
	plan.target = p.compactTarget(tbl, opts.TargetFileSize)
	if plan.snap == nil {
		return plan, nil
	}
	small := opts.SmallFileSize
	if small <= 0 {
		small = int64(float64(plan.target) * catalogadapter.DefaultSmallFileFraction)
	}
	minFiles := max(opts.MinFiles, 2)
	tasks, err := tbl.Scan(table.WithSnapshotID(plan.snap.SnapshotID)).PlanFiles(ctx)
	if err != nil {
		return plan, fmt.Errorf("plan files of snapshot %d: %w", plan.snap.SnapshotID, err)
	}
	type file struct {
		df      ice.DataFile
		deletes map[string]bool
		dv      ice.DataFile // its deletion vector, if any
	}
	files := map[string]*file{}
	var order []string
	for _, t := range tasks { // a large file may come as several tasks
		f := files[t.File.FilePath()]
		if f == nil {
			f = &file{df: t.File, deletes: map[string]bool{}}
			files[t.File.FilePath()] = f
			order = append(order, t.File.FilePath())
		}
		for _, d := range append(append([]ice.DataFile{}, t.DeleteFiles...), t.EqualityDeleteFiles...) {
			f.deletes[d.FilePath()] = true
		}
		if len(t.DeletionVectorFiles) > 0 {
			f.dv = t.DeletionVectorFiles[0]
		}
	}
	identity := identityColumns(tbl)
	type group struct {
		candidates  []*file
		withDeletes bool
	}
	groups := map[string]*group{}
	var keys []string
	for _, path := range order {
		f := files[path]
		// Files of an older partition spec would change partition when
		// rewritten: they stay.
		if int(f.df.SpecID()) != plan.spec {
			continue
		}
		deleted := len(f.deletes) > 0 || f.dv != nil
		if f.df.FileSizeBytes() >= small && !deleted {
			continue
		}
		if opts.Partitions != nil {
			ok, err := opts.Partitions(partitionValues(f.df, identity))
			if err != nil {
				return plan, fmt.Errorf("partition filter: %w", err)
			}
			if !ok {
				continue
			}
		}
		key := icetable.PartitionKey(f.df)
		g := groups[key]
		if g == nil {
			g = &group{}
			groups[key] = g
			keys = append(keys, key)
		}
		g.candidates = append(g.candidates, f)
		g.withDeletes = g.withDeletes || deleted
	}
	rewritten := map[string]bool{}
	for _, k := range keys {
		g := groups[k]
		if len(g.candidates) < minFiles && !g.withDeletes {
			continue
		}
		plan.partitions++
		for _, f := range g.candidates {
			plan.rewrite = append(plan.rewrite, f.df)
			plan.bytes += f.df.FileSizeBytes()
			rewritten[f.df.FilePath()] = true
			if f.dv != nil { // folded into the new files: it goes with its data file
				plan.dvs = append(plan.dvs, f.dv)
			}
		}
	}
	if len(plan.rewrite) == 0 {
		return plan, nil
	}
	// A delete file is dead once no remaining data file needs it: every
	// data file the planner applies it to is rewritten (files appended
	// later have higher sequence numbers, so it never applies to them).
	// A delete file that applies to no data file at all is dead too, when
	// it is in a partition being rewritten (or unpartitioned).
	needed := map[string]bool{}
	for path, f := range files {
		if !rewritten[path] {
			maps.Copy(needed, f.deletes)
		}
	}
	compacted := map[string]bool{}
	for _, df := range plan.rewrite {
		compacted[icetable.PartitionKey(df)] = true
	}
	applied := map[string]bool{}
	for path := range rewritten {
		maps.Copy(applied, files[path].deletes)
	}
	live, err := icetable.LiveDeleteFiles(ctx, tbl, plan.snap.SnapshotID)
	if err != nil {
		return plan, err
	}
	for _, d := range live {
		path := d.FilePath()
		if needed[path] || table.IsDeletionVector(d) {
			continue
		}
		if applied[path] || len(d.Partition()) == 0 || compacted[icetable.PartitionKey(d)] {
			plan.deletes = append(plan.deletes, d)
		}
	}
	return plan, nil
}

// compactTarget is the size compaction writes: opts' target, else the
// provider's, else the table's write.target-file-size-bytes, else
// iceberg-go's default.
func (p *Provider) compactTarget(tbl *table.Table, target int64) int64 {
	switch {
	case target > 0:
		return target
	case p.opts.TargetFileSize > 0:
		return p.opts.TargetFileSize
	}
	return int64(tbl.Properties().GetInt(table.WriteTargetFileSizeBytesKey, table.WriteTargetFileSizeBytesDefault))
}

// identityColumns maps the current spec's identity partition fields to
// their source columns.
func identityColumns(tbl *table.Table) map[int]string {
	out := map[int]string{}
	schema := tbl.Schema()
	spec := tbl.Spec()
	for _, f := range spec.Fields() {
		if _, ok := f.Transform.(ice.IdentityTransform); ok {
			if name, ok := schema.FindColumnName(f.SourceID()); ok {
				out[f.FieldID] = name
			}
		}
	}
	return out
}

// partitionValues are a file's identity partition values by column, as
// Files reports them (nil for null).
func partitionValues(df ice.DataFile, identity map[int]string) map[string]any {
	out := map[string]any{}
	for fid, v := range df.Partition() {
		if col, ok := identity[fid]; ok {
			out[col] = plainValue(v)
		}
	}
	return out
}

// writeCompacted reads the planned files' rows, deletes applied, at the
// plan's snapshot and writes them as new data files of the target size.
// Files that came out empty are removed and left out.
func (p *Provider) writeCompacted(ctx context.Context, conn *sql.Conn, plan compactPlan) ([]ice.DataFile, error) {
	paths := make([]string, len(plan.rewrite))
	for i, f := range plan.rewrite {
		paths[i] = f.FilePath()
	}
	scan, _, err := icetable.ScanSQL(ctx, plan.tbl, icetable.ScanOptions{
		SnapshotID: plan.snap.SnapshotID, Paths: paths, CacheDir: p.cat.CacheDir(), AllowedRoots: p.opts.AllowedRoots,
	})
	if err != nil {
		return nil, fmt.Errorf("read files to compact: %w", err)
	}
	var names []string
	for _, f := range plan.tbl.Schema().Fields() {
		names = append(names, f.Name)
	}
	files, err := p.writeRows(ctx, plan.tbl, conn, scan, names, plan.target)
	if err != nil {
		return nil, fmt.Errorf("write compacted files: %w", err)
	}
	var out, empty []ice.DataFile
	for _, f := range files {
		if f.Count() == 0 {
			empty = append(empty, f)
		} else {
			out = append(out, f)
		}
	}
	if err := p.removeFiles(ctx, plan.tbl, empty); err != nil {
		return nil, errors.Join(fmt.Errorf("remove empty compacted files: %w", err), p.removeFiles(ctx, plan.tbl, out))
	}
	return out, nil
}

// commitCompaction commits the plan's rewrite, retrying lost races on the
// new head as long as what landed meanwhile leaves the plan valid:
// appends and equality deletes do; a removed planned file or a position
// delete do not (replanError).
func (p *Provider) commitCompaction(ctx context.Context, id catalogadapter.TableIdent, plan compactPlan, added []ice.DataFile, opts catalogadapter.CompactOptions) (catalogadapter.CompactOutcome, error) {
	op := opts.Operation
	if op == "" {
		op = "OPTIMIZE"
	}
	rw := icetable.Rewrite{
		Removes: plan.rewrite, Adds: added, DeleteRemoves: plan.deletes, DVRemoves: plan.dvs,
		DataSequenceNumber: plan.snap.SequenceNumber,
		Summary:            map[string]string{SummaryOperation: op},
	}
	out := catalogadapter.CompactOutcome{
		Partitions: plan.partitions, FilesRemoved: len(plan.rewrite), FilesAdded: len(added),
		BytesRemoved: plan.bytes, DeleteFilesRemoved: len(plan.deletes) + len(plan.dvs),
	}
	for _, f := range added {
		out.BytesAdded += f.FileSizeBytes()
		out.Rows += f.Count()
	}
	for attempt := 0; ; attempt++ {
		tbl := plan.tbl
		if attempt > 0 || p.beforeCompactCommit != nil {
			if p.beforeCompactCommit != nil {
				p.beforeCompactCommit(attempt)
			}
			var err error
			if tbl, _, err = p.load(ctx, id); err != nil {
				return out, err
			}
			if err := stillValid(ctx, tbl, plan); err != nil {
				return out, err
			}
		}
		if err := ctx.Err(); err != nil {
			return out, err
		}
		call, cancel := p.cat.Bound(ctx)
		next, err := icetable.CommitRewrite(call, tbl, rw)
		err = p.cat.Timed(call, ctx, err)
		cancel()
		if err == nil {
			s := next.CurrentSnapshot()
			out.Committed, out.Version, out.Retries = true, s.SnapshotID, attempt
			return out, nil
		}
		if !errors.Is(err, icetable.ErrConflict) {
			return out, err
		}
		if attempt >= p.opts.MaxRetries {
			return out, fmt.Errorf("%w: gave up after %d attempts: %w", catalogadapter.ErrConflict, attempt+1, err)
		}
		if err := backoff.Sleep(ctx, backoff.Equal(p.opts.BaseBackoff, p.opts.MaxBackoff, attempt)); err != nil {
			return out, fmt.Errorf("retry after a lost race: %w", err)
		}
	}
}

// stillValid checks the plan against what landed after its snapshot.
func stillValid(ctx context.Context, tbl *table.Table, plan compactPlan) error {
	c := icetable.ChangesSince(tbl, plan.snap, plan.spec, plan.schema)
	switch {
	case c.Replan:
		return &replanError{c.Why}
	case c.PositionDeletes:
		return &replanError{c.Why}
	case !c.Removed:
		return nil
	}
	live, err := icetable.ReferencedFiles(ctx, tbl)
	if err != nil {
		return err
	}
	for _, f := range append(append([]ice.DataFile{}, plan.rewrite...), plan.deletes...) {
		if !live[f.FilePath()] {
			return &replanError{fmt.Sprintf("%s was removed by another commit", f.FilePath())}
		}
	}
	return nil
}
