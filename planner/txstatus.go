package planner

import "context"

// TransactionStatus is what the MySQL protocol's status flags say of the
// session between statements. autocommit is @@autocommit. inTransaction
// holds inside BEGIN ... COMMIT, and, with autocommit off, from the first
// statement that writes (or locks, as UPDATE does) a sink until COMMIT or
// ROLLBACK: lakesql reads at read committed, so a read alone opens nothing
// that COMMIT or ROLLBACK would end.
func (s *Session) TransactionStatus(ctx context.Context) (autocommit, inTransaction bool) {
	auto, err := isAutocommit(s.engine.gmsContext(ctx, s, ""))
	if err != nil {
		auto = true
	}
	if s.GetIgnoreAutoCommit() {
		return auto, true
	}
	s.mu.Lock()
	held := s.tx != nil && s.tx.busy()
	s.mu.Unlock()
	return auto, !auto && held
}
