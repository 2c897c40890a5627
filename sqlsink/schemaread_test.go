package sqlsink

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/providertest"
	"github.com/lakesql/lakesql/internal/icebergtest"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// Readers of a table of any columns, for the schema-evolution tests: the
// header (column names, in order) and the rows as "v1|v2|..." strings,
// sorted, NULL spelled NULL, so that every reader's answer compares.

// queryTable runs q on db and returns its column names and sorted rows.
func queryTable(ctx context.Context, db *sql.DB, q string) ([]string, []string, error) {
	rs, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return nil, nil, err
	}
	out := []string{}
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = icebergtest.Cell(v)
		}
		out = append(out, strings.Join(parts, "|"))
	}
	sort.Strings(out)
	return cols, out, rs.Err()
}

// sinkScanTable reads the current version through the provider's own scan.
func sinkScanTable(ctx context.Context, p catalogadapter.Provider, id catalogadapter.TableIdent, db *sql.DB) ([]string, []string, error) {
	sc, ok := p.(catalogadapter.Scanner)
	if !ok {
		return nil, nil, fmt.Errorf("provider %T cannot scan", p)
	}
	q, err := sc.ScanSQL(ctx, id, db, -1, nil)
	if err != nil {
		return nil, nil, err
	}
	return queryTable(ctx, db, "SELECT * FROM ("+q+")")
}

// independentTable reads the table's current version with the format's
// own reader, not the provider: iceberg-go's scan through a fresh catalog
// handle, or the Delta log replayed from disk and read by DuckDB.
func independentTable(t testing.TB, l lake, root string, id catalogadapter.TableIdent) ([]string, []string, error) {
	t.Helper()
	ctx := context.Background()
	if l.name == deltaLake.name {
		store, err := delta.NewLocalStorage(id.Name)
		if err != nil {
			return nil, nil, err
		}
		snap, err := delta.NewTable(store).Latest(ctx)
		if err != nil {
			return nil, nil, err
		}
		db := providertest.OpenDuckDB(t)
		if err := delta.PrepareDuckDB(ctx, db); err != nil {
			return nil, nil, err
		}
		q, err := snap.ScanSQL(ctx, db)
		if err != nil {
			return nil, nil, err
		}
		return queryTable(ctx, db, "SELECT * FROM ("+q+")")
	}
	tbl := icebergtest.Lake{Dir: root}.Table(t, id)
	at, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer at.Release()
	cols, rows := icebergtest.ArrowRows(at)
	return cols, rows, nil
}

// specColumns spells a table's columns as name:type, in order.
func specColumns(spec catalogadapter.TableSpec) string {
	var parts []string
	for _, f := range spec.Schema.Fields() {
		parts = append(parts, f.Name+":"+f.Type.String())
	}
	return strings.Join(parts, ",")
}
