package apacheiceberg

import (
	"context"
	"errors"
	"fmt"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/backoff"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

var _ catalogadapter.SchemaEvolver = (*Provider)(nil)

// AlterSchema implements catalogadapter.SchemaEvolver through iceberg-go's
// UpdateSchema: the changes, checked in order against Iceberg's rules,
// become one metadata commit with a new current schema and no snapshot.
// Columns are changed by field id, so old data files read right: renamed
// columns by id, added ones as NULL, promoted ones cast. The commit
// asserts the schema it was built on; when another schema change landed
// first, the attempt reloads the table, checks the changes again (a
// column added meanwhile is then a duplicate) and retries, at most
// MaxRetries times. Changes that change nothing commit nothing.
func (p *Provider) AlterSchema(ctx context.Context, id catalogadapter.TableIdent, changes []catalogadapter.SchemaChange) (catalogadapter.TableSpec, error) {
	ctx = p.cat.WithIO(ctx) // one AWS configuration for every FileIO the call opens
	fail := func(err error) (catalogadapter.TableSpec, error) {
		return catalogadapter.TableSpec{}, fmt.Errorf("alter schema of %s: %w", id, mapErr(p.cat.Scrub(err)))
	}
	ident, err := identifier(id)
	if err != nil {
		return fail(err)
	}
	ice, err := icebergChanges(changes)
	if err != nil {
		return fail(err)
	}
	for attempt := 0; ; attempt++ {
		tbl, err := p.cat.LoadTable(ctx, ident)
		if err != nil {
			return fail(err)
		}
		if p.beforeCommit != nil {
			p.beforeCommit(attempt)
		}
		call, cancel := p.cat.Bound(ctx)
		next, err := icetable.AlterSchema(call, tbl, ice)
		err = p.cat.Timed(call, ctx, err)
		cancel()
		switch {
		case err == nil:
			return tableSpec(id, next)
		case errors.Is(err, icetable.ErrNoSchemaChange):
			return tableSpec(id, tbl)
		case errors.Is(err, icetable.ErrConflict):
			if attempt >= p.opts.MaxRetries {
				return fail(fmt.Errorf("%w: gave up after %d attempts: %w", catalogadapter.ErrConflict, attempt+1, err))
			}
			if err := backoff.Sleep(ctx, backoff.Equal(p.opts.BaseBackoff, p.opts.MaxBackoff, attempt)); err != nil {
				return fail(fmt.Errorf("retry after a lost race: %w", err))
			}
			continue
		}
		return fail(err)
	}
}

// icebergChanges translates the contract's changes.
func icebergChanges(changes []catalogadapter.SchemaChange) ([]icetable.SchemaChange, error) {
	if len(changes) == 0 {
		return nil, fmt.Errorf("%w: no schema changes", catalogadapter.ErrInvalid)
	}
	out := make([]icetable.SchemaChange, len(changes))
	for i, c := range changes {
		var kind icetable.ChangeKind
		switch c.Kind {
		case catalogadapter.AddColumn:
			kind = icetable.AddColumn
		case catalogadapter.WidenColumn:
			kind = icetable.PromoteColumn
		case catalogadapter.RenameColumn:
			kind = icetable.RenameColumn
		case catalogadapter.DropColumn:
			kind = icetable.DropColumn
		default:
			return nil, fmt.Errorf("%w: unknown schema change %q", catalogadapter.ErrInvalid, c.Kind)
		}
		out[i] = icetable.SchemaChange{Kind: kind, Column: c.Column, NewName: c.NewName, Type: c.Type, Doc: c.Comment}
	}
	return out, nil
}
