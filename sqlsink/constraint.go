package sqlsink

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lakesql/lakesql/catalogadapter"
)

// maxConstraintRedos bounds how often ADD CONSTRAINT checks the table's
// rows again because other writers kept adding rows after its check.
const maxConstraintRedos = 5

// AddConstraint adds the CHECK constraint name (a Spark SQL boolean
// expression over the table's columns, in the subset the backend
// translates) once every existing row satisfies it; every batch after it
// is checked. It runs between epochs. A row that breaks it refuses it
// with ErrCheckViolated naming the row; a name taken, with
// ErrConstraintExists. A backend without constraints (Iceberg) refuses it
// with ErrUnsupported.
func (s *Sink) AddConstraint(ctx context.Context, name, expr string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ce, err := s.constraintEditor("ADD CONSTRAINT")
	if err != nil {
		return err
	}
	sc, ok := s.cfg.Provider.(catalogadapter.Scanner)
	if !ok {
		return fmt.Errorf("alter sink %s: %w: ADD CONSTRAINT reads the table's rows, and %T cannot scan them", s.cfg.Name, ErrUnsupported, s.cfg.Provider)
	}
	fail := func(err error) error {
		return fmt.Errorf("alter sink %s: add constraint %s: %w", s.cfg.Name, name, err)
	}
	for redo := 0; ; redo++ {
		rule, err := ce.CheckPredicate(ctx, s.cfg.Table, expr)
		if err != nil {
			return fail(err)
		}
		rule.Name, rule.Expr = name, strings.TrimSpace(expr)
		version, err := s.checkExisting(ctx, sc, rule)
		if err != nil {
			return fail(err)
		}
		_, err = ce.AddConstraint(ctx, s.cfg.Table, name, expr, version)
		if errors.Is(err, catalogadapter.ErrConflict) && redo < maxConstraintRedos {
			continue // rows came in after the check: check them too
		}
		if err != nil {
			return fail(err)
		}
		return s.reloadRules(ctx)
	}
}

// DropConstraint drops the CHECK constraint name; a missing one is
// ErrNoConstraint unless ifExists. It runs between epochs.
func (s *Sink) DropConstraint(ctx context.Context, name string, ifExists bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ce, err := s.constraintEditor("DROP CONSTRAINT")
	if err != nil {
		return err
	}
	_, err = ce.DropConstraint(ctx, s.cfg.Table, name)
	if errors.Is(err, ErrNoConstraint) && ifExists {
		return nil
	}
	if err != nil {
		return fmt.Errorf("alter sink %s: drop constraint %s: %w", s.cfg.Name, name, err)
	}
	return s.reloadRules(ctx)
}

// constraintEditor is the backend's, for op, when no epoch is open.
func (s *Sink) constraintEditor(op string) (catalogadapter.ConstraintEditor, error) {
	if e, open := s.m.OpenEpoch(); open {
		return nil, fmt.Errorf("alter sink %s: %w: %s runs between epochs; epoch %d is open", s.cfg.Name, ErrWrongState, op, e)
	}
	if s.buf == nil && s.m.State() != StateRunning {
		return nil, s.m.wrongState(op)
	}
	ce, ok := s.cfg.Provider.(catalogadapter.ConstraintEditor)
	if !ok {
		return nil, fmt.Errorf("alter sink %s: %w: %s: the sink's table format keeps no CHECK constraints (Iceberg tables have none)",
			s.cfg.Name, ErrUnsupported, op)
	}
	return ce, nil
}

// checkExisting checks every row of the table's latest version against
// rule with DuckDB, and returns the version checked.
func (s *Sink) checkExisting(ctx context.Context, sc catalogadapter.Scanner, rule catalogadapter.CheckRule) (int64, error) {
	if err := s.reopenBuffer(ctx); err != nil {
		return -1, err
	}
	version, _, err := sc.Files(ctx, s.cfg.Table)
	if err != nil {
		return -1, fmt.Errorf("list the table's files: %w", err)
	}
	if err := s.buf.bindBoolean(ctx, "buf", rule.Predicate); err != nil {
		return -1, fmt.Errorf("%w: %s: %w", ErrInvalid, rule.Expr, err)
	}
	if version < 0 {
		return version, nil
	}
	scan, err := sc.ScanSQL(ctx, s.cfg.Table, s.buf.conn, version, nil)
	if err != nil {
		return -1, fmt.Errorf("scan the table: %w", err)
	}
	v := violation{cond: "NOT coalesce((" + rule.Predicate + "), false)", columns: rule.Columns,
		err: func(row string) error {
			return fmt.Errorf("%w: Check constraint '%s' is violated by an existing row (%s is not true for %s)", ErrCheckViolated, rule.Name, rule.Expr, row)
		}}
	return version, s.buf.firstViolation(ctx, "("+scan+") AS __lakesql_existing", "", []violation{v})
}

// reloadRules reads the rules after the sink changed them.
func (s *Sink) reloadRules(ctx context.Context) error {
	if err := s.reopenBuffer(ctx); err != nil {
		return err
	}
	if err := s.loadRules(ctx); err != nil {
		// The change landed; the next epoch reads the rules again.
		s.rulesStale = true
		return fmt.Errorf("alter sink %s: the change landed, but reading the table's rules again failed: %w", s.cfg.Name, err)
	}
	return nil
}
