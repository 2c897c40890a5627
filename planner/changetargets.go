package planner

// The sinks an UPDATE or DELETE changes: recorded before any row is read,
// locked before their rows are read, one per statement.

import (
	"fmt"
	"slices"
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
)

// statementTargets are the sinks one statement changes, by the statement's
// process id: go-mysql-server's server numbers every statement, and
// Engine.Exec numbers its own (gmsContext), so a new id is a new statement.
type statementTargets struct {
	pid   uint64
	sinks []*sinkHandle
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
