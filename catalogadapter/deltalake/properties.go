package deltalake

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/backoff"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// SetProperties implements catalogadapter.PropertySetter: the properties
// set and unset in one metaData action, with the protocol upgraded in the
// same version where a property needs it (propertyRules). A property the
// rules refuse fails the call and nothing is written; setting what the
// table already has writes nothing.
//
// A lost race is retried on the new version, the rules run again on it,
// unless the winner changed the metadata or protocol itself: as in Delta,
// two concurrent metadata changes conflict (ErrConflict), since ours was
// decided on a table that is no longer there.
func (p *Provider) SetProperties(ctx context.Context, id catalogadapter.TableIdent, set map[string]string, unset []string) (catalogadapter.TableSpec, error) {
	t, tpath, err := p.table(id)
	if err != nil {
		return catalogadapter.TableSpec{}, err
	}
	fail := func(err error) (catalogadapter.TableSpec, error) {
		return catalogadapter.TableSpec{}, fmt.Errorf("set table properties of %s: %w", tpath, err)
	}
	for _, k := range unset {
		if _, ok := set[k]; ok {
			return fail(fmt.Errorf("%w: table property %s is both set and unset", catalogadapter.ErrInvalid, k))
		}
	}
	for attempt := 0; ; attempt++ {
		snap, err := p.fresh(ctx, t, tpath)
		if err != nil {
			return fail(readError(tpath, err))
		}
		actions, err := propertyActions(snap, set, unset)
		if err != nil {
			return fail(err)
		}
		if len(actions) == 0 {
			return tableSpec(tpath, snap)
		}
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		now := p.opts.Now()
		res, err := snap.Commit(ctx, actions, delta.CommitOptions{Operation: "SET TBLPROPERTIES",
			Parameters: map[string]any{"properties": set, "unset": unset}, Now: func() time.Time { return now },
			NoCheckpoint: p.opts.BackgroundCheckpoints})
		if err == nil {
			p.snaps.put(tpath, snap, res.Snapshot)
			p.afterCommit(tpath, t, snap, res)
			next := res.Snapshot
			if next == nil {
				if _, next, err = p.latest(ctx, id); err != nil {
					return fail(err)
				}
			}
			return tableSpec(tpath, next)
		}
		var ce *delta.ConflictError
		switch {
		case errors.Is(err, delta.ErrUnsupportedFeature):
			return fail(fmt.Errorf("%w: %w", catalogadapter.ErrUnsupported, err))
		case !errors.As(err, &ce):
			return fail(err)
		}
		for _, w := range ce.Winners {
			for _, a := range w.Actions {
				if a.MetaData != nil || a.Protocol != nil {
					return fail(fmt.Errorf("%w: version %d changed the table's metadata or protocol first: %w",
						catalogadapter.ErrConflict, w.Version, err))
				}
			}
		}
		if attempt >= p.opts.MaxRetries {
			return fail(fmt.Errorf("%w: gave up after %d attempts: %w", catalogadapter.ErrConflict, attempt+1, err))
		}
		if err := backoff.Sleep(ctx, backoff.Equal(p.opts.BaseBackoff, p.opts.MaxBackoff, attempt)); err != nil {
			return fail(fmt.Errorf("retry after a lost race at version %d: %w", ce.Version, err))
		}
	}
}

// propertyActions builds the protocol and metaData actions that set and
// unset the properties on snap, none when nothing changes.
func propertyActions(snap *delta.Snapshot, set map[string]string, unset []string) ([]delta.Action, error) {
	schema, err := snap.Schema()
	if err != nil {
		return nil, err
	}
	c := &propertyChange{old: snap, proto: snap.Protocol, schema: schema, conf: maps.Clone(snap.Metadata.Configuration)}
	if c.conf == nil {
		c.conf = map[string]string{}
	}
	for k, v := range set {
		c.conf[k] = v
	}
	for _, k := range unset {
		delete(c.conf, k)
	}
	// Rules run in key order, so an error is the same on every call.
	keys := slices.Sorted(maps.Keys(set))
	for _, k := range keys {
		if rule := ruleFor(k); rule != nil {
			if err := rule(c, k, set[k], false); err != nil {
				return nil, err
			}
		}
	}
	sort.Strings(unset)
	for _, k := range unset {
		if rule := ruleFor(k); rule != nil {
			if err := rule(c, k, "", true); err != nil {
				return nil, err
			}
		}
	}
	var actions []delta.Action
	if !sameProtocol(c.proto, snap.Protocol) {
		proto := c.proto
		actions = append(actions, delta.Action{Protocol: &proto})
	}
	md := snap.Metadata
	md.Configuration = c.conf
	if c.schema != schema {
		if md.SchemaString, err = c.schema.JSON(); err != nil {
			return nil, err
		}
	}
	if len(actions) > 0 || !maps.Equal(c.conf, snap.Metadata.Configuration) || md.SchemaString != snap.Metadata.SchemaString {
		actions = append(actions, delta.Action{MetaData: &md})
	}
	return actions, nil
}

func sameProtocol(a, b delta.Protocol) bool {
	return a.MinReaderVersion == b.MinReaderVersion && a.MinWriterVersion == b.MinWriterVersion &&
		slices.Equal(a.ReaderFeatures, b.ReaderFeatures) && slices.Equal(a.WriterFeatures, b.WriterFeatures)
}
