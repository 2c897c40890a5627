package planner

// Sessions and transactions. A Session is a go-mysql-server session that is
// also a sql.TransactionSession, so go-mysql-server's BEGIN, COMMIT,
// ROLLBACK and autocommit drive lakesql's epochs:
//
//   - a transaction opens an epoch on a sink at the first statement that
//     writes rows into it, and holds the sink until it ends; an UPDATE or
//     DELETE takes its sink before it reads the rows it changes;
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
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/lakesql/lakesql/internal/intconv"
	"github.com/lakesql/lakesql/internal/sqlword"
	"github.com/lakesql/lakesql/sqlsink"
)

// EpochVariable is the session variable that sets the next transaction's epoch.
const EpochVariable = "lakesql_epoch"

// MaxNamedEpoch is the largest epoch SET lakesql_epoch accepts, 2^62. The
// epochs above it are left for the automatic epochs (last + 1) that follow
// a named one: an epoch at the top of the int64 range would leave none,
// and every later write of the sink would fail, across restarts too.
const MaxNamedEpoch = int64(1) << 62

// WarnEpochReplayed is the warning code of a commit that was skipped
// because the table already holds its epoch.
const WarnEpochReplayed = 1105

var registerOnce sync.Once

// ServerVersion is the MySQL version lakesql reports: in the server's
// greeting, @@version and VERSION(), on every path.
const ServerVersion = "8.0.33-lakesql"

// VersionComment is @@version_comment, which clients print on connect.
const VersionComment = "lakesql"

// IsolationLevel is the one isolation level lakesql gives: a statement
// reads the sinks' last committed versions (README, Reading).
const IsolationLevel = "READ-COMMITTED"

// serverVariables are go-mysql-server's defaults that would describe
// Dolt rather than lakesql.
var serverVariables = map[string]any{
	"version":               ServerVersion,
	"version_comment":       VersionComment,
	"transaction_isolation": IsolationLevel,
	"tx_isolation":          IsolationLevel,
	// TIMESTAMP values go to the tables as UTC whatever the session's
	// time_zone (README, Limitations); under go-mysql-server's default,
	// SYSTEM, NOW() would give the machine's wall clock, stored as UTC
	// and off by the machine's offset. A session may still SET time_zone.
	"time_zone": "+00:00",
	// MySQL's default, not go-mysql-server's 1 GiB: the bound of the
	// values string functions build (packetbound.go) and of a row sent.
	"max_allowed_packet": int64(DefaultMaxAllowedPacket),
}

// registerSystemVariables adds lakesql_epoch to go-mysql-server's system
// variables (a process-wide registry) and sets serverVariables.
func registerSystemVariables() {
	registerOnce.Do(func() {
		gms.SystemVariables.AddSystemVariables([]gms.SystemVariable{&gms.MysqlSystemVariable{
			Name:    EpochVariable,
			Scope:   gms.GetMysqlScope(gms.SystemVariableScope_Session),
			Dynamic: true,
			Type:    epochVariableType{types.NewSystemIntType(EpochVariable, -1, MaxNamedEpoch, false)},
			Default: int64(-1),
		}})
		if err := gms.SystemVariables.AssignValues(serverVariables); err != nil {
			panic(fmt.Sprintf("set lakesql's server variables: %v", err))
		}
	})
}

// epochVariableType is lakesql_epoch's type: go-mysql-server's system
// integer, which converts a uint64 to int64 by wrapping, so that
// 18446744073709551615 would become -1 (unset) and 2^63 a negative epoch.
// Such values are refused (1231) like any other out of range.
type epochVariableType struct{ gms.SystemVariableType }

func (t epochVariableType) Convert(ctx context.Context, v any) (any, gms.ConvertInRange, error) {
	switch n := v.(type) {
	case uint64:
		if n > uint64(MaxNamedEpoch) {
			return nil, gms.OutOfRange, gms.ErrInvalidSystemVariableValue.New(EpochVariable, v)
		}
	case uint:
		if uint64(n) > uint64(MaxNamedEpoch) {
			return nil, gms.OutOfRange, gms.ErrInvalidSystemVariableValue.New(EpochVariable, v)
		}
	}
	return t.SystemVariableType.Convert(ctx, v)
}

// Equals implements gms.Type: the embedded type's Equals knows only itself.
func (t epochVariableType) Equals(other gms.Type) bool {
	o, ok := other.(epochVariableType)
	return ok && t.SystemVariableType.Equals(o.SystemVariableType)
}

// Session is one connection's state: its go-mysql-server session and its
// open transaction.
type Session struct {
	*gms.BaseSession
	engine *Engine

	mu sync.Mutex
	tx *txn
	// skipped counts commits of the last transaction that were replays.
	skipped, committed int
	// opShown remembers the last statement text opColumnShown parsed.
	opShown struct {
		query string
		shown bool
	}
	// routed counts the SELECTs that ran in DuckDB; noRoute sends every
	// SELECT to go-mysql-server (for tests that compare the two).
	routed  atomic.Int64
	noRoute atomic.Bool
	// failure is the last error one of the session's hooks raised (rows
	// reaching a sink, a COMMIT): see TakeError.
	failure atomic.Pointer[error]
	// targets are the sinks the running statement changes through UPDATE
	// or DELETE (guarded by mu): see addTarget.
	targets statementTargets
}

// statementTargets are the sinks one statement changes, by the statement's
// process id: go-mysql-server's server numbers every statement, and
// Engine.Exec numbers its own (gmsContext), so a new id is a new statement.
type statementTargets struct {
	pid   uint64
	sinks []*sinkHandle
}

// fail records err as the session's last failure and returns it.
func (s *Session) fail(err error) error {
	if err != nil {
		s.failure.Store(&err)
	}
	return err
}

// TakeError returns and forgets the last error that lakesql raised inside
// go-mysql-server while a statement's rows streamed or a transaction
// committed. go-mysql-server's server turns such errors into MySQL errors
// with sql.CastSQLError, which knows nothing of lakesql's errors (code
// 1105), and does not log them: the wire layer classifies them again from
// the original, with MySQLError.
func (s *Session) TakeError() error {
	if p := s.failure.Swap(nil); p != nil {
		return *p
	}
	return nil
}

var _ gms.TransactionSession = (*Session)(nil)

// NewSession starts a session on the engine, in database lakesql.
func (e *Engine) NewSession() *Session { return e.NewSessionWith(gms.NewBaseSession()) }

// NewSessionWith starts a session on a go-mysql-server base session, such
// as the server's gms.NewBaseSessionWithClientServer for a connection.
func (e *Engine) NewSessionWith(base *gms.BaseSession) *Session {
	s := &Session{BaseSession: base, engine: e}
	s.SetCurrentDatabase(DatabaseName)
	return s
}

// Close ends the session, rolling back an open transaction.
func (s *Session) Close() error {
	s.mu.Lock()
	tx := s.tx
	s.tx = nil
	s.mu.Unlock()
	s.engine.gms.CloseSession(s.ID())
	if tx != nil {
		return tx.rollback(context.Background())
	}
	return nil
}

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
}

func newTxn(readOnly bool) *txn {
	return &txn{id: txnSeq.Add(1), epochs: map[*sinkHandle]int64{}, held: map[*sinkHandle]bool{}, readOnly: readOnly}
}

func (t *txn) String() string   { return fmt.Sprintf("lakesql transaction %d", t.id) }
func (t *txn) IsReadOnly() bool { return t.readOnly }

// busy reports whether the transaction holds a sink (and so, perhaps, epochs).
func (t *txn) busy() bool { return len(t.held) > 0 }

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

// dropLeakedEpochs runs when a statement is parsed. In autocommit mode,
// outside BEGIN, no epoch is open between statements: every statement
// commits its own. Epochs found open are a failed statement's, whose
// transaction go-mysql-server's server path leaves open after an error
// (only Engine.Exec cleans up after itself); they are rolled back so
// their rows cannot reach the next statement's commit. go-mysql-server's
// own transaction object is left alone: at parse time it already belongs
// to the statement being parsed.
func (s *Session) dropLeakedEpochs(ctx *gms.Context) {
	if ctx.GetIgnoreAutoCommit() {
		return
	}
	if auto, err := isAutocommit(ctx); err != nil || !auto {
		return
	}
	s.mu.Lock()
	t := s.tx
	if t != nil && t.busy() {
		s.tx = nil
	} else {
		t = nil
	}
	s.mu.Unlock()
	if t != nil {
		if len(t.order) > 0 {
			s.resetEpoch(ctx)
		}
		_ = t.rollback(ctx)
	}
}

// StatementFailed ends what a failed statement leaves open in autocommit
// mode: go-mysql-server's server keeps the statement's transaction after
// an error, and with it the sinks the statement locked (an UPDATE locks
// its sink before reading) until the connection's next statement. The
// wire layer calls it when a statement fails, so an idle connection holds
// no sink. Inside BEGIN ... COMMIT nothing changes: the transaction's
// earlier statements stand, and it keeps its locks until it ends.
func (s *Session) StatementFailed(ctx context.Context) {
	s.abortAutocommit(s.engine.gmsContext(ctx, s, ""))
}

// abortAutocommit rolls back the transaction of a failed autocommit
// statement, in lakesql and in go-mysql-server.
func (s *Session) abortAutocommit(ctx *gms.Context) {
	if ctx.GetIgnoreAutoCommit() {
		return
	}
	if auto, err := isAutocommit(ctx); err != nil || !auto {
		return
	}
	_ = s.Rollback(ctx, ctx.GetTransaction())
	ctx.SetTransaction(nil)
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
	return fmt.Errorf("%w: SAVEPOINT", ErrNotSupported)
}

// RollbackToSavepoint implements sql.TransactionSession: not supported.
func (s *Session) RollbackToSavepoint(*gms.Context, gms.Transaction, string) error {
	return fmt.Errorf("%w: ROLLBACK TO SAVEPOINT", ErrNotSupported)
}

// ReleaseSavepoint implements sql.TransactionSession: not supported.
func (s *Session) ReleaseSavepoint(*gms.Context, gms.Transaction, string) error {
	return fmt.Errorf("%w: RELEASE SAVEPOINT", ErrNotSupported)
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
	return ok
}

// addTarget records that the running statement changes h: go-mysql-server
// asks the sink for an updater or deleter while it plans or starts an
// UPDATE or DELETE, before any row is read.
func (s *Session) addTarget(ctx *gms.Context, h *sinkHandle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.targets.pid != ctx.Pid() {
		s.targets = statementTargets{pid: ctx.Pid()}
	}
	if !slices.Contains(s.targets.sinks, h) {
		s.targets.sinks = append(s.targets.sinks, h)
	}
}

// changedSinks returns the sinks the running statement changes.
func (s *Session) changedSinks(ctx *gms.Context) []*sinkHandle {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.targets.pid != ctx.Pid() {
		return nil
	}
	return slices.Clone(s.targets.sinks)
}

// checkOneTarget refuses a statement that changes more than one sink
// (UPDATE a JOIN b SET a.x = ..., b.y = ...; DELETE a, b FROM ...). A
// sink cannot take back rows it was handed, so if the statement failed on
// its second sink, its rows for the first would stay in the transaction,
// and COMMIT would write them although the statement failed. Refusing it
// before any row is read or handed over keeps a failed statement from
// leaving anything behind.
func (s *Session) checkOneTarget(ctx *gms.Context) error {
	targets := s.changedSinks(ctx)
	if len(targets) < 2 {
		return nil
	}
	names := make([]string, len(targets))
	for i, h := range targets {
		names[i] = h.rec.Name
	}
	return fmt.Errorf("%w: a statement that changes more than one sink (%s): change one sink per statement (a transaction still commits several sinks together)",
		ErrNotSupported, strings.Join(names, ", "))
}

// lockTarget runs before rows of h are read. When the running statement
// changes h (an UPDATE or DELETE), the transaction takes h's lock first,
// and the rows are then read from the version committed last: the rows
// the statement changes are the latest, and no other transaction commits
// over them until this one ends, as MySQL's row locks (at the sink's
// granularity) ensure. Without it, two concurrent UPDATE t SET n = n + 1
// would read the same version and both write n + 1.
func (s *Session) lockTarget(ctx *gms.Context, h *sinkHandle) error {
	if !slices.Contains(s.changedSinks(ctx), h) {
		return nil
	}
	if err := s.checkOneTarget(ctx); err != nil {
		return err
	}
	// The rows are read from the last committed version, which does not
	// hold this transaction's own writes: an UPDATE after them would
	// overwrite them with stale rows, a DELETE would miss them.
	if s.writes(h) {
		return fmt.Errorf("%w: UPDATE or DELETE of sink %s after this transaction wrote to it (it reads the last committed version, without the transaction's own rows): COMMIT first",
			ErrNotSupported, h.rec.Name)
	}
	_, err := s.current().lock(ctx, h)
	return err
}

// write hands a successful statement's rows for one sink to the session's
// transaction, opening the sink's epoch first if this is the transaction's
// first write to it.
func (s *Session) write(ctx *gms.Context, h *sinkHandle, rows []gms.Row) error {
	return s.fail(s.writeRows(ctx, h, rows))
}

func (s *Session) writeRows(ctx *gms.Context, h *sinkHandle, rows []gms.Row) error {
	sink, err := h.open(ctx)
	if err != nil {
		return err
	}
	schema := sink.Schema()
	if len(rows) > 0 && len(rows[0]) == len(schema.Fields())+1 {
		schema = withOpColumn(schema)
	}
	rec, err := rowsToRecord(schema, rows)
	if err != nil {
		return fmt.Errorf("sink %s: %w", h.rec.Name, err)
	}
	defer rec.Release()
	t := s.current()
	_, open := t.epochs[h]
	took := false
	if !open {
		if took, err = t.lock(ctx, h); err != nil {
			return err
		}
		// An epoch the session names may be a replay; one lakesql numbers
		// never is (BeginNextEpoch): if another process under the same
		// writer id took the number, the commit takes the next one.
		e, named := s.explicitEpoch(ctx)
		if named {
			err = sink.BeginEpoch(ctx, e)
			if t.named == nil {
				t.named = map[*sinkHandle]bool{}
			}
			t.named[h] = true
		} else {
			e, err = sink.BeginNextEpoch(ctx)
		}
		if err != nil {
			if took {
				t.unlock(h)
			}
			return fmt.Errorf("sink %s: %w", h.rec.Name, err)
		}
		t.epochs[h] = e
		t.order = append(t.order, h)
	}
	if err := sink.Write(ctx, rec); err != nil {
		if !open {
			// These rows were to be the epoch's first. Without them the
			// epoch must not commit: an empty version would use up its
			// number, and an explicit epoch would then read as replayed.
			_ = sink.RollbackEpoch(context.WithoutCancel(ctx), t.epochs[h])
			delete(t.epochs, h)
			t.order = t.order[:len(t.order)-1]
			if took {
				t.unlock(h)
			}
		}
		return fmt.Errorf("sink %s: %w", h.rec.Name, err)
	}
	return nil
}

// commit commits every epoch of the transaction, in the order the sinks
// were first written. A sink that fails to commit is rolled back, and so
// are the ones after it; the ones before it stay committed, and the error
// of a transaction over several sinks says which (PartialCommitError).
func (t *txn) commit(ctx context.Context) (skipped, committed int, err error) {
	defer t.unlockAll()
	var errs []error
	var landed []LandedSink
	var notCommitted []string
	for _, h := range t.order {
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
		cerr := sink.PreCommit(ctx, e)
		if cerr == nil {
			res, cerr = sink.CommitEpoch(ctx, e)
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
	var errs []error
	for _, h := range t.order {
		if sink, err := h.open(ctx); err == nil {
			if err := sink.RollbackEpoch(context.WithoutCancel(ctx), t.epochs[h]); err != nil {
				errs = append(errs, fmt.Errorf("sink %s: %w", h.rec.Name, err))
			}
		}
	}
	t.order, t.epochs = nil, nil
	return errors.Join(errs...)
}

// TakeReplayed reports whether the commits since it was last called were
// all replays: every sink the statement committed already held its epoch,
// so the statement wrote nothing, and its client must be told 0 rows
// affected. It forgets them, so the next statement starts afresh.
// Engine.Exec applies it itself; the wire layer asks after each statement
// (go-mysql-server counts the rows before the commit).
func (s *Session) TakeReplayed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	replayed := s.skipped > 0 && s.committed == 0
	s.skipped, s.committed = 0, 0
	return replayed
}

// execGMS runs a statement through go-mysql-server and drains its rows.
func (s *Session) execGMS(ctx context.Context, query string) (*Result, error) {
	gctx := s.engine.gmsContext(ctx, s, query)
	s.mu.Lock()
	s.skipped, s.committed = 0, 0
	s.mu.Unlock()
	res, err := s.runGMS(gctx, query)
	if err != nil {
		// A failed autocommit statement leaves its transaction open in
		// go-mysql-server: roll it back so its rows go nowhere.
		s.abortAutocommit(gctx)
		return nil, err
	}
	if s.TakeReplayed() {
		res.RowsAffected = 0
	}
	if s.WarningCount() > 0 { // zero after SHOW WARNINGS, which lists them as rows
		for _, w := range s.Warnings() {
			res.Warnings = append(res.Warnings, Warning{Level: w.Level, Code: w.Code, Message: w.Message})
		}
	}
	return res, nil
}

// opColumnShown reports whether the sinks show the changelog column _op,
// as their last column, to the statement ctx runs: an INSERT or REPLACE
// that names _op in its column list. It is a property of the statement,
// read from its own text, the context's query (COM_QUERY,
// COM_STMT_PREPARE and COM_STMT_EXECUTE all carry it), or, for EXECUTE
// name, from the statement PREPARE cached under that name: a prepared
// statement sees the same columns whatever ran since it was prepared.
func (s *Session) opColumnShown(ctx *gms.Context) bool {
	q := ctx.Query()
	if w, _ := sqlword.Leading(q, 0); sqlword.Is(w, "EXECUTE") {
		return s.preparedNamesOp(q)
	}
	s.mu.Lock()
	if s.opShown.query == q {
		shown := s.opShown.shown
		s.mu.Unlock()
		return shown
	}
	s.mu.Unlock()
	shown := namesOpColumn(ctx, q)
	s.mu.Lock()
	s.opShown.query, s.opShown.shown = q, shown
	s.mu.Unlock()
	return shown
}

// preparedNamesOp reports whether EXECUTE name (query) runs a prepared
// INSERT that names _op.
func (s *Session) preparedNamesOp(query string) bool {
	st, err := gms.GlobalParser.ParseSimple(query)
	ex, ok := st.(*ast.Execute)
	if err != nil || !ok {
		return false
	}
	prepared, ok := s.engine.gms.PreparedDataCache.GetCachedStmt(s.ID(), ex.Name)
	return ok && insertNamesOp(prepared)
}

// namesOpColumn reports whether query is an INSERT or REPLACE whose column
// list names the changelog column _op, or PREPARE of one (whose text is
// bound, and so planned, when it is prepared).
func namesOpColumn(ctx *gms.Context, query string) bool {
	w, _ := sqlword.Leading(query, 0)
	if !sqlword.Is(w, "PREPARE") && !strings.Contains(strings.ToLower(query), sqlsink.OpColumn) {
		return false
	}
	st, err := gms.GlobalParser.ParseSimple(query)
	if err != nil {
		return false
	}
	if p, ok := st.(*ast.Prepare); ok {
		text := p.Expr
		if name, isVar := strings.CutPrefix(text, "@"); isVar {
			_, v, err := ctx.GetUserVariable(ctx, strings.ToLower(name))
			if text, isVar = v.(string); err != nil || !isVar {
				return false
			}
		}
		return namesOpColumn(ctx, text)
	}
	return insertNamesOp(st)
}

// insertNamesOp reports whether st is an INSERT or REPLACE whose column
// list names _op.
func insertNamesOp(st ast.Statement) bool {
	ins, ok := st.(*ast.Insert)
	if !ok {
		return false
	}
	for _, c := range ins.Columns {
		if c.Lowered() == sqlsink.OpColumn {
			return true
		}
	}
	return false
}

func isAutocommit(ctx *gms.Context) (bool, error) { return plan.IsSessionAutocommit(ctx) }

func (s *Session) runGMS(ctx *gms.Context, query string) (*Result, error) {
	schema, iter, _, err := s.engine.gms.QueryWithBindings(ctx, query, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	ok := types.IsOkResultSchema(schema)
	if !ok {
		for _, c := range schema {
			res.Columns = append(res.Columns, c.Name)
			res.Types = append(res.Types, columnType(c.Type))
		}
	}
	for {
		row, err := iter.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			iter.Close(ctx)
			return nil, err
		}
		if ok {
			if r, isOk := row[0].(types.OkResult); isOk {
				res.RowsAffected += r.RowsAffected
			}
			continue
		}
		out := make([]any, len(row))
		copy(out, row)
		res.Rows = append(res.Rows, out)
	}
	if err := iter.Close(ctx); err != nil {
		return nil, err
	}
	return res, nil
}
