package planner

import (
	gms "github.com/dolthub/go-mysql-server/sql"
)

// unreadableTable stands in for a sink that cannot be opened or mapped
// (its table is gone, its storage unreachable, a column of a type we do not
// read). SHOW TABLES and information_schema list it with its declared
// columns, so one broken sink never breaks metadata queries about the
// others; every read and write of it fails with the reason.
type unreadableTable struct {
	name   string
	schema gms.Schema
	err    error
}

var (
	_ gms.InsertableTable = (*unreadableTable)(nil)
	_ gms.UpdatableTable  = (*unreadableTable)(nil)
	_ gms.DeletableTable  = (*unreadableTable)(nil)
	_ gms.TemporaryTable  = (*unreadableTable)(nil)
)

// newUnreadableTable keeps the columns the definition declares whose types
// map; a sink that attached without columns has none to show.
func newUnreadableTable(h *sinkHandle, err error) *unreadableTable {
	t := &unreadableTable{name: h.rec.Name, err: err}
	if h.def != nil {
		for _, c := range h.def.Columns {
			typ, terr := gmsType(c.Type)
			if terr != nil {
				continue
			}
			t.schema = append(t.schema, &gms.Column{Name: c.Name, Type: typ, Nullable: !c.NotNull,
				Source: h.rec.Name, DatabaseSource: DatabaseName})
		}
	}
	return t
}

func (t *unreadableTable) Name() string               { return t.name }
func (t *unreadableTable) String() string             { return t.name }
func (t *unreadableTable) Schema() gms.Schema         { return t.schema }
func (t *unreadableTable) Collation() gms.CollationID { return gms.Collation_Default }
func (t *unreadableTable) IsTemporary() bool          { return false }

func (t *unreadableTable) Partitions(ctx *gms.Context) (gms.PartitionIter, error) {
	return nil, failed(ctx, t.err)
}

func (t *unreadableTable) PartitionRows(ctx *gms.Context, _ gms.Partition) (gms.RowIter, error) {
	return nil, failed(ctx, t.err)
}

func (t *unreadableTable) Inserter(*gms.Context) gms.RowInserter { return failingWriter{t.err} }
func (t *unreadableTable) Updater(*gms.Context) gms.RowUpdater   { return failingWriter{t.err} }
func (t *unreadableTable) Deleter(*gms.Context) gms.RowDeleter   { return failingWriter{t.err} }

// failingWriter refuses every row with the sink's error.
type failingWriter struct{ err error }

func (w failingWriter) StatementBegin(*gms.Context)                 {}
func (w failingWriter) DiscardChanges(*gms.Context, error) error    { return nil }
func (w failingWriter) StatementComplete(ctx *gms.Context) error    { return failed(ctx, w.err) }
func (w failingWriter) Insert(ctx *gms.Context, _ gms.Row) error    { return failed(ctx, w.err) }
func (w failingWriter) Update(ctx *gms.Context, _, _ gms.Row) error { return failed(ctx, w.err) }
func (w failingWriter) Delete(ctx *gms.Context, _ gms.Row) error    { return failed(ctx, w.err) }
func (w failingWriter) Close(*gms.Context) error                    { return nil }
