package planner

// ALTER SINK. It runs between epochs: it waits for the transaction that
// writes to the sink (sinkHandle.acquire), as DROP SINK does, and refuses
// to run inside a transaction that holds the sink itself, since the
// epoch open there would be written under a schema it was not checked
// against. Like MySQL's ALTER TABLE it first commits the session's open
// transaction (an implicit commit).
//
// Column changes and table options are the sink's (sqlsink.AlterSchema,
// SetTableProperties, AddConstraint, DropConstraint); the planner checks
// the names first, so that an unknown or duplicate column gets MySQL's
// code whatever the backend, and then keeps the definition in step: the
// registry records the changed definition (sinks.json), the sink is
// opened again from it, and DESCRIBE, information_schema and result
// metadata follow. A crash between the table's change and the registry's
// leaves the new definition pending in the registry; opening the sink
// adopts it when the table has the new schema (sinkHandle.open).

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/dolthub/vitess/go/mysql"

	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/sinkddl"
	"github.com/lakesql/lakesql/sinkdef"
	"github.com/lakesql/lakesql/sqlsink"
)

// erAlterOperationNotSupportedReason is MySQL's
// ER_ALTER_OPERATION_NOT_SUPPORTED_REASON, which vitess does not name.
const erAlterOperationNotSupportedReason = 1846

func (e *Engine) alterSink(ctx context.Context, s *Session, st *sinkddl.AlterSink) (*Result, error) {
	h, ok := e.lookup(st.Name)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoSink, st.Name)
	}
	if s != nil && s.holds(h) {
		return nil, mysql.NewSQLError(mysql.ERLockOrActiveTransaction, mysql.SSUnknownSQLState,
			"Can't execute ALTER SINK %s while this session's transaction writes to the sink: COMMIT or ROLLBACK first", sqlquote.MySQLIdent(h.rec.Name))
	}
	if err := s.commitBeforeDDL(ctx); err != nil {
		return nil, err
	}
	if err := h.acquireAlone(ctx); err != nil {
		return nil, err
	}
	defer h.releaseAlone()
	sink, err := h.open(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case st.Set != nil:
		return e.alterOptions(ctx, h, sink, st.Set)
	case st.AddCheck != nil:
		return &Result{}, sink.AddConstraint(ctx, st.AddCheck.Name, st.AddCheck.Expr)
	case st.DropConstraint != nil:
		return &Result{}, sink.DropConstraint(ctx, st.DropConstraint.Name, st.DropConstraint.IfExists)
	}
	if err := checkColumnChanges(ctx, h, sink, st.Columns); err != nil {
		return nil, err
	}
	changes, err := sinkdef.SchemaChanges(h.def, st.Columns)
	if err != nil {
		return nil, err
	}
	next := sinkdef.WithColumns(h.def, st.Columns, nil)
	if err := e.markPending(h, next); err != nil {
		return nil, err
	}
	if err := sink.AlterSchema(ctx, changes); err != nil {
		e.clearPending(h)
		return nil, err
	}
	return &Result{}, e.redefine(ctx, h, sinkdef.WithColumns(h.def, st.Columns, sink.Schema()), true)
}

// alterOptions runs ALTER SINK ... SET: the table's properties first, then
// the definition, which the sink takes when it is opened again. An option
// the definition cannot read after the change is refused before the table
// is touched.
func (e *Engine) alterOptions(ctx context.Context, h *sinkHandle, sink *sqlsink.Sink, set []sinkddl.Option) (*Result, error) {
	split, err := sinkdef.SplitAlterOptions(h.def.Format, set)
	if err != nil {
		return nil, err
	}
	next, err := sinkdef.WithOptions(h.def, split.Sink)
	if err != nil {
		return nil, err
	}
	if len(split.Table) > 0 {
		if err := sink.SetTableProperties(ctx, split.Table, nil); err != nil {
			return nil, err
		}
		// A table option the definition reads (CREATE SINK ... WITH takes
		// it) is kept, so that SHOW CREATE SINK shows it; one it does not
		// read lives in the table only.
		for _, o := range set {
			if slices.Contains(split.Sink, o) {
				continue
			}
			if kept, err := sinkdef.WithOptions(next, []sinkddl.Option{o}); err == nil {
				next = kept
			}
		}
	}
	return &Result{}, e.redefine(ctx, h, next, len(split.Table) > 0)
}

// checkColumnChanges checks the names of the changes against the sink's
// columns, in order, with MySQL's codes: an unknown column 1054, a
// duplicate one 1060, dropping every column 1090; dropping a key or
// partition column, or touching the changelog column, 1846.
func checkColumnChanges(ctx context.Context, h *sinkHandle, sink *sqlsink.Sink, changes []sinkddl.ColumnChange) error {
	var cols []string
	for _, f := range sink.Schema().Fields() {
		cols = append(cols, f.Name)
	}
	parts, err := sink.PartitionColumns(ctx)
	if err != nil {
		return err
	}
	key := sink.Config().Key
	name := sqlquote.MySQLIdent(h.rec.Name)
	find := func(c string) int {
		return slices.IndexFunc(cols, func(x string) bool { return strings.EqualFold(x, c) })
	}
	has := func(list []string, c string) bool {
		return slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, c) })
	}
	refuse := func(format string, args ...any) error {
		return mysql.NewSQLError(erAlterOperationNotSupportedReason, "0A000", format, args...)
	}
	for _, c := range changes {
		for _, n := range []string{c.Column, c.NewName} {
			if strings.EqualFold(n, sqlsink.OpColumn) {
				return refuse("%s of %s is not supported. Reason: %s is the changelog column of every sink (what each row does); it cannot be a column of the table", c.Kind, n, sqlsink.OpColumn)
			}
		}
		i := find(c.Column)
		if c.Kind == sinkddl.ColumnAdd {
			if i >= 0 {
				return mysql.NewSQLError(mysql.ERDupFieldName, "42S21", "Duplicate column name '%s' (ALTER SINK %s ADD COLUMN)", c.Column, name)
			}
			cols = append(cols, c.Column)
			continue
		}
		if i < 0 {
			return mysql.NewSQLError(mysql.ERBadFieldError, "42S22", "Unknown column '%s' in 'sink %s' (%s)", c.Column, h.rec.Name, c.Kind)
		}
		switch c.Kind {
		case sinkddl.ColumnRename:
			if j := find(c.NewName); j >= 0 && j != i {
				return mysql.NewSQLError(mysql.ERDupFieldName, "42S21", "Duplicate column name '%s' (ALTER SINK %s RENAME COLUMN %s TO %s)", c.NewName, name, c.Column, c.NewName)
			}
			cols[i] = c.NewName
			for k := range key {
				if strings.EqualFold(key[k], c.Column) {
					key = slices.Clone(key)
					key[k] = c.NewName
				}
			}
			for k := range parts {
				if strings.EqualFold(parts[k], c.Column) {
					parts = slices.Clone(parts)
					parts[k] = c.NewName
				}
			}
		case sinkddl.ColumnDrop:
			switch {
			case has(key, c.Column):
				return refuse("DROP COLUMN %s is not supported. Reason: it is in the PRIMARY KEY of sink %s, which matches rows by it", c.Column, name)
			case has(parts, c.Column):
				return refuse("DROP COLUMN %s is not supported. Reason: sink %s is partitioned by it", c.Column, name)
			case len(cols) == 1:
				return mysql.NewSQLError(mysql.ERCantRemoveAllFields, "42000", "You can't delete all columns with ALTER SINK %s; use DROP SINK instead", name)
			}
			cols = slices.Delete(cols, i, i+1)
		}
	}
	return nil
}

// holds reports whether the session's transaction holds the sink: it
// opened an epoch on it, or an UPDATE or DELETE locked it.
func (s *Session) holds(h *sinkHandle) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tx != nil && (s.tx.held[h] || s.tx.pending[h] != nil)
}

// markPending records next in the registry as the definition a change
// in flight leads to: a crash before redefine leaves it there, and the
// sink adopts it if the table took the change.
func (e *Engine) markPending(h *sinkHandle, next *sinkddl.CreateSink) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	h.rec.Pending = next.String()
	if err := e.saveLocked(); err != nil {
		h.rec.Pending = ""
		return err
	}
	return nil
}

// clearPending forgets a pending definition whose change failed.
func (e *Engine) clearPending(h *sinkHandle) {
	e.mu.Lock()
	defer e.mu.Unlock()
	h.rec.Pending = ""
	_ = e.saveLocked() // the next change or restart drops what does not open
}

// redefine makes next the sink's definition: it closes the sink, which
// holds no open epoch (the caller holds its lock), opens it again from
// next, and records next and the table's columns in the registry. The
// open sink keeps nothing across epochs, so nothing buffered is lost.
// When the sink does not open from next and the table is as it was
// (tableChanged false), the old definition stays: the sink opens from it
// on its next use.
func (e *Engine) redefine(ctx context.Context, h *sinkHandle, next *sinkddl.CreateSink, tableChanged bool) error {
	spec := e.backends.Define(next, h.rec.Path)
	h.openMu.Lock()
	old, oldDef, oldSpec := h.sink, h.def, h.spec
	h.sink = nil
	h.def, h.spec = next, spec
	h.gschema, h.rules, h.values = nil, nil, nil
	h.openMu.Unlock()
	if old != nil {
		if err := old.Close(); err != nil {
			return fmt.Errorf("ALTER SINK %s: close the sink to take the change: %w", h.rec.Name, err)
		}
	}
	s, err := e.backends.Open(ctx, spec, true)
	if err != nil && !tableChanged {
		h.openMu.Lock()
		h.def, h.spec = oldDef, oldSpec
		h.openMu.Unlock()
		return fmt.Errorf("ALTER SINK %s: the sink does not open with the new options, and keeps its old ones: %w", h.rec.Name, err)
	}
	if err != nil {
		return fmt.Errorf("ALTER SINK %s changed the table, and the sink does not open with its new definition: %w", h.rec.Name, err)
	}
	h.openMu.Lock()
	h.sink = s
	h.openMu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	h.rec.Statement, h.rec.Pending = next.String(), ""
	h.rec.Columns = storedColumns(s.Schema())
	return e.saveLocked()
}

// adoptPending settles, when the engine opens, the definitions a crash
// left pending in the registry (markPending): the table took the change
// when the pending definition opens on it and the stored one does not
// match it any more; then the pending one becomes the definition, and
// otherwise it is forgotten. A table that cannot be reached keeps it
// pending for the next start. It runs before any session.
func (e *Engine) adoptPending(ctx context.Context) error {
	changed := false
	for _, h := range e.sinks {
		if h.rec.Pending == "" {
			continue
		}
		st, err := sinkddl.Parse(h.rec.Pending)
		next, ok := st.(*sinkddl.CreateSink)
		if err != nil || !ok {
			h.rec.Pending, changed = "", true
			continue
		}
		spec := e.backends.Define(next, h.rec.Path)
		s, err := e.backends.Open(ctx, spec, true)
		if err != nil {
			if h.def != nil {
				if old, err := e.backends.Open(ctx, h.spec, true); err == nil {
					old.Close() // the table did not take the change
					h.rec.Pending, changed = "", true
				}
			}
			continue
		}
		if len(next.Columns) == 0 && schemaChange(h.rec.Columns, s.Schema()) == "" {
			s.Close() // an attached sink opens whatever its schema: unchanged
			h.rec.Pending, changed = "", true
			continue
		}
		h.def, h.spec, h.defErr, h.sink = next, spec, nil, s
		h.rec.Statement, h.rec.Pending = h.rec.Pending, ""
		h.rec.Columns = storedColumns(s.Schema())
		changed = true
	}
	if !changed {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.saveLocked()
}
