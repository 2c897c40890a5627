package planner

// Sessions and transactions. A Session is a go-mysql-server session that is
// also a sql.TransactionSession, so go-mysql-server's BEGIN, COMMIT,
// ROLLBACK and autocommit drive lakesql's epochs:
//
//   - a transaction opens an epoch on a sink at the first statement that
//     writes rows into it, and holds the sink until it ends;
//   - COMMIT (or the end of an autocommit statement) runs PreCommit and
//     CommitEpoch on every sink the transaction touched, one table version
//     each; ROLLBACK discards them;
//   - the epoch is the session's lakesql_epoch when set (it applies to the
//     next transaction that writes, then resets), else the sink's last
//     committed epoch + 1.
//
// Rows of a statement are handed to the sink only when the statement has
// succeeded (see inserter), so a failing statement leaves the earlier
// statements' rows of the transaction in place.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/lakesql/lakesql/sqlsink"
)

// EpochVariable is the session variable that sets the next transaction's epoch.
const EpochVariable = "lakesql_epoch"

// WarnEpochReplayed is the warning code of a commit that was skipped
// because the table already holds its epoch.
const WarnEpochReplayed = 1105

var registerOnce sync.Once

// registerSystemVariables adds lakesql_epoch to go-mysql-server's system
// variables (a process-wide registry).
func registerSystemVariables() {
	registerOnce.Do(func() {
		gms.SystemVariables.AddSystemVariables([]gms.SystemVariable{&gms.MysqlSystemVariable{
			Name:    EpochVariable,
			Scope:   gms.GetMysqlScope(gms.SystemVariableScope_Session),
			Dynamic: true,
			Type:    types.NewSystemIntType(EpochVariable, -1, math.MaxInt64, false),
			Default: int64(-1),
		}})
	})
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
	// changelog is set while an INSERT that names the _op column runs:
	// the sinks then show _op as their last column.
	changelog atomic.Bool
	// routed counts the SELECTs that ran in DuckDB; noRoute sends every
	// SELECT to go-mysql-server (for tests that compare the two).
	routed  atomic.Int64
	noRoute atomic.Bool
	// failure is the last error one of the session's hooks raised (rows
	// reaching a sink, a COMMIT): see TakeError.
	failure atomic.Pointer[error]
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

// txn is a transaction: the epochs it opened, by sink.
type txn struct {
	id     int64
	epochs map[*sinkHandle]int64
	order  []*sinkHandle
}

func (t *txn) String() string   { return fmt.Sprintf("lakesql transaction %d", t.id) }
func (t *txn) IsReadOnly() bool { return false }

// StartTransaction implements sql.TransactionSession. go-mysql-server calls
// it for every statement outside a transaction, so it is cheap: epochs open
// when rows arrive.
func (s *Session) StartTransaction(ctx *gms.Context, _ gms.TransactionCharacteristic) (gms.Transaction, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tx != nil && len(s.tx.order) > 0 {
		// go-mysql-server left a failed statement's transaction open; its
		// epochs must not leak into the new one.
		s.tx.rollback(ctx)
	}
	s.tx = &txn{id: txnSeq.Add(1), epochs: map[*sinkHandle]int64{}}
	return s.tx, nil
}

// current returns the open transaction, starting one if needed.
func (s *Session) current() *txn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tx == nil {
		s.tx = &txn{id: txnSeq.Add(1), epochs: map[*sinkHandle]int64{}}
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
	if t != nil && len(t.order) > 0 {
		s.tx = nil
	} else {
		t = nil
	}
	s.mu.Unlock()
	if t != nil {
		_ = t.rollback(ctx)
		s.resetEpoch(ctx)
	}
}

// CommitTransaction implements sql.TransactionSession: one commit per sink touched.
func (s *Session) CommitTransaction(ctx *gms.Context, tx gms.Transaction) error {
	return s.fail(s.commitTransaction(ctx))
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
	return s.fail(t.rollback(ctx))
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
	if !open {
		if err := h.acquire(ctx); err != nil {
			return err
		}
		e, ok := s.explicitEpoch(ctx)
		if !ok {
			last, had := sink.LastCommittedEpoch()
			e = 1
			if had {
				e = last + 1
			}
		}
		if err := sink.BeginEpoch(ctx, e); err != nil {
			h.release()
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
			h.release()
		}
		return fmt.Errorf("sink %s: %w", h.rec.Name, err)
	}
	return nil
}

// commit commits every epoch of the transaction, in the order the sinks
// were first written. A sink that fails to commit is rolled back; the ones
// before it stay committed (replaying the epoch repairs the rest).
func (t *txn) commit(ctx context.Context) (skipped, committed int, err error) {
	var errs []error
	for _, h := range t.order {
		e := t.epochs[h]
		sink, oerr := h.open(ctx)
		if oerr != nil {
			errs = append(errs, oerr)
			h.release()
			continue
		}
		if len(errs) > 0 {
			_ = sink.RollbackEpoch(ctx, e)
			h.release()
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
		case res.Skipped:
			skipped++
		default:
			committed++
		}
		h.release()
	}
	t.order, t.epochs = nil, nil
	return skipped, committed, errors.Join(errs...)
}

func (t *txn) rollback(ctx context.Context) error {
	var errs []error
	for _, h := range t.order {
		if sink, err := h.open(ctx); err == nil {
			if err := sink.RollbackEpoch(context.WithoutCancel(ctx), t.epochs[h]); err != nil {
				errs = append(errs, fmt.Errorf("sink %s: %w", h.rec.Name, err))
			}
		}
		h.release()
	}
	t.order, t.epochs = nil, nil
	return errors.Join(errs...)
}

// execGMS runs a statement through go-mysql-server and drains its rows.
func (s *Session) execGMS(ctx context.Context, query string) (*Result, error) {
	gctx := s.engine.gmsContext(ctx, s)
	s.mu.Lock()
	s.skipped, s.committed = 0, 0
	s.mu.Unlock()
	// go-mysql-server clears the warnings when a statement starts, except
	// for SHOW WARNINGS, which must still see the last statement's.
	defer s.changelog.Store(false)
	res, err := s.runGMS(gctx, query)
	if err != nil {
		// A failed autocommit statement leaves its transaction open in
		// go-mysql-server: roll it back so its rows go nowhere.
		if !gctx.GetIgnoreAutoCommit() {
			if auto, aerr := isAutocommit(gctx); aerr == nil && auto {
				if tx := gctx.GetTransaction(); tx != nil {
					_ = s.Rollback(gctx, tx)
				}
				gctx.SetTransaction(nil)
			}
		}
		return nil, err
	}
	s.mu.Lock()
	if s.skipped > 0 && s.committed == 0 {
		res.RowsAffected = 0
	}
	s.mu.Unlock()
	if s.WarningCount() > 0 { // zero after SHOW WARNINGS, which lists them as rows
		for _, w := range s.Warnings() {
			res.Warnings = append(res.Warnings, Warning{Level: w.Level, Code: w.Code, Message: w.Message})
		}
	}
	return res, nil
}

// namesOpColumn reports whether query is an INSERT or REPLACE whose column
// list names the changelog column _op.
func namesOpColumn(query string) bool {
	if !strings.Contains(strings.ToLower(query), sqlsink.OpColumn) {
		return false
	}
	st, err := gms.GlobalParser.ParseSimple(query)
	if err != nil {
		return false
	}
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
