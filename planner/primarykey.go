package planner

// A sink's PRIMARY KEY as go-mysql-server's metadata reads it: SHOW INDEX,
// information_schema.STATISTICS, KEY_COLUMN_USAGE and TABLE_CONSTRAINTS
// list the indexes of a table that is sql.IndexAddressable. A sink has no
// index to look rows up in, so the planner must never plan an index scan
// or a lookup join on it (it would expect exactly the matching rows from
// the lookup): keyedTable is a sql.TableWrapper, and the analyzer and the
// memo read the table it wraps (ResolvedTable.UnderlyingTable), which has
// no indexes, while the metadata paths read the wrapper itself.

import (
	gms "github.com/dolthub/go-mysql-server/sql"
)

// keyedTable is a sink with a PRIMARY KEY.
type keyedTable struct{ *table }

var (
	_ gms.TableWrapper     = (*keyedTable)(nil)
	_ gms.IndexAddressable = (*keyedTable)(nil)
)

// Underlying implements sql.TableWrapper: the planner's view, without
// indexes.
func (k *keyedTable) Underlying() gms.Table { return k.table }

// GetIndexes implements sql.IndexAddressable: the PRIMARY KEY only.
func (k *keyedTable) GetIndexes(*gms.Context) ([]gms.Index, error) {
	pk := &primaryKey{t: k.table}
	for _, c := range k.schema {
		if c.PrimaryKey {
			pk.cols = append(pk.cols, c)
		}
	}
	return []gms.Index{pk}, nil
}

// IndexedAccess implements sql.IndexAddressable; the planner never asks
// (see the file comment), and nil says the index serves no lookup.
func (k *keyedTable) IndexedAccess(*gms.Context, gms.IndexLookup) gms.IndexedTable { return nil }

// PreciseMatch implements sql.IndexAddressable: no lookup replaces a filter.
func (k *keyedTable) PreciseMatch() bool { return false }

// primaryKey is the PRIMARY KEY of a sink, in the key's column order (the
// order of the table's columns, as the sink keeps its key).
type primaryKey struct {
	t    *table
	cols []*gms.Column
}

var _ gms.Index = (*primaryKey)(nil)

func (p *primaryKey) ID() string       { return "PRIMARY" }
func (p *primaryKey) Database() string { return DatabaseName }
func (p *primaryKey) Table() string    { return p.t.Name() }

// Expressions are "table.column", as go-mysql-server's metadata matches them.
func (p *primaryKey) Expressions() []string {
	out := make([]string, len(p.cols))
	for i, c := range p.cols {
		out[i] = c.Source + "." + c.Name
	}
	return out
}

func (p *primaryKey) IsUnique() bool          { return true }
func (p *primaryKey) IsSpatial() bool         { return false }
func (p *primaryKey) IsFullText() bool        { return false }
func (p *primaryKey) IsVector() bool          { return false }
func (p *primaryKey) Comment() string         { return "" }
func (p *primaryKey) IndexType() string       { return "BTREE" }
func (p *primaryKey) IsGenerated() bool       { return false }
func (p *primaryKey) PrefixLengths() []uint16 { return nil }

func (p *primaryKey) ColumnExpressionTypes() []gms.ColumnExpressionType {
	out := make([]gms.ColumnExpressionType, len(p.cols))
	for i, c := range p.cols {
		out[i] = gms.ColumnExpressionType{Expression: c.Source + "." + c.Name, Type: c.Type}
	}
	return out
}

// CanSupport implements sql.Index: no lookup (the key is metadata only).
func (p *primaryKey) CanSupport(*gms.Context, ...gms.Range) bool { return false }

// CanSupportOrderBy implements sql.Index: the rows are in no key order.
func (p *primaryKey) CanSupportOrderBy(gms.Expression) bool { return false }
