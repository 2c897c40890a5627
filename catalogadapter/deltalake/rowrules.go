package deltalake

// A Delta table's row rules (invariants, CHECK constraints, generated
// columns) translated to DuckDB for the sink, and CHECK constraints added
// and dropped as metaData commits (PROTOCOL.md "CHECK Constraints").

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"time"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/sparkexpr"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// RowRules implements catalogadapter.RowRuler.
func (p *Provider) RowRules(ctx context.Context, id catalogadapter.TableIdent) (catalogadapter.RowRules, error) {
	_, snap, err := p.latest(ctx, id)
	if err != nil {
		return catalogadapter.RowRules{}, err
	}
	return translateRules(id.Name, snap)
}

// translateRules translates the rules of snap, refusing the table by the
// rule's name when one is outside what sparkexpr translates.
func translateRules(path string, snap *delta.Snapshot) (catalogadapter.RowRules, error) {
	rules, err := snap.Rules()
	if err != nil {
		return catalogadapter.RowRules{}, readError(path, err)
	}
	schema, err := snap.Schema()
	if err != nil {
		return catalogadapter.RowRules{}, readError(path, err)
	}
	resolve := sparkexpr.Columns(schema.FieldNames())
	out := catalogadapter.RowRules{Fingerprint: rules.Fingerprint()}
	for _, c := range rules.Checks {
		tr, err := sparkexpr.Translate(c.Expr, resolve)
		if err != nil {
			what := "CHECK constraint " + c.Name
			if c.Column != "" {
				what = "the invariant of column " + c.Column
			}
			return catalogadapter.RowRules{}, fmt.Errorf("Delta table %s: %w: %s: %w", path, catalogadapter.ErrUnsupported, what, err)
		}
		out.Checks = append(out.Checks, catalogadapter.CheckRule{Name: c.Name, Expr: c.Expr, Predicate: tr.SQL, Columns: tr.Columns})
	}
	for _, g := range rules.Generated {
		tr, err := sparkexpr.Translate(g.Expr, resolve)
		if err != nil {
			return catalogadapter.RowRules{}, fmt.Errorf("Delta table %s: %w: generated column %s: %w", path, catalogadapter.ErrUnsupported, g.Column, err)
		}
		out.Generated = append(out.Generated, catalogadapter.GeneratedRule{Column: g.Column, Expr: g.Expr, Value: tr.SQL})
	}
	return out, nil
}

// CheckPredicate implements catalogadapter.ConstraintEditor.
func (p *Provider) CheckPredicate(ctx context.Context, id catalogadapter.TableIdent, expr string) (catalogadapter.CheckRule, error) {
	_, snap, err := p.latest(ctx, id)
	if err != nil {
		return catalogadapter.CheckRule{}, err
	}
	return checkRule(snap, "", expr)
}

func checkRule(snap *delta.Snapshot, name, expr string) (catalogadapter.CheckRule, error) {
	schema, err := snap.Schema()
	if err != nil {
		return catalogadapter.CheckRule{}, err
	}
	tr, err := sparkexpr.Translate(expr, sparkexpr.Columns(schema.FieldNames()))
	if err != nil {
		return catalogadapter.CheckRule{}, fmt.Errorf("%w: %w", catalogadapter.ErrUnsupported, err)
	}
	return catalogadapter.CheckRule{Name: name, Expr: expr, Predicate: tr.SQL, Columns: tr.Columns}, nil
}

// constraintName is what Spark accepts as a constraint name unquoted.
var constraintName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// AddConstraint implements catalogadapter.ConstraintEditor. The name is
// kept in lower case, as Spark keys it (delta.constraints.<name>), and
// the expression as given, once it translates.
func (p *Provider) AddConstraint(ctx context.Context, id catalogadapter.TableIdent, name, expr string, checkedAt int64) (catalogadapter.TableSpec, error) {
	if !constraintName.MatchString(name) {
		return catalogadapter.TableSpec{}, fmt.Errorf("%w: constraint name %q: letters, digits and underscores only", catalogadapter.ErrInvalid, name)
	}
	key := delta.ConstraintPrefix + strings.ToLower(name)
	expr = strings.TrimSpace(expr)
	return p.changeConstraints(ctx, id, "ADD CONSTRAINT", map[string]any{"name": name, "expr": expr},
		func(snap *delta.Snapshot) (delta.Protocol, map[string]string, error) {
			if _, ok := snap.Metadata.Configuration[key]; ok {
				return delta.Protocol{}, nil, fmt.Errorf("%w: constraint %s is already on the table", catalogadapter.ErrConstraintExists, name)
			}
			if snap.Version > checkedAt {
				// A commit that added rows or changed the metadata since the
				// check: the same test as a merge's (addedSince).
				why, err := addedSince(ctx, snap.Table(), checkedAt, snap.Version)
				if err != nil {
					return delta.Protocol{}, nil, err
				}
				if why != "" {
					return delta.Protocol{}, nil, fmt.Errorf("%w: %s, whose rows were checked against constraint %s", catalogadapter.ErrConflict, why, name)
				}
			}
			if _, err := checkRule(snap, name, expr); err != nil {
				return delta.Protocol{}, nil, err
			}
			conf := maps.Clone(snap.Metadata.Configuration)
			if conf == nil {
				conf = map[string]string{}
			}
			conf[key] = expr
			return delta.WithConstraint(snap.Protocol), conf, nil
		})
}

// DropConstraint implements catalogadapter.ConstraintEditor. The protocol
// stays as it is: dropping a constraint needs no downgrade.
func (p *Provider) DropConstraint(ctx context.Context, id catalogadapter.TableIdent, name string) (catalogadapter.TableSpec, error) {
	key := delta.ConstraintPrefix + strings.ToLower(name)
	return p.changeConstraints(ctx, id, "DROP CONSTRAINT", map[string]any{"constraintName": name},
		func(snap *delta.Snapshot) (delta.Protocol, map[string]string, error) {
			if _, ok := snap.Metadata.Configuration[key]; !ok {
				return delta.Protocol{}, nil, fmt.Errorf("%w: the table has no constraint %s", catalogadapter.ErrNoConstraint, name)
			}
			conf := maps.Clone(snap.Metadata.Configuration)
			delete(conf, key)
			return snap.Protocol, conf, nil
		})
}

// changeConstraints commits the configuration (and protocol) change
// computes from the latest snapshot, as one metaData commit, computing it
// again on a lost race.
func (p *Provider) changeConstraints(ctx context.Context, id catalogadapter.TableIdent, op string, params map[string]any,
	change func(*delta.Snapshot) (delta.Protocol, map[string]string, error)) (catalogadapter.TableSpec, error) {
	t, tpath, err := p.table(id)
	if err != nil {
		return catalogadapter.TableSpec{}, err
	}
	for attempt := 0; ; attempt++ {
		snap, err := p.fresh(ctx, t, tpath)
		if err != nil {
			return catalogadapter.TableSpec{}, readError(tpath, err)
		}
		proto, conf, err := change(snap)
		if err != nil {
			return catalogadapter.TableSpec{}, fmt.Errorf("%s on %s: %w", strings.ToLower(op), tpath, err)
		}
		md := snap.Metadata
		md.Configuration = conf
		actions := []delta.Action{{MetaData: &md}}
		if !sameProtocol(proto, snap.Protocol) {
			actions = append([]delta.Action{{Protocol: &proto}}, actions...)
		}
		now := p.opts.Now()
		res, err := snap.Commit(ctx, actions, delta.CommitOptions{Operation: op, Parameters: params,
			Now: func() time.Time { return now }, NoCheckpoint: p.opts.BackgroundCheckpoints})
		if err == nil {
			p.snaps.put(tpath, snap, res.Snapshot)
			p.afterCommit(tpath, t, snap, res)
			return tableSpec(tpath, res.Snapshot)
		}
		if errors.Is(err, delta.ErrUnsupportedFeature) {
			return catalogadapter.TableSpec{}, fmt.Errorf("%s on %s: %w: %w", strings.ToLower(op), tpath, catalogadapter.ErrUnsupported, err)
		}
		if !errors.Is(err, delta.ErrConflict) || attempt >= p.opts.MaxRetries {
			return catalogadapter.TableSpec{}, fmt.Errorf("%s on %s: %w", strings.ToLower(op), tpath, err)
		}
	}
}

// checkRowRules checks a commit's RowRulesAre requirements against the
// snapshot it commits on.
func checkRowRules(snap *delta.Snapshot, reqs []catalogadapter.Requirement) error {
	for _, r := range reqs {
		if r.Kind != catalogadapter.KindRowRulesAre {
			continue
		}
		rules, err := snap.Rules()
		if err != nil {
			return err
		}
		if fp := rules.Fingerprint(); fp != r.Value {
			return fmt.Errorf("%w: %w at version %d: the rows were checked against others; roll the epoch back and write it again",
				catalogadapter.ErrConflict, catalogadapter.ErrRowRulesChanged, snap.Version)
		}
	}
	return nil
}
