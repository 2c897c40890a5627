// Package sqlsink is the epoch sink engine: Arrow record batches go in, and
// each epoch comes out as exactly one table version, or as nothing. Rows of
// an epoch are buffered in an embedded DuckDB, collapsed per key in upsert
// mode, staged as Parquet files that stay invisible, and published by one
// atomic commit that also records (writer id, epoch), so that a replayed
// epoch is recognised and skipped.
package sqlsink

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/backoff"
)

// CommitResult reports what CommitEpoch did.
type CommitResult struct {
	// Epoch is the epoch that landed: the one committed, except for an
	// epoch from BeginNextEpoch that another writer under the same writer
	// id had taken, which lands as the next free one.
	Epoch int64
	// Skipped: the table already held this epoch (a replay); nothing was written.
	Skipped  bool
	Version  int64
	Rows     int64
	Files    int
	Retries  int
	Duration time.Duration
}

// Sink writes epochs into one table. Its methods are safe for concurrent
// use but an epoch is one sequence of calls: the sink serialises them.
type Sink struct {
	cfg Config

	mu       sync.Mutex
	m        *Machine
	buf      *buffer
	journal  *journal
	schema   *arrow.Schema
	counters counters
	maint    maintenance
	auto     *autoCompactor // nil: no auto-compaction

	// The open epoch's staged work.
	staged  []catalogadapter.Receipt
	removes []string
	skip    bool
	// span is how many epochs the open one stands for: n for a group
	// commit of n transactions (BeginNextEpochs), which ends at it.
	span int64
	// unprepared: a conflict discarded the staged merge and its redo has
	// not succeeded yet; the next CommitEpoch must redo it before
	// committing, or it would commit an empty epoch.
	unprepared bool
	// requires are the commit's preconditions: after a copy-on-write
	// merge, that no data was added since the version it read.
	requires []catalogadapter.Requirement
	// evolving are the schema changes the open epoch's batches brought
	// (Config.SchemaEvolution), made by its commit.
	evolving []SchemaChange

	// The table's row rules (rowrules.go), and whether a commit found
	// them changed, so the next epoch reads them again.
	rules      catalogadapter.RowRules
	bufRules   *bufferRules
	rulesStale bool
}

// New validates the configuration; nothing is touched until Open.
func New(cfg Config) (*Sink, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Sink{cfg: cfg, m: NewMachine()}, nil
}

// Config returns the sink's configuration, defaults filled in.
func (s *Sink) Config() Config { return s.cfg }

// Schema returns the table's schema (nil before Open).
func (s *Sink) Schema() *arrow.Schema {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.schema
}

// Open reaches the table (creating it when a schema is configured and the
// table is missing), checks the configuration against it, recovers the last
// committed epoch and opens the buffer.
func (s *Sink) Open(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.m.StartOpen(); err != nil {
		return err
	}
	if err := s.open(ctx); err != nil {
		s.m.OpenFailed(err.Error())
		return fmt.Errorf("open sink %s: %w", s.cfg.Name, err)
	}
	return nil
}

func (s *Sink) open(ctx context.Context) error {
	p, id := s.cfg.Provider, s.cfg.Table
	spec, err := p.TableSpec(ctx, id)
	if errors.Is(err, catalogadapter.ErrNoTable) && s.cfg.Schema != nil {
		spec, err = s.createTable(ctx)
	}
	if err != nil {
		return err
	}
	if s.cfg.Schema != nil {
		if err := sameSchema(s.cfg.Schema, spec.Schema); err != nil {
			return fmt.Errorf("%w: the table at %s does not match the sink's columns: %v", ErrConfig, id, err)
		}
	}
	if len(s.cfg.PartitionColumns) == 0 && len(s.cfg.PartitionSpec.Fields) == 0 {
		for _, f := range spec.PartitionSpec.Fields {
			s.cfg.PartitionColumns = append(s.cfg.PartitionColumns, f.Name)
		}
	}
	if err := s.cfg.validateAgainst(spec.Schema); err != nil {
		return err
	}
	if s.cfg.Mode == ModeUpsert {
		// A copy-on-write merge reads the files that hold the epoch's keys,
		// and a row-delta backend falls back to one when a table cannot
		// take equality deletes: the sink refuses here, not mid-epoch.
		if _, ok := p.(catalogadapter.Scanner); !ok {
			return fmt.Errorf("%w: upsert mode needs a backend that can scan the table (a catalogadapter.Scanner); %T is not one", ErrConfig, p)
		}
		if err := s.checkDeleteMode(ctx); err != nil {
			return err
		}
	}
	last, ok := int64(0), false
	if s.cfg.Delivery == ExactlyOnce {
		if last, ok, err = p.LastEpoch(ctx, id, s.cfg.WriterID); err != nil {
			return fmt.Errorf("recover last epoch: %w", err)
		}
	}
	s.journal.close() // a reopen's journal replaces the last one's
	s.journal = newJournal(s.cfg.StateDir, s.cfg.WriterID, id)
	landed := func(e int64) bool { return ok && e <= last }
	if err := s.journal.recover(ctx, p, id, landed); err != nil {
		return err
	}
	buf, err := openBuffer(ctx, s.cfg, spec.Schema)
	if err != nil {
		return err
	}
	buf.sizes = &s.counters
	s.buf, s.schema = buf, spec.Schema
	if err := s.loadRules(ctx); err != nil {
		s.closeBuffer()
		return err
	}
	s.counters.lastVersion.Store(spec.Version)
	if err := s.m.Opened(last, ok); err != nil {
		return err
	}
	if s.cfg.Buffers != nil {
		s.cfg.Buffers.used(s)
	}
	s.startAutoCompact()
	return nil
}

// ensureBuffer opens the buffer again after the pool released it, for the
// epoch e just begun; when that fails the epoch is rolled back, as if it
// had not begun. s.mu is held.
func (s *Sink) ensureBuffer(ctx context.Context, e int64) error {
	if err := s.reopenBuffer(ctx); err != nil {
		_ = s.m.Rollback(e)
		return fmt.Errorf("open the write buffer of sink %s: %w", s.cfg.Name, err)
	}
	return nil
}

// reopenBuffer opens the buffer again if the pool released it, and marks
// it used. s.mu is held.
func (s *Sink) reopenBuffer(ctx context.Context) error {
	if s.buf == nil {
		buf, err := openBuffer(ctx, s.cfg, s.schema)
		if err != nil {
			return err
		}
		buf.sizes = &s.counters
		s.buf = buf
		s.buf.setRules(s.bufRules)
	}
	if s.cfg.Buffers != nil {
		s.cfg.Buffers.used(s)
	}
	return nil
}

func (s *Sink) createTable(ctx context.Context) (catalogadapter.TableSpec, error) {
	c, ok := s.cfg.Provider.(catalogadapter.Creator)
	if !ok {
		return catalogadapter.TableSpec{}, fmt.Errorf("%w: the table does not exist and the backend cannot create tables", catalogadapter.ErrNoTable)
	}
	def := catalogadapter.TableDef{Schema: s.cfg.Schema, Properties: map[string]string{},
		TargetFileSize: s.cfg.TargetFileSize, CheckpointInterval: s.cfg.CheckpointInterval}
	for k, v := range s.cfg.TableProperties {
		def.Properties[k] = v
	}
	def.PartitionSpec.Fields = append(def.PartitionSpec.Fields, s.cfg.PartitionSpec.Fields...)
	for _, pc := range s.cfg.PartitionColumns {
		def.PartitionSpec.Fields = append(def.PartitionSpec.Fields, catalogadapter.PartitionField{
			Name: pc, Transform: catalogadapter.Transform{Kind: catalogadapter.Identity}})
	}
	err := c.CreateTable(ctx, s.cfg.Table, def)
	if err != nil && !errors.Is(err, catalogadapter.ErrTableExists) {
		return catalogadapter.TableSpec{}, fmt.Errorf("create table %s: %w", s.cfg.Table, err)
	}
	return s.cfg.Provider.TableSpec(ctx, s.cfg.Table)
}

// sameSchema checks that a configured schema matches the table's columns by
// name, type and nullability, in any order.
func sameSchema(want, got *arrow.Schema) error {
	if len(want.Fields()) != len(got.Fields()) {
		return fmt.Errorf("%d columns configured, the table has %d", len(want.Fields()), len(got.Fields()))
	}
	for _, f := range want.Fields() {
		idx := got.FieldIndices(f.Name)
		if len(idx) == 0 {
			return fmt.Errorf("column %q is not in the table", f.Name)
		}
		g := got.Field(idx[0])
		if !arrow.TypeEqual(f.Type, g.Type) {
			return fmt.Errorf("column %q is %s in the table, %s in the sink", f.Name, g.Type, f.Type)
		}
		if f.Nullable != g.Nullable {
			return fmt.Errorf("column %q: nullability differs (table %v, sink %v)", f.Name, g.Nullable, f.Nullable)
		}
	}
	return nil
}

// BeginEpoch opens epoch e, named by the caller. An epoch at or below the
// last committed one is a replay: it is accepted, its rows are dropped,
// and its commit is skipped; so is its commit when the table turns out to
// hold e already (another run of the same writer id landed it).
func (s *Sink) BeginEpoch(ctx context.Context, e int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	skip, err := s.m.Begin(e)
	if err != nil {
		return err
	}
	if err := s.ensureBuffer(ctx, e); err != nil {
		return err
	}
	if err := s.beginRules(ctx); err != nil {
		_ = s.m.Rollback(e)
		return err
	}
	s.skip, s.staged, s.removes, s.requires, s.unprepared = skip, nil, nil, nil, false
	s.span = 1
	return nil
}

// BeginNextEpoch opens the epoch after the last one this sink committed
// or recovered, and returns it; pass it to the calls that follow. Such an
// epoch is never a replay: when the table turns out to hold it already
// (another process wrote under the same writer id), CommitEpoch commits
// the rows as the epoch after the table's last one instead of skipping
// them, and its result says which.
func (s *Sink) BeginNextEpoch(ctx context.Context) (int64, error) {
	return s.BeginNextEpochs(ctx, 1)
}

// BeginNextEpochs opens one epoch for n transactions committed together:
// it stands for the n epochs after the last one, and is numbered as the
// highest of them, which is what the table records for the writer id. The
// caller numbers its transactions up to it (CommitResult.Epoch minus n-1
// is the first, also when the epoch lands renumbered).
func (s *Sink) BeginNextEpochs(ctx context.Context, n int) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.m.BeginNextN(int64(n))
	if err != nil {
		return -1, err
	}
	if err := s.ensureBuffer(ctx, e); err != nil {
		return -1, err
	}
	if err := s.beginRules(ctx); err != nil {
		_ = s.m.Rollback(e)
		return -1, err
	}
	s.skip, s.staged, s.removes, s.requires, s.unprepared = false, nil, nil, nil, false
	s.span = int64(n)
	return e, nil
}

// Write buffers a batch into the open epoch. A batch is taken whole or not
// at all: a bad _op, a NULL in a NOT NULL or key column, a value that does
// not convert, or an unknown column rejects it with nothing of it kept. In
// append mode the sink may hold a reference to rec's columns until the
// buffer is staged; the caller may release its own reference at once.
func (s *Sink) Write(ctx context.Context, rec arrow.RecordBatch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, open := s.m.OpenEpoch()
	if !open {
		return s.m.wrongState("Write")
	}
	drop, err := s.m.Write(e)
	if err != nil {
		return err
	}
	if rec == nil {
		return fmt.Errorf("%w: nil batch", ErrBadRow)
	}
	ops, err := rowOps(rec)
	if err != nil {
		return err
	}
	if s.cfg.Mode == ModeAppend {
		for i, op := range ops {
			if op == OpDelete {
				return fmt.Errorf("%w: row %d deletes, but sink %s is in append mode (deletes need upsert mode with a primary key)", ErrBadOp, i, s.cfg.Name)
			}
		}
	}
	if drop {
		return nil
	}
	if s.cfg.SchemaEvolution == EvolveAddColumns {
		if changes := s.evolveFor(rec.Schema()); len(changes) > 0 {
			if err := s.evolve(ctx, changes); err != nil {
				return fmt.Errorf("write to epoch %d: %w", e, err)
			}
		}
	}
	// A due flush runs before the batch is taken, not after: when it
	// fails, the batch is not taken (the caller may send it again) and
	// the rows of earlier batches stay buffered.
	if s.cfg.Mode == ModeAppend && s.flushDue() {
		if err := s.stageBuffer(ctx, e); err != nil {
			return fmt.Errorf("flush epoch %d: %w", e, err)
		}
	}
	if err := s.buf.append(ctx, rec, ops, s.cfg.Now()); err != nil {
		return fmt.Errorf("write to epoch %d: %w", e, err)
	}
	return nil
}

func (s *Sink) flushDue() bool {
	b := s.buf
	return b.rows >= s.cfg.FlushRows || b.bytes >= s.cfg.FlushBytes ||
		(b.rows > 0 && s.cfg.Now().Sub(b.first) >= s.cfg.FlushAge)
}

// stageBuffer writes the buffered rows of epoch e as invisible data files.
// The rows leave the buffer exactly when their files are staged and
// journaled: a flush that fails keeps them buffered, and one that is
// retried does not stage them twice.
func (s *Sink) stageBuffer(ctx context.Context, e int64) error {
	if s.buf.rows == 0 {
		return nil
	}
	r, small, err := s.stageSmall(ctx)
	if !small {
		var src catalogadapter.Source
		var done func()
		if src, done, err = s.buf.source(ctx); err != nil {
			return err
		}
		r, err = s.stage(ctx, src)
		done()
	}
	if err != nil {
		return err
	}
	staged := append(s.staged, r)
	if err := s.journal.record(e, staged); err != nil {
		s.discardFiles(ctx, []catalogadapter.Receipt{r})
		return err
	}
	s.staged = staged
	s.counters.flushes.Add(1)
	// Clearing must not be cut short by the caller's context; if it fails
	// all the same, the staged rows are still buffered and any further
	// flush would stage them twice, so the sink stops.
	if err := s.buf.clear(context.WithoutCancel(ctx)); err != nil {
		s.m.Fail(err.Error())
		return err
	}
	return nil
}

func (s *Sink) stage(ctx context.Context, src catalogadapter.Source) (catalogadapter.Receipt, error) {
	src.Evolve = s.evolving
	return s.cfg.Provider.StageSQL(ctx, s.cfg.Table, s.buf.conn, src)
}

// PreCommit stages everything the epoch needs, invisibly: the rest of the
// buffer in append mode; in upsert mode the collapsed rows plus the
// rewrites of the files that hold their keys.
func (s *Sink) PreCommit(ctx context.Context, e int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.m.checkOpen("PreCommit", e); err != nil {
		return err
	}
	if !s.skip {
		if err := s.prepare(ctx, e); err != nil {
			return fmt.Errorf("precommit epoch %d: %w", e, err)
		}
	}
	return s.m.PreCommit(e)
}

func (s *Sink) prepare(ctx context.Context, e int64) error {
	if s.cfg.Mode == ModeAppend {
		return s.stageBuffer(ctx, e)
	}
	receipts, removes, err := s.mergeUpsert(ctx)
	if err != nil {
		return err
	}
	if err := s.journal.record(e, receipts); err != nil {
		s.discardFiles(ctx, receipts)
		return err
	}
	s.staged, s.removes = receipts, removes
	return nil
}

// maxMergeRedos bounds how often an upsert redoes its merge after writers
// that touched the same files, or added rows, won the race. Two writers
// upserting the same keys nonstop need a dozen at times; past the bound
// CommitEpoch fails with ErrConflict and may be called again.
const maxMergeRedos = 20

// CommitEpoch makes the epoch visible as one table version, with the
// (writer id, epoch) record, and returns what it did. A replayed epoch
// succeeds with Skipped set and writes nothing.
func (s *Sink) CommitEpoch(ctx context.Context, e int64) (CommitResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.m.BeginCommit(e); err != nil {
		return CommitResult{}, err
	}
	start := time.Now()
	res, err := s.commit(ctx, e)
	res.Duration = time.Since(start)
	if err != nil {
		res.Epoch = e
		s.noteRulesChanged(err)
		// Not fatal: the caller may retry CommitEpoch or roll back.
		s.m.CommitFailed(e, err, false)
		return res, fmt.Errorf("commit epoch %d to %s: %w", e, s.cfg.Table, err)
	}
	landed := func() error {
		if res.Epoch != e {
			return s.m.CommittedAs(e, res.Epoch)
		}
		return s.m.Committed(e, res.Skipped)
	}
	// The epoch has landed: what follows must finish whatever the context.
	if err := s.buf.clear(context.WithoutCancel(ctx)); err != nil {
		// The commit landed; a buffer we cannot clear makes the sink unusable.
		landed()
		s.m.Fail(err.Error())
		return res, err
	}
	if s.auto != nil && !res.Skipped {
		s.auto.committed(s.staged) // a signal at most: compaction runs elsewhere
	}
	s.staged, s.removes = nil, nil
	s.evolved(ctx, !res.Skipped)
	s.journal.clear() // the files are live now; a stale journal is harmless
	s.counters.lastCommitNanos.Store(int64(res.Duration))
	s.counters.commitDurations.observe(commitBucketsNanos[:], int64(res.Duration))
	if res.Skipped {
		s.counters.skipped.Add(1)
	} else {
		s.counters.committed.Add(s.span)
		s.counters.commits.Add(1)
		s.counters.groupSizes.observe(groupSizeBounds[:], s.span)
		s.counters.rows.Add(res.Rows)
		s.counters.lastVersion.Store(res.Version)
	}
	s.counters.retries.Add(int64(res.Retries))
	if s.cfg.Buffers != nil {
		s.cfg.Buffers.touch(s) // idle time counts from the end of the epoch
	}
	return res, landed()
}

// maxRenumbers bounds how often an automatic epoch moves past epochs other
// processes under the same writer id keep landing.
const maxRenumbers = 20

// commit publishes the open epoch e and reports the epoch it landed as.
func (s *Sink) commit(ctx context.Context, e int64) (CommitResult, error) {
	if s.skip {
		return CommitResult{Epoch: e, Skipped: true, Version: s.counters.lastVersion.Load()}, nil
	}
	renumbers, landed := 0, e
	opts := catalogadapter.CommitOptions{WriterID: s.cfg.WriterID, Epoch: e, Operation: "WRITE"}
	if s.cfg.Delivery == AtLeastOnce {
		opts.Epoch = -1
	}
	if s.cfg.Mode == ModeUpsert {
		opts.Operation = "MERGE"
	}
	for redo := 0; ; redo++ {
		// A merge a conflict discarded is redone here, on this try or on
		// the next CommitEpoch if the redo failed.
		if s.unprepared {
			if err := s.prepare(ctx, landed); err != nil { // journaled under the epoch it commits as
				return CommitResult{}, fmt.Errorf("redo merge after conflict: %w", err)
			}
			s.unprepared = false
		}
		opts.Removes, opts.Requires, opts.SchemaChanges = s.removes, append(s.requires[:len(s.requires):len(s.requires)], s.rulesRequirement()...), s.evolving
		out, err := s.cfg.Provider.Commit(ctx, s.cfg.Table, s.staged, opts)
		if err == nil && out.Skipped && s.m.Automatic() {
			// The table holds our number from another run of our writer
			// id: these rows are new, not a replay; take the next number.
			if renumbers++; renumbers > maxRenumbers {
				return CommitResult{}, fmt.Errorf("%w: epoch %d: other writers under writer id %q kept taking the next epoch (%d times)",
					catalogadapter.ErrConflict, e, s.cfg.WriterID, maxRenumbers)
			}
			next, rerr := s.nextTableEpoch(ctx, opts.Epoch)
			if rerr == nil && s.span > 1 {
				// A group keeps its n consecutive epochs.
				if next > math.MaxInt64-(s.span-1) {
					rerr = fmt.Errorf("%w: no %d epochs are left after %d for writer id %q", ErrEpochOrder, s.span, next-1, s.cfg.WriterID)
				}
				next += s.span - 1
			}
			if rerr != nil {
				return CommitResult{}, rerr
			}
			opts.Epoch, landed = next, next
			if s.cfg.Mode == ModeUpsert {
				// The other run changed the table: merge again on it.
				s.discard(ctx)
				s.unprepared = true
			} else if rerr := s.journal.record(next, s.staged); rerr != nil {
				return CommitResult{}, rerr
			}
			continue
		}
		if err == nil {
			res := CommitResult{Epoch: landed, Skipped: out.Skipped, Version: out.Version, Retries: out.Retries}
			if out.Skipped {
				// Another run landed this epoch first: ours is not needed.
				s.discard(ctx)
				return res, nil
			}
			for _, r := range s.staged {
				res.Rows += r.Rows
				res.Files += r.Files
				s.counters.bytes.Add(r.Bytes)
			}
			return res, nil
		}
		if !errors.Is(err, catalogadapter.ErrConflict) || s.cfg.Mode != ModeUpsert || redo >= maxMergeRedos ||
			errors.Is(err, catalogadapter.ErrRowRulesChanged) { // a redo is checked against the same rules
			return CommitResult{}, err
		}
		// A winner rewrote files our merge removes, or added rows it did
		// not see: redo it on the new table. The wait comes first, with
		// jitter, so the new merge is fresh when it commits and two
		// writers upserting the same keys fall out of step.
		s.counters.conflicts.Add(1)
		s.discard(ctx)
		s.unprepared = true
		if err := backoff.Sleep(ctx, backoff.Equal(20*time.Millisecond, time.Second, redo)); err != nil {
			return CommitResult{}, err
		}
	}
}

// nextTableEpoch returns the epoch after the last one the table holds for
// the sink's writer id, and at least after; an automatic epoch commits as
// it when the table turned out to hold its number already.
func (s *Sink) nextTableEpoch(ctx context.Context, after int64) (int64, error) {
	last, has, err := s.cfg.Provider.LastEpoch(ctx, s.cfg.Table, s.cfg.WriterID)
	if err != nil {
		return -1, fmt.Errorf("read the table's last epoch: %w", err)
	}
	if !has || last < after {
		last = after
	}
	if last == math.MaxInt64 {
		return -1, fmt.Errorf("%w: the table holds epoch %d for writer id %q: no epoch is left after it", ErrEpochOrder, last, s.cfg.WriterID)
	}
	return last + 1, nil
}

// RollbackEpoch discards the epoch: its buffered rows and staged files.
func (s *Sink) RollbackEpoch(ctx context.Context, e int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.m.Rollback(e); err != nil {
		return err
	}
	s.discard(ctx)
	s.evolved(ctx, false)
	s.counters.rolledBack.Add(1)
	if s.cfg.Buffers != nil {
		s.cfg.Buffers.touch(s)
	}
	if s.buf != nil {
		return s.buf.clear(context.WithoutCancel(ctx))
	}
	return nil
}

// discard deletes the epoch's staged files.
func (s *Sink) discard(ctx context.Context) {
	if s.discardFiles(ctx, s.staged) {
		s.journal.clear()
	}
	s.staged, s.removes = nil, nil
}

// discardFiles deletes staged files, whatever the context, and reports
// whether they are gone. Files it cannot delete are invisible to readers.
func (s *Sink) discardFiles(ctx context.Context, rs []catalogadapter.Receipt) bool {
	if len(rs) == 0 {
		return false
	}
	return s.cfg.Provider.Discard(context.WithoutCancel(ctx), s.cfg.Table, rs) == nil
}

// Close stops auto-compaction (cancelling a run in flight), discards an
// open epoch and releases the buffer.
func (s *Sink) Close() error {
	s.mu.Lock()
	auto := s.auto
	s.mu.Unlock()
	if auto != nil {
		auto.stop() // without s.mu: the run takes it to record its outcome
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, open := s.m.Close(); open {
		s.discard(context.Background())
	}
	return errors.Join(s.closeBuffer(), s.journal.close())
}

// State returns the sink's lifecycle state.
func (s *Sink) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m.State()
}

// LastCommittedEpoch returns the last epoch the table holds from this writer.
func (s *Sink) LastCommittedEpoch() (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m.LastCommitted()
}

// Metrics returns the sink's counters.
func (s *Sink) Metrics() Metrics { return s.counters.snapshot() }

// Health is derived from the sink's state, and from its table's storage
// when the provider can tell (an open circuit breaker makes a healthy
// sink degraded).
func (s *Sink) Health() Health {
	s.mu.Lock()
	h := s.m.Health()
	s.mu.Unlock()
	if hc, ok := s.cfg.Provider.(catalogadapter.HealthChecker); ok && h.Status == Healthy {
		if degraded, reason := hc.Health(s.cfg.Table); degraded {
			return Health{Status: Degraded, Reason: reason}
		}
	}
	return h
}

// Capabilities says what the sink does as configured.
func (s *Sink) Capabilities() Capabilities {
	return Capabilities{
		ExactlyOnce:     s.cfg.Delivery == ExactlyOnce,
		TwoPhaseCommit:  true,
		Upsert:          s.cfg.Mode == ModeUpsert,
		Changelog:       true,
		Partitioned:     len(s.cfg.PartitionColumns)+len(s.cfg.PartitionSpec.Fields) > 0,
		SchemaEvolution: canEvolve(s.cfg.Provider),
	}
}
