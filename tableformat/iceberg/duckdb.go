package iceberg

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/lakesql/lakesql/internal/duckarrow"
	"github.com/lakesql/lakesql/internal/sqlquote"
)

// DuckDBSelect is the SELECT list that reads the named Iceberg columns out
// of a relation with the same column names, cast to the DuckDB types that
// come out of DuckDB's Arrow export as the table's Arrow types.
func DuckDBSelect(schema *ice.Schema, columns []string) (string, error) {
	parts := make([]string, len(columns))
	for i, c := range columns {
		f, ok := schema.FindFieldByName(c)
		if !ok {
			return "", fmt.Errorf("%w: column %q is not in the table", ErrInvalid, c)
		}
		t, err := DuckDBType(f.Type)
		if err != nil {
			return "", fmt.Errorf("column %q: %w", c, err)
		}
		parts[i] = fmt.Sprintf("CAST(%s AS %s) AS %s", sqlquote.Ident(c), t, sqlquote.Ident(c))
	}
	return strings.Join(parts, ", "), nil
}

// WriteQuery runs query on conn, a DuckDB connection, and writes its rows
// as data files of tbl without committing them. The query must yield the
// table's columns by name (DuckDBSelect builds such a list); NULLs in
// required columns are refused.
func WriteQuery(ctx context.Context, tbl *table.Table, conn *sql.Conn, query string, targetFileSize int64) ([]ice.DataFile, error) {
	var files []ice.DataFile
	err := withArrow(ctx, conn, query, tbl, func(sc *arrow.Schema, recs iter.Seq2[arrow.RecordBatch, error]) error {
		var err error
		files, err = WriteFiles(ctx, tbl, sc, recs, targetFileSize)
		return err
	})
	return files, err
}

// WriteEqualityDeletesQuery runs query on conn and writes its rows, the
// key columns EqualityColumns named, as equality-delete files of tbl
// without committing them.
func WriteEqualityDeletesQuery(ctx context.Context, tbl *table.Table, conn *sql.Conn, query string, ids []int) ([]ice.DataFile, error) {
	var files []ice.DataFile
	err := withArrow(ctx, conn, query, tbl, func(_ *arrow.Schema, recs iter.Seq2[arrow.RecordBatch, error]) error {
		var err error
		files, err = WriteEqualityDeletes(ctx, tbl, ids, recs)
		return err
	})
	return files, err
}

// withArrow runs query through DuckDB's Arrow export and hands fn its
// batches, each relabelled with the table's column names and nullability
// (DuckDB reports every column as nullable) after checking that required
// columns hold no NULLs. Everything runs inside the connection's Raw
// callback, as database/sql requires for driver-level use.
//
// DuckDB's batches live in C memory that is freed once they are released,
// which iceberg-go does as soon as it has written them; but its
// partitioned writers keep string partition values (identity, truncate)
// as zero-copy views into the batch, and those values end up in the
// DataFiles returned long after. The string columns partition values are
// taken from are therefore copied to the Go heap (ownedBatch),
// where the values keep their memory alive: one column per batch, and
// only for tables partitioned on a string.
func withArrow(ctx context.Context, conn *sql.Conn, query string, tbl *table.Table,
	fn func(*arrow.Schema, iter.Seq2[arrow.RecordBatch, error]) error) error {
	schema := tbl.Schema()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(driver.Conn)
		if !ok {
			return fmt.Errorf("%w: driver connection %T is not DuckDB", ErrInvalid, dc)
		}
		ar, err := duckarrow.FromConn(c)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		rr, err := ar.QueryContext(ctx, query)
		if err != nil {
			return fmt.Errorf("run staging query: %w", err)
		}
		defer rr.Release()
		sc, err := relabel(rr.Schema(), schema)
		if err != nil {
			return err
		}
		own := partitionStringColumns(sc, schema, tbl.Spec())
		recs := func(yield func(arrow.RecordBatch, error) bool) {
			for rr.Next() {
				rec := rr.RecordBatch()
				if err := checkRequired(rec, sc); err != nil {
					yield(nil, err)
					return
				}
				out, err := ownedBatch(sc, rec, own)
				if err != nil {
					yield(nil, err)
					return
				}
				if !yield(out, nil) {
					return
				}
			}
			if err := rr.Err(); err != nil {
				yield(nil, fmt.Errorf("read staging query: %w", err))
			}
		}
		return fn(sc, recs)
	})
}

// partitionStringColumns lists the columns of sc that are the source of
// a partition field of spec with a string value (identity or truncate of
// a top-level string column; other transforms yield numbers or copies).
func partitionStringColumns(sc *arrow.Schema, schema *ice.Schema, spec ice.PartitionSpec) []int {
	var out []int
	for _, pf := range spec.Fields() {
		f, ok := schema.FindFieldByID(pf.SourceID())
		if !ok {
			continue
		}
		if _, isString := f.Type.(ice.StringType); !isString {
			continue
		}
		name, _ := schema.FindColumnName(f.ID) // dotted for a nested field: not a top-level column
		for _, i := range sc.FieldIndices(name) {
			if !slices.Contains(out, i) {
				out = append(out, i)
			}
		}
	}
	return out
}

// ownedBatch is rec under schema sc, with the columns own names copied
// to the Go heap (see withArrow).
func ownedBatch(sc *arrow.Schema, rec arrow.RecordBatch, own []int) (arrow.RecordBatch, error) {
	cols := slices.Clone(rec.Columns())
	var copies []arrow.Array
	defer func() {
		for _, c := range copies {
			c.Release()
		}
	}()
	for _, i := range own {
		if _, ok := cols[i].DataType().(arrow.BinaryDataType); !ok {
			// String views keep their data buffers when concatenated;
			// DuckDB exports them only when produce_arrow_string_view is set.
			return nil, fmt.Errorf("%w: partition column %q comes out of DuckDB as %s", ErrUnsupported, sc.Field(i).Name, cols[i].DataType())
		}
		c, err := array.Concatenate(cols[i:i+1], goHeap)
		if err != nil {
			return nil, fmt.Errorf("copy partition column %q: %w", sc.Field(i).Name, err)
		}
		copies = append(copies, c)
		cols[i] = c
	}
	return array.NewRecordBatch(sc, cols, rec.NumRows()), nil
}

// goHeap allocates on the Go heap whatever memory.DefaultAllocator is
// built as, so that a value pointing into a copy keeps it alive.
var goHeap = memory.NewGoAllocator()

// relabel gives the query's Arrow schema the table's nullability.
func relabel(got *arrow.Schema, schema *ice.Schema) (*arrow.Schema, error) {
	fields := make([]arrow.Field, got.NumFields())
	for i, f := range got.Fields() {
		tf, ok := schema.FindFieldByName(f.Name)
		if !ok {
			return nil, fmt.Errorf("%w: staging query yields column %q, which the table lacks", ErrInvalid, f.Name)
		}
		fields[i] = arrow.Field{Name: f.Name, Type: f.Type, Nullable: !tf.Required}
	}
	return arrow.NewSchema(fields, nil), nil
}

func checkRequired(rec arrow.RecordBatch, sc *arrow.Schema) error {
	for i, f := range sc.Fields() {
		if !f.Nullable && rec.Column(i).NullN() > 0 {
			return fmt.Errorf("%w: %d NULL value(s) in NOT NULL column %q", ErrInvalid, rec.Column(i).NullN(), f.Name)
		}
	}
	return nil
}
