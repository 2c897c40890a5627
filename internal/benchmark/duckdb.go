package benchmark

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/lakesql/lakesql/internal/duckarrow"
	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/sqlsink"
)

// openDuckDB opens an in-memory DuckDB with one connection configured as
// the sink configures its buffer: the sink's default memory limit, and
// spill files under tempDir. The references run on it, so both sides get
// the same memory to work in.
func openDuckDB(ctx context.Context, tempDir string) (*sql.DB, *sql.Conn, error) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, nil, fmt.Errorf("open DuckDB: %w", err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("connect to DuckDB: %w", err)
	}
	for _, q := range []string{
		"SET memory_limit = " + sqlquote.String(sqlsink.DefaultMemoryLimit),
		"SET temp_directory = " + sqlquote.String(tempDir),
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			conn.Close()
			db.Close()
			return nil, nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	return db, conn, nil
}

// registerArrow makes recs readable as the view name on conn, without
// copying them (DuckDB scans the Arrow stream); drop drops the view and
// its hold on them. The view can be scanned once.
func registerArrow(conn *sql.Conn, name string, schema *arrow.Schema, recs []arrow.RecordBatch) (drop func() error, err error) {
	rr, err := array.NewRecordReader(schema, recs)
	if err != nil {
		return nil, fmt.Errorf("record reader: %w", err)
	}
	defer rr.Release() // the exported stream holds its own reference
	var release func()
	err = conn.Raw(func(dc any) error {
		ar, err := duckarrow.FromConn(dc.(driver.Conn))
		if err != nil {
			return err
		}
		release, err = ar.RegisterView(rr, name)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("register Arrow view %s: %w", name, err)
	}
	return func() error {
		defer release()
		if _, err := conn.ExecContext(context.Background(), "DROP VIEW IF EXISTS "+sqlquote.Ident(name)); err != nil {
			return fmt.Errorf("drop Arrow view %s: %w", name, err)
		}
		return nil
	}, nil
}

// duckdbVersion is the DuckDB library's version, for the machine line.
func duckdbVersion(ctx context.Context) string {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return "unknown"
	}
	defer db.Close()
	var v string
	if err := db.QueryRowContext(ctx, "SELECT version()").Scan(&v); err != nil {
		return "unknown"
	}
	return v
}
