package sqlsink

import (
	"errors"
	"fmt"
	"math"
)

// This file is the sink's lifecycle as a pure state machine, in the manner of
// etcd's raft: the engine performs I/O and reports outcomes to a Machine, and
// the Machine decides whether each step is legal. Keeping the rules free of
// I/O (and of clocks) lets every transition be tested exhaustively.
//
// A Machine is not safe for concurrent use; the engine serialises calls.

// State is the sink's lifecycle state.
type State int

// The lifecycle: created → initializing → running, ending in closed; failed
// is reachable from any state but closed and only leads to closed.
const (
	StateCreated State = iota
	StateInitializing
	StateRunning
	StateFailed
	StateClosed
)

func (s State) String() string {
	switch s {
	case StateCreated:
		return "created"
	case StateInitializing:
		return "initializing"
	case StateRunning:
		return "running"
	case StateFailed:
		return "failed"
	case StateClosed:
		return "closed"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Phase is where the current epoch stands. It is PhaseIdle except while
// running, and in failed when the failure left an epoch behind.
type Phase int

// An epoch goes idle → open → precommitted → committing → idle; a rollback
// returns open or precommitted to idle.
const (
	PhaseIdle Phase = iota
	PhaseOpen
	PhasePrecommitted
	PhaseCommitting
)

func (p Phase) String() string {
	switch p {
	case PhaseIdle:
		return "idle"
	case PhaseOpen:
		return "open"
	case PhasePrecommitted:
		return "precommitted"
	case PhaseCommitting:
		return "committing"
	}
	return fmt.Sprintf("Phase(%d)", int(p))
}

// ErrWrongState marks a call the sink's lifecycle state or epoch phase does
// not allow, e.g. a Write with no epoch open or anything after Close.
var ErrWrongState = errors.New("sink: call not allowed in this state")

// ErrEpochOrder marks a call naming the wrong epoch: one not after the last
// epoch begun, a negative one, or not the epoch that is open.
var ErrEpochOrder = errors.New("sink: epoch out of order")

// ErrSkipMismatch marks a commit reported as having written data for an epoch
// the sink had already committed before; writing it would break exactly-once.
var ErrSkipMismatch = errors.New("sink: skip epoch reported as written")

// TransitionError describes a rejected call. Op is the sink API the call
// belongs to (BeginEpoch, Write, PreCommit, CommitEpoch, RollbackEpoch, Open,
// Fail), so the engine can return it to users as is. State and Phase are the
// machine's at the time of the call; Epoch is the epoch argument; Current is
// the epoch the machine held that the call conflicted with (the open epoch,
// or for BeginEpoch order errors the last one begun), -1 if none. Err is
// ErrWrongState, ErrEpochOrder or ErrSkipMismatch.
type TransitionError struct {
	Op      string
	State   State
	Phase   Phase
	Epoch   int64
	Current int64
	Err     error

	hasEpoch bool   // Op takes an epoch: print it as Op(Epoch)
	detail   string // what was wrong, in words
}

func (e *TransitionError) Error() string {
	op := e.Op
	if e.hasEpoch {
		op = fmt.Sprintf("%s(%d)", e.Op, e.Epoch)
	}
	detail := e.detail
	if detail == "" && e.Err != nil {
		detail = e.Err.Error()
	}
	return op + ": " + detail
}

func (e *TransitionError) Unwrap() error { return e.Err }

// Operation names used in errors: the engine's API, not the Machine's methods.
const (
	smOpOpen     = "Open"
	smOpBegin    = "BeginEpoch"
	smOpWrite    = "Write"
	smOpPre      = "PreCommit"
	smOpCommit   = "CommitEpoch"
	smOpRollback = "RollbackEpoch"
	smOpFail     = "Fail"
)

// Machine holds the lifecycle and epoch bookkeeping of one sink. Its zero
// value is not usable; call NewMachine. Every method either applies exactly
// one transition and returns nil, or returns an error and changes nothing.
type Machine struct {
	state State
	phase Phase
	valid bool // set by NewMachine, so a zero Machine is detected, not misused

	epoch int64 // the epoch open/precommitted/committing; meaningful when phase != idle
	skip  bool  // the open epoch was already committed before: write nothing
	// auto: the open epoch was numbered by BeginNext, not named by the
	// caller; it is never a replay, and its commit may land under a
	// later number (CommittedAs).
	auto bool

	lastCommitted int64 // highest epoch known committed (recovered or in this session)
	hasCommitted  bool

	lastBegun int64 // ordering is per session: the last new epoch begun
	hasBegun  bool
	// prevBegun is lastBegun before the open epoch was begun: a rollback
	// restores it, so a rolled-back epoch leaves nothing behind.
	prevBegun    int64
	prevHasBegun bool

	reason string // why the sink failed
	// maintFault is why background maintenance last failed; empty once a
	// later run succeeds. It degrades a running sink, never fails it.
	maintFault string
}

// NewMachine returns a machine in StateCreated.
func NewMachine() *Machine {
	return &Machine{state: StateCreated, valid: true}
}

// State reports the lifecycle state.
func (m *Machine) State() State { return m.state }

// Phase reports the phase of the current epoch.
func (m *Machine) Phase() Phase { return m.phase }

// OpenEpoch reports the epoch currently begun and not yet committed or
// rolled back (open, precommitted or committing).
func (m *Machine) OpenEpoch() (int64, bool) {
	if m.phase == PhaseIdle {
		return 0, false
	}
	return m.epoch, true
}

// Skipping reports whether the current epoch is a skip epoch: one already
// committed before, whose rows are dropped and whose commit writes nothing.
func (m *Machine) Skipping() bool { return m.phase != PhaseIdle && m.skip }

// LastCommitted reports the highest epoch known to be committed, recovered at
// Open or committed since; ok is false when there is none.
func (m *Machine) LastCommitted() (epoch int64, ok bool) {
	return m.lastCommitted, m.hasCommitted
}

// FailReason reports why the sink failed; empty unless it did.
func (m *Machine) FailReason() string { return m.reason }

// StartOpen moves created → initializing, before the engine does Open's I/O.
func (m *Machine) StartOpen() error {
	if m.state != StateCreated || !m.valid {
		return m.stateErr(smOpOpen, -1, false)
	}
	m.state = StateInitializing
	return nil
}

// Opened moves initializing → running once recovery found the last committed
// epoch (ok=false: the table holds none for this writer).
func (m *Machine) Opened(lastCommitted int64, ok bool) error {
	if m.state != StateInitializing {
		return m.stateErr(smOpOpen, -1, false)
	}
	if ok && lastCommitted < 0 {
		return m.err(smOpOpen, lastCommitted, false, -1, ErrEpochOrder,
			fmt.Sprintf("recovered epoch %d is negative", lastCommitted))
	}
	m.state = StateRunning
	m.phase = PhaseIdle
	m.lastCommitted, m.hasCommitted = 0, false
	if ok {
		m.lastCommitted, m.hasCommitted = lastCommitted, true
	}
	return nil
}

// OpenFailed moves initializing → failed when Open's I/O failed.
func (m *Machine) OpenFailed(reason string) error {
	if m.state != StateInitializing {
		return m.stateErr(smOpOpen, -1, false)
	}
	m.fail(reason)
	return nil
}

// Begin opens epoch e. An epoch at or below the last committed one is a
// replay: it is always accepted (skip is true) and nothing of it is written,
// so replaying a transaction that landed succeeds, in this session or after
// a restart. A new epoch must exceed the last new epoch begun and not
// rolled back: a rolled-back epoch leaves no trace, so it, or a lower one,
// may be begun next (a retried transaction, or an automatic epoch).
func (m *Machine) Begin(e int64) (skip bool, err error) {
	return m.begin(e, false)
}

// BeginNext opens the epoch after the last one committed or begun (1 when
// there is none), numbered by the sink rather than named by its caller:
// it is never a replay. It fails when no epoch is left after the last.
func (m *Machine) BeginNext() (int64, error) { return m.BeginNextN(1) }

// BeginNextN opens the automatic epoch n after the last one committed or
// begun (n when there is none): a group commit of n transactions numbers
// them last+1 … last+n and commits as the highest, so the table's record
// of the writer says it holds them all. It fails when n < 1 or fewer than
// n epochs are left.
func (m *Machine) BeginNextN(n int64) (int64, error) {
	if m.state != StateRunning {
		return -1, m.stateErr(smOpBegin, -1, false)
	}
	if n < 1 {
		return -1, m.err(smOpBegin, -1, false, -1, ErrEpochOrder, fmt.Sprintf("a group of %d epochs", n))
	}
	last, has := m.lastCommitted, m.hasCommitted
	if m.hasBegun && (!has || m.lastBegun > last) {
		last, has = m.lastBegun, true
	}
	if !has {
		last = 0
	}
	if last > math.MaxInt64-n {
		left := "no epoch is left"
		if n > 1 {
			left = fmt.Sprintf("fewer than %d epochs are left", n)
		}
		return -1, m.err(smOpBegin, -1, false, last, ErrEpochOrder, fmt.Sprintf("%s after %d", left, last))
	}
	e := last + n
	if _, err := m.begin(e, true); err != nil {
		return -1, err
	}
	return e, nil
}

func (m *Machine) begin(e int64, auto bool) (skip bool, err error) {
	if m.state != StateRunning {
		return false, m.stateErr(smOpBegin, e, true)
	}
	if m.phase != PhaseIdle {
		// Another epoch in progress is a state problem whatever e is: one
		// epoch at a time.
		return false, m.err(smOpBegin, e, true, m.epoch, ErrWrongState,
			fmt.Sprintf("epoch %d is %s", m.epoch, m.phase))
	}
	if e < 0 {
		return false, m.err(smOpBegin, e, true, -1, ErrEpochOrder, "epoch must be >= 0")
	}
	if m.hasCommitted && e <= m.lastCommitted {
		m.phase, m.epoch, m.skip, m.auto = PhaseOpen, e, true, false
		return true, nil
	}
	if m.hasBegun && e <= m.lastBegun {
		return false, m.err(smOpBegin, e, true, m.lastBegun, ErrEpochOrder,
			fmt.Sprintf("epoch must be after %d, the last epoch begun", m.lastBegun))
	}
	m.phase, m.epoch, m.skip, m.auto = PhaseOpen, e, false, auto
	m.prevBegun, m.prevHasBegun = m.lastBegun, m.hasBegun
	m.lastBegun, m.hasBegun = e, true
	return false, nil
}

// Write admits a batch into epoch e, which must be open. drop reports a skip
// epoch: the call succeeds but the rows must not be buffered.
func (m *Machine) Write(e int64) (drop bool, err error) {
	if err := m.check(smOpWrite, e, StateRunning, PhaseOpen); err != nil {
		return false, err
	}
	return m.skip, nil
}

// PreCommit moves epoch e from open to precommitted: its data is staged and
// only the catalog commit remains.
func (m *Machine) PreCommit(e int64) error {
	if err := m.check(smOpPre, e, StateRunning, PhaseOpen); err != nil {
		return err
	}
	m.phase = PhasePrecommitted
	return nil
}

// BeginCommit moves epoch e from precommitted to committing, before the
// engine's catalog commit. An open epoch must be precommitted first.
func (m *Machine) BeginCommit(e int64) error {
	if err := m.check(smOpCommit, e, StateRunning, PhasePrecommitted); err != nil {
		return err
	}
	m.phase = PhaseCommitting
	return nil
}

// Committed records that epoch e is durable (skipped: nothing was written
// because the table already held it) and returns to idle. Skipped may be
// true for a named non-skip epoch, when the commit found the epoch already
// landed, e.g. by a concurrent writer; it may not be false for a skip
// epoch, nor true for an automatic one (BeginNext), which is never a replay.
func (m *Machine) Committed(e int64, skipped bool) error {
	if err := m.check(smOpCommit, e, StateRunning, PhaseCommitting); err != nil {
		return err
	}
	if m.skip && !skipped {
		return m.err(smOpCommit, e, true, m.epoch, ErrSkipMismatch,
			fmt.Sprintf("epoch %d was already committed (last committed %d); nothing may be written", e, m.lastCommitted))
	}
	if m.auto && skipped {
		return m.err(smOpCommit, e, true, m.epoch, ErrSkipMismatch,
			fmt.Sprintf("epoch %d was numbered by the sink; it cannot be a replay", e))
	}
	m.committed(e)
	return nil
}

// CommittedAs records that automatic epoch e landed as epoch landed (at or
// after e): another writer under the same writer id had taken e, so the
// engine numbered the commit after the table's last epoch instead of
// mistaking it for a replay. Only an automatic epoch may be renumbered.
func (m *Machine) CommittedAs(e, landed int64) error {
	if err := m.check(smOpCommit, e, StateRunning, PhaseCommitting); err != nil {
		return err
	}
	if !m.auto || landed < e {
		return m.err(smOpCommit, e, true, m.epoch, ErrEpochOrder,
			fmt.Sprintf("epoch %d cannot land as %d: only an epoch the sink numbered may move, and only forward", e, landed))
	}
	m.committed(landed)
	if landed > m.lastBegun {
		m.lastBegun = landed
	}
	return nil
}

// committed ends the committing epoch as epoch e, durable.
func (m *Machine) committed(e int64) {
	// Max, not assignment: a skip epoch lies at or below the last committed
	// one, and the last committed epoch never moves backwards.
	if !m.hasCommitted || e > m.lastCommitted {
		m.lastCommitted, m.hasCommitted = e, true
	}
	m.phase = PhaseIdle
	m.skip, m.auto = false, false
}

// Automatic reports whether the current epoch was numbered by BeginNext.
func (m *Machine) Automatic() bool { return m.phase != PhaseIdle && m.auto }

// CommitFailed records a failed catalog commit of epoch e. A non-fatal
// failure returns to precommitted, so the caller may retry CommitEpoch or
// roll back; a fatal one fails the sink with the epoch still precommitted,
// so its staged data can be rolled back.
func (m *Machine) CommitFailed(e int64, cause error, fatal bool) error {
	if err := m.check(smOpCommit, e, StateRunning, PhaseCommitting); err != nil {
		return err
	}
	m.phase = PhasePrecommitted
	if fatal {
		reason := fmt.Sprintf("commit of epoch %d failed", e)
		if cause != nil {
			reason += ": " + cause.Error()
		}
		m.fail(reason)
	}
	return nil
}

// Rollback abandons epoch e, open or precommitted, returning to idle, and
// leaves nothing of it behind: the same epoch, or a lower one, may be begun
// next. It is also accepted in failed, so the
// engine can clean up staged data. A committing epoch cannot be rolled back:
// its commit may have landed, and its files would then be live.
func (m *Machine) Rollback(e int64) error {
	if m.state != StateRunning && m.state != StateFailed {
		return m.stateErr(smOpRollback, e, true)
	}
	if m.phase == PhaseIdle {
		return m.err(smOpRollback, e, true, -1, ErrWrongState, "no epoch is open")
	}
	if e != m.epoch {
		return m.phaseErr(smOpRollback, e, "")
	}
	if m.phase == PhaseCommitting {
		return m.phaseErr(smOpRollback, e, "its commit is in flight")
	}
	if !m.skip {
		m.lastBegun, m.hasBegun = m.prevBegun, m.prevHasBegun
	}
	m.phase = PhaseIdle
	m.skip, m.auto = false, false
	return nil
}

// Fail moves any state but closed to failed. The first reason is kept when
// the sink fails again, since it is the root cause. The epoch phase is kept:
// an open or precommitted epoch can still be rolled back, and a committing
// one stays unrollbackable.
func (m *Machine) Fail(reason string) error {
	if m.state == StateClosed || !m.valid {
		return m.stateErr(smOpFail, -1, false)
	}
	if m.state == StateFailed {
		return nil
	}
	m.fail(reason)
	return nil
}

// Close moves any state to closed; closing again is a no-op. It returns the
// epoch that was still begun, if any, so the engine can discard its buffer.
func (m *Machine) Close() (openEpoch int64, hadOpen bool) {
	openEpoch, hadOpen = m.OpenEpoch()
	m.state = StateClosed
	m.phase = PhaseIdle
	m.skip, m.auto = false, false
	return openEpoch, hadOpen
}

// HealthStatus is the coarse health of a sink.
type HealthStatus string

// Healthy sinks accept epochs; degraded ones are not ready yet; unhealthy
// ones will not accept epochs again.
const (
	Healthy   HealthStatus = "healthy"
	Degraded  HealthStatus = "degraded"
	Unhealthy HealthStatus = "unhealthy"
)

// Health is a sink's status with the reason it is not healthy.
type Health struct {
	Status HealthStatus
	Reason string
}

// MaintenanceFailed records that background maintenance (auto-compaction)
// failed: a running sink is degraded, with reason, until
// MaintenanceSucceeded. Epochs go on as before.
func (m *Machine) MaintenanceFailed(reason string) {
	if reason == "" {
		reason = "background maintenance failed"
	}
	m.maintFault = reason
}

// MaintenanceSucceeded records a background maintenance run that
// succeeded, which ends the degradation of an earlier failure.
func (m *Machine) MaintenanceSucceeded() { m.maintFault = "" }

// Health derives the sink's health from its state and the outcome of its
// last background maintenance run.
func (m *Machine) Health() Health {
	switch m.state {
	case StateRunning:
		if m.maintFault != "" {
			return Health{Status: Degraded, Reason: m.maintFault}
		}
		return Health{Status: Healthy}
	case StateCreated:
		return Health{Status: Degraded, Reason: "not open yet"}
	case StateInitializing:
		return Health{Status: Degraded, Reason: "opening"}
	case StateFailed:
		return Health{Status: Unhealthy, Reason: m.reason}
	}
	return Health{Status: Unhealthy, Reason: "closed"}
}

func (m *Machine) fail(reason string) {
	if reason == "" {
		reason = "unspecified failure"
	}
	m.state = StateFailed
	m.reason = reason
}

// check validates an epoch call: the state, then that e is the epoch begun,
// then the phase. Naming the wrong epoch is an order error even when the
// phase is also wrong, since that is the caller's likelier mistake.
func (m *Machine) check(op string, e int64, state State, phase Phase) error {
	if m.state != state {
		return m.stateErr(op, e, true)
	}
	if m.phase == PhaseIdle {
		return m.err(op, e, true, -1, ErrWrongState, "no epoch is open")
	}
	if e != m.epoch || m.phase != phase {
		hint := ""
		if op == smOpCommit && m.phase == PhaseOpen && e == m.epoch {
			hint = "PreCommit must come first"
		}
		return m.phaseErr(op, e, hint)
	}
	return nil
}

// checkOpen reports whether op on epoch e would be accepted now that needs
// e open, without changing anything: the engine checks before PreCommit's
// staging I/O and applies the transition only after it succeeds.
func (m *Machine) checkOpen(op string, e int64) error {
	return m.check(op, e, StateRunning, PhaseOpen)
}

// wrongState is the ErrWrongState error for op (one not naming an epoch,
// such as Write without one) refused in the current state.
func (m *Machine) wrongState(op string) error {
	if m.state != StateRunning || !m.valid {
		return m.stateErr(op, -1, false)
	}
	if m.phase == PhaseIdle {
		return m.err(op, -1, false, -1, ErrWrongState, "no epoch is open")
	}
	return m.err(op, -1, false, m.epoch, ErrWrongState, fmt.Sprintf("epoch %d is %s", m.epoch, m.phase))
}

// stateErr rejects a call because of the lifecycle state.
func (m *Machine) stateErr(op string, e int64, hasEpoch bool) error {
	detail := "sink is " + m.state.String()
	switch {
	case !m.valid:
		detail = "sink machine not created with NewMachine"
	case m.state == StateFailed:
		detail += ": " + m.reason
	}
	cur := int64(-1)
	if m.phase != PhaseIdle {
		cur = m.epoch
	}
	return m.err(op, e, hasEpoch, cur, ErrWrongState, detail)
}

// phaseErr rejects a call because of the current epoch: an order error when
// the call names another epoch, a state error when it names this one.
func (m *Machine) phaseErr(op string, e int64, hint string) error {
	sentinel := ErrWrongState
	if e != m.epoch {
		sentinel = ErrEpochOrder
	}
	detail := fmt.Sprintf("epoch %d is %s", m.epoch, m.phase)
	if hint != "" {
		detail += "; " + hint
	}
	return m.err(op, e, true, m.epoch, sentinel, detail)
}

func (m *Machine) err(op string, e int64, hasEpoch bool, cur int64, sentinel error, detail string) error {
	if !hasEpoch {
		e = -1
	}
	return &TransitionError{
		Op: op, State: m.state, Phase: m.phase, Epoch: e, Current: cur, Err: sentinel,
		hasEpoch: hasEpoch, detail: detail,
	}
}
