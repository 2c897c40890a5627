package sqlsink

// Row rules in the sink: a table's CHECK constraints, column invariants
// and generated columns (catalogadapter.RowRules) are applied to each
// batch as it enters the buffer. Generated columns a row leaves NULL take
// their expression's value; then every new row is checked, and a batch
// with a row that breaks a rule is taken out again whole, so the refused
// Write fails and the epoch goes on with the rows it had.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/sqlquote"
)

// The row rules' errors, as the sink passes them on.
var (
	// ErrCheckViolated: a row breaks a CHECK constraint or invariant; the
	// error names it (MySQL's ER_CHECK_CONSTRAINT_VIOLATED).
	ErrCheckViolated = catalogadapter.ErrCheckViolated
	// ErrGeneratedValue: a row gives a generated column another value
	// than its expression (ER_NON_DEFAULT_VALUE_FOR_GENERATED_COLUMN).
	ErrGeneratedValue = catalogadapter.ErrGeneratedValue
	// ErrNoConstraint: DROP CONSTRAINT of a constraint the table lacks.
	ErrNoConstraint = catalogadapter.ErrNoConstraint
	// ErrConstraintExists: ADD CONSTRAINT of a name already taken.
	ErrConstraintExists = catalogadapter.ErrConstraintExists
)

// bufferRules are the row rules as the buffer applies them.
type bufferRules struct {
	rules     catalogadapter.RowRules
	generated map[string]catalogadapter.GeneratedRule
}

// loadRules reads the table's row rules, when its backend has any, checks
// that DuckDB binds each over the buffer's columns, and gives them to the
// buffer. A rule that does not bind refuses the table by its name.
func (s *Sink) loadRules(ctx context.Context) error {
	rr, ok := s.cfg.Provider.(catalogadapter.RowRuler)
	if !ok {
		return nil
	}
	rules, err := rr.RowRules(ctx, s.cfg.Table)
	if err != nil {
		return err
	}
	br := &bufferRules{rules: rules, generated: map[string]catalogadapter.GeneratedRule{}}
	for _, g := range rules.Generated {
		br.generated[g.Column] = g
	}
	if err := s.buf.bindRules(ctx, br); err != nil {
		return err
	}
	if rules.Empty() {
		br = nil
	}
	s.rules, s.bufRules, s.rulesStale = rules, br, false
	s.buf.setRules(br)
	return nil
}

// beginRules reads the rules again when a commit found them changed, for
// the epoch being begun; s.mu is held and the buffer is empty.
func (s *Sink) beginRules(ctx context.Context) error {
	if !s.rulesStale {
		return nil
	}
	return s.loadRules(ctx)
}

// rulesRequirement is the precondition of a commit of rows checked
// against the sink's rules: that they are still the table's.
func (s *Sink) rulesRequirement() []catalogadapter.Requirement {
	if _, ok := s.cfg.Provider.(catalogadapter.RowRuler); !ok || s.rules.Fingerprint == "" {
		return nil
	}
	return []catalogadapter.Requirement{catalogadapter.RowRulesAre(s.rules.Fingerprint)}
}

// noteRulesChanged marks the rules for reading again at the next epoch
// when err says another writer changed them.
func (s *Sink) noteRulesChanged(err error) {
	if errors.Is(err, catalogadapter.ErrRowRulesChanged) {
		s.rulesStale = true
	}
}

// bindRules checks that each rule binds over the buffer's columns: a
// check as a BOOLEAN, a generation expression as any type (it is cast).
func (b *buffer) bindRules(ctx context.Context, br *bufferRules) error {
	for _, c := range br.rules.Checks {
		if err := b.bindBoolean(ctx, "buf", c.Predicate); err != nil {
			return fmt.Errorf("%w: CHECK constraint %s (%s): %w", ErrUnsupported, c.Name, c.Expr, err)
		}
	}
	for _, g := range br.rules.Generated {
		if _, ok := b.byName[g.Column]; !ok {
			return fmt.Errorf("%w: generated column %s is not in the table", ErrUnsupported, g.Column)
		}
		if _, err := b.conn.ExecContext(ctx, "SELECT ("+g.Value+") FROM buf LIMIT 0"); err != nil {
			return fmt.Errorf("%w: generated column %s (%s): %w", ErrUnsupported, g.Column, g.Expr, err)
		}
	}
	return nil
}

// bindBoolean checks that predicate binds over from and is a BOOLEAN.
func (b *buffer) bindBoolean(ctx context.Context, from, predicate string) error {
	var name, typ string
	var rest [4]any
	err := b.conn.QueryRowContext(ctx, "DESCRIBE SELECT ("+predicate+") AS v FROM "+from).
		Scan(&name, &typ, &rest[0], &rest[1], &rest[2], &rest[3])
	if err != nil {
		return err
	}
	if typ != "BOOLEAN" {
		return fmt.Errorf("the expression is %s, not BOOLEAN", typ)
	}
	return nil
}

// generates tells whether column is generated (false without rules).
func (br *bufferRules) generates(column string) bool {
	if br == nil {
		return false
	}
	_, ok := br.generated[column]
	return ok
}

// setRules makes the buffer apply br (nil: none). Batches with rules go
// through the DuckDB table, where they can be filled and checked.
func (b *buffer) setRules(br *bufferRules) {
	b.rules = br
	b.direct = b.appendMode && br == nil
}

// generatedValue is the DuckDB value of generated column c, cast to its type.
func (b *buffer) generatedValue(c column, g catalogadapter.GeneratedRule) string {
	return "TRY_CAST((" + g.Value + ") AS " + c.duckType + ")"
}

// fillSelect wraps the insert's select list, over its source, so that
// generated columns left NULL take their expression's value over the
// row's other columns, cast to the table's types.
func (b *buffer) fillSelect(names, exprs []string, from string) string {
	inner := make([]string, len(exprs))
	outer := make([]string, len(names))
	for i := range exprs {
		x := exprs[i]
		if x == "NULL" && i < len(b.cols) {
			x = "CAST(NULL AS " + b.cols[i].duckType + ")" // typed, for the expressions that read it
		}
		inner[i] = x + " AS " + names[i]
		outer[i] = names[i]
	}
	for i, c := range b.cols {
		if g, ok := b.rules.generated[c.name]; ok {
			outer[i] = "COALESCE(" + names[i] + ", " + b.generatedValue(c, g) + ")"
		}
	}
	return "SELECT " + strings.Join(outer, ", ") + " FROM (SELECT " + strings.Join(inner, ", ") + " FROM " + from + ") AS __lakesql_row"
}

// violation is one rule as the check query tests it: the condition that
// holds for a row breaking it, and the error it makes.
type violation struct {
	cond    string
	columns []string
	err     func(row string) error
}

// violations lists the generated columns' rules first: a wrong or
// missing generated value is what a CHECK over it would trip on.
func (b *buffer) violations() []violation {
	var out []violation
	for _, col := range b.cols {
		g, ok := b.rules.generated[col.name]
		if !ok {
			continue
		}
		col := col
		out = append(out, violation{cond: "NOT (" + sqlquote.Ident(col.name) + " IS NOT DISTINCT FROM " + b.generatedValue(col, g) + ")",
			columns: []string{col.name},
			err: func(row string) error {
				return fmt.Errorf("%w: The value specified for generated column '%s' in table is not allowed (%s; it must equal %s)",
					ErrGeneratedValue, col.name, row, g.Expr)
			}})
		if !col.nullable {
			out = append(out, violation{cond: sqlquote.Ident(col.name) + " IS NULL", columns: []string{col.name},
				err: func(row string) error {
					return fmt.Errorf("%w: NULL in NOT NULL column %q: its generation expression %s gives NULL for %s", ErrBadRow, col.name, g.Expr, row)
				}})
		}
	}
	for _, c := range b.rules.rules.Checks {
		c := c
		out = append(out, violation{cond: "NOT coalesce((" + c.Predicate + "), false)", columns: c.Columns,
			err: func(row string) error {
				return fmt.Errorf("%w: Check constraint '%s' is violated (%s is not true for %s)", ErrCheckViolated, c.Name, c.Expr, row)
			}})
	}
	return out
}

// insertChecked inserts as insert does, with generated columns filled, in
// a transaction that keeps the rows only when none of those with seq at
// or after from (upserts; deletes carry no row) breaks a rule.
func (b *buffer) insertChecked(ctx context.Context, q string, from int64) error {
	if _, err := b.conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return fmt.Errorf("buffer batch: %w", err)
	}
	rollback := func(err error) error {
		if _, rerr := b.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
			return errors.Join(err, fmt.Errorf("roll the refused batch back: %w", rerr))
		}
		return err
	}
	b.inTable = true
	if _, err := b.conn.ExecContext(ctx, q); err != nil {
		return rollback(fmt.Errorf("%w: %v", ErrBadRow, err))
	}
	if err := b.firstViolation(ctx, "buf", fmt.Sprintf("%s >= %d AND %s = %d", seqColumn, from, opBufCol, OpUpsert), b.violations()); err != nil {
		return rollback(err)
	}
	if _, err := b.conn.ExecContext(ctx, "COMMIT"); err != nil {
		return rollback(fmt.Errorf("buffer batch: %w", err))
	}
	return nil
}

// firstViolation returns the error of the first rule a row of from
// (restricted by where, when given) breaks, naming the row's values of
// the columns the rule reads; nil when every row keeps every rule.
func (b *buffer) firstViolation(ctx context.Context, from, where string, vs []violation) error {
	if len(vs) == 0 {
		return nil
	}
	var which, conds []string
	for i, v := range vs {
		which = append(which, fmt.Sprintf("WHEN %s THEN %d", v.cond, i))
		conds = append(conds, v.cond)
	}
	cond := "(" + strings.Join(conds, " OR ") + ")"
	if where != "" {
		cond = where + " AND " + cond
	}
	var i int
	err := b.conn.QueryRowContext(ctx, "SELECT CASE "+strings.Join(which, " ")+" END FROM "+from+" WHERE "+cond+" LIMIT 1").Scan(&i)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check the table's constraints: %w", err)
	}
	v := vs[i]
	return v.err(b.describeRow(ctx, from, where, v))
}

// describeRow renders the first row of from breaking v as col = value, ...
func (b *buffer) describeRow(ctx context.Context, from, where string, v violation) string {
	if len(v.columns) == 0 {
		return "a row"
	}
	sel := make([]string, len(v.columns))
	for i, c := range v.columns {
		sel[i] = "coalesce(CAST(" + sqlquote.Ident(c) + " AS VARCHAR), 'NULL')"
	}
	cond := v.cond
	if where != "" {
		cond = where + " AND " + cond
	}
	vals := make([]string, len(v.columns))
	dest := make([]any, len(vals))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if err := b.conn.QueryRowContext(ctx, "SELECT "+strings.Join(sel, ", ")+" FROM "+from+" WHERE "+cond+" LIMIT 1").Scan(dest...); err != nil {
		return "a row"
	}
	parts := make([]string, len(vals))
	for i, c := range v.columns {
		val := vals[i]
		if len(val) > 64 {
			val = val[:64] + "..."
		}
		parts[i] = c + " = " + val
	}
	return "the row with " + strings.Join(parts, ", ")
}

// ChecksRows reports whether the table has row rules the sink applies to
// each batch as it is written, so that a Write may refuse rows that are
// well-formed. A caller that defers its writes to a group commit needs
// them refused at the statement instead, and writes such a sink alone.
func (s *Sink) ChecksRows() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.rules.Empty() || s.rulesStale
}
