package deltalake_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/deltalake"
	"github.com/lakesql/lakesql/sqlsink"
)

// TestUpsertFloatKeyReplacesRow: the stats of a FLOAT column are the
// float's shortest decimal text ("1.1"); read as the float64 1.1 that bound
// is below the key float32(1.1), the upsert's pruning skipped the file
// holding the key, and the key was duplicated.
func TestUpsertFloatKeyReplacesRow(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec("SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}
	provider := deltalake.New(db, deltalake.Options{})
	dir := filepath.Join(t.TempDir(), "f")
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Float32},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	s, err := sqlsink.New(sqlsink.Config{
		Name: "f", Provider: provider, Table: catalogadapter.TableIdent{Name: dir},
		Schema: schema, TempDir: t.TempDir(), MemoryLimit: "256MB",
		Mode: sqlsink.ModeUpsert, Key: []string{"k"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	epoch := func(n int64, k float32, v int64) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		b.Field(0).(*array.Float32Builder).Append(k)
		b.Field(1).(*array.Int64Builder).Append(v)
		rec := b.NewRecordBatch()
		defer rec.Release()
		if err := s.BeginEpoch(ctx, n); err != nil {
			t.Fatal(err)
		}
		if err := s.Write(ctx, rec); err != nil {
			t.Fatal(err)
		}
		if err := s.PreCommit(ctx, n); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CommitEpoch(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	epoch(1, 1.1, 1)
	epoch(2, 1.1, 2) // same key: replaces the row

	q, err := provider.ScanSQL(ctx, catalogadapter.TableIdent{Name: dir}, db, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var n, maxV int64
	if err := db.QueryRowContext(ctx, "SELECT count(*), max(v) FROM ("+q+")").Scan(&n, &maxV); err != nil {
		t.Fatal(err)
	}
	if n != 1 || maxV != 2 {
		t.Fatalf("after upserting key 1.1 twice the table holds %d rows (max v %d); want 1 row with v = 2", n, maxV)
	}
}
