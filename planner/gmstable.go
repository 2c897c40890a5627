package planner

// A sink as go-mysql-server's table (gmsdatabase.go holds its database):
// reading one reads the last committed version through DuckDB; writing
// one buffers the statement's rows (inserter.go).

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	gms "github.com/dolthub/go-mysql-server/sql"

	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/sqlsink"
)

type table struct {
	h      *sinkHandle
	sink   *sqlsink.Sink
	schema gms.Schema
	values []valueRule // by column of the sink's schema
	// extra are the columns after the table's that the session sees:
	// schema evolution's new ones (insertevolve.go), NULL when read.
	extra []arrow.Field
	// at is the scan of an AS OF version (asof.go); "" reads the last
	// committed version.
	at string
}

var (
	_ gms.Table           = (*table)(nil)
	_ gms.InsertableTable = (*table)(nil)
	_ gms.TemporaryTable  = (*table)(nil)
)

// IsTemporary implements sql.TemporaryTable: a sink never is one.
// go-mysql-server's check of writes in a READ ONLY transaction asks every
// table written to, and fails with a nil pointer on a table that does not
// answer, instead of refusing the write with 1792.
func (t *table) IsTemporary() bool { return false }

func (t *table) Name() string               { return t.h.rec.Name }
func (t *table) String() string             { return t.h.rec.Name }
func (t *table) Schema() gms.Schema         { return t.schema }
func (t *table) Collation() gms.CollationID { return gms.Collation_Default }

type onePartition struct{}

func (onePartition) Key() []byte { return []byte("all") }

func (t *table) Partitions(*gms.Context) (gms.PartitionIter, error) {
	return gms.PartitionsToPartitionIter(onePartition{}), nil
}

// PartitionRows reads the last committed version through DuckDB. Inside a
// transaction this is still the last committed version: a transaction does
// not see its own uncommitted rows.
func (t *table) PartitionRows(ctx *gms.Context, _ gms.Partition) (gms.RowIter, error) {
	if sess, ok := ctx.Session.(*Session); ok {
		// An UPDATE or DELETE locks its sink before it reads the rows
		// it changes.
		if err := sess.lockTarget(ctx, t.h); err != nil {
			return nil, sess.fail(err)
		}
	}
	iter, err := t.scan(ctx)
	// go-mysql-server's row iteration may re-create the error (a killed
	// read's 1317 would reach the client as 1105): the session keeps it.
	return iter, failed(ctx, err)
}

func (t *table) scan(ctx *gms.Context) (gms.RowIter, error) {
	e := t.h.engine
	scan, err := t.at, error(nil)
	if scan == "" {
		scan, err = scanSQL(ctx, t.sink, e.db)
	}
	if err != nil {
		return nil, fmt.Errorf("sink %s: %w", t.h.rec.Name, err)
	}
	cols := make([]string, len(t.schema))
	fields := t.sink.Schema().Fields()
	for i, c := range t.schema {
		q := sqlquote.Ident(c.Name)
		if i >= len(fields)+len(t.extra) {
			q = "'I'" // the _op column of a changelog INSERT ... SELECT
		} else if i >= len(fields) {
			q = "NULL" // a column the open epoch adds: no committed row has it
		} else if _, isDec := fields[i].Type.(*arrow.Decimal128Type); isDec {
			// Every digit, also of a scale go-mysql-server cannot hold.
			q = "CAST(" + q + " AS VARCHAR)"
		}
		cols[i] = q
	}
	rows, err := e.db.QueryContext(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM ("+scan+")")
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			// Killed (or its client gone) while DuckDB read: 1317.
			return nil, fmt.Errorf("sink %s: read: %w (%w)", t.h.rec.Name, errInterrupted, cerr)
		}
		return nil, fmt.Errorf("sink %s: read: %w", t.h.rec.Name, err)
	}
	return &scanIter{t: t, rows: rows, n: len(cols)}, nil
}

// scanSQL is a DuckDB query over the last committed version of the sink's
// table, through the sink's own provider (Delta, or its Iceberg catalog).
func scanSQL(ctx context.Context, s *sqlsink.Sink, q *sql.DB) (string, error) {
	scan, ok, err := s.ScanSQL(ctx, q)
	if !ok {
		return "", fmt.Errorf("%w: reading a table of this backend", ErrNotSupported)
	}
	return scan, err
}

// scanIter streams a sink's rows from DuckDB.
type scanIter struct {
	t    *table
	rows *sql.Rows
	n    int
}

func (it *scanIter) Next(ctx *gms.Context) (gms.Row, error) {
	row, err := it.next(ctx)
	if err != nil && err != io.EOF {
		return nil, failed(ctx, err)
	}
	return row, err
}

func (it *scanIter) next(ctx *gms.Context) (gms.Row, error) {
	if !it.rows.Next() {
		if err := it.rows.Err(); err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return nil, fmt.Errorf("sink %s: read: %w (%w)", it.t.h.rec.Name, errInterrupted, cerr)
			}
			return nil, err
		}
		return nil, io.EOF
	}
	vals := make([]any, it.n)
	ptrs := make([]any, it.n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := it.rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	fields := it.t.sink.Schema().Fields()
	for i, v := range vals {
		if v == nil {
			continue
		}
		if i < len(fields) && isNested(fields[i].Type) {
			text, err := nestedText(v, fields[i].Type)
			if err != nil {
				return nil, fmt.Errorf("sink %s: column %s: %w", it.t.h.rec.Name, fields[i].Name, err)
			}
			vals[i] = text
			continue
		}
		if b, ok := v.(bool); ok {
			v = int8(0)
			if b {
				v = int8(1)
			}
		}
		cv, _, err := it.t.schema[i].Type.Convert(ctx, v)
		if err != nil {
			return nil, fmt.Errorf("sink %s: column %s: %w", it.t.h.rec.Name, it.t.schema[i].Name, err)
		}
		vals[i] = cv
	}
	return gms.NewRow(vals...), nil
}

func (it *scanIter) Close(*gms.Context) error { return it.rows.Close() }
