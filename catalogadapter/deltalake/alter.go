package deltalake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/backoff"
	"github.com/lakesql/lakesql/tableformat/delta"
)

var _ catalogadapter.InCommitEvolver = (*Provider)(nil)

// EvolvesInCommit implements catalogadapter.InCommitEvolver: Commit writes
// CommitOptions.SchemaChanges as a metaData action beside the adds.
func (p *Provider) EvolvesInCommit() {}

// AlterSchema implements catalogadapter.SchemaEvolver: the changes become
// one version holding a metaData action (and a protocol action when a
// change needs a table feature: typeWidening, timestampNtz). A lost race
// is retried on the new version, where the changes are checked again: a
// winner that added data does not invalidate a schema change (its files
// read under the new schema as every older file does), one that changed
// the schema may (the column may exist now).
func (p *Provider) AlterSchema(ctx context.Context, id catalogadapter.TableIdent, changes []catalogadapter.SchemaChange) (catalogadapter.TableSpec, error) {
	t, tpath, err := p.table(id)
	if err != nil {
		return catalogadapter.TableSpec{}, err
	}
	fail := func(err error) (catalogadapter.TableSpec, error) {
		return catalogadapter.TableSpec{}, fmt.Errorf("alter schema of %s: %w", tpath, err)
	}
	dchanges, err := deltaChanges(changes)
	if err != nil {
		return fail(err)
	}
	for attempt := 0; ; attempt++ {
		snap, err := p.fresh(ctx, t, tpath)
		if err != nil {
			return fail(readError(tpath, err))
		}
		ev, err := snap.Evolve(dchanges)
		if err != nil {
			return fail(schemaError(err))
		}
		if p.beforeCommit != nil {
			p.beforeCommit(attempt)
		}
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		now := p.opts.Now()
		res, err := snap.Commit(ctx, ev.Actions(), delta.CommitOptions{
			Operation: alterOperation(changes), Parameters: map[string]any{"changes": describeChanges(changes)},
			Now: func() time.Time { return now }, NoCheckpoint: p.opts.BackgroundCheckpoints})
		if err == nil {
			p.snaps.put(tpath, snap, res.Snapshot)
			p.afterCommit(tpath, t, snap, res)
			next := res.Snapshot
			if next == nil {
				if next, err = p.fresh(ctx, t, tpath); err != nil {
					return fail(readError(tpath, err))
				}
			}
			return tableSpec(id.Name, next)
		}
		var ce *delta.ConflictError
		switch {
		case errors.Is(err, delta.ErrUnsupportedFeature):
			return fail(fmt.Errorf("%w: %w", catalogadapter.ErrUnsupported, err))
		case !errors.As(err, &ce):
			return fail(err)
		case attempt >= p.opts.MaxRetries:
			return fail(fmt.Errorf("%w: gave up after %d attempts: %w", catalogadapter.ErrConflict, attempt+1, err))
		}
		if err := backoff.Sleep(ctx, backoff.Equal(p.opts.BaseBackoff, p.opts.MaxBackoff, attempt)); err != nil {
			return fail(fmt.Errorf("retry after a lost race at version %d: %w", ce.Version, err))
		}
	}
}

// deltaChanges translates the contract's changes into delta's.
func deltaChanges(changes []catalogadapter.SchemaChange) ([]delta.SchemaChange, error) {
	out := make([]delta.SchemaChange, 0, len(changes))
	for i, c := range changes {
		dc := delta.SchemaChange{Column: c.Column, NewName: c.NewName, Comment: c.Comment}
		switch c.Kind {
		case catalogadapter.AddColumn:
			dc.Kind = delta.AddColumn
		case catalogadapter.WidenColumn:
			dc.Kind = delta.WidenColumn
		case catalogadapter.RenameColumn:
			dc.Kind = delta.RenameColumn
		case catalogadapter.DropColumn:
			dc.Kind = delta.DropColumn
		default:
			return nil, fmt.Errorf("%w: change %d: unknown kind %q", catalogadapter.ErrInvalid, i, c.Kind)
		}
		if c.Type != nil {
			st, err := delta.FromArrowSchema(arrow.NewSchema([]arrow.Field{{Name: "c", Type: c.Type, Nullable: true}}, nil))
			if err != nil {
				return nil, fmt.Errorf("%w: %s %s: type %s has no Delta equivalent: %w", catalogadapter.ErrSchemaChange, c.Kind, c.Column, c.Type, err)
			}
			dc.Type = st.Fields[0].Type
		}
		out = append(out, dc)
	}
	return out, nil
}

// schemaError maps delta's refusal to the contract's sentinel, keeping
// the rule's words once.
func schemaError(err error) error {
	if errors.Is(err, delta.ErrSchemaChange) {
		return fmt.Errorf("%w: %s", catalogadapter.ErrSchemaChange, strings.TrimPrefix(err.Error(), delta.ErrSchemaChange.Error()+": "))
	}
	if errors.Is(err, delta.ErrUnsupportedFeature) {
		return fmt.Errorf("%w: %w", catalogadapter.ErrUnsupported, err)
	}
	return err
}

// alterOperation is Spark's name for the commit in the table's history.
func alterOperation(changes []catalogadapter.SchemaChange) string {
	op := ""
	for _, c := range changes {
		name := map[catalogadapter.SchemaChangeKind]string{catalogadapter.AddColumn: "ADD COLUMNS",
			catalogadapter.WidenColumn: "CHANGE COLUMN", catalogadapter.RenameColumn: "RENAME COLUMN",
			catalogadapter.DropColumn: "DROP COLUMNS"}[c.Kind]
		if op != "" && op != name {
			return "ALTER TABLE"
		}
		op = name
	}
	return op
}

func describeChanges(changes []catalogadapter.SchemaChange) []string {
	out := make([]string, len(changes))
	for i, c := range changes {
		s := string(c.Kind) + " " + c.Column
		switch {
		case c.Kind == catalogadapter.RenameColumn:
			s += " TO " + c.NewName
		case c.Type != nil:
			s += " " + c.Type.String()
		}
		out[i] = s
	}
	return out
}
