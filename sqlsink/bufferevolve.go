package sqlsink

import (
	"context"
	"fmt"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/sqlquote"
)

// evolve gives the buffer's table the changes' columns and types, keeping
// its rows: added columns are NULL for them, widened ones are cast up.
// Batches waiting as Arrow go into the table first, since they have the
// old types.
func (b *buffer) evolve(ctx context.Context, changes []SchemaChange) error {
	if err := b.materialize(ctx); err != nil {
		return err
	}
	for _, c := range changes {
		typ, err := catalogadapter.DuckDBType(c.Type)
		if err != nil {
			return fmt.Errorf("%w: %s %q: %w", ErrBadRow, c.Kind, c.Column, err)
		}
		switch c.Kind {
		case catalogadapter.AddColumn:
			if _, ok := b.byName[c.Column]; ok {
				continue
			}
			if _, err := b.conn.ExecContext(ctx, "ALTER TABLE buf ADD COLUMN "+sqlquote.Ident(c.Column)+" "+typ); err != nil {
				return fmt.Errorf("buffer: add column %q: %w", c.Column, err)
			}
			b.byName[c.Column] = len(b.cols)
			b.cols = append(b.cols, column{name: c.Column, duckType: typ, nullable: true, arrowType: c.Type})
		case catalogadapter.WidenColumn:
			i, ok := b.byName[c.Column]
			if !ok {
				return fmt.Errorf("%w: column %q is not in the table", ErrBadRow, c.Column)
			}
			if _, err := b.conn.ExecContext(ctx, "ALTER TABLE buf ALTER "+sqlquote.Ident(c.Column)+" TYPE "+typ); err != nil {
				return fmt.Errorf("buffer: widen column %q: %w", c.Column, err)
			}
			b.cols[i].duckType, b.cols[i].arrowType = typ, c.Type
		}
	}
	return nil
}
