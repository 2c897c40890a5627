package planner

// Transactions. A Session is also a sql.TransactionSession, so
// go-mysql-server's BEGIN, COMMIT, ROLLBACK and autocommit drive lakesql's
// epochs:
//
//   - a transaction that only appends small batches to a sink keeps its
//     rows until COMMIT, which joins the sink's group commit
//     (groupcommit.go); any other opens an epoch on a sink at the first
//     statement that writes rows into it, and holds the sink until it
//     ends; an UPDATE or DELETE takes its sink before it reads the rows it
//     changes;
//   - COMMIT (or the end of an autocommit statement) runs PreCommit and
//     CommitEpoch on every sink the transaction touched, one table version
//     each; ROLLBACK discards them;
//   - the epoch is the session's lakesql_epoch when set (it applies to the
//     next transaction that writes, then resets), else the sink's last
//     committed epoch + 1.
//
// Rows of a statement are handed to the sink only when the statement has
// succeeded (see inserter), so a failing statement leaves the earlier
// statements' rows of the transaction in place and none of its own; for
// that, a statement changes one sink at most (checkOneTarget). A failed
// COMMIT ends the transaction (endTransaction).

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	gms "github.com/dolthub/go-mysql-server/sql"

	"github.com/lakesql/lakesql/internal/intconv"
	"github.com/lakesql/lakesql/sqlsink"
)

// WarnEpochReplayed is the warning code of a commit that was skipped
// because the table already holds its epoch.
const WarnEpochReplayed = 1105

var txnSeq atomic.Int64

// txn is a transaction: the epochs it opened, by sink, and the sinks whose
// lock it holds.
type txn struct {
	id     int64
	epochs map[*sinkHandle]int64
	order  []*sinkHandle
	// held are the sinks the transaction has locked: every sink it opened
	// an epoch on, and those an UPDATE or DELETE locked before reading the
	// rows it changes (see Session.lockTarget). All stay locked until the
	// transaction ends, as MySQL keeps row locks.
	held map[*sinkHandle]bool
	// readOnly is START TRANSACTION READ ONLY, or transaction_read_only:
	// go-mysql-server then refuses writes (1792).
	readOnly bool
	// named are the sinks whose epoch the session named (lakesql_epoch).
	named map[*sinkHandle]bool
	// pending are the rows kept for a group commit, by sink
	// (groupcommit.go): those sinks are in order, not in epochs.
	pending map[*sinkHandle]*pendingRows
	// shared are the sinks whose metadata lock the transaction shares
	// (sinkuse.go): those it kept rows for.
	shared map[*sinkHandle]bool
}

func newTxn(readOnly bool) *txn {
	return &txn{id: txnSeq.Add(1), epochs: map[*sinkHandle]int64{}, held: map[*sinkHandle]bool{},
		pending: map[*sinkHandle]*pendingRows{}, shared: map[*sinkHandle]bool{}, readOnly: readOnly}
}

func (t *txn) String() string   { return fmt.Sprintf("lakesql transaction %d", t.id) }
func (t *txn) IsReadOnly() bool { return t.readOnly }

// busy reports whether the transaction holds a sink (and so, perhaps,
// epochs) or keeps rows for a group commit.
func (t *txn) busy() bool { return len(t.held) > 0 || len(t.pending) > 0 }

// dropPending releases the rows kept for group commits.
func (t *txn) dropPending() {
	for _, p := range t.pending {
		p.release()
	}
	t.pending = map[*sinkHandle]*pendingRows{}
}

// lock takes h's lock for the transaction, waiting for the transaction
// that holds it; took says this call took it (it was not held already).
func (t *txn) lock(ctx context.Context, h *sinkHandle) (took bool, err error) {
	if t.held[h] {
		return false, nil
	}
	if err := h.acquire(ctx); err != nil {
		return false, err
	}
	t.held[h] = true
	return true, nil
}

// unlock releases h's lock, which the transaction holds.
func (t *txn) unlock(h *sinkHandle) {
	if t.held[h] {
		delete(t.held, h)
		h.release()
	}
}

// unlockAll releases every sink the transaction holds: it has ended.
func (t *txn) unlockAll() {
	for h := range t.held {
		h.release()
	}
	t.held = map[*sinkHandle]bool{}
	for h := range t.shared {
		h.unshare()
	}
	t.shared = map[*sinkHandle]bool{}
}

// StartTransaction implements sql.TransactionSession. go-mysql-server calls
// it for every statement outside a transaction, so it is cheap: epochs open
// when rows arrive.
func (s *Session) StartTransaction(ctx *gms.Context, char gms.TransactionCharacteristic) (gms.Transaction, error) {
	readOnly := char == gms.ReadOnly || s.readOnlyByDefault(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tx != nil && s.tx.busy() {
		// go-mysql-server left a failed statement's transaction open; its
		// epochs and locks must not leak into the new one.
		s.tx.rollback(ctx)
	}
	s.tx = newTxn(readOnly)
	return s.tx, nil
}

// readOnlyByDefault reports the session's transaction_read_only: MySQL
// makes every transaction that does not say READ WRITE read-only then.
func (s *Session) readOnlyByDefault(ctx *gms.Context) bool {
	v, err := s.GetSessionVariable(ctx, "transaction_read_only")
	if err != nil {
		return false
	}
	n, ok := intconv.ToInt64(v)
	return ok && n != 0
}

// current returns the open transaction, starting one if needed.
func (s *Session) current() *txn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tx == nil {
		s.tx = newTxn(false)
	}
	return s.tx
}

// CommitTransaction implements sql.TransactionSession: one commit per sink touched.
func (s *Session) CommitTransaction(ctx *gms.Context, tx gms.Transaction) error {
	err := s.commitTransaction(ctx)
	if err != nil {
		endTransaction(ctx)
	}
	return s.fail(err)
}

// endTransaction puts go-mysql-server's session back in autocommit mode,
// with no transaction, after a COMMIT or ROLLBACK that failed. lakesql's
// transaction is over by then (what did not commit was rolled back), as
// MySQL's is after a failed COMMIT; but go-mysql-server's COMMIT (and
// ROLLBACK, and BEGIN's implicit commit) return before they reset the
// session, which would then go on ignoring autocommit: every later
// "autocommit" statement would be held in a transaction nothing commits.
func endTransaction(ctx *gms.Context) {
	ctx.SetIgnoreAutoCommit(false)
	ctx.SetTransaction(nil)
}

func (s *Session) commitTransaction(ctx *gms.Context) error {
	s.mu.Lock()
	t := s.tx
	s.tx = nil
	s.mu.Unlock()
	if t == nil {
		return nil
	}
	if len(t.order) > 0 {
		s.resetEpoch(ctx)
	}
	skipped, committed, err := t.commit(ctx)
	s.mu.Lock()
	s.skipped, s.committed = skipped, committed
	s.mu.Unlock()
	if skipped > 0 {
		s.Warn(&gms.Warning{Level: "Note", Code: WarnEpochReplayed,
			Message: fmt.Sprintf("lakesql: %d sink(s) already held this epoch; the replay wrote nothing", skipped)})
	}
	return err
}

// commitBeforeDDL commits the session's open transaction before CREATE
// SINK or DROP SINK, as MySQL commits before DDL: the rows written so far
// land (one version per sink), and the statements after it run in a new
// transaction, or in autocommit mode again after BEGIN. If the commit
// fails, the statement fails with its error and changes nothing.
func (s *Session) commitBeforeDDL(ctx context.Context) error {
	gctx, ok := ctx.(*gms.Context)
	if s == nil || !ok {
		return nil
	}
	tx := gctx.GetTransaction()
	if tx == nil {
		return nil
	}
	err := s.CommitTransaction(gctx, tx)
	gctx.SetIgnoreAutoCommit(false)
	gctx.SetTransaction(nil)
	return err
}

// Rollback implements sql.TransactionSession.
func (s *Session) Rollback(ctx *gms.Context, tx gms.Transaction) error {
	s.mu.Lock()
	t := s.tx
	s.tx = nil
	s.mu.Unlock()
	if t == nil {
		return nil
	}
	if len(t.order) > 0 {
		s.resetEpoch(ctx)
	}
	err := t.rollback(ctx)
	if err != nil {
		endTransaction(ctx)
	}
	return s.fail(err)
}

// CreateSavepoint implements sql.TransactionSession: not supported.
func (s *Session) CreateSavepoint(*gms.Context, gms.Transaction, string) error {
	return s.fail(fmt.Errorf("%w: SAVEPOINT", ErrNotSupported))
}

// RollbackToSavepoint implements sql.TransactionSession: not supported.
func (s *Session) RollbackToSavepoint(*gms.Context, gms.Transaction, string) error {
	return s.fail(fmt.Errorf("%w: ROLLBACK TO SAVEPOINT", ErrNotSupported))
}

// ReleaseSavepoint implements sql.TransactionSession: not supported.
func (s *Session) ReleaseSavepoint(*gms.Context, gms.Transaction, string) error {
	return s.fail(fmt.Errorf("%w: RELEASE SAVEPOINT", ErrNotSupported))
}

func (s *Session) resetEpoch(ctx *gms.Context) {
	_ = s.SetSessionVariable(ctx, EpochVariable, int64(-1))
}

// explicitEpoch returns the session's lakesql_epoch, if set.
func (s *Session) explicitEpoch(ctx *gms.Context) (int64, bool) {
	v, err := s.GetSessionVariable(ctx, EpochVariable)
	if err != nil {
		return 0, false
	}
	n, ok := v.(int64)
	return n, ok && n >= 0
}

// writes reports whether the session's open transaction has an epoch on h.
func (s *Session) writes(h *sinkHandle) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tx == nil {
		return false
	}
	_, ok := s.tx.epochs[h]
	return ok || s.tx.pending[h] != nil
}

// commit commits every epoch of the transaction, in the order the sinks
// were first written. A sink that fails to commit is rolled back, and so
// are the ones after it; the ones before it stay committed, and the error
// of a transaction over several sinks says which (PartialCommitError).
func (t *txn) commit(ctx context.Context) (skipped, committed int, err error) {
	defer t.unlockAll()
	defer t.dropPending()
	var errs []error
	var landed []LandedSink
	var notCommitted []string
	for _, h := range t.order {
		if p := t.pending[h]; p != nil {
			if len(errs) > 0 {
				notCommitted = append(notCommitted, h.rec.Name)
				continue
			}
			res, cerr := h.group.commit(ctx, &groupMember{rows: p},
				h.acquire, h.release, h.commitGroup)
			if cerr != nil {
				errs = append(errs, cerr)
				notCommitted = append(notCommitted, h.rec.Name)
				continue
			}
			committed++
			landed = append(landed, LandedSink{Name: h.rec.Name, Epoch: res.Epoch, Version: res.Version})
			continue
		}
		e := t.epochs[h]
		sink, oerr := h.open(ctx)
		if oerr != nil {
			errs = append(errs, oerr)
			notCommitted = append(notCommitted, h.rec.Name)
			continue
		}
		if len(errs) > 0 {
			_ = sink.RollbackEpoch(ctx, e)
			notCommitted = append(notCommitted, h.rec.Name)
			continue
		}
		var res sqlsink.CommitResult
		adds := evolvedColumns(sink.PendingColumns())
		cerr := h.engine.markEvolving(h, adds)
		if cerr == nil {
			cerr = sink.PreCommit(ctx, e)
		}
		if cerr == nil {
			res, cerr = sink.CommitEpoch(ctx, e)
		}
		if len(adds) > 0 {
			if cerr == nil && !res.Skipped {
				// The table has the columns: a failure to record them
				// leaves them pending, taken at the next start.
				_ = h.engine.adoptEvolved(ctx, h, adds)
			} else {
				h.engine.clearPending(h)
			}
		}
		switch {
		case cerr != nil:
			_ = sink.RollbackEpoch(context.WithoutCancel(ctx), e)
			errs = append(errs, fmt.Errorf("sink %s: %w", h.rec.Name, cerr))
			notCommitted = append(notCommitted, h.rec.Name)
		case res.Skipped:
			skipped++
			landed = append(landed, LandedSink{Name: h.rec.Name, Epoch: res.Epoch, Version: res.Version, Replayed: true})
		default:
			committed++
			landed = append(landed, LandedSink{Name: h.rec.Name, Epoch: res.Epoch, Version: res.Version})
		}
		// The epoch has ended: holding the sink until the other sinks
		// commit could deadlock with a group commit waiting for it.
		t.unlock(h)
	}
	err = errors.Join(errs...)
	if err != nil && len(t.order) > 1 {
		epoch, safe := t.replayEpoch(landed)
		err = &PartialCommitError{Landed: landed, NotCommitted: notCommitted, Epoch: epoch, ReplaySafe: safe, Err: err}
	}
	t.order, t.epochs = nil, nil
	return skipped, committed, err
}

// replayEpoch returns the one epoch the session named for every sink of
// the transaction, or -1; safe says a replay of the whole transaction
// with it finishes the transaction: every sink landed it as that epoch
// and is exactly-once, so it skips the epoch it holds.
func (t *txn) replayEpoch(landed []LandedSink) (epoch int64, safe bool) {
	epoch = -1
	for i, h := range t.order {
		if !t.named[h] || (i > 0 && t.epochs[h] != epoch) {
			return -1, false
		}
		epoch = t.epochs[h]
		if h.spec == nil {
			return epoch, false
		}
		if d, err := h.spec.Delivery(); err != nil || d == sqlsink.AtLeastOnce {
			return epoch, false
		}
	}
	for _, l := range landed {
		if l.Epoch != epoch {
			return epoch, false
		}
	}
	return epoch, true
}

func (t *txn) rollback(ctx context.Context) error {
	defer t.unlockAll()
	defer t.dropPending()
	var errs []error
	for _, h := range t.order {
		if _, open := t.epochs[h]; !open {
			continue // rows kept for a group commit: dropPending
		}
		if sink, err := h.open(ctx); err == nil {
			if err := sink.RollbackEpoch(context.WithoutCancel(ctx), t.epochs[h]); err != nil {
				errs = append(errs, fmt.Errorf("sink %s: %w", h.rec.Name, err))
			}
		}
	}
	t.order, t.epochs = nil, nil
	return errors.Join(errs...)
}
