package iceberg

// Schema evolution through iceberg-go's UpdateSchema: the changes of one
// ALTER are checked in order against Iceberg's rules (spec, "Schema
// Evolution"), then applied as one schema update of a transaction, which
// asserts the schema id it was built on (assert-current-schema-id).
// Columns keep their field ids: a renamed column is read by id from old
// files, a dropped id is never reused (last-column-id only grows), an
// added column reads NULL from files written before it.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// ErrSchemaRule: a schema change breaks one of Iceberg's evolution rules
// (or one lakesql keeps to read its own tables right); the error names it.
var ErrSchemaRule = errors.New("Iceberg schema evolution rule")

// ChangeKind names one kind of schema change.
type ChangeKind int

// The schema changes UpdateSchema applies.
const (
	// AddColumn adds an optional column at the end.
	AddColumn ChangeKind = iota + 1
	// PromoteColumn widens a column's type (Iceberg's promotions).
	PromoteColumn
	// RenameColumn renames a column; its field id stays.
	RenameColumn
	// DropColumn drops a column; its field id is never reused.
	DropColumn
)

// SchemaChange is one change of a table's top-level columns.
type SchemaChange struct {
	Kind ChangeKind
	// Column is the column changed; for AddColumn, the new column's name.
	Column string
	// NewName is RenameColumn's new name.
	NewName string
	// Type is the Arrow type of AddColumn and PromoteColumn, converted as
	// SchemaFromArrow converts a sink's columns.
	Type arrow.DataType
	// Doc is AddColumn's column comment.
	Doc string
}

// ErrNoSchemaChange: the changes leave the schema as it is (a column
// "widened" to its own type); nothing is committed.
var ErrNoSchemaChange = errors.New("the schema does not change")

// planField is one column of the schema being changed: id 0 for a column
// the changes add.
type planField struct {
	id   int
	name string
	typ  ice.Type
	doc  string
}

// UpdateSchema adds changes to tx as one schema update, built on the
// current schema of the metadata tx started from. A change Iceberg does
// not allow fails with ErrSchemaRule naming the rule, and tx is left as it
// was; changes that change nothing fail with ErrNoSchemaChange. It returns
// the new schema, as tx now holds it.
func UpdateSchema(ctx context.Context, tbl *table.Table, tx *table.Transaction, changes []SchemaChange) (*ice.Schema, error) {
	if len(changes) == 0 {
		return nil, fmt.Errorf("%w: no schema changes", ErrInvalid)
	}
	meta := tbl.Metadata()
	schema := meta.CurrentSchema()
	fields := make([]planField, 0, schema.NumFields())
	for _, f := range schema.Fields() {
		fields = append(fields, planField{id: f.ID, name: f.Name, typ: f.Type, doc: f.Doc})
	}
	guard, err := dropGuards(ctx, tbl)
	if err != nil {
		return nil, err
	}
	for _, c := range changes {
		if fields, err = planChange(fields, c, meta.Version(), guard); err != nil {
			return nil, err
		}
	}
	var opts []table.UpdateSchemaOption
	if nm := tbl.NameMapping(); nm != nil {
		opts = append(opts, table.WithNameMapping(nm)) // keep a pyiceberg name mapping in step
	}
	u := tx.UpdateSchema(true, false, opts...)
	changed := false
	kept := map[int]planField{}
	for _, f := range fields {
		if f.id != 0 {
			kept[f.id] = f
		}
	}
	for _, old := range schema.Fields() {
		f, ok := kept[old.ID]
		if !ok {
			u.DeleteColumn([]string{old.Name})
			changed = true
			continue
		}
		var upd table.ColumnUpdate
		if f.name != old.Name {
			upd.Name = ice.Optional[string]{Valid: true, Val: f.name}
		}
		if !f.typ.Equals(old.Type) {
			upd.FieldType = ice.Optional[ice.Type]{Valid: true, Val: f.typ}
		}
		if upd.Name.Valid || upd.FieldType.Valid {
			u.UpdateColumn([]string{old.Name}, upd)
			changed = true
		}
	}
	for _, f := range fields {
		if f.id == 0 {
			u.AddColumn([]string{f.name}, f.typ, f.doc, false, nil)
			changed = true
		}
	}
	if !changed {
		return nil, ErrNoSchemaChange
	}
	// Commit validates and stages the update in tx (Apply as well would
	// run the operations twice).
	if err := u.Commit(); err != nil {
		return nil, fmt.Errorf("%w: iceberg-go refuses the update: %w", ErrSchemaRule, err)
	}
	staged, err := tx.StagedTable()
	if err != nil {
		return nil, fmt.Errorf("stage schema update: %w", err)
	}
	return staged.Schema(), nil
}

// guards are the field ids a drop must spare, and why.
type guards map[int]string

// add records the first reason for id.
func (g guards) add(id int, why string) {
	if _, ok := g[id]; !ok {
		g[id] = why
	}
}

// dropGuards lists the columns Iceberg (or its readers) need: identifier
// fields, the sources of any partition spec's fields (older specs too:
// their files' partition values name them) and of the sort order, and
// the key columns of live equality deletes, which would no longer be
// readable.
func dropGuards(ctx context.Context, tbl *table.Table) (guards, error) {
	meta := tbl.Metadata()
	out := guards{}
	for _, id := range meta.CurrentSchema().IdentifierFieldIDs {
		out.add(id, "it is an identifier field (a row key) of the table")
	}
	for _, spec := range meta.PartitionSpecs() {
		for _, pf := range spec.Fields() {
			out.add(pf.SourceID(), fmt.Sprintf("partition spec %d is built on it (partition field %q)", spec.ID(), pf.Name))
		}
	}
	for _, so := range meta.SortOrders() {
		for _, sf := range so.Fields() {
			for _, id := range sf.SourceIDs {
				out.add(id, fmt.Sprintf("sort order %d is built on it", so.OrderID()))
			}
		}
	}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return out, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("open the file IO of %s: %w", tbl.Location(), err)
	}
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		return nil, fmt.Errorf("list manifests of snapshot %d: %w", snap.SnapshotID, err)
	}
	for _, m := range manifests {
		if m.ManifestContent() != ice.ManifestContentDeletes {
			continue
		}
		entries, err := m.FetchEntries(fsys, true)
		if err != nil {
			return nil, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
		}
		for _, e := range entries {
			for _, id := range e.DataFile().EqualityFieldIDs() {
				out.add(id, "live equality deletes (upserts) are keyed on it; compact the table first")
			}
		}
	}
	return out, nil
}

// planChange applies one change to fields, checking Iceberg's rules.
func planChange(fields []planField, c SchemaChange, version int, guard guards) ([]planField, error) {
	find := func(name string) int {
		return slices.IndexFunc(fields, func(f planField) bool { return f.name == name })
	}
	// Names that differ only in case are refused too: lakesql matches
	// columns without regard to case, as MySQL does.
	clash := func(name string, self int) error {
		for i, f := range fields {
			if i != self && strings.EqualFold(f.name, name) {
				return fmt.Errorf("%w: column %q already exists", ErrSchemaRule, f.name)
			}
		}
		return nil
	}
	i := find(c.Column)
	if c.Kind != AddColumn && i < 0 {
		return nil, fmt.Errorf("%w: column %q is not in the table", ErrInvalid, c.Column)
	}
	switch c.Kind {
	case AddColumn:
		if strings.TrimSpace(c.Column) == "" {
			return nil, fmt.Errorf("%w: a column needs a name", ErrInvalid)
		}
		if err := clash(c.Column, -1); err != nil {
			return nil, err
		}
		t, err := newColumnType(c.Type)
		if err != nil {
			return nil, fmt.Errorf("add column %q: %w", c.Column, err)
		}
		return append(fields, planField{name: c.Column, typ: t, doc: c.Doc}), nil
	case PromoteColumn:
		t, err := newColumnType(c.Type)
		if err != nil {
			return nil, fmt.Errorf("modify column %q: %w", c.Column, err)
		}
		if err := promotion(fields[i].typ, t, version); err != nil {
			return nil, fmt.Errorf("modify column %q: %w", c.Column, err)
		}
		fields[i].typ = t
		return fields, nil
	case RenameColumn:
		if strings.TrimSpace(c.NewName) == "" {
			return nil, fmt.Errorf("%w: rename column %q: the new name is empty", ErrInvalid, c.Column)
		}
		if err := clash(c.NewName, i); err != nil {
			return nil, fmt.Errorf("rename column %q to %q: %w", c.Column, c.NewName, err)
		}
		fields[i].name = c.NewName
		return fields, nil
	case DropColumn:
		if len(fields) == 1 {
			return nil, fmt.Errorf("%w: drop column %q: a table keeps at least one column", ErrSchemaRule, c.Column)
		}
		if why, ok := guard[fields[i].id]; ok && fields[i].id != 0 {
			return nil, fmt.Errorf("%w: drop column %q: %s", ErrSchemaRule, c.Column, why)
		}
		return slices.Delete(fields, i, i+1), nil
	}
	return nil, fmt.Errorf("%w: unknown schema change %d", ErrInvalid, c.Kind)
}

// newColumnType converts an Arrow type to the Iceberg type of a new or
// widened column (nested types get ids here that UpdateSchema reassigns).
func newColumnType(dt arrow.DataType) (ice.Type, error) {
	if dt == nil {
		return nil, fmt.Errorf("%w: no type", ErrInvalid)
	}
	next := 0
	return icebergType(dt, func() int { next++; return next })
}

// promotion checks that from may become to under Iceberg's type
// promotions: int to long, float to double, and decimal(P,S) to
// decimal(P',S) with P' > P. The same type is no change. Format version 3
// adds date to timestamp, which iceberg-go v0.7.0's UpdateSchema does not
// implement (nor the readers lakesql checks against), so it is refused.
func promotion(from, to ice.Type, version int) error {
	if from.Equals(to) {
		return nil
	}
	const rule = "Iceberg promotes only int to long, float to double and decimal(P,S) to decimal(P',S) with P' > P"
	switch f := from.(type) {
	case ice.Int32Type:
		if _, ok := to.(ice.Int64Type); ok {
			return nil
		}
	case ice.Float32Type:
		if _, ok := to.(ice.Float64Type); ok {
			return nil
		}
	case ice.DecimalType:
		if t, ok := to.(ice.DecimalType); ok {
			switch {
			case t.Scale() != f.Scale():
				return fmt.Errorf("%w: %s to %s changes the scale; %s (the scale stays)", ErrSchemaRule, from, to, rule)
			case t.Precision() < f.Precision():
				return fmt.Errorf("%w: %s to %s narrows the precision; %s", ErrSchemaRule, from, to, rule)
			}
			return nil
		}
	case ice.DateType:
		switch to.(type) {
		case ice.TimestampType, ice.TimestampNsType:
			if version >= 3 {
				return fmt.Errorf("%w: %s to %s is a format version 3 promotion that iceberg-go v0.7.0 does not implement", ErrSchemaRule, from, to)
			}
			return fmt.Errorf("%w: %s to %s needs format version 3 (the table is version %d); %s", ErrSchemaRule, from, to, version, rule)
		}
	}
	if _, ok := from.(ice.NestedType); ok {
		return fmt.Errorf("%w: %s to %s: a nested column's type cannot be changed", ErrSchemaRule, from, to)
	}
	return fmt.Errorf("%w: %s to %s; %s", ErrSchemaRule, from, to, rule)
}

// AlterSchema commits changes to tbl as one metadata commit: a new
// current schema and no snapshot, so the exactly-once record (snapshot
// summaries) is untouched. The commit asserts the schema it was built on;
// another schema change that landed first fails it with ErrConflict, and
// the caller reloads, re-checks and retries.
func AlterSchema(ctx context.Context, tbl *table.Table, changes []SchemaChange) (*table.Table, error) {
	tx := tbl.NewTransaction()
	if _, err := UpdateSchema(ctx, tbl, tx, changes); err != nil {
		return nil, err
	}
	return commitTx(ctx, tx)
}

// EvolvedTable is tbl as changes leave it, not committed: files written
// against it carry the new columns' field ids, and Stage records the new
// schema's id. A commit that makes the same changes on the same schema
// (Change.Schema) produces the same schema, ids included: ids come from
// the table's last-column-id, the schema id from its highest one.
func EvolvedTable(ctx context.Context, tbl *table.Table, changes []SchemaChange) (*table.Table, error) {
	tx := tbl.NewTransaction()
	if _, err := UpdateSchema(ctx, tbl, tx, changes); err != nil {
		return nil, err
	}
	staged, err := tx.StagedTable()
	if err != nil {
		return nil, fmt.Errorf("stage schema update: %w", err)
	}
	return staged.Table, nil
}
