package sqlsink

import (
	"context"
	"fmt"

	"github.com/lakesql/lakesql/catalogadapter"
)

// SetTableProperties sets and unsets the table's properties in one table
// version (ALTER SINK ... SET (column_mapping = 'name', ...)), upgrading
// the table's protocol where a property needs it. It runs between epochs:
// files staged for an open epoch were written for the table as it is, so
// while an epoch holds any the change is refused. The logical schema does
// not change, so buffered rows stay valid.
func (s *Sink) SetTableProperties(ctx context.Context, set map[string]string, unset []string) error {
	ps, ok := s.cfg.Provider.(catalogadapter.PropertySetter)
	if !ok {
		return fmt.Errorf("alter sink %s: %w: the table's backend cannot set table properties", s.cfg.Name, ErrUnsupported)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, open := s.m.OpenEpoch(); open && len(s.staged) > 0 {
		return fmt.Errorf("alter sink %s: %w: epoch %d has staged files; commit or roll it back first", s.cfg.Name, ErrInvalid, e)
	}
	if _, err := ps.SetProperties(ctx, s.cfg.Table, set, unset); err != nil {
		return fmt.Errorf("alter sink %s: %w", s.cfg.Name, err)
	}
	return nil
}
