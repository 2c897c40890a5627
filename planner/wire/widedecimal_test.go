package wire

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/deltalake"
	"github.com/lakesql/lakesql/sqlsink"
)

// writeWideDecimalTable writes a Delta table with a DECIMAL(38,32) column,
// as Spark may (go-mysql-server holds a scale of 30 at most).
func writeWideDecimalTable(t *testing.T, dir string) {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "x", Type: &arrow.Decimal128Type{Precision: 38, Scale: 32}, Nullable: true},
	}, nil)
	s, err := sqlsink.New(sqlsink.Config{Name: "wide", Provider: deltalake.New(db, deltalake.Options{}),
		Table: catalogadapter.TableIdent{Name: dir}, Schema: schema, TempDir: t.TempDir(), MemoryLimit: "256MB"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(1)
	n, err := decimal128.FromString("123456.12345678901234567890123456789012", 38, 32)
	if err != nil {
		t.Fatal(err)
	}
	b.Field(1).(*array.Decimal128Builder).Append(n)
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := s.BeginEpoch(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if err := s.PreCommit(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitEpoch(ctx, 1); err != nil {
		t.Fatal(err)
	}
}

// A DECIMAL with a scale above 30 reads as its text, every digit kept, and
// leaves the other columns readable (issue 14, item 10).
func TestWideDecimalReadsAsText(t *testing.T) {
	dir := t.TempDir()
	writeWideDecimalTable(t, filepath.Join(dir, "lake", "wide"))
	ts := startServer(t, dir, testPassword)
	db := ts.db(testPassword)
	mustExec(t, db, "CREATE SINK wide INTO DELTA 'lake/wide'")
	want := [][]string{{"1", "123456.12345678901234567890123456789012"}}
	if diff := cmp.Diff(want, textRows(t, db, "SELECT id, x FROM wide")); diff != "" {
		t.Errorf("SELECT (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"1"}}, textRows(t, db, "SELECT id FROM wide WHERE id + 0 = 1")); diff != "" {
		t.Errorf("SELECT id (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"x", "varchar(40)"}}, textRows(t, db,
		"SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_NAME = 'wide' AND COLUMN_NAME = 'x'")); diff != "" {
		t.Errorf("COLUMN_TYPE (-want +got):\n%s", diff)
	}
}
