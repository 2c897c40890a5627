package deltalake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/backoff"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// Commit implements catalogadapter.Provider: a compare-and-swap loop over
// the Delta log. Each attempt reads the latest version, checks the
// exactly-once record, and writes the next version with put-if-absent. A
// lost race is retried with backoff when the winners did not touch what
// this commit depends on (a blind append never depends on anything), and
// reported as ErrConflict when they did. The first attempt of receipts
// staged in this process commits on the version they were staged on
// instead of reading the latest: see stagedSnapshot.
//
// With nothing to record (no files, no removals, no epoch) nothing is
// written and the current version is returned. A checkpoint that fails
// after a commit does not fail the commit: the log stays the truth.
func (p *Provider) Commit(ctx context.Context, id catalogadapter.TableIdent, receipts []catalogadapter.Receipt, opts catalogadapter.CommitOptions) (catalogadapter.CommitOutcome, error) {
	t, tpath, err := p.table(id)
	if err != nil {
		return catalogadapter.CommitOutcome{}, err
	}
	fail := func(err error) (catalogadapter.CommitOutcome, error) {
		if opts.Epoch >= 0 && opts.WriterID != "" {
			return catalogadapter.CommitOutcome{}, fmt.Errorf("commit epoch %d of %q to %s: %w", opts.Epoch, opts.WriterID, tpath, err)
		}
		return catalogadapter.CommitOutcome{}, fmt.Errorf("commit to %s: %w", tpath, err)
	}
	if err := catalogadapter.CheckKinds(opts.Requires, catalogadapter.KindNoNewDataSince); err != nil {
		return fail(err)
	}
	receipts, dvs, _, err := splitDVReceipts(receipts)
	if err != nil {
		return fail(err)
	}
	adds, stagedOn, err := p.decodeReceipts(ctx, t.Storage(), receipts)
	if err != nil {
		return fail(err)
	}
	if err := p.checkStageLifetime(adds); err != nil {
		return fail(err)
	}
	removes, err := checkRemoves(opts.Removes, adds)
	if err != nil {
		return fail(err)
	}
	// An epoch without a writer id cannot be recorded (a txn needs an
	// appId), so it is ignored, as CommitOptions' zero value expects.
	recordEpoch := opts.Epoch >= 0 && opts.WriterID != ""
	maxRetries := opts.MaxRetries
	if maxRetries <= 0 {
		maxRetries = p.opts.MaxRetries
	}
	op := opts.Operation
	if op == "" {
		op = "WRITE"
	}
	var params map[string]any
	if recordEpoch {
		params = map[string]any{"writerId": opts.WriterID, "epoch": opts.Epoch}
	}
	first, err := p.stagedSnapshot(ctx, t, tpath, stagedOn, len(adds), opts, recordEpoch)
	if err != nil {
		return fail(readError(tpath, err))
	}
	for attempt := 0; ; attempt++ {
		snap, staged := first, first != nil
		first = nil
		if !staged {
			if snap, err = p.fresh(ctx, t, tpath); err != nil {
				return fail(readError(tpath, err))
			}
		}
		if recordEpoch {
			if v, ok := snap.TxnVersion(opts.WriterID); ok && v >= opts.Epoch {
				return catalogadapter.CommitOutcome{Version: snap.Version, Retries: attempt, Skipped: true}, nil
			}
		}
		for _, r := range opts.Requires { // kinds checked above: all NoNewDataSince
			if snap.Version <= r.Version {
				continue
			}
			why, err := addedSince(ctx, t, r.Version, snap.Version)
			if err != nil {
				return fail(err)
			}
			if why != "" {
				return fail(fmt.Errorf("%w: %s", catalogadapter.ErrConflict, why))
			}
		}
		// One time for the whole entry: its tombstones are stamped with
		// the commit's own timestamp, which VACUUM's oldest readable
		// version relies on.
		now := p.opts.Now()
		actions, err := p.actions(snap, adds, removes, opts, recordEpoch, now)
		if err != nil {
			return fail(err)
		}
		dvActs, err := dvActions(snap, t.Storage().URI(), dvs, now.UnixMilli())
		if err != nil {
			return fail(err)
		}
		actions = append(actions, dvActs...)
		if len(actions) == 0 {
			return catalogadapter.CommitOutcome{Version: snap.Version, Retries: attempt}, nil
		}
		if p.beforeCommit != nil {
			p.beforeCommit(attempt)
		}
		// A cancelled caller gets no commit: decide before the point of no return.
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		res, err := snap.Commit(ctx, actions, delta.CommitOptions{Operation: op, Parameters: params, Now: func() time.Time { return now },
			NoCheckpoint: p.opts.BackgroundCheckpoints})
		if err == nil {
			p.snaps.put(tpath, snap, res.Snapshot)
			p.afterCommit(tpath, t, snap, res)
			return catalogadapter.CommitOutcome{Version: res.Version, CommitTime: res.Time, Retries: attempt}, nil
		}
		var ce *delta.ConflictError
		if !errors.As(err, &ce) {
			if errors.Is(err, delta.ErrUnsupportedFeature) {
				return fail(fmt.Errorf("%w: %w", catalogadapter.ErrUnsupported, err))
			}
			return fail(err)
		}
		if recordEpoch && epochLanded(ce.Winners, opts.WriterID, opts.Epoch) {
			v := ce.Version
			if n := len(ce.Winners); n > 0 {
				v = ce.Winners[n-1].Version
			}
			return catalogadapter.CommitOutcome{Version: v, Retries: attempt, Skipped: true}, nil
		}
		if why := dependencyChanged(tpath, ce.Winners, snap, append(dvPaths(dvs), removes...)); why != "" {
			return fail(fmt.Errorf("%w: %s: %w", catalogadapter.ErrConflict, why, err))
		}
		if attempt >= maxRetries {
			return fail(fmt.Errorf("%w: gave up after %d attempts: %w", catalogadapter.ErrConflict, attempt+1, err))
		}
		if staged {
			// The table moved on since staging, which is what a fresh read
			// would have found: read it now, without waiting.
			continue
		}
		if err := backoff.Sleep(ctx, backoff.Equal(p.opts.BaseBackoff, p.opts.MaxBackoff, attempt)); err != nil {
			return fail(fmt.Errorf("retry after a lost race at version %d: %w", ce.Version, err))
		}
	}
}

// stagedSnapshot is the snapshot the first attempt commits on instead of a
// fresh read of the log: on, the one every receipt was staged on, while it
// is still the one this provider holds for the table (no call here has
// seen a newer version since, nor a table created again) and its log
// entry is still the table's (delta.Table.Unchanged: one read, where
// bringing it up to date takes three), when there are files to add, and
// unless it already holds the epoch (a replay is judged and reported on
// the latest version, as before). nil: read the log.
//
// Committing on it is as safe as on a fresh read:
//   - The put-if-absent of the next version fails when any commit landed
//     after it; the loss brings the winners, every version since
//     (delta.ConflictError), and the retry reads the log.
//   - Exactly-once: its txn records are checked as a fresh read's are, and
//     a later commit of the same epoch is among the winners, which makes
//     the commit Skipped (epochLanded). Winners that could not all be read
//     make a retry, which checks the txn on a fresh read.
//   - Schema, partitioning and protocol: the files were written for this
//     snapshot, and Snapshot.Commit checks its protocol. A winner that
//     changed schema or partitioning is a conflict (dependencyChanged); one
//     that changed the protocol is checked by the retry's Snapshot.Commit.
//   - A merge that read the table (NoNewDataSince) is checked for adds up to
//     this version, and on a retry up to the newer one.
//   - The staged files are still checked to be there (checkStaged).
//   - The table is still the one staged on: its entry of this version is
//     unchanged (a table deleted and created again has another, or none,
//     and the put would leave a gap in its log). Log cleanup removes the
//     oldest entries first, so with this one kept, none after it is gone.
func (p *Provider) stagedSnapshot(ctx context.Context, t *delta.Table, tpath string, on *delta.Snapshot, adds int,
	opts catalogadapter.CommitOptions, recordEpoch bool) (*delta.Snapshot, error) {
	if on == nil || adds == 0 || p.noCache || p.snaps.get(tpath) != on {
		return nil, nil
	}
	if v, ok := on.TxnVersion(opts.WriterID); recordEpoch && ok && v >= opts.Epoch {
		return nil, nil
	}
	if ok, err := t.Unchanged(ctx, on); !ok || err != nil {
		return nil, err
	}
	return on, nil
}

// actions builds one attempt's commit against snap: the txn record, the
// tombstones (filled from the live files, which must still hold them) and
// the adds.
func (p *Provider) actions(snap *delta.Snapshot, adds []*delta.Add, removes []string, opts catalogadapter.CommitOptions, recordEpoch bool, at time.Time) ([]delta.Action, error) {
	now := at.UnixMilli()
	var out []delta.Action
	if recordEpoch {
		out = append(out, delta.Action{Txn: &delta.Txn{AppID: opts.WriterID, Version: opts.Epoch, LastUpdated: &now}})
	}
	if len(removes) > 0 {
		if snap.Metadata.AppendOnly() {
			return nil, fmt.Errorf("%w: the table is append-only (delta.appendOnly): files cannot be removed", catalogadapter.ErrInvalid)
		}
		root := snap.Table().Storage().URI()
		live := make(map[string]*delta.Add, len(snap.Files()))
		for _, f := range snap.Files() {
			live[delta.CanonicalPath(root, f.Path)] = f
		}
		for _, r := range removes {
			f, ok := live[delta.CanonicalPath(root, r)]
			if !ok {
				return nil, fmt.Errorf("%w: file %s is no longer in the table at version %d (another writer removed it)",
					catalogadapter.ErrConflict, r, snap.Version)
			}
			size, ext := f.Size, true
			out = append(out, delta.Action{Remove: &delta.Remove{
				Path:                 f.Path,
				DeletionTimestamp:    &now,
				DataChange:           true,
				ExtendedFileMetadata: &ext,
				PartitionValues:      f.PartitionValues,
				Size:                 &size,
				Stats:                f.Stats, // so history can count the rows it removes
				Tags:                 f.Tags,
				DeletionVector:       f.DeletionVector,
			}})
		}
	}
	if len(adds) > 0 {
		if err := checkAddsFit(snap, adds); err != nil {
			return nil, err
		}
	}
	for _, a := range adds {
		out = append(out, delta.Action{Add: a})
	}
	return out, nil
}

// checkAddsFit refuses adds staged for another partitioning than the
// table's current one: their files would be read wrongly.
func checkAddsFit(snap *delta.Snapshot, adds []*delta.Add) error {
	want, err := partitionKeys(snap)
	if err != nil {
		return err
	}
	for _, a := range adds {
		ok := len(a.PartitionValues) == len(want)
		for _, c := range want {
			if _, has := a.PartitionValues[c]; !has {
				ok = false
			}
		}
		if !ok {
			return fmt.Errorf("%w: staged file %s was written for other partition columns than the table's %q",
				catalogadapter.ErrConflict, a.Path, want)
		}
	}
	return nil
}

// epochLanded tells whether a winning commit recorded this writer's epoch
// (or a later one): a replay raced us and won, so our commit is redundant.
func epochLanded(winners []delta.Commit, writerID string, epoch int64) bool {
	for _, w := range winners {
		for _, a := range w.Actions {
			if a.Txn != nil && a.Txn.AppID == writerID && a.Txn.Version >= epoch {
				return true
			}
		}
	}
	return false
}

// dependencyChanged returns why the winners invalidate this commit, or "":
// a winner removed a file we remove (our rewrite of it is stale), or
// changed the table's schema or partitioning (our files may not fit).
func dependencyChanged(tpath string, winners []delta.Commit, snap *delta.Snapshot, removes []string) string {
	root := filepath.ToSlash(tpath)
	ours := make(map[string]string, len(removes))
	for _, r := range removes {
		ours[delta.CanonicalPath(root, r)] = r
	}
	for _, w := range winners {
		for _, a := range w.Actions {
			if a.Remove != nil {
				if r, ok := ours[delta.CanonicalPath(root, a.Remove.Path)]; ok {
					return fmt.Sprintf("version %d removed %s, which this commit rewrites", w.Version, r)
				}
			}
			if md := a.MetaData; md != nil && (md.SchemaString != snap.Metadata.SchemaString ||
				strings.Join(md.PartitionColumns, "\x00") != strings.Join(snap.Metadata.PartitionColumns, "\x00")) {
				return fmt.Sprintf("version %d changed the table schema or partitioning", w.Version)
			}
		}
	}
	return ""
}

// decodeReceipts reads the add actions out of the receipts and checks that
// each names a staged data file inside the table that is really there: a
// bad receipt must not make the table point at a missing or foreign file.
// It also returns the snapshot the receipts were staged on, as
// parseReceipts does.
func (p *Provider) decodeReceipts(ctx context.Context, store delta.Storage, receipts []catalogadapter.Receipt) ([]*delta.Add, *delta.Snapshot, error) {
	adds, on, err := p.parseReceipts(store.URI(), receipts)
	if err != nil {
		return nil, nil, err
	}
	for i, a := range adds {
		if err := checkStaged(ctx, store, a); err != nil {
			return nil, nil, fmt.Errorf("staged file %d: %w", i, err)
		}
	}
	return adds, on, nil
}

// parseReceipts decodes the add actions of the receipts and checks their
// fields, without touching the files. Receipts this provider made for the
// table give their adds as they were made, neither decoded nor checked
// again; when every receipt is one, staged on one snapshot, that snapshot
// is returned too.
func (p *Provider) parseReceipts(root string, receipts []catalogadapter.Receipt) ([]*delta.Add, *delta.Snapshot, error) {
	var adds []*delta.Add
	var on *delta.Snapshot
	mixed := false // some receipt was not made here, or on another snapshot
	seen := map[string]bool{}
	for i, r := range receipts {
		if len(strings.TrimSpace(string(r.Metadata))) == 0 {
			continue
		}
		var as []*delta.Add
		if own := p.ownStaged(root, r); own != nil {
			as = own.adds
			if on != nil && on != own.snap {
				mixed = true
			}
			on = own.snap
		} else {
			mixed = true
			if err := json.Unmarshal(r.Metadata, &as); err != nil {
				return nil, nil, fmt.Errorf("%w: receipt %d: metadata is not a list of Delta add actions: %w", catalogadapter.ErrInvalid, i, err)
			}
			for j, a := range as {
				if err := checkAdd(a); err != nil {
					return nil, nil, fmt.Errorf("%w: receipt %d, file %d: %w", catalogadapter.ErrInvalid, i, j, err)
				}
			}
		}
		for _, a := range as {
			k := delta.CanonicalPath(root, a.Path)
			if seen[k] {
				return nil, nil, fmt.Errorf("%w: receipt %d: file %s is staged twice", catalogadapter.ErrInvalid, i, a.Path)
			}
			seen[k] = true
			adds = append(adds, a)
		}
	}
	if mixed {
		on = nil
	}
	return adds, on, nil
}

func checkAdd(a *delta.Add) error {
	if a == nil {
		return errors.New("null add action")
	}
	if _, err := stagedPath(a.Path); err != nil {
		return err
	}
	switch {
	case a.Size < 0:
		return fmt.Errorf("file %s has negative size %d", a.Path, a.Size)
	case a.DeletionVector != nil:
		return fmt.Errorf("file %s carries a deletion vector; staged files never do", a.Path)
	case a.Stats != "" && !json.Valid([]byte(a.Stats)):
		return fmt.Errorf("file %s has stats that are not JSON", a.Path)
	}
	return nil
}

// checkStaged checks that a's file is there, as big as the receipt says.
// A bad receipt is ErrInvalid; a storage that cannot answer is not (the
// commit may be retried).
func checkStaged(ctx context.Context, store delta.Storage, a *delta.Add) error {
	rel, err := stagedPath(a.Path)
	if err != nil {
		return fmt.Errorf("%w: %w", catalogadapter.ErrInvalid, err)
	}
	info, err := store.Stat(ctx, rel)
	if err != nil {
		if errors.Is(err, delta.ErrNotFound) {
			return fmt.Errorf("%w: %s is missing", catalogadapter.ErrInvalid, a.Path)
		}
		return fmt.Errorf("check %s: %w", a.Path, err)
	}
	if info.Size != a.Size {
		return fmt.Errorf("%w: %s has %d bytes, the receipt says %d", catalogadapter.ErrInvalid, a.Path, info.Size, a.Size)
	}
	return nil
}

// stagedPath checks that an add path is what WriteFiles produces: a
// relative, URI-encoded path that stays inside the table, outside its log.
func stagedPath(p string) (string, error) {
	if p == "" {
		return "", errors.New("add action without path")
	}
	if u, err := url.Parse(p); err != nil || u.Scheme != "" || u.Host != "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("file path %q is not a relative path", p)
	}
	rel, err := url.PathUnescape(p)
	if err != nil {
		return "", fmt.Errorf("file path %q: %w", p, err)
	}
	clean := path.Clean(rel)
	switch {
	case strings.ContainsRune(rel, 0) || strings.Contains(rel, `\`):
		return "", fmt.Errorf("file path %q has a NUL or backslash", p)
	case strings.HasPrefix(rel, "/"), clean != rel:
		return "", fmt.Errorf("file path %q is not a clean relative path", p)
	case clean == "." || clean == ".." || strings.HasPrefix(clean, "../"):
		return "", fmt.Errorf("file path %q leaves the table directory", p)
	case clean == "_delta_log" || strings.HasPrefix(clean, "_delta_log/"):
		return "", fmt.Errorf("file path %q is inside the Delta log", p)
	}
	return clean, nil
}

// checkRemoves refuses duplicate or empty removal paths, and a file both
// added and removed by the same commit.
func checkRemoves(removes []string, adds []*delta.Add) ([]string, error) {
	seen := map[string]bool{}
	for _, r := range removes {
		if r == "" || strings.ContainsRune(r, 0) {
			return nil, fmt.Errorf("%w: bad file path %q to remove", catalogadapter.ErrInvalid, r)
		}
		k := delta.CanonicalPath("/", r)
		if seen[k] {
			return nil, fmt.Errorf("%w: file %s is removed twice", catalogadapter.ErrInvalid, r)
		}
		seen[k] = true
	}
	for _, a := range adds {
		if seen[delta.CanonicalPath("/", a.Path)] {
			return nil, fmt.Errorf("%w: file %s is both added and removed", catalogadapter.ErrInvalid, a.Path)
		}
	}
	return removes, nil
}

// Discard implements catalogadapter.Provider: it deletes the staged files
// of receipts that will not be committed. Files live in the latest version
// are kept, so a discard after a skipped replay of receipts that did land
// (a commit that succeeded but reported an error) loses nothing.
func (p *Provider) Discard(ctx context.Context, id catalogadapter.TableIdent, receipts []catalogadapter.Receipt) error {
	t, tpath, err := p.table(id)
	if err != nil {
		return err
	}
	receipts, _, dvFiles, err := splitDVReceipts(receipts)
	if err != nil {
		return fmt.Errorf("discard staged files of %s: %w", tpath, err)
	}
	adds, _, err := p.parseReceipts(t.Storage().URI(), receipts)
	if err != nil {
		return fmt.Errorf("discard staged files of %s: %w", tpath, err)
	}
	if len(adds) == 0 && len(dvFiles) == 0 {
		return nil
	}
	snap, err := p.fresh(ctx, t, tpath)
	if err != nil {
		return fmt.Errorf("discard staged files: %w", readError(tpath, err))
	}
	root := t.Storage().URI()
	kept := map[string]bool{}
	for _, f := range snap.Files() {
		kept[delta.CanonicalPath(root, f.Path)] = true
	}
	var doomed []*delta.Add
	for _, a := range adds {
		if !kept[delta.CanonicalPath(root, a.Path)] {
			doomed = append(doomed, a)
		}
	}
	if err := t.DeleteFiles(ctx, doomed); err != nil {
		return fmt.Errorf("discard staged files of %s: %w", tpath, err)
	}
	if err := discardDVFiles(ctx, t, snap, dvFiles); err != nil {
		return fmt.Errorf("discard deletion vector files of %s: %w", tpath, err)
	}
	return nil
}

// addedSince returns why the commits after version from up to version to
// invalidate a merge that read the table at from: one of them added data.
func addedSince(ctx context.Context, t *delta.Table, from, to int64) (string, error) {
	for v := from + 1; v <= to; v++ {
		actions, err := t.ReadCommit(ctx, v)
		if err != nil {
			return "", err
		}
		for _, a := range actions {
			if a.Add != nil && a.Add.DataChange {
				return fmt.Sprintf("version %d added data after version %d, which this merge read", v, from), nil
			}
		}
	}
	return "", nil
}
