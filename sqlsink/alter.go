package sqlsink

import (
	"context"
	"fmt"

	"github.com/lakesql/lakesql/catalogadapter"
)

// SchemaChange is one change of ALTER SINK (see catalogadapter).
type SchemaChange = catalogadapter.SchemaChange

// ErrSchemaChange: the format does not allow the change; the error names the rule.
var ErrSchemaChange = catalogadapter.ErrSchemaChange

// AlterSchema applies changes to the sink's table as one table version,
// between epochs, and takes the new schema for the epochs that follow.
// Not built yet: issue 19 builds it (branch h19/devolve).
func (s *Sink) AlterSchema(ctx context.Context, changes []SchemaChange) error {
	return fmt.Errorf("alter sink %s: %w: schema changes are not built yet", s.cfg.Name, ErrUnsupported)
}
