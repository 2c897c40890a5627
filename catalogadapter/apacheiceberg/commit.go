package apacheiceberg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	ice "github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/backoff"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// SummaryOperation names the sink operation (WRITE, MERGE) in the
// snapshot summary, next to the epoch record.
const SummaryOperation = "lakesql.operation"

// Commit implements catalogadapter.Provider with our own retry loop, since
// iceberg-go's SQL, Hive and Hadoop catalogs do not retry a lost race.
// Receipts whose files were staged longer ago than
// catalogadapter.StageLifetime (the stamp in their paths, else the stage
// time their receipt recorded, by the Now option's clock) are refused first
// (ErrStageExpired). Each attempt
//  1. loads the table afresh;
//  2. checks the exactly-once record: when the main branch already holds
//     this writer's epoch (or a later one) the commit is skipped; when it
//     is this very call's snapshot (an attempt whose answer was lost), it
//     succeeded;
//  3. re-validates: staged files must still exist (checked once: else
//     ErrInvalid, and nothing is committed) and fit the table's partition
//     spec and schema, files to remove must still be live (else
//     ErrConflict: the caller redoes its merge), and so must the
//     requirements of opts (else ErrConflict); blind appends and
//     equality-delete row deltas need nothing more;
//  4. commits one snapshot pinned to the head it loaded
//     (AssertRefSnapshotID), and on a lost race backs off and goes round
//     again, at most MaxRetries times, then gives up with ErrConflict.
func (p *Provider) Commit(ctx context.Context, id catalogadapter.TableIdent, receipts []catalogadapter.Receipt, opts catalogadapter.CommitOptions) (catalogadapter.CommitOutcome, error) {
	ctx = p.cat.WithIO(ctx) // one AWS configuration for every FileIO the call opens
	fail := func(err error) (catalogadapter.CommitOutcome, error) {
		err = mapErr(p.cat.Scrub(err))
		if opts.Epoch >= 0 && opts.WriterID != "" {
			return catalogadapter.CommitOutcome{}, fmt.Errorf("commit epoch %d of %q to %s: %w", opts.Epoch, opts.WriterID, id, err)
		}
		return catalogadapter.CommitOutcome{}, fmt.Errorf("commit to %s: %w", id, err)
	}
	ident, err := identifier(id)
	if err != nil {
		return fail(err)
	}
	if err := catalogadapter.CheckKinds(opts.Requires, catalogadapter.KindNoNewDataSince); err != nil {
		return fail(err)
	}
	staged, dvRead, err := decodeReceipts(receipts)
	if err != nil {
		return fail(err)
	}
	if err := checkRemoves(opts.Removes, staged); err != nil {
		return fail(err)
	}
	evolved, err := receiptSchemas(receipts)
	if err != nil {
		return fail(err)
	}
	schemaChanges, err := commitSchemaChanges(opts.SchemaChanges)
	if err != nil {
		return fail(err)
	}
	if err := p.checkStageAge(staged); err != nil {
		return fail(err)
	}
	recordEpoch := opts.Epoch >= 0 && opts.WriterID != ""
	commitID := uuid.NewString()
	summary := map[string]string{}
	if recordEpoch {
		summary = icetable.EpochSummary(opts.WriterID, opts.Epoch, commitID)
	}
	if opts.Operation != "" {
		summary[SummaryOperation] = opts.Operation
	}
	maxRetries := opts.MaxRetries
	if maxRetries <= 0 {
		maxRetries = p.opts.MaxRetries
	}
	for attempt := 0; ; attempt++ {
		tbl, err := p.cat.LoadTable(ctx, ident)
		if err != nil {
			return fail(err)
		}
		if recordEpoch {
			if out, done, err := landed(tbl, opts, commitID, attempt); err != nil || done {
				if err != nil {
					return fail(err)
				}
				return out, nil
			}
		}
		for _, r := range opts.Requires { // kinds checked above: all NoNewDataSince
			if why := addedSince(tbl, r.Version); why != "" {
				return fail(fmt.Errorf("%w: %s", catalogadapter.ErrConflict, why))
			}
		}
		// Deletion vectors name the rows they found: rows committed since
		// may hold the same keys, so the upsert is redone on them.
		if dvRead != nil {
			if why := addedSince(tbl, *dvRead); why != "" {
				return fail(fmt.Errorf("%w: deletion vectors: %s", catalogadapter.ErrConflict, why))
			}
		}
		if attempt == 0 { // files do not come back: once is enough
			if err := icetable.CheckStaged(ctx, tbl, staged); err != nil {
				return fail(err)
			}
		}
		ftbl, err := evolvedForCommit(ctx, tbl, opts.SchemaChanges, evolved) // the schema the files are decoded for
		if err != nil {
			return fail(err)
		}
		change := icetable.Change{Removes: opts.Removes, Summary: summary, CheckDuplicates: !recordEpoch, Schema: schemaChanges}
		for _, s := range staged {
			df, err := s.File(ftbl.Metadata())
			if err != nil {
				return fail(err)
			}
			switch {
			case df.ContentType() == ice.EntryContentData:
				change.Adds = append(change.Adds, df)
			case s.DVBase != nil && df.ReferencedDataFile() != nil:
				if change.DVBases == nil {
					change.DVBases = map[string]icetable.DVBase{}
				}
				change.DVBases[*df.ReferencedDataFile()] = *s.DVBase
				change.Deletes = append(change.Deletes, df)
			default:
				change.Deletes = append(change.Deletes, df)
			}
		}
		if p.beforeCommit != nil {
			p.beforeCommit(attempt)
		}
		// A cancelled caller gets no commit: decide before the point of no return.
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		call, cancel := p.cat.Bound(ctx)
		next, err := icetable.Commit(call, tbl, change)
		err = p.cat.Timed(call, ctx, err)
		cancel()
		if err == nil {
			s := next.CurrentSnapshot()
			return catalogadapter.CommitOutcome{Version: s.SnapshotID, CommitTime: time.UnixMilli(s.TimestampMs).UTC(), Retries: attempt}, nil
		}
		switch {
		case errors.Is(err, icetable.ErrFileRemoved), errors.Is(err, icetable.ErrDVChanged):
			return fail(err)
		case errors.Is(err, icetable.ErrConflict):
			if attempt >= maxRetries {
				return fail(fmt.Errorf("%w: gave up after %d attempts: %w", catalogadapter.ErrConflict, attempt+1, err))
			}
			if err := backoff.Sleep(ctx, backoff.Equal(p.opts.BaseBackoff, p.opts.MaxBackoff, attempt)); err != nil {
				return fail(fmt.Errorf("retry after a lost race: %w", err))
			}
			continue
		}
		// The outcome is unknown (the catalog may have taken the commit
		// before failing): the exactly-once record tells.
		if recordEpoch {
			if again, lerr := p.cat.LoadTable(context.WithoutCancel(ctx), ident); lerr == nil {
				if rec, ok, _ := icetable.LastEpoch(again.Metadata(), opts.WriterID); ok && rec.CommitID == commitID {
					return catalogadapter.CommitOutcome{Version: rec.SnapshotID, CommitTime: time.UnixMilli(rec.TimestampMs).UTC(), Retries: attempt}, nil
				}
			}
		}
		return fail(err)
	}
}

// landed checks the exactly-once record before an attempt: done is true
// when the table already holds the epoch, as this call's own snapshot (a
// success) or as another run's (a skip).
func landed(tbl *table.Table, opts catalogadapter.CommitOptions, commitID string, attempt int) (catalogadapter.CommitOutcome, bool, error) {
	rec, ok, err := icetable.LastEpoch(tbl.Metadata(), opts.WriterID)
	if err != nil || !ok || rec.Epoch < opts.Epoch {
		return catalogadapter.CommitOutcome{}, false, err
	}
	// rec's snapshot may have expired since (the record then comes from the
	// table's properties): its id and time are in rec.
	out := catalogadapter.CommitOutcome{Version: tbl.CurrentSnapshot().SnapshotID, Retries: attempt, Skipped: rec.CommitID != commitID}
	if !out.Skipped {
		out.Version, out.CommitTime = rec.SnapshotID, time.UnixMilli(rec.TimestampMs).UTC()
	}
	return out, true, nil
}

// checkRemoves refuses empty or duplicate removal paths, a file both added
// and removed, and removals together with equality deletes.
func checkRemoves(removes []string, staged []icetable.StagedFile) error {
	seen := map[string]bool{}
	for _, r := range removes {
		if r == "" || seen[r] {
			return fmt.Errorf("%w: empty or repeated file %q to remove", catalogadapter.ErrInvalid, r)
		}
		seen[r] = true
	}
	for _, s := range staged {
		if seen[s.Path] {
			return fmt.Errorf("%w: file %s is both added and removed", catalogadapter.ErrInvalid, s.Path)
		}
		if s.Content != icetable.ContentData && len(removes) > 0 {
			return fmt.Errorf("%w: a commit cannot both remove data files and add delete files", catalogadapter.ErrInvalid)
		}
	}
	return nil
}

// Discard implements catalogadapter.Provider: it deletes staged files that
// will not be committed. Files the current snapshot's manifests reference
// are kept, so discarding the receipts of a commit that did land loses
// nothing (delete files that apply to no data file included: a scan plan
// leaves those out, the manifests do not).
func (p *Provider) Discard(ctx context.Context, id catalogadapter.TableIdent, receipts []catalogadapter.Receipt) error {
	ctx = p.cat.WithIO(ctx) // one AWS configuration for every FileIO the call opens
	staged, _, err := decodeReceipts(receipts)
	if err != nil {
		return fmt.Errorf("discard staged files of %s: %w", id, err)
	}
	if len(staged) == 0 {
		return nil
	}
	tbl, _, err := p.load(ctx, id)
	if err != nil {
		return fmt.Errorf("discard staged files of %s: %w", id, err)
	}
	live, err := icetable.ReferencedFiles(ctx, tbl)
	if err != nil {
		return fmt.Errorf("discard staged files of %s: %w", id, err)
	}
	var paths []string
	for _, s := range staged {
		if !live[s.Path] {
			paths = append(paths, s.Path)
		}
	}
	if err := p.removePaths(ctx, tbl, paths); err != nil {
		return fmt.Errorf("discard staged files of %s: %w", id, err)
	}
	return nil
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// removeFiles deletes files just written that will never be committed.
func (p *Provider) removeFiles(ctx context.Context, tbl *table.Table, files []ice.DataFile) error {
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.FilePath()
	}
	return p.removePaths(ctx, tbl, paths)
}

// removePaths deletes files through the table's own file IO, so any
// storage iceberg-go reaches works (objects on S3 too); a file already
// gone is no error. Cached copies of remote files go as well.
func (p *Provider) removePaths(ctx context.Context, tbl *table.Table, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	w, ok := fsys.(iceio.WriteFileIO)
	if !ok {
		return fmt.Errorf("%w: the table's file IO cannot delete files", catalogadapter.ErrUnsupported)
	}
	var errs []error
	for _, path := range paths {
		if err := w.Remove(path); err != nil && !isNotExist(err) {
			errs = append(errs, err)
			continue
		}
		icetable.ForgetCached(p.cat.CacheDir(), path)
		// DuckDB's COPY writes into a directory of its own: drop it once empty.
		if lp, err := icetable.LocalPath(path); err == nil && strings.HasPrefix(filepath.Base(filepath.Dir(lp)), "lakesql-") {
			os.Remove(filepath.Dir(lp))
		}
	}
	return errors.Join(errs...)
}

// addedSince tells why tbl holds data that the snapshot read (-1: none,
// the table was empty) did not: a later snapshot added data files, which
// may hold keys a copy-on-write merge did not see, or delete files
// (another writer's merge-on-read DELETE or upsert), which may delete rows
// of the files the merge rewrites: the rewritten copies, newer than the
// deletes, would bring those rows back. Writers leave the added-* counts
// out of a summary when they are zero; a snapshot without a summary, or a
// read snapshot no longer among the current one's ancestors, counts as a
// change.
func addedSince(tbl *table.Table, read int64) string {
	md := tbl.Metadata()
	s := tbl.CurrentSnapshot()
	if s == nil {
		return "" // still empty
	}
	for s != nil && s.SnapshotID != read {
		if s.Summary == nil {
			return fmt.Sprintf("snapshot %d, after snapshot %d which this merge read, has no summary", s.SnapshotID, read)
		}
		if why := addedFiles(s.Summary.Properties); why != "" {
			return fmt.Sprintf("snapshot %d added %s after snapshot %d, which this merge read", s.SnapshotID, why, read)
		}
		if s.ParentSnapshotID == nil {
			break
		}
		s = md.SnapshotByID(*s.ParentSnapshotID)
	}
	if s == nil || (s.SnapshotID != read && read != -1) {
		return fmt.Sprintf("snapshot %d, which this merge read, is no longer an ancestor of the current one", read)
	}
	return ""
}

// addedCounts are the snapshot-summary counts of files a copy-on-write
// merge must not race with, and what they count. added-delete-files covers
// position, equality and deletion-vector files; the finer counts are
// there for writers that give only those.
var addedCounts = []struct{ key, what string }{
	{"added-data-files", "data file(s)"},
	{"added-delete-files", "delete file(s)"},
	{"added-position-delete-files", "position-delete file(s)"},
	{"added-equality-delete-files", "equality-delete file(s)"},
	{"added-dvs", "deletion vector(s)"},
}

// addedFiles names the first nonzero addedCounts entry of a summary ("":
// none).
func addedFiles(props map[string]string) string {
	for _, c := range addedCounts {
		if n := props[c.key]; n != "" && n != "0" {
			return n + " " + c.what
		}
	}
	return ""
}
