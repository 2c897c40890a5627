package sqlsink

// ALTER SINK's schema changes, between epochs, and automatic evolution
// inside one (Config.SchemaEvolution).

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesql/lakesql/catalogadapter"
)

// SchemaChange is one change of ALTER SINK (see catalogadapter).
type SchemaChange = catalogadapter.SchemaChange

// ErrSchemaChange: the format does not allow the change; the error names the rule.
var ErrSchemaChange = catalogadapter.ErrSchemaChange

// ErrEpochOpen: a schema change was asked for while an epoch is open. A
// change applies between epochs only, so that each epoch lands under one
// schema: commit or roll back the epoch first (flushing it instead would
// split it over two table versions and break exactly-once).
var ErrEpochOpen = errors.New("sink: an epoch is open")

// AlterSchema applies changes to the sink's table as one table version,
// between epochs, and takes the new schema for the epochs that follow
// (the buffer gets the new columns, Schema reports them). While an epoch
// is open it fails with ErrEpochOpen and changes nothing. Dropping or
// renaming a key column is refused (ErrSchemaChange); the backend refuses
// what its format does not allow, also with ErrSchemaChange.
func (s *Sink) AlterSchema(ctx context.Context, changes []SchemaChange) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	fail := func(err error) error { return fmt.Errorf("alter sink %s: %w", s.cfg.Name, err) }
	if s.m.State() != StateRunning {
		return fail(s.m.wrongState("AlterSchema"))
	}
	if e, open := s.m.OpenEpoch(); open {
		return fail(fmt.Errorf("%w: epoch %d; commit or roll it back, then alter", ErrEpochOpen, e))
	}
	ev, ok := s.cfg.Provider.(catalogadapter.SchemaEvolver)
	if !ok {
		return fail(fmt.Errorf("%w: the backend (%T) cannot change a table's schema", ErrUnsupported, s.cfg.Provider))
	}
	for _, c := range changes {
		if (c.Kind == catalogadapter.DropColumn || c.Kind == catalogadapter.RenameColumn) && slices.Contains(s.cfg.Key, c.Column) {
			return fail(fmt.Errorf("%w: %s %q: it is a key column of the sink", ErrSchemaChange, c.Kind, c.Column))
		}
	}
	spec, err := ev.AlterSchema(ctx, s.cfg.Table, changes)
	if err != nil {
		return fail(err)
	}
	s.takeSchema(spec)
	// The buffer is empty between epochs: the next epoch opens it again
	// with the new columns.
	return s.closeBuffer()
}

// takeSchema adopts the table's schema after a change.
func (s *Sink) takeSchema(spec catalogadapter.TableSpec) {
	s.schema = spec.Schema
	if s.cfg.Schema != nil {
		s.cfg.Schema = spec.Schema
	}
	s.counters.lastVersion.Store(spec.Version)
}

// The values of Config.SchemaEvolution.
const (
	// EvolveNone refuses a batch with columns the table lacks (the default).
	EvolveNone = "none"
	// EvolveAddColumns adds a batch's new columns as nullable, and applies
	// the widenings its types ask for, in the commit of its epoch.
	EvolveAddColumns = "add_columns"
)

// evolveFor returns the changes a batch asks of the sink's schema: its
// columns the table lacks (added nullable) and the columns it carries in
// a wider type (widened; the backend judges whether its format allows
// it). Metadata columns (a leading _) ask for nothing.
func (s *Sink) evolveFor(rs *arrow.Schema) []SchemaChange {
	var out []SchemaChange
	for _, f := range rs.Fields() {
		if len(f.Name) > 0 && f.Name[0] == '_' {
			continue
		}
		idx := s.buf.byName[f.Name]
		if _, ok := s.buf.byName[f.Name]; !ok {
			out = append(out, SchemaChange{Kind: catalogadapter.AddColumn, Column: f.Name, Type: f.Type})
			continue
		}
		if cur := s.buf.cols[idx]; wider(f.Type, cur.arrowType) {
			out = append(out, SchemaChange{Kind: catalogadapter.WidenColumn, Column: f.Name, Type: f.Type})
		}
	}
	return out
}

// wider tells whether a batch's type asks to widen a column of type cur:
// a wider integer, double for float, a decimal with more digits on both
// sides, a timestamp without time zone for a date. Other differences are
// cast on the way into the buffer, as before.
func wider(batch, cur arrow.DataType) bool {
	rank := map[arrow.Type]int{arrow.INT8: 1, arrow.INT16: 2, arrow.INT32: 3, arrow.INT64: 4}
	if rb, rc := rank[batch.ID()], rank[cur.ID()]; rb > 0 && rc > 0 {
		return rb > rc
	}
	switch {
	case batch.ID() == arrow.FLOAT64 && cur.ID() == arrow.FLOAT32:
		return true
	case cur.ID() == arrow.DATE32:
		ts, ok := batch.(*arrow.TimestampType)
		return ok && ts.TimeZone == ""
	}
	bd, ok1 := batch.(arrow.DecimalType)
	cd, ok2 := cur.(arrow.DecimalType)
	return ok1 && ok2 && bd.GetScale() >= cd.GetScale() && bd.GetPrecision()-bd.GetScale() >= cd.GetPrecision()-cd.GetScale() &&
		bd.GetPrecision() > cd.GetPrecision()
}

// evolve applies a batch's changes before it is buffered, in the open
// epoch e. A backend that evolves in the data commit (Delta) gets them
// with the epoch's commit, so the new columns and the rows that bring
// them are one version; any other applies them now, as a version of its
// own before the epoch's. The buffer takes the new columns either way.
func (s *Sink) evolve(ctx context.Context, changes []SchemaChange) error {
	ev, ok := s.cfg.Provider.(catalogadapter.SchemaEvolver)
	if !ok {
		return fmt.Errorf("%w: schema evolution: the backend (%T) cannot change a table's schema", ErrUnsupported, s.cfg.Provider)
	}
	if _, inCommit := ev.(catalogadapter.InCommitEvolver); !inCommit {
		spec, err := ev.AlterSchema(ctx, s.cfg.Table, changes)
		if err != nil {
			return fmt.Errorf("schema evolution: %w", err)
		}
		if err := s.buf.evolve(ctx, changes); err != nil {
			s.m.Fail(err.Error()) // the table changed, the buffer could not follow
			return err
		}
		s.takeSchema(spec)
		return nil
	}
	if err := s.buf.evolve(ctx, changes); err != nil {
		return err
	}
	s.evolving = append(s.evolving, changes...)
	return nil
}

// evolved is called when the epoch's commit landed: the table has the
// changes now. After a rollback the buffer, which has them, is dropped.
func (s *Sink) evolved(ctx context.Context, landed bool) {
	if len(s.evolving) == 0 {
		return
	}
	s.evolving = nil
	if landed {
		if spec, err := s.cfg.Provider.TableSpec(ctx, s.cfg.Table); err == nil {
			s.takeSchema(spec)
			return
		}
	}
	s.closeBuffer() // opened again, with the table's columns, by the next epoch
	if spec, err := s.cfg.Provider.TableSpec(ctx, s.cfg.Table); err == nil {
		s.takeSchema(spec)
	}
}

// PendingColumns returns the columns the open epoch's batches added
// (Config.SchemaEvolution) that its commit will add to the table: the
// buffer has them, Schema does not yet. Nil when no epoch adds any.
func (s *Sink) PendingColumns() []arrow.Field {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []arrow.Field
	for _, c := range s.evolving {
		if c.Kind == catalogadapter.AddColumn {
			out = append(out, arrow.Field{Name: c.Column, Type: c.Type, Nullable: true})
		}
	}
	return out
}

func canEvolve(p catalogadapter.Provider) bool {
	_, ok := p.(catalogadapter.SchemaEvolver)
	return ok
}
