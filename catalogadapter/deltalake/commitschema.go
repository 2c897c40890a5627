package deltalake

import (
	"fmt"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// commitSchema checks, on one commit attempt against snap, that the files
// of the receipts still fit the table, and returns the actions that apply
// the commit's own schema changes (automatic evolution) beside its adds.
//
// A schema change that landed after the files were staged conflicts with
// this commit (PROTOCOL.md's metadata rule); the commit re-validates
// instead of failing blindly: the files this process staged are checked
// against the new schema (delta.Snapshot.FilesFit, by physical name and
// type) and land only if they read right under it. Changes of the commit
// that a winner already made (the same column added with the same type, a
// type already widened) are dropped; the rest are checked again on snap.
// Receipts from another process carry no schema and are not checked: the
// sink never commits such receipts (a journal's are discarded).
func (p *Provider) commitSchema(snap *delta.Snapshot, root string, receipts []catalogadapter.Receipt, changes []catalogadapter.SchemaChange) ([]delta.Action, error) {
	target, actions := snap, []delta.Action(nil)
	if len(changes) > 0 {
		pending, err := pendingChanges(snap, changes)
		if err != nil {
			return nil, err
		}
		if len(pending) > 0 {
			ev, err := snap.Evolve(pending)
			if err != nil {
				return nil, fmt.Errorf("%w: the schema changed since the files were staged: %w", catalogadapter.ErrConflict, schemaError(err))
			}
			target, actions = snap.WithEvolved(ev), ev.Actions()
		}
	}
	for _, r := range receipts {
		own := p.ownStaged(root, r)
		if own == nil || len(own.adds) == 0 {
			continue
		}
		if err := target.FilesFit(own.snap); err != nil {
			return nil, fmt.Errorf("%w: files staged on version %d do not fit the table at version %d: %w",
				catalogadapter.ErrConflict, own.snap.Version, snap.Version, err)
		}
	}
	return actions, nil
}

// pendingChanges drops the changes snap already has: a column added with
// the same type, a column already of the widened type.
func pendingChanges(snap *delta.Snapshot, changes []catalogadapter.SchemaChange) ([]delta.SchemaChange, error) {
	dchanges, err := deltaChanges(changes)
	if err != nil {
		return nil, err
	}
	schema, err := snap.Schema()
	if err != nil {
		return nil, err
	}
	var out []delta.SchemaChange
	for _, c := range dchanges {
		if f := schema.Field(c.Column); f != nil && c.Type != nil && f.Type.String() == c.Type.String() &&
			(c.Kind == delta.AddColumn || c.Kind == delta.WidenColumn) {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// evolvedForStaging is snap as the commit of changes will leave it: the
// staged files are written for it (new columns, wider types).
func evolvedForStaging(snap *delta.Snapshot, changes []catalogadapter.SchemaChange) (*delta.Snapshot, *delta.StructType, error) {
	pending, err := pendingChanges(snap, changes)
	if err != nil {
		return nil, nil, err
	}
	if len(pending) == 0 { // another writer made them already
		schema, err := snap.Schema()
		return snap, schema, err
	}
	ev, err := snap.Evolve(pending)
	if err != nil {
		return nil, nil, schemaError(err)
	}
	next := snap.WithEvolved(ev)
	schema, err := next.Schema()
	return next, schema, err
}
