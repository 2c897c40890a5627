package catalogadapter

// Schema evolution and table properties: what ALTER SINK asks of a
// backend. Each change is one table version of its own, checked against
// the format's rules before anything is written, so a refused change
// leaves the table as it was.

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
)

// SchemaEvolver changes a table's columns.
type SchemaEvolver interface {
	// AlterSchema applies changes, in order, as one table version (a Delta
	// metaData action, an Iceberg schema update) and returns the table as
	// it is after it. A change the format does not allow fails with an
	// error wrapping ErrSchemaChange that names the rule, and nothing is
	// written. It follows the format's conflict rules: a concurrent commit
	// it has not seen makes it retry on the new version or fail with
	// ErrConflict.
	AlterSchema(ctx context.Context, id TableIdent, changes []SchemaChange) (TableSpec, error)
}

// InCommitEvolver is a SchemaEvolver that also applies schema changes in
// the commit of the data (CommitOptions.SchemaChanges, staged with
// Source.Evolve): automatic evolution as one table version.
type InCommitEvolver interface {
	SchemaEvolver
	EvolvesInCommit()
}

// SchemaChangeKind names one kind of schema change.
type SchemaChangeKind string

// The schema changes of ALTER SINK.
const (
	// AddColumn adds a nullable column at the end; old rows read NULL.
	AddColumn SchemaChangeKind = "ADD COLUMN"
	// WidenColumn changes a column's type to a wider one (Delta's
	// typeWidening, Iceberg's promotions).
	WidenColumn SchemaChangeKind = "MODIFY COLUMN"
	// RenameColumn renames a column (Delta: only with column mapping).
	RenameColumn SchemaChangeKind = "RENAME COLUMN"
	// DropColumn drops a column (Delta: only with column mapping).
	DropColumn SchemaChangeKind = "DROP COLUMN"
)

// SchemaChange is one change of a table's columns.
type SchemaChange struct {
	Kind SchemaChangeKind
	// Column is the column changed; for AddColumn, the new column's name.
	Column string
	// NewName is RenameColumn's new name.
	NewName string
	// Type is the type of AddColumn and WidenColumn.
	Type arrow.DataType
	// Comment is AddColumn's optional column comment.
	Comment string
}

// PropertySetter sets and unsets a table's properties in one table
// version, upgrading the table's protocol where a property needs a table
// feature (delta.columnMapping.mode, delta.enableDeletionVectors,
// delta.constraints.*, ...). A property the backend cannot honour fails
// with an error wrapping ErrUnsupported that names it, and nothing is
// written.
type PropertySetter interface {
	SetProperties(ctx context.Context, id TableIdent, set map[string]string, unset []string) (TableSpec, error)
}

// ErrSchemaChange: the format does not allow this schema change
// (narrowing a type, renaming onto an existing name, dropping a partition
// column, ...). The error names the rule.
var ErrSchemaChange = errors.New("schema change not allowed")
