package planner

// The MySQL codes of a table's row rules (sqlsink/rowrules.go), which
// vitess does not name: CHECK constraints, column invariants and
// generated columns, and ALTER SINK ... ADD/DROP CONSTRAINT.
const (
	// erCheckConstraintViolated is ER_CHECK_CONSTRAINT_VIOLATED: a row
	// breaks a CHECK constraint or invariant, or an existing row breaks
	// one being added.
	erCheckConstraintViolated = 3819
	// erCheckConstraintDupName is ER_CHECK_CONSTRAINT_DUP_NAME.
	erCheckConstraintDupName = 3822
	// erNonDefaultValueForGeneratedColumn is
	// ER_NON_DEFAULT_VALUE_FOR_GENERATED_COLUMN: a row gives a generated
	// column another value than its expression.
	erNonDefaultValueForGeneratedColumn = 3105
	// erConstraintNotFound is ER_CONSTRAINT_NOT_FOUND.
	erConstraintNotFound = 3940
)
