package planner

// information_schema.TABLES.TABLE_ROWS and SHOW TABLE STATUS Rows come
// from the table's metadata (sqlsink.Sink.RowCount), never a scan.

import (
	"strings"

	gms "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/information_schema"
)

var (
	_ gms.StatisticsTable = (*table)(nil)
	_ gms.StatisticsTable = (*keyedTable)(nil)
	_ gms.StatisticsTable = (*unreadableTable)(nil)
)

// metadataRows is the sink's row count as its metadata tells it; false
// when it does not (no stats, delete files, storage unreachable).
func (t *table) metadataRows(ctx *gms.Context) (uint64, bool) {
	n, known, err := t.sink.RowCount(ctx)
	if err != nil || !known || n < 0 {
		// A listing of every table must not fail on one table's storage.
		return 0, false
	}
	return uint64(n), true
}

// RowCount implements sql.StatisticsTable. The count is never exact to
// go-mysql-server: an exact one would answer COUNT(*) from metadata
// instead of the table's rows.
func (t *table) RowCount(ctx *gms.Context) (uint64, bool, error) {
	n, _ := t.metadataRows(ctx)
	return n, false, nil
}

// DataLength implements sql.StatisticsTable: not tracked.
func (t *table) DataLength(*gms.Context) (uint64, error) { return 0, nil }

// RowCount implements sql.StatisticsTable: unknown. Without it
// go-mysql-server's TABLES would show the previous table's count.
func (t *unreadableTable) RowCount(*gms.Context) (uint64, bool, error) { return 0, false, nil }

// DataLength implements sql.StatisticsTable: not tracked.
func (t *unreadableTable) DataLength(*gms.Context) (uint64, error) { return 0, nil }

// TABLES row columns (information_schema tables_table.go).
const (
	tablesSchemaCol    = 1
	tablesNameCol      = 2
	tablesRowsCol      = 7
	tablesAvgLengthCol = 8
)

// nullUnknownTableRows makes TABLE_ROWS (and AVG_ROW_LENGTH) NULL for a
// sink whose metadata does not tell its count: go-mysql-server's TABLES
// holds a number for every table, and 0 would be a wrong one.
func (e *Engine) nullUnknownTableRows() error {
	db := &database{engine: e}
	return e.fixInfoSchemaTable(information_schema.TablesTableName, func(ctx *gms.Context, r gms.Row) {
		if s, _ := r[tablesSchemaCol].(string); !strings.EqualFold(s, DatabaseName) {
			return
		}
		name, _ := r[tablesNameCol].(string)
		if _, known := db.metadataRows(ctx, name); !known {
			r[tablesRowsCol], r[tablesAvgLengthCol] = nil, nil
		}
	})
}

// metadataRows is metadataRows of the sink named name, false for a sink
// that does not open.
func (d *database) metadataRows(ctx *gms.Context, name string) (uint64, bool) {
	t, ok, err := d.GetTableInsensitive(ctx, name)
	if err != nil || !ok {
		return 0, false
	}
	if k, ok := t.(*keyedTable); ok {
		t = k.table
	}
	if tt, ok := t.(*table); ok {
		return tt.metadataRows(ctx)
	}
	return 0, false
}
