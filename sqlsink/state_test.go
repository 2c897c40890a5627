package sqlsink

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// smSnap is everything a Machine exposes, so tests can compare whole states
// and check that a rejected call changed nothing.
type smSnap struct {
	State   State
	Phase   Phase
	Open    int64
	HasOpen bool
	Skip    bool
	Auto    bool
	Last    int64
	HasLast bool
	Reason  string
}

func smSnapOf(m *Machine) smSnap {
	s := smSnap{State: m.State(), Phase: m.Phase(), Skip: m.Skipping(), Auto: m.Automatic(), Reason: m.FailReason()}
	s.Open, s.HasOpen = m.OpenEpoch()
	s.Last, s.HasLast = m.LastCommitted()
	return s
}

// smKind classifies an error by its sentinel, for comparing decisions.
func smKind(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ErrWrongState):
		return "state"
	case errors.Is(err, ErrEpochOrder):
		return "order"
	case errors.Is(err, ErrSkipMismatch):
		return "skipmismatch"
	}
	return "other:" + err.Error()
}

func smMust(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func smBegin(t testing.TB, m *Machine, e int64) {
	t.Helper()
	_, err := m.Begin(e)
	smMust(t, err)
}

func smRunning(t testing.TB, last int64, ok bool) *Machine {
	t.Helper()
	m := NewMachine()
	smMust(t, m.StartOpen())
	smMust(t, m.Opened(last, ok))
	return m
}

// smConfigs are the reachable states/phases the cross-product test starts
// from. Every epoch-bearing one has epoch 20 in progress; 21 is "another".
var smConfigs = []struct {
	name  string
	setup func(t testing.TB) *Machine
}{
	{"created", func(t testing.TB) *Machine { return NewMachine() }},
	{"initializing", func(t testing.TB) *Machine {
		m := NewMachine()
		smMust(t, m.StartOpen())
		return m
	}},
	{"idle-fresh", func(t testing.TB) *Machine { return smRunning(t, 0, false) }},
	{"idle-recovered25", func(t testing.TB) *Machine { return smRunning(t, 25, true) }},
	{"idle-committed20", func(t testing.TB) *Machine {
		m := smRunning(t, 10, true)
		smBegin(t, m, 20)
		smMust(t, m.PreCommit(20))
		smMust(t, m.BeginCommit(20))
		smMust(t, m.Committed(20, false))
		return m
	}},
	{"idle-rolledback20", func(t testing.TB) *Machine {
		m := smRunning(t, 10, true)
		smBegin(t, m, 20)
		smMust(t, m.Rollback(20))
		return m
	}},
	{"open", func(t testing.TB) *Machine {
		m := smRunning(t, 10, true)
		smBegin(t, m, 20)
		return m
	}},
	{"open-skip", func(t testing.TB) *Machine {
		m := smRunning(t, 25, true)
		smBegin(t, m, 20)
		return m
	}},
	{"precommitted", func(t testing.TB) *Machine {
		m := smRunning(t, 10, true)
		smBegin(t, m, 20)
		smMust(t, m.PreCommit(20))
		return m
	}},
	{"committing", func(t testing.TB) *Machine {
		m := smRunning(t, 10, true)
		smBegin(t, m, 20)
		smMust(t, m.PreCommit(20))
		smMust(t, m.BeginCommit(20))
		return m
	}},
	{"committing-skip", func(t testing.TB) *Machine {
		m := smRunning(t, 25, true)
		smBegin(t, m, 20)
		smMust(t, m.PreCommit(20))
		smMust(t, m.BeginCommit(20))
		return m
	}},
	{"failed-opening", func(t testing.TB) *Machine {
		m := NewMachine()
		smMust(t, m.StartOpen())
		smMust(t, m.OpenFailed("boom"))
		return m
	}},
	{"failed-idle", func(t testing.TB) *Machine {
		m := smRunning(t, 10, true)
		smMust(t, m.Fail("boom"))
		return m
	}},
	{"failed-open", func(t testing.TB) *Machine {
		m := smRunning(t, 10, true)
		smBegin(t, m, 20)
		smMust(t, m.Fail("boom"))
		return m
	}},
	{"failed-precommitted", func(t testing.TB) *Machine {
		m := smRunning(t, 10, true)
		smBegin(t, m, 20)
		smMust(t, m.PreCommit(20))
		smMust(t, m.Fail("boom"))
		return m
	}},
	{"failed-committing", func(t testing.TB) *Machine {
		m := smRunning(t, 10, true)
		smBegin(t, m, 20)
		smMust(t, m.PreCommit(20))
		smMust(t, m.BeginCommit(20))
		smMust(t, m.Fail("boom"))
		return m
	}},
	{"closed", func(t testing.TB) *Machine {
		m := smRunning(t, 10, true)
		smBegin(t, m, 20)
		m.Close()
		return m
	}},
}

// smOps are the calls tried from every config, with their return values
// rendered as a string.
var smOps = []struct {
	name string
	run  func(m *Machine) (string, error)
}{
	{"StartOpen", func(m *Machine) (string, error) { return "", m.StartOpen() }},
	{"Opened(10)", func(m *Machine) (string, error) { return "", m.Opened(10, true) }},
	{"OpenFailed", func(m *Machine) (string, error) { return "", m.OpenFailed("x") }},
	{"Begin(30)", smBeginOp(30)},
	{"Begin(20)", smBeginOp(20)},
	{"Begin(3)", smBeginOp(3)},
	{"Begin(-1)", smBeginOp(-1)},
	{"Write(20)", smWriteOp(20)},
	{"Write(21)", smWriteOp(21)},
	{"PreCommit(20)", func(m *Machine) (string, error) { return "", m.PreCommit(20) }},
	{"PreCommit(21)", func(m *Machine) (string, error) { return "", m.PreCommit(21) }},
	{"BeginCommit(20)", func(m *Machine) (string, error) { return "", m.BeginCommit(20) }},
	{"BeginCommit(21)", func(m *Machine) (string, error) { return "", m.BeginCommit(21) }},
	{"Committed(20)", func(m *Machine) (string, error) { return "", m.Committed(20, false) }},
	{"Committed(20,skipped)", func(m *Machine) (string, error) { return "", m.Committed(20, true) }},
	{"Committed(21)", func(m *Machine) (string, error) { return "", m.Committed(21, false) }},
	{"CommitFailed(20)", func(m *Machine) (string, error) { return "", m.CommitFailed(20, errors.New("conflict"), false) }},
	{"CommitFailed(20,fatal)", func(m *Machine) (string, error) { return "", m.CommitFailed(20, errors.New("denied"), true) }},
	{"CommitFailed(21)", func(m *Machine) (string, error) { return "", m.CommitFailed(21, errors.New("conflict"), false) }},
	{"Rollback(20)", func(m *Machine) (string, error) { return "", m.Rollback(20) }},
	{"Rollback(21)", func(m *Machine) (string, error) { return "", m.Rollback(21) }},
	{"Fail", func(m *Machine) (string, error) { return "", m.Fail("later") }},
	{"Close", func(m *Machine) (string, error) {
		e, ok := m.Close()
		return fmt.Sprintf("open=%d,%v", e, ok), nil
	}},
}

func smBeginOp(e int64) func(m *Machine) (string, error) {
	return func(m *Machine) (string, error) {
		skip, err := m.Begin(e)
		return fmt.Sprintf("skip=%v", skip), err
	}
}

func smWriteOp(e int64) func(m *Machine) (string, error) {
	return func(m *Machine) (string, error) {
		drop, err := m.Write(e)
		return fmt.Sprintf("drop=%v", drop), err
	}
}

// smCell is the expected outcome of one op from one config: accepted with a
// return value and the resulting state (as a change to the state before),
// or rejected with a sentinel and no change.
type smCell struct {
	ret    string
	change func(*smSnap)
	err    error
}

func smOK(ret string, change func(*smSnap)) smCell { return smCell{ret: ret, change: change} }

var (
	smOrder = smCell{err: ErrEpochOrder}
	smWrong = smCell{err: ErrWrongState}
)

func smToOpen(e int64, skip bool) func(*smSnap) {
	return func(s *smSnap) { s.Phase, s.Open, s.HasOpen, s.Skip = PhaseOpen, e, true, skip }
}

func smToPhase(p Phase) func(*smSnap) { return func(s *smSnap) { s.Phase = p } }

func smToIdle(s *smSnap) { s.Phase, s.Open, s.HasOpen, s.Skip = PhaseIdle, 0, false, false }

func smCommittedTo(last int64) func(*smSnap) {
	return func(s *smSnap) { smToIdle(s); s.Last, s.HasLast = last, true }
}

// smExpected lists, per config, every call that differs from the default
// (rejected with ErrWrongState). Fail and Close are filled in by rule below
// since they behave alike everywhere.
var smExpected = map[string]map[string]smCell{
	"created": {
		"StartOpen": smOK("", func(s *smSnap) { s.State = StateInitializing }),
	},
	"initializing": {
		"Opened(10)": smOK("", func(s *smSnap) { s.State, s.Last, s.HasLast = StateRunning, 10, true }),
		"OpenFailed": smOK("", func(s *smSnap) { s.State, s.Reason = StateFailed, "x" }),
	},
	"idle-fresh": {
		"Begin(30)": smOK("skip=false", smToOpen(30, false)),
		"Begin(20)": smOK("skip=false", smToOpen(20, false)),
		"Begin(3)":  smOK("skip=false", smToOpen(3, false)),
		"Begin(-1)": smOrder,
	},
	"idle-recovered25": {
		"Begin(30)": smOK("skip=false", smToOpen(30, false)),
		"Begin(20)": smOK("skip=true", smToOpen(20, true)),
		"Begin(3)":  smOK("skip=true", smToOpen(3, true)),
		"Begin(-1)": smOrder,
	},
	"idle-committed20": {
		"Begin(30)": smOK("skip=false", smToOpen(30, false)),
		"Begin(20)": smOK("skip=true", smToOpen(20, true)),
		"Begin(3)":  smOK("skip=true", smToOpen(3, true)),
		"Begin(-1)": smOrder,
	},
	"idle-rolledback20": {
		"Begin(30)": smOK("skip=false", smToOpen(30, false)),
		"Begin(20)": smOK("skip=false", smToOpen(20, false)),
		"Begin(3)":  smOK("skip=true", smToOpen(3, true)), // at or below the recovered 10
		"Begin(-1)": smOrder,
	},
	"open": {
		"Write(20)":        smOK("drop=false", nil),
		"Write(21)":        smOrder,
		"PreCommit(20)":    smOK("", smToPhase(PhasePrecommitted)),
		"PreCommit(21)":    smOrder,
		"BeginCommit(21)":  smOrder,
		"Committed(21)":    smOrder,
		"CommitFailed(21)": smOrder,
		"Rollback(20)":     smOK("", smToIdle),
		"Rollback(21)":     smOrder,
	},
	"open-skip": {
		"Write(20)":        smOK("drop=true", nil),
		"Write(21)":        smOrder,
		"PreCommit(20)":    smOK("", smToPhase(PhasePrecommitted)),
		"PreCommit(21)":    smOrder,
		"BeginCommit(21)":  smOrder,
		"Committed(21)":    smOrder,
		"CommitFailed(21)": smOrder,
		"Rollback(20)":     smOK("", smToIdle),
		"Rollback(21)":     smOrder,
	},
	"precommitted": {
		"Write(21)":        smOrder,
		"PreCommit(21)":    smOrder,
		"BeginCommit(20)":  smOK("", smToPhase(PhaseCommitting)),
		"BeginCommit(21)":  smOrder,
		"Committed(21)":    smOrder,
		"CommitFailed(21)": smOrder,
		"Rollback(20)":     smOK("", smToIdle),
		"Rollback(21)":     smOrder,
	},
	"committing": {
		"Write(21)":             smOrder,
		"PreCommit(21)":         smOrder,
		"BeginCommit(21)":       smOrder,
		"Committed(20)":         smOK("", smCommittedTo(20)),
		"Committed(20,skipped)": smOK("", smCommittedTo(20)),
		"Committed(21)":         smOrder,
		"CommitFailed(20)":      smOK("", smToPhase(PhasePrecommitted)),
		"CommitFailed(20,fatal)": smOK("", func(s *smSnap) {
			s.State, s.Phase, s.Reason = StateFailed, PhasePrecommitted, "commit of epoch 20 failed: denied"
		}),
		"CommitFailed(21)": smOrder,
		"Rollback(21)":     smOrder,
	},
	"committing-skip": {
		"Write(21)":             smOrder,
		"PreCommit(21)":         smOrder,
		"BeginCommit(21)":       smOrder,
		"Committed(20)":         {err: ErrSkipMismatch},
		"Committed(20,skipped)": smOK("", smCommittedTo(25)), // never moves back
		"Committed(21)":         smOrder,
		"CommitFailed(20)":      smOK("", smToPhase(PhasePrecommitted)),
		"CommitFailed(20,fatal)": smOK("", func(s *smSnap) {
			s.State, s.Phase, s.Reason = StateFailed, PhasePrecommitted, "commit of epoch 20 failed: denied"
		}),
		"CommitFailed(21)": smOrder,
		"Rollback(21)":     smOrder,
	},
	"failed-opening": {},
	"failed-idle":    {},
	"failed-open": {
		"Rollback(20)": smOK("", smToIdle),
		"Rollback(21)": smOrder,
	},
	"failed-precommitted": {
		"Rollback(20)": smOK("", smToIdle),
		"Rollback(21)": smOrder,
	},
	"failed-committing": {
		"Rollback(21)": smOrder,
	},
	"closed": {},
}

// TestMachineCrossProduct tries every op from every config and checks that
// exactly the listed ones succeed, with the listed effect, and every other
// one fails with the listed sentinel without changing anything.
func TestMachineCrossProduct(t *testing.T) {
	if len(smExpected) != len(smConfigs) {
		t.Fatalf("smExpected has %d configs, smConfigs %d", len(smExpected), len(smConfigs))
	}
	accepted := 0
	for _, c := range smConfigs {
		cells, ok := smExpected[c.name]
		if !ok {
			t.Fatalf("no expectations for config %q", c.name)
		}
		for name := range cells {
			if !smHasOp(name) {
				t.Fatalf("config %q: expectation for unknown op %q", c.name, name)
			}
		}
		for _, op := range smOps {
			t.Run(c.name+"/"+op.name, func(t *testing.T) {
				m := c.setup(t)
				before := smSnapOf(m)
				want, listed := cells[op.name]
				switch {
				case listed:
				case op.name == "Close":
					ret := "open=0,false"
					if before.HasOpen {
						ret = fmt.Sprintf("open=%d,true", before.Open)
					}
					want = smOK(ret, func(s *smSnap) { smToIdle(s); s.State = StateClosed })
				case op.name == "Fail" && before.State == StateFailed:
					want = smOK("", nil) // keeps the first reason
				case op.name == "Fail" && before.State != StateClosed:
					want = smOK("", func(s *smSnap) { s.State, s.Reason = StateFailed, "later" })
				default:
					want = smWrong
				}

				ret, err := op.run(m)
				after := smSnapOf(m)
				if want.err != nil {
					if !errors.Is(err, want.err) {
						t.Fatalf("err = %v, want %v", err, want.err)
					}
					var te *TransitionError
					if !errors.As(err, &te) {
						t.Fatalf("err %T is not a *TransitionError", err)
					}
					if te.State != before.State || te.Phase != before.Phase {
						t.Errorf("error reports %v/%v, machine was %v/%v", te.State, te.Phase, before.State, before.Phase)
					}
					if diff := cmp.Diff(before, after); diff != "" {
						t.Errorf("rejected call changed the machine (-before +after):\n%s", diff)
					}
					return
				}
				accepted++
				if err != nil {
					t.Fatalf("err = %v, want success", err)
				}
				if want.ret != "" && ret != want.ret {
					t.Errorf("returned %s, want %s", ret, want.ret)
				}
				exp := before
				if want.change != nil {
					want.change(&exp)
				}
				if diff := cmp.Diff(exp, after); diff != "" {
					t.Errorf("state after (-want +got):\n%s", diff)
				}
			})
		}
	}
	t.Logf("%d configs x %d ops, %d accepted", len(smConfigs), len(smOps), accepted)
}

func smHasOp(name string) bool {
	for _, op := range smOps {
		if op.name == name {
			return true
		}
	}
	return false
}

func TestMachineLifecycle(t *testing.T) {
	m := NewMachine()
	type step struct {
		name   string
		do     func() error
		state  State
		phase  Phase
		health HealthStatus
	}
	steps := []step{
		{"StartOpen", m.StartOpen, StateInitializing, PhaseIdle, Degraded},
		{"Opened", func() error { return m.Opened(0, false) }, StateRunning, PhaseIdle, Healthy},
		{"Begin", func() error { _, err := m.Begin(1); return err }, StateRunning, PhaseOpen, Healthy},
		{"Write", func() error { _, err := m.Write(1); return err }, StateRunning, PhaseOpen, Healthy},
		{"Write again", func() error { _, err := m.Write(1); return err }, StateRunning, PhaseOpen, Healthy},
		{"PreCommit", func() error { return m.PreCommit(1) }, StateRunning, PhasePrecommitted, Healthy},
		{"BeginCommit", func() error { return m.BeginCommit(1) }, StateRunning, PhaseCommitting, Healthy},
		{"CommitFailed", func() error { return m.CommitFailed(1, errors.New("lost race"), false) }, StateRunning, PhasePrecommitted, Healthy},
		{"BeginCommit retry", func() error { return m.BeginCommit(1) }, StateRunning, PhaseCommitting, Healthy},
		{"Committed", func() error { return m.Committed(1, false) }, StateRunning, PhaseIdle, Healthy},
		{"Begin 2", func() error { _, err := m.Begin(2); return err }, StateRunning, PhaseOpen, Healthy},
		{"Rollback 2", func() error { return m.Rollback(2) }, StateRunning, PhaseIdle, Healthy},
		{"Begin 2 again", func() error { _, err := m.Begin(2); return err }, StateRunning, PhaseOpen, Healthy},
		{"PreCommit 2", func() error { return m.PreCommit(2) }, StateRunning, PhasePrecommitted, Healthy},
		{"Rollback 2 precommitted", func() error { return m.Rollback(2) }, StateRunning, PhaseIdle, Healthy},
		{"Close", func() error { m.Close(); return nil }, StateClosed, PhaseIdle, Unhealthy},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if m.State() != s.state || m.Phase() != s.phase || m.Health().Status != s.health {
			t.Fatalf("%s: got %v/%v/%v, want %v/%v/%v", s.name, m.State(), m.Phase(), m.Health().Status, s.state, s.phase, s.health)
		}
	}
	if last, ok := m.LastCommitted(); !ok || last != 1 {
		t.Errorf("LastCommitted = %d,%v, want 1,true", last, ok)
	}
}

func TestMachineEpochOrdering(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t testing.TB, m *Machine) // on a running machine, recovered last=5
		begin   int64
		want    error
		skip    bool
	}{
		{"first epoch above recovered", nil, 6, nil, false},
		{"first epoch equal to recovered", nil, 5, nil, true},
		{"first epoch below recovered", nil, 1, nil, true},
		{"epoch zero", nil, 0, nil, true},
		{"negative", nil, -1, ErrEpochOrder, false},
		{"higher than last begun", smCommitEpochs(8), 9, nil, false},
		{"gap after last begun", smCommitEpochs(8), 100, nil, false},
		{"equal to last committed is a replay", smCommitEpochs(8), 8, nil, true},
		{"lower than last committed is a replay", smCommitEpochs(8), 7, nil, true},
		{"lower skip epoch after skip", smCommitEpochs(3), 2, nil, true},
		{"next after skip epoch", smCommitEpochs(3), 4, nil, true},
		{"re-begin after rollback of open", smRollbackEpoch(8, false), 8, nil, false},
		{"re-begin after rollback of precommitted", smRollbackEpoch(8, true), 8, nil, false},
		{"re-begin skip epoch after rollback", smRollbackEpoch(4, false), 4, nil, true},
		{"lower after rollback", smRollbackEpoch(8, false), 7, nil, false},
		{"higher after rollback", smRollbackEpoch(8, false), 9, nil, false},
		{"re-begin after failed commit and rollback", func(t testing.TB, m *Machine) {
			smBegin(t, m, 8)
			smMust(t, m.PreCommit(8))
			smMust(t, m.BeginCommit(8))
			smMust(t, m.CommitFailed(8, errors.New("conflict"), false))
			smMust(t, m.Rollback(8))
		}, 8, nil, false},
		{"rollback then commit of later epoch makes it a replay", func(t testing.TB, m *Machine) {
			smRollbackEpoch(8, false)(t, m)
			smCommitEpochs(9)(t, m)
		}, 8, nil, true},
		{"lower than a rolled-back new epoch", func(t testing.TB, m *Machine) {
			smRollbackEpoch(8, false)(t, m)
		}, 6, nil, false},
		{"rolled-back far epoch leaves nothing behind", func(t testing.TB, m *Machine) {
			smRollbackEpoch(600, true)(t, m)
			smRollbackEpoch(700, false)(t, m)
		}, 6, nil, false},
		{"second rollback of same epoch still allows re-begin", func(t testing.TB, m *Machine) {
			smRollbackEpoch(8, false)(t, m)
			smRollbackEpoch(8, false)(t, m)
		}, 8, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := smRunning(t, 5, true)
			if tt.prepare != nil {
				tt.prepare(t, m)
			}
			before := smSnapOf(m)
			skip, err := m.Begin(tt.begin)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Begin(%d) err = %v, want %v", tt.begin, err, tt.want)
			}
			if err != nil {
				if diff := cmp.Diff(before, smSnapOf(m)); diff != "" {
					t.Errorf("rejected Begin changed state:\n%s", diff)
				}
				return
			}
			if skip != tt.skip || m.Skipping() != tt.skip {
				t.Errorf("skip = %v (Skipping %v), want %v", skip, m.Skipping(), tt.skip)
			}
			if e, ok := m.OpenEpoch(); !ok || e != tt.begin {
				t.Errorf("OpenEpoch = %d,%v", e, ok)
			}
		})
	}
}

// smCommitEpochs runs full epochs, reporting skip epochs as skipped.
func smCommitEpochs(epochs ...int64) func(t testing.TB, m *Machine) {
	return func(t testing.TB, m *Machine) {
		t.Helper()
		for _, e := range epochs {
			skip, err := m.Begin(e)
			smMust(t, err)
			smMust(t, m.PreCommit(e))
			smMust(t, m.BeginCommit(e))
			smMust(t, m.Committed(e, skip))
		}
	}
}

func smRollbackEpoch(e int64, precommit bool) func(t testing.TB, m *Machine) {
	return func(t testing.TB, m *Machine) {
		t.Helper()
		smBegin(t, m, e)
		if precommit {
			smMust(t, m.PreCommit(e))
		}
		smMust(t, m.Rollback(e))
	}
}

func TestMachineSkip(t *testing.T) {
	t.Run("replay of recovered epoch writes nothing", func(t *testing.T) {
		m := smRunning(t, 10, true)
		skip, err := m.Begin(10)
		if err != nil || !skip {
			t.Fatalf("Begin(10) = %v,%v, want skip", skip, err)
		}
		for range 3 {
			if drop, err := m.Write(10); err != nil || !drop {
				t.Fatalf("Write(10) = %v,%v, want drop", drop, err)
			}
		}
		smMust(t, m.PreCommit(10))
		smMust(t, m.BeginCommit(10))
		if !m.Skipping() {
			t.Error("Skipping() false while committing a skip epoch")
		}
		smMust(t, m.Committed(10, true))
		if last, ok := m.LastCommitted(); !ok || last != 10 {
			t.Errorf("LastCommitted = %d,%v, want 10", last, ok)
		}
		if m.Skipping() {
			t.Error("Skipping() true when idle")
		}
		if skip, err := m.Begin(11); err != nil || skip {
			t.Fatalf("Begin(11) = %v,%v, want a real epoch", skip, err)
		}
		if drop, err := m.Write(11); err != nil || drop {
			t.Fatalf("Write(11) = %v,%v, want keep", drop, err)
		}
	})
	t.Run("skip epoch below recovered keeps last committed", func(t *testing.T) {
		m := smRunning(t, 10, true)
		smCommitEpochs(3)(t, m)
		if last, _ := m.LastCommitted(); last != 10 {
			t.Errorf("LastCommitted = %d, want 10", last)
		}
	})
	t.Run("nothing recovered: epoch 0 is real", func(t *testing.T) {
		m := smRunning(t, 0, false)
		if skip, err := m.Begin(0); err != nil || skip {
			t.Fatalf("Begin(0) = %v,%v", skip, err)
		}
	})
	t.Run("recovered 0: epoch 0 is skipped", func(t *testing.T) {
		m := smRunning(t, 0, true)
		if skip, err := m.Begin(0); err != nil || !skip {
			t.Fatalf("Begin(0) = %v,%v", skip, err)
		}
	})
	t.Run("commit finding epoch already landed", func(t *testing.T) {
		m := smRunning(t, 10, true)
		smBegin(t, m, 12)
		smMust(t, m.PreCommit(12))
		smMust(t, m.BeginCommit(12))
		smMust(t, m.Committed(12, true))
		if last, _ := m.LastCommitted(); last != 12 {
			t.Errorf("LastCommitted = %d, want 12", last)
		}
	})
	t.Run("skip epoch reported as written is refused", func(t *testing.T) {
		m := smRunning(t, 10, true)
		smBegin(t, m, 9)
		smMust(t, m.PreCommit(9))
		smMust(t, m.BeginCommit(9))
		err := m.Committed(9, false)
		if !errors.Is(err, ErrSkipMismatch) {
			t.Fatalf("err = %v, want ErrSkipMismatch", err)
		}
		if m.Phase() != PhaseCommitting {
			t.Fatalf("phase = %v after refused Committed", m.Phase())
		}
		smMust(t, m.Committed(9, true))
	})
	t.Run("recovered negative epoch refused", func(t *testing.T) {
		m := NewMachine()
		smMust(t, m.StartOpen())
		if err := m.Opened(-2, true); !errors.Is(err, ErrEpochOrder) {
			t.Fatalf("err = %v", err)
		}
		if m.State() != StateInitializing {
			t.Fatalf("state = %v", m.State())
		}
		smMust(t, m.OpenFailed("bad recovery"))
	})
}

func TestMachineFailed(t *testing.T) {
	t.Run("fatal commit failure leaves a rollbackable epoch", func(t *testing.T) {
		m := smRunning(t, 0, false)
		smBegin(t, m, 1)
		smMust(t, m.PreCommit(1))
		smMust(t, m.BeginCommit(1))
		smMust(t, m.CommitFailed(1, errors.New("access denied"), true))
		want := smSnap{State: StateFailed, Phase: PhasePrecommitted, Open: 1, HasOpen: true,
			Reason: "commit of epoch 1 failed: access denied"}
		if diff := cmp.Diff(want, smSnapOf(m)); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
		for name, err := range map[string]error{
			"BeginCommit": m.BeginCommit(1),
			"PreCommit":   m.PreCommit(1),
			"StartOpen":   m.StartOpen(),
			"Committed":   m.Committed(1, false),
		} {
			if !errors.Is(err, ErrWrongState) {
				t.Errorf("%s in failed: err = %v", name, err)
			}
		}
		if _, err := m.Write(1); !errors.Is(err, ErrWrongState) {
			t.Errorf("Write in failed: %v", err)
		}
		if _, err := m.Begin(2); !errors.Is(err, ErrWrongState) {
			t.Errorf("Begin in failed: %v", err)
		}
		smMust(t, m.Rollback(1))
		if err := m.Rollback(1); !errors.Is(err, ErrWrongState) {
			t.Errorf("second Rollback: %v", err)
		}
		if got := m.Health(); got != (Health{Unhealthy, "commit of epoch 1 failed: access denied"}) {
			t.Errorf("Health = %+v", got)
		}
		if e, ok := m.Close(); ok {
			t.Errorf("Close returned open epoch %d after rollback", e)
		}
	})
	t.Run("nil cause", func(t *testing.T) {
		m := smRunning(t, 0, false)
		smBegin(t, m, 1)
		smMust(t, m.PreCommit(1))
		smMust(t, m.BeginCommit(1))
		smMust(t, m.CommitFailed(1, nil, true))
		if got := m.FailReason(); got != "commit of epoch 1 failed" {
			t.Errorf("reason = %q", got)
		}
	})
	t.Run("first reason wins", func(t *testing.T) {
		m := smRunning(t, 0, false)
		smMust(t, m.Fail("disk full"))
		smMust(t, m.Fail("then this"))
		if got := m.FailReason(); got != "disk full" {
			t.Errorf("reason = %q", got)
		}
	})
	t.Run("empty reason", func(t *testing.T) {
		m := NewMachine()
		smMust(t, m.Fail(""))
		if m.FailReason() == "" || m.Health().Reason == "" {
			t.Errorf("empty reason kept: %q", m.FailReason())
		}
	})
	t.Run("failure during commit forbids rollback", func(t *testing.T) {
		m := smRunning(t, 0, false)
		smBegin(t, m, 4)
		smMust(t, m.PreCommit(4))
		smMust(t, m.BeginCommit(4))
		smMust(t, m.Fail("watchdog"))
		if err := m.Rollback(4); !errors.Is(err, ErrWrongState) {
			t.Fatalf("Rollback of committing epoch in failed: %v", err)
		}
		if e, ok := m.Close(); !ok || e != 4 {
			t.Errorf("Close = %d,%v, want 4,true", e, ok)
		}
	})
	t.Run("fail after close refused", func(t *testing.T) {
		m := NewMachine()
		m.Close()
		if err := m.Fail("x"); !errors.Is(err, ErrWrongState) {
			t.Fatalf("err = %v", err)
		}
		if m.FailReason() != "" {
			t.Errorf("reason set on closed machine")
		}
	})
}

func TestMachineCloseIdempotent(t *testing.T) {
	m := smRunning(t, 0, false)
	smBegin(t, m, 7)
	if e, ok := m.Close(); !ok || e != 7 {
		t.Fatalf("first Close = %d,%v, want 7,true", e, ok)
	}
	first := smSnapOf(m)
	for range 3 {
		if e, ok := m.Close(); ok {
			t.Fatalf("Close again returned open epoch %d", e)
		}
		if diff := cmp.Diff(first, smSnapOf(m)); diff != "" {
			t.Fatalf("Close again changed state:\n%s", diff)
		}
	}
	if first.State != StateClosed || first.Phase != PhaseIdle || first.HasOpen {
		t.Errorf("after Close: %+v", first)
	}
}

func TestMachineZeroValue(t *testing.T) {
	var m Machine
	err := m.StartOpen()
	if !errors.Is(err, ErrWrongState) || !strings.Contains(err.Error(), "NewMachine") {
		t.Fatalf("StartOpen on zero Machine: %v", err)
	}
	if err := m.Fail("x"); !errors.Is(err, ErrWrongState) {
		t.Fatalf("Fail on zero Machine: %v", err)
	}
	if _, err := m.Begin(1); !errors.Is(err, ErrWrongState) {
		t.Fatalf("Begin on zero Machine: %v", err)
	}
}

func TestTransitionErrorMessages(t *testing.T) {
	closed := func() *Machine { m := NewMachine(); m.Close(); return m }
	open6 := func() *Machine {
		m := smRunning(t, 0, false)
		smBegin(t, m, 6)
		return m
	}
	tests := []struct {
		name string
		call func() error
		msg  string
		want TransitionError
	}{
		{"begin when closed", func() error { _, err := closed().Begin(7); return err },
			"BeginEpoch(7): sink is closed",
			TransitionError{Op: "BeginEpoch", State: StateClosed, Phase: PhaseIdle, Epoch: 7, Current: -1, Err: ErrWrongState}},
		{"commit of another epoch", func() error { return open6().BeginCommit(5) },
			"CommitEpoch(5): epoch 6 is open",
			TransitionError{Op: "CommitEpoch", State: StateRunning, Phase: PhaseOpen, Epoch: 5, Current: 6, Err: ErrEpochOrder}},
		{"commit before precommit", func() error { return open6().BeginCommit(6) },
			"CommitEpoch(6): epoch 6 is open; PreCommit must come first",
			TransitionError{Op: "CommitEpoch", State: StateRunning, Phase: PhaseOpen, Epoch: 6, Current: 6, Err: ErrWrongState}},
		{"begin while open", func() error { _, err := open6().Begin(7); return err },
			"BeginEpoch(7): epoch 6 is open",
			TransitionError{Op: "BeginEpoch", State: StateRunning, Phase: PhaseOpen, Epoch: 7, Current: 6, Err: ErrWrongState}},
		{"no epoch left", func() error {
			_, err := smRunning(t, math.MaxInt64, true).BeginNext()
			return err
		}, "BeginEpoch: no epoch is left after 9223372036854775807",
			TransitionError{Op: "BeginEpoch", State: StateRunning, Phase: PhaseIdle, Epoch: -1, Current: math.MaxInt64, Err: ErrEpochOrder}},
		{"negative epoch", func() error { _, err := smRunning(t, 0, false).Begin(-3); return err },
			"BeginEpoch(-3): epoch must be >= 0",
			TransitionError{Op: "BeginEpoch", State: StateRunning, Phase: PhaseIdle, Epoch: -3, Current: -1, Err: ErrEpochOrder}},
		{"write with nothing open", func() error { _, err := smRunning(t, 0, false).Write(3); return err },
			"Write(3): no epoch is open",
			TransitionError{Op: "Write", State: StateRunning, Phase: PhaseIdle, Epoch: 3, Current: -1, Err: ErrWrongState}},
		{"write before open", func() error { _, err := NewMachine().Write(3); return err },
			"Write(3): sink is created",
			TransitionError{Op: "Write", State: StateCreated, Phase: PhaseIdle, Epoch: 3, Current: -1, Err: ErrWrongState}},
		{"rollback while committing", func() error {
			m := open6()
			smMust(t, m.PreCommit(6))
			smMust(t, m.BeginCommit(6))
			return m.Rollback(6)
		}, "RollbackEpoch(6): epoch 6 is committing; its commit is in flight",
			TransitionError{Op: "RollbackEpoch", State: StateRunning, Phase: PhaseCommitting, Epoch: 6, Current: 6, Err: ErrWrongState}},
		{"precommit when failed", func() error {
			m := open6()
			smMust(t, m.Fail("disk full"))
			return m.PreCommit(6)
		}, "PreCommit(6): sink is failed: disk full",
			TransitionError{Op: "PreCommit", State: StateFailed, Phase: PhaseOpen, Epoch: 6, Current: 6, Err: ErrWrongState}},
		{"open twice", func() error {
			m := NewMachine()
			smMust(t, m.StartOpen())
			return m.StartOpen()
		}, "Open: sink is initializing",
			TransitionError{Op: "Open", State: StateInitializing, Phase: PhaseIdle, Epoch: -1, Current: -1, Err: ErrWrongState}},
		{"fail when closed", func() error { return closed().Fail("x") },
			"Fail: sink is closed",
			TransitionError{Op: "Fail", State: StateClosed, Phase: PhaseIdle, Epoch: -1, Current: -1, Err: ErrWrongState}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tt.msg {
				t.Errorf("message %q, want %q", err.Error(), tt.msg)
			}
			var te *TransitionError
			if !errors.As(err, &te) {
				t.Fatalf("%T is not a *TransitionError", err)
			}
			if !errors.Is(err, tt.want.Err) {
				t.Errorf("errors.Is(%v) false", tt.want.Err)
			}
			got := *te
			got.hasEpoch, got.detail = false, ""
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b error) bool { return a == b }),
				cmp.AllowUnexported(TransitionError{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if wrapped := fmt.Errorf("sink orders: %w", err); !errors.Is(wrapped, tt.want.Err) || !errors.As(wrapped, &te) {
				t.Error("sentinel lost through wrapping")
			}
		})
	}
	// A TransitionError built by hand still prints something useful.
	if got := (&TransitionError{Op: "Write", Err: ErrWrongState}).Error(); got != "Write: "+ErrWrongState.Error() {
		t.Errorf("hand-built error: %q", got)
	}
}

func TestMachineHealth(t *testing.T) {
	tests := []struct {
		name string
		m    func() *Machine
		want Health
	}{
		{"created", NewMachine, Health{Degraded, "not open yet"}},
		{"initializing", func() *Machine { m := NewMachine(); smMust(t, m.StartOpen()); return m }, Health{Degraded, "opening"}},
		{"running", func() *Machine { return smRunning(t, 0, false) }, Health{Status: Healthy}},
		{"running with open epoch", func() *Machine { m := smRunning(t, 0, false); smBegin(t, m, 1); return m }, Health{Status: Healthy}},
		{"failed to open", func() *Machine {
			m := NewMachine()
			smMust(t, m.StartOpen())
			smMust(t, m.OpenFailed("table not found"))
			return m
		}, Health{Unhealthy, "table not found"}},
		{"failed", func() *Machine { m := smRunning(t, 0, false); smMust(t, m.Fail("disk full")); return m }, Health{Unhealthy, "disk full"}},
		{"closed", func() *Machine { m := smRunning(t, 0, false); m.Close(); return m }, Health{Unhealthy, "closed"}},
		{"closed after failure", func() *Machine { m := smRunning(t, 0, false); smMust(t, m.Fail("x")); m.Close(); return m }, Health{Unhealthy, "closed"}},
		// Background maintenance degrades a running sink, and only until a
		// later run succeeds; a failed or closed sink says why it is so.
		{"maintenance failed", func() *Machine {
			m := smRunning(t, 0, false)
			m.MaintenanceFailed("auto-compaction failed: disk full")
			return m
		}, Health{Degraded, "auto-compaction failed: disk full"}},
		{"maintenance failed mid-epoch", func() *Machine {
			m := smRunning(t, 0, false)
			smBegin(t, m, 1)
			m.MaintenanceFailed("auto-compaction failed: x")
			return m
		}, Health{Degraded, "auto-compaction failed: x"}},
		{"maintenance failed then succeeded", func() *Machine {
			m := smRunning(t, 0, false)
			m.MaintenanceFailed("auto-compaction failed: x")
			m.MaintenanceSucceeded()
			return m
		}, Health{Status: Healthy}},
		{"maintenance failed twice, the last reason", func() *Machine {
			m := smRunning(t, 0, false)
			m.MaintenanceFailed("first")
			m.MaintenanceFailed("second")
			return m
		}, Health{Degraded, "second"}},
		{"maintenance failed without a reason", func() *Machine {
			m := smRunning(t, 0, false)
			m.MaintenanceFailed("")
			return m
		}, Health{Degraded, "background maintenance failed"}},
		{"failed after maintenance failure", func() *Machine {
			m := smRunning(t, 0, false)
			m.MaintenanceFailed("auto-compaction failed: x")
			smMust(t, m.Fail("disk full"))
			return m
		}, Health{Unhealthy, "disk full"}},
		{"closed after maintenance failure", func() *Machine {
			m := smRunning(t, 0, false)
			m.MaintenanceFailed("auto-compaction failed: x")
			m.Close()
			return m
		}, Health{Unhealthy, "closed"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.m().Health()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestStatePhaseStrings(t *testing.T) {
	got := []string{}
	for s := StateCreated; s <= StateClosed+1; s++ {
		got = append(got, s.String())
	}
	for p := PhaseIdle; p <= PhaseCommitting+1; p++ {
		got = append(got, p.String())
	}
	want := []string{"created", "initializing", "running", "failed", "closed", "State(5)",
		"idle", "open", "precommitted", "committing", "Phase(4)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// The reference model: the same rules written independently, as a plain
// list of "if this, refuse" checks over strings, so a mistake in one is
// unlikely to be repeated in the other.

type smModel struct {
	status  string // created, initializing, running, failed, closed
	stage   string // "", open, pre, committing
	epoch   int64
	skip    bool
	auto    bool // the open epoch came from BeginNext
	hasLast bool
	last    int64
	begun   []int64 // new epochs begun this session and not rolled back, in order
	reason  string
}

func smNewModel() *smModel { return &smModel{status: "created"} }

type smRandOp struct {
	kind  int // index into smOpKinds
	e     int64
	flag  bool // Opened: ok; Committed: skipped; CommitFailed: fatal
	label string
}

var smOpKinds = []string{"StartOpen", "Opened", "OpenFailed", "Begin", "Write", "PreCommit",
	"BeginCommit", "Committed", "CommitFailed", "Rollback", "Fail", "Close", "BeginNext", "CommittedAs"}

// smLanded is the epoch CommittedAs reports for op o: a later one (flag),
// or an earlier one, which must be refused.
func smLanded(o smRandOp) int64 {
	if o.flag {
		return o.e + 2
	}
	return o.e - 1
}

func (o smRandOp) String() string { return fmt.Sprintf("%s(%d,%v)", smOpKinds[o.kind], o.e, o.flag) }

// apply returns the decision ("ok", "state", "order", "skipmismatch") and
// the call's return value.
func (m *smModel) apply(o smRandOp) (string, string) {
	switch smOpKinds[o.kind] {
	case "StartOpen":
		if m.status != "created" {
			return "state", ""
		}
		m.status = "initializing"
	case "Opened":
		if m.status != "initializing" {
			return "state", ""
		}
		if o.flag && o.e < 0 {
			return "order", ""
		}
		m.status, m.hasLast, m.last = "running", o.flag, 0
		if o.flag {
			m.last = o.e
		}
	case "OpenFailed":
		if m.status != "initializing" {
			return "state", ""
		}
		m.status, m.reason = "failed", "open failed"
	case "Begin":
		if m.status != "running" || m.stage != "" {
			return "state", "false"
		}
		if o.e < 0 {
			return "order", "false"
		}
		if m.hasLast && o.e <= m.last {
			m.stage, m.epoch, m.skip = "open", o.e, true
			return "ok", "true"
		}
		if n := len(m.begun); n > 0 {
			prev := m.begun[n-1]
			if o.e <= prev {
				return "order", "false"
			}
		}
		m.begun = append(m.begun, o.e)
		m.stage, m.epoch, m.auto = "open", o.e, false
		m.skip = m.hasLast && o.e <= m.last
		return "ok", fmt.Sprint(m.skip)
	case "BeginNext":
		if m.status != "running" || m.stage != "" {
			return "state", "-1"
		}
		next := int64(1)
		if m.hasLast {
			next = m.last + 1
		}
		if n := len(m.begun); n > 0 && m.begun[n-1] >= next {
			next = m.begun[n-1] + 1
		}
		m.begun = append(m.begun, next)
		m.stage, m.epoch, m.skip, m.auto = "open", next, false, true
		return "ok", fmt.Sprint(next)
	case "CommittedAs":
		if d := m.needEpoch(o.e, "running", "committing"); d != "ok" {
			return d, ""
		}
		landed := smLanded(o)
		if !m.auto || landed < o.e {
			return "order", ""
		}
		if !m.hasLast || m.last < landed {
			m.hasLast, m.last = true, landed
		}
		if n := len(m.begun); n == 0 || m.begun[n-1] < landed {
			m.begun = append(m.begun, landed)
		}
		m.stage, m.skip, m.auto = "", false, false
	case "Write":
		if d := m.needEpoch(o.e, "running", "open"); d != "ok" {
			return d, "false"
		}
		return "ok", fmt.Sprint(m.skip)
	case "PreCommit":
		if d := m.needEpoch(o.e, "running", "open"); d != "ok" {
			return d, ""
		}
		m.stage = "pre"
	case "BeginCommit":
		if d := m.needEpoch(o.e, "running", "pre"); d != "ok" {
			return d, ""
		}
		m.stage = "committing"
	case "Committed":
		if d := m.needEpoch(o.e, "running", "committing"); d != "ok" {
			return d, ""
		}
		if (m.skip && !o.flag) || (m.auto && o.flag) {
			return "skipmismatch", ""
		}
		if !m.hasLast || m.last < o.e {
			m.hasLast, m.last = true, o.e
		}
		m.stage, m.skip, m.auto = "", false, false
	case "CommitFailed":
		if d := m.needEpoch(o.e, "running", "committing"); d != "ok" {
			return d, ""
		}
		m.stage = "pre"
		if o.flag {
			m.status, m.reason = "failed", fmt.Sprintf("commit of epoch %d failed: model", o.e)
		}
	case "Rollback":
		if m.status != "running" && m.status != "failed" {
			return "state", ""
		}
		if m.stage == "" {
			return "state", ""
		}
		if o.e != m.epoch {
			return "order", ""
		}
		if m.stage == "committing" {
			return "state", ""
		}
		if !m.skip {
			m.begun = m.begun[:len(m.begun)-1] // a rolled-back epoch leaves no trace
		}
		m.stage, m.skip, m.auto = "", false, false
	case "Fail":
		if m.status == "closed" {
			return "state", ""
		}
		if m.status != "failed" {
			m.status, m.reason = "failed", "model failure"
		}
	case "Close":
		ret := "none"
		if m.stage != "" {
			ret = fmt.Sprint(m.epoch)
		}
		m.status, m.stage, m.skip, m.auto = "closed", "", false, false
		return "ok", ret
	}
	return "ok", ""
}

// needEpoch is the shared precondition of calls on the begun epoch.
func (m *smModel) needEpoch(e int64, status, stage string) string {
	if m.status != status {
		return "state"
	}
	if m.stage == "" {
		return "state"
	}
	if e != m.epoch {
		return "order"
	}
	if m.stage != stage {
		return "state"
	}
	return "ok"
}

func (m *smModel) snap() smSnap {
	s := smSnap{Last: m.last, HasLast: m.hasLast, Reason: m.reason}
	s.State = map[string]State{"created": StateCreated, "initializing": StateInitializing,
		"running": StateRunning, "failed": StateFailed, "closed": StateClosed}[m.status]
	s.Phase = map[string]Phase{"": PhaseIdle, "open": PhaseOpen, "pre": PhasePrecommitted,
		"committing": PhaseCommitting}[m.stage]
	if m.stage != "" {
		s.Open, s.HasOpen, s.Skip, s.Auto = m.epoch, true, m.skip, m.auto
	}
	return s
}

// smApply runs one op on the machine, returning its decision and return
// value in the model's terms.
func smApply(m *Machine, o smRandOp) (string, string) {
	switch smOpKinds[o.kind] {
	case "StartOpen":
		return smKind(m.StartOpen()), ""
	case "Opened":
		return smKind(m.Opened(o.e, o.flag)), ""
	case "OpenFailed":
		return smKind(m.OpenFailed("open failed")), ""
	case "Begin":
		skip, err := m.Begin(o.e)
		return smKind(err), fmt.Sprint(skip)
	case "Write":
		drop, err := m.Write(o.e)
		return smKind(err), fmt.Sprint(drop)
	case "PreCommit":
		return smKind(m.PreCommit(o.e)), ""
	case "BeginCommit":
		return smKind(m.BeginCommit(o.e)), ""
	case "Committed":
		return smKind(m.Committed(o.e, o.flag)), ""
	case "CommitFailed":
		return smKind(m.CommitFailed(o.e, errors.New("model"), o.flag)), ""
	case "Rollback":
		return smKind(m.Rollback(o.e)), ""
	case "Fail":
		return smKind(m.Fail("model failure")), ""
	case "Close":
		e, ok := m.Close()
		if !ok {
			return "ok", "none"
		}
		return "ok", fmt.Sprint(e)
	case "BeginNext":
		e, err := m.BeginNext()
		return smKind(err), fmt.Sprint(e)
	case "CommittedAs":
		return smKind(m.CommittedAs(o.e, smLanded(o))), ""
	}
	panic("unknown op kind")
}

// smCheckStep runs one op on both and reports the first disagreement or
// broken invariant.
func smCheckStep(m *Machine, model *smModel, o smRandOp) (string, error) {
	before := smSnapOf(m)
	gotD, gotR := smApply(m, o)
	wantD, wantR := model.apply(o)
	after := smSnapOf(m)
	if gotD != wantD {
		return gotD, fmt.Errorf("%v: machine %s, model %s", o, gotD, wantD)
	}
	if gotD == "ok" && gotR != wantR && wantR != "" {
		return gotD, fmt.Errorf("%v: machine returned %s, model %s", o, gotR, wantR)
	}
	if want := model.snap(); want != after { // cmp only to explain a mismatch: it is slow
		return gotD, fmt.Errorf("%v: state (-model +machine):\n%s", o, cmp.Diff(want, after))
	}
	return gotD, smInvariants(before, after, gotD)
}

func smInvariants(before, after smSnap, decision string) error {
	if after.Phase != PhaseIdle && after.State != StateRunning && after.State != StateFailed {
		return fmt.Errorf("phase %v in state %v", after.Phase, after.State)
	}
	if after.HasOpen != (after.Phase != PhaseIdle) {
		return fmt.Errorf("OpenEpoch ok=%v with phase %v", after.HasOpen, after.Phase)
	}
	if before.HasLast && (!after.HasLast || after.Last < before.Last) {
		return fmt.Errorf("last committed moved back: %d,%v -> %d,%v", before.Last, before.HasLast, after.Last, after.HasLast)
	}
	if before.State == StateClosed && after.State != StateClosed {
		return fmt.Errorf("left closed for %v", after.State)
	}
	if decision != "ok" && before != after {
		return fmt.Errorf("rejected call changed state: %+v -> %+v", before, after)
	}
	if decision != "ok" && decision != "state" && decision != "order" && decision != "skipmismatch" {
		return fmt.Errorf("untyped error: %s", decision)
	}
	return nil
}

// smRandomOp picks an op with arguments that often hit the interesting
// cases: the open epoch, its neighbours, the last committed epoch.
func smRandomOp(r *rand.Rand, m *Machine) smRandOp {
	var o smRandOp
	switch n := r.IntN(100); {
	case n < 2:
		o.kind = 11 // Close: rare, it ends the sequence
	case n < 4:
		o.kind = 10 // Fail
	case n < 65:
		o.kind = smProgressOp(r, m)
	default:
		o.kind = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13}[r.IntN(12)]
	}
	o.flag = r.IntN(2) == 0
	if o.kind == 8 { // CommitFailed: mostly retryable, to keep sequences going
		o.flag = r.IntN(6) == 0
	}
	open, hasOpen := m.OpenEpoch()
	last, _ := m.LastCommitted()
	switch n := r.IntN(10); {
	case hasOpen && n < 6:
		o.e = open
	case n < 8:
		o.e = last + int64(r.IntN(3)) - 1
	default:
		o.e = int64(r.IntN(10)) - 1
	}
	return o
}

// smProgressOp picks an op the machine's state invites, so random sequences
// get deep into epochs instead of stalling on rejected calls.
func smProgressOp(r *rand.Rand, m *Machine) int {
	pick := func(kinds ...int) int { return kinds[r.IntN(len(kinds))] }
	switch m.State() {
	case StateCreated:
		return 0
	case StateInitializing:
		return pick(1, 1, 1, 1, 1, 1, 1, 2)
	case StateFailed:
		return pick(9, 9, 11)
	case StateClosed:
		return r.IntN(len(smOpKinds))
	}
	switch m.Phase() {
	case PhaseIdle:
		return pick(3, 3, 12)
	case PhaseOpen:
		return pick(4, 4, 5, 5, 9)
	case PhasePrecommitted:
		return pick(6, 6, 6, 9)
	}
	return pick(7, 7, 7, 8, 13)
}

func TestMachineRandomAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	// Count decisions per op kind, so a generator that never reaches some
	// transition is noticed.
	decisions := map[string]int{}
	for seq := range 10000 {
		m, model := NewMachine(), smNewModel()
		var ops []smRandOp
		for range 1 + r.IntN(40) {
			o := smRandomOp(r, m)
			ops = append(ops, o)
			d, err := smCheckStep(m, model, o)
			if err != nil {
				t.Fatalf("sequence %d %v: %v", seq, ops, err)
			}
			decisions[smOpKinds[o.kind]+"/"+d]++
		}
		if diff := cmp.Diff(model.snap(), smSnapOf(m)); diff != "" {
			t.Fatalf("sequence %d final state (-model +machine):\n%s", seq, diff)
		}
	}
	for _, k := range smOpKinds {
		if decisions[k+"/ok"] == 0 || (k != "Close" && decisions[k+"/state"] == 0) {
			t.Errorf("op %s: never accepted or never rejected: %v", k, decisions)
		}
	}
	for _, d := range []string{"Begin/order", "Write/order", "Rollback/order", "Committed/skipmismatch", "CommittedAs/order"} {
		if decisions[d] == 0 {
			t.Errorf("decision %s never reached", d)
		}
	}
	t.Logf("decisions: %v", decisions)
}

func FuzzMachine(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 1, 5, 3, 7, 4, 7, 5, 7, 6, 7, 7, 7})          // full epoch
	f.Add([]byte{0, 0, 0x81, 5, 3, 2, 5, 2, 6, 2, 0x87, 2, 3, 3})    // skip epoch
	f.Add([]byte{0, 0, 1, 0, 3, 4, 9, 4, 3, 4, 9, 4, 3, 3, 11, 0})   // rollback, re-begin
	f.Add([]byte{0, 0, 1, 0, 3, 4, 5, 4, 6, 4, 0x88, 4, 9, 4, 3, 5}) // fatal commit failure
	f.Fuzz(func(t *testing.T, data []byte) {
		m, model := NewMachine(), smNewModel()
		for i := 0; i+1 < len(data); i += 2 {
			o := smRandOp{kind: int(data[i]&0x7f) % len(smOpKinds), flag: data[i]&0x80 != 0}
			o.e = int64(data[i+1]&0x0f) - 1
			if e, ok := m.OpenEpoch(); ok && data[i+1]&0x10 != 0 {
				o.e = e
			}
			if _, err := smCheckStep(m, model, o); err != nil {
				t.Fatalf("op %d: %v", i/2, err)
			}
			_ = m.Health()
		}
	})
}

// checkOpen and wrongState are what the engine uses to refuse calls before
// doing I/O; they must agree with the transitions and change nothing.
func TestMachineEngineHelpers(t *testing.T) {
	m := smRunning(t, 0, false)
	if err := m.wrongState("Write"); err.Error() != "Write: no epoch is open" || !errors.Is(err, ErrWrongState) {
		t.Errorf("wrongState idle: %v", err)
	}
	if err := m.checkOpen("PreCommit", 3); !errors.Is(err, ErrWrongState) {
		t.Errorf("checkOpen idle: %v", err)
	}
	smBegin(t, m, 3)
	before := smSnapOf(m)
	if err := m.checkOpen("PreCommit", 3); err != nil {
		t.Errorf("checkOpen(3) with 3 open: %v", err)
	}
	if err := m.checkOpen("PreCommit", 4); !errors.Is(err, ErrEpochOrder) || err.Error() != "PreCommit(4): epoch 3 is open" {
		t.Errorf("checkOpen(4): %v", err)
	}
	if err := m.wrongState("Write"); err.Error() != "Write: epoch 3 is open" {
		t.Errorf("wrongState open: %v", err)
	}
	if diff := cmp.Diff(before, smSnapOf(m)); diff != "" {
		t.Errorf("helpers changed state:\n%s", diff)
	}
	smMust(t, m.PreCommit(3))
	if err := m.checkOpen("PreCommit", 3); !errors.Is(err, ErrWrongState) {
		t.Errorf("checkOpen precommitted: %v", err)
	}
	m.Close()
	if err := m.wrongState("Write"); err.Error() != "Write: sink is closed" {
		t.Errorf("wrongState closed: %v", err)
	}
}

// TestMachineAutomaticEpoch: BeginNext numbers the epoch after the last
// one committed, whatever a rolled-back named epoch was; an automatic
// epoch is never a replay, and may land under a later number.
func TestMachineAutomaticEpoch(t *testing.T) {
	next := func(t *testing.T, m *Machine, want int64) {
		t.Helper()
		e, err := m.BeginNext()
		if err != nil || e != want {
			t.Fatalf("BeginNext = %d, %v; want %d", e, err, want)
		}
		if !m.Automatic() || m.Skipping() {
			t.Fatalf("Automatic %v Skipping %v after BeginNext", m.Automatic(), m.Skipping())
		}
	}
	commit := func(t *testing.T, m *Machine, e int64) {
		t.Helper()
		smMust(t, m.PreCommit(e))
		smMust(t, m.BeginCommit(e))
		smMust(t, m.Committed(e, false))
	}
	t.Run("first is 1", func(t *testing.T) {
		next(t, smRunning(t, 0, false), 1)
	})
	t.Run("after recovered and committed", func(t *testing.T) {
		m := smRunning(t, 5, true)
		next(t, m, 6)
		commit(t, m, 6)
		next(t, m, 7)
	})
	t.Run("after a rolled-back named epoch", func(t *testing.T) {
		m := smRunning(t, 5, true)
		smRollbackEpoch(600, true)(t, m)
		next(t, m, 6)
		smMust(t, m.Rollback(6))
		next(t, m, 6)
	})
	t.Run("a named epoch is not automatic", func(t *testing.T) {
		m := smRunning(t, 5, true)
		smBegin(t, m, 9)
		if m.Automatic() {
			t.Fatal("Automatic after Begin")
		}
	})
	t.Run("never a replay", func(t *testing.T) {
		m := smRunning(t, 5, true)
		next(t, m, 6)
		smMust(t, m.PreCommit(6))
		smMust(t, m.BeginCommit(6))
		before := smSnapOf(m)
		if err := m.Committed(6, true); !errors.Is(err, ErrSkipMismatch) {
			t.Fatalf("Committed(6, skipped) = %v, want ErrSkipMismatch", err)
		}
		if diff := cmp.Diff(before, smSnapOf(m)); diff != "" {
			t.Fatalf("refused Committed changed state:\n%s", diff)
		}
	})
	t.Run("lands renumbered", func(t *testing.T) {
		m := smRunning(t, 5, true)
		next(t, m, 6)
		smMust(t, m.PreCommit(6))
		smMust(t, m.BeginCommit(6))
		for _, bad := range []int64{5, 0} {
			if err := m.CommittedAs(6, bad); !errors.Is(err, ErrEpochOrder) {
				t.Fatalf("CommittedAs(6, %d) = %v, want ErrEpochOrder", bad, err)
			}
		}
		smMust(t, m.CommittedAs(6, 12))
		if last, ok := m.LastCommitted(); !ok || last != 12 || m.Phase() != PhaseIdle {
			t.Fatalf("LastCommitted = %d,%v phase %s; want 12 idle", last, ok, m.Phase())
		}
		next(t, m, 13)
	})
	t.Run("a named epoch cannot move", func(t *testing.T) {
		m := smRunning(t, 5, true)
		smBegin(t, m, 6)
		smMust(t, m.PreCommit(6))
		smMust(t, m.BeginCommit(6))
		if err := m.CommittedAs(6, 7); !errors.Is(err, ErrEpochOrder) {
			t.Fatalf("CommittedAs of a named epoch = %v, want ErrEpochOrder", err)
		}
	})
	t.Run("one at a time and only running", func(t *testing.T) {
		m := smRunning(t, 5, true)
		next(t, m, 6)
		if _, err := m.BeginNext(); !errors.Is(err, ErrWrongState) {
			t.Fatalf("BeginNext while open = %v", err)
		}
		m.Close()
		if _, err := m.BeginNext(); !errors.Is(err, ErrWrongState) {
			t.Fatalf("BeginNext when closed = %v", err)
		}
	})
}

func TestMachineGroupEpoch(t *testing.T) {
	t.Run("spans n after the last", func(t *testing.T) {
		m := smRunning(t, 5, true)
		e, err := m.BeginNextN(4)
		if err != nil || e != 9 || !m.Automatic() {
			t.Fatalf("BeginNextN(4) after 5 = %d, %v (automatic %v); want 9", e, err, m.Automatic())
		}
		smMust(t, m.PreCommit(9))
		smMust(t, m.BeginCommit(9))
		smMust(t, m.Committed(9, false))
		if e, err := m.BeginNext(); err != nil || e != 10 {
			t.Fatalf("BeginNext after the group = %d, %v; want 10", e, err)
		}
	})
	t.Run("first group ends at n", func(t *testing.T) {
		if e, err := smRunning(t, 0, false).BeginNextN(3); err != nil || e != 3 {
			t.Fatalf("BeginNextN(3) on a new table = %d, %v; want 3", e, err)
		}
	})
	t.Run("a rolled-back group leaves no trace", func(t *testing.T) {
		m := smRunning(t, 5, true)
		if _, err := m.BeginNextN(8); err != nil {
			t.Fatal(err)
		}
		smMust(t, m.Rollback(13))
		if e, err := m.BeginNextN(2); err != nil || e != 7 {
			t.Fatalf("BeginNextN(2) after a rollback = %d, %v; want 7", e, err)
		}
	})
	for _, tc := range []struct {
		name string
		last int64
		n    int64
		msg  string
	}{
		{"empty group", 5, 0, "a group of 0 epochs"},
		{"too few left", math.MaxInt64 - 2, 3, "fewer than 3 epochs are left after 9223372036854775805"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := smRunning(t, tc.last, true)
			before := smSnapOf(m)
			_, err := m.BeginNextN(tc.n)
			if !errors.Is(err, ErrEpochOrder) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("BeginNextN(%d) after %d = %v; want ErrEpochOrder saying %q", tc.n, tc.last, err, tc.msg)
			}
			if diff := cmp.Diff(before, smSnapOf(m)); diff != "" {
				t.Fatalf("refused BeginNextN changed state:\n%s", diff)
			}
		})
	}
}
