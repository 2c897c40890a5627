package catalogadapter

// Row rules: what a table asks of every row written into it (CHECK
// constraints, column invariants, generated columns), handed to the sink
// as DuckDB SQL so that it can check each batch before it is buffered, and
// the editing of CHECK constraints.

import (
	"context"
	"errors"
)

// RowRules are the rules a table holds new rows to, as DuckDB expressions
// over its columns by (logical) name.
type RowRules struct {
	// Checks must evaluate to true for every new row: false or NULL
	// refuses it.
	Checks []CheckRule
	// Generated columns take their expression's value when a row gives
	// none, and refuse a row whose value differs.
	Generated []GeneratedRule
	// Fingerprint identifies the rules; RowRulesAre requires them unchanged.
	Fingerprint string
}

// CheckRule is one CHECK constraint or column invariant.
type CheckRule struct {
	// Name names the constraint in errors.
	Name string
	// Expr is the expression as the table spells it.
	Expr string
	// Predicate is Expr in DuckDB SQL over the table's columns.
	Predicate string
	// Columns are the columns Predicate reads, for errors.
	Columns []string
}

// GeneratedRule is one generated column.
type GeneratedRule struct {
	Column string
	// Expr is the generation expression as the table spells it.
	Expr string
	// Value is Expr in DuckDB SQL over the table's columns.
	Value string
}

// Empty tells whether no rule constrains new rows.
func (r RowRules) Empty() bool { return len(r.Checks) == 0 && len(r.Generated) == 0 }

// RowRuler is a backend whose tables may hold rules over their rows. A
// table whose rules the backend cannot translate is refused with
// ErrUnsupported naming the rule. A commit of rows checked against rules
// should carry RowRulesAre(fingerprint), which the backend then checks.
type RowRuler interface {
	RowRules(ctx context.Context, id TableIdent) (RowRules, error)
}

// ConstraintEditor adds and drops CHECK constraints.
type ConstraintEditor interface {
	// CheckPredicate translates a CHECK expression over the table's current
	// columns to DuckDB SQL, refusing one outside what the backend
	// translates (ErrUnsupported) or naming unknown columns.
	CheckPredicate(ctx context.Context, id TableIdent, expr string) (CheckRule, error)
	// AddConstraint records the CHECK constraint as one table version,
	// with the protocol upgrade it needs. checkedAt is the version whose
	// rows the caller found to satisfy it: a version after it that added
	// data or changed the schema is a conflict (ErrConflict), for its rows
	// were not checked. A constraint of that name already there is
	// ErrConstraintExists.
	AddConstraint(ctx context.Context, id TableIdent, name, expr string, checkedAt int64) (TableSpec, error)
	// DropConstraint removes it as one table version; a missing one is
	// ErrNoConstraint.
	DropConstraint(ctx context.Context, id TableIdent, name string) (TableSpec, error)
}

// KindRowRulesAre: the table's row rules still have the fingerprint in
// Requirement.Value (RowRulesAre).
const KindRowRulesAre RequirementKind = "row-rules-are"

// RowRulesAre requires that the table's row rules are still the ones with
// this fingerprint: the rows committed were checked against them, and a
// constraint another writer added since was not.
func RowRulesAre(fingerprint string) Requirement {
	return Requirement{Kind: KindRowRulesAre, Value: fingerprint}
}

// Sentinels of row rules.
var (
	// ErrCheckViolated: a row breaks a CHECK constraint or invariant (or an
	// existing row breaks one being added); the error names it.
	ErrCheckViolated = errors.New("check constraint violated")
	// ErrGeneratedValue: a row gives a generated column a value that its
	// expression does not give; the error names the column.
	ErrGeneratedValue = errors.New("value of a generated column differs from its expression")
	// ErrNoConstraint: no constraint of that name.
	ErrNoConstraint = errors.New("constraint not found")
	// ErrConstraintExists: a constraint of that name is already there.
	ErrConstraintExists = errors.New("constraint already exists")
	// ErrRowRulesChanged: the table's row rules changed after the rows
	// were checked; it wraps ErrConflict.
	ErrRowRulesChanged = errors.New("the table's constraints changed")
)
