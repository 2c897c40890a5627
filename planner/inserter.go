package planner

// The write side of a sink's table: INSERT buffers the statement's rows,
// UPDATE and DELETE turn into changelog rows, and all are handed to the
// session's epoch when the statement succeeds (insertrows.go).

import (
	"fmt"
	"sync"

	gms "github.com/dolthub/go-mysql-server/sql"

	"github.com/lakesql/lakesql/sqlsink"
)

// Inserter implements sql.InsertableTable.
func (t *table) Inserter(*gms.Context) gms.RowInserter {
	return &inserter{t: t}
}

// inserter buffers one statement's rows. go-mysql-server calls
// StatementBegin, Insert for each row, then StatementComplete (the
// statement succeeded: the rows go to the session's epoch, as one batch)
// or DiscardChanges (it failed: they are dropped), then Close.
type inserter struct {
	t    *table
	mu   sync.Mutex
	rows []gms.Row
}

func (i *inserter) StatementBegin(*gms.Context) {
	i.mu.Lock()
	i.rows = i.rows[:0]
	i.mu.Unlock()
}

func (i *inserter) DiscardChanges(*gms.Context, error) error {
	i.mu.Lock()
	i.rows = nil
	i.mu.Unlock()
	return nil
}

func (i *inserter) StatementComplete(ctx *gms.Context) error {
	i.mu.Lock()
	rows := i.rows
	i.rows = nil
	i.mu.Unlock()
	if len(rows) == 0 {
		return nil
	}
	s, ok := ctx.Session.(*Session)
	if !ok {
		return fmt.Errorf("sink %s: not a lakesql session", i.t.h.rec.Name)
	}
	return s.write(ctx, i.t.h, i.t.extra, rows)
}

func (i *inserter) Insert(ctx *gms.Context, row gms.Row) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	for c, r := range i.t.h.rules {
		if c < len(row) {
			if err := r.check(row[c], i.t.schema[c].Name, len(i.rows)+1); err != nil {
				return failed(ctx, fmt.Errorf("sink %s: %w", i.t.h.rec.Name, err))
			}
		}
	}
	i.rows = append(i.rows, row.Copy())
	return nil
}

func (i *inserter) Close(*gms.Context) error { return nil }

var (
	_ gms.DeletableTable = (*table)(nil)
	_ gms.UpdatableTable = (*table)(nil)
)

// Deleter implements sql.DeletableTable: on an upsert sink each deleted
// row becomes a changelog row with _op = 'D' (go-mysql-server finds the rows
// in the last committed version, the WHERE applied).
func (t *table) Deleter(ctx *gms.Context) gms.RowDeleter {
	return t.changeWriter(ctx)
}

// Updater implements sql.UpdatableTable: on an upsert sink each updated
// row becomes a changelog row with _op = 'U'. Changing a key column is
// refused.
func (t *table) Updater(ctx *gms.Context) gms.RowUpdater {
	return t.changeWriter(ctx)
}

// changeWriter returns the writer of an UPDATE or DELETE of the sink, and
// records the sink as one the running statement changes, so that it is
// locked before its rows are read (Session.lockTarget).
func (t *table) changeWriter(ctx *gms.Context) *changeWriter {
	if sess, ok := ctx.Session.(*Session); ok {
		sess.addTarget(ctx, t.h)
	}
	return &changeWriter{inserter: inserter{t: t}}
}

// changeWriter turns DELETE and UPDATE into changelog rows, buffered per
// statement like inserts.
type changeWriter struct {
	inserter
}

// StatementComplete hands the statement's changelog rows over, unless the
// statement changes more than one sink (Session.checkOneTarget): then no
// sink gets any.
func (c *changeWriter) StatementComplete(ctx *gms.Context) error {
	if sess, ok := ctx.Session.(*Session); ok {
		if err := sess.checkOneTarget(ctx); err != nil {
			_ = c.DiscardChanges(ctx, err)
			return sess.fail(err)
		}
	}
	return c.inserter.StatementComplete(ctx)
}

func (c *changeWriter) upsertOnly(ctx *gms.Context, what string) error {
	if c.t.sink.Config().Mode != sqlsink.ModeUpsert {
		return failed(ctx, fmt.Errorf("%w: %s on sink %s, which is in append mode (it needs mode = 'upsert' and a PRIMARY KEY)",
			ErrNotSupported, what, c.t.h.rec.Name))
	}
	return nil
}

func (c *changeWriter) Delete(ctx *gms.Context, row gms.Row) error {
	if err := c.upsertOnly(ctx, "DELETE"); err != nil {
		return err
	}
	return c.Insert(ctx, append(row.Copy()[:len(row):len(row)], "D"))
}

func (c *changeWriter) Update(ctx *gms.Context, old, new gms.Row) error {
	if err := c.upsertOnly(ctx, "UPDATE"); err != nil {
		return err
	}
	for i, col := range c.t.schema {
		if !col.PrimaryKey {
			continue
		}
		if cmp, err := col.Type.Compare(ctx, old[i], new[i]); err != nil || cmp != 0 {
			return failed(ctx, fmt.Errorf("%w: UPDATE of the key column %s of sink %s (delete the row and insert a new one)",
				ErrNotSupported, col.Name, c.t.h.rec.Name))
		}
	}
	return c.Insert(ctx, append(new.Copy()[:len(new):len(new)], "U"))
}
