package deltalake

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/clocktest"
)

func col(name, typ string) catalogadapter.SourceColumn {
	return catalogadapter.SourceColumn{Name: name, DuckDBType: typ}
}

// countingQuerier records the queries a stager runs.
type countingQuerier struct {
	*sql.Conn
	queries []string
}

func (q *countingQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	q.queries = append(q.queries, query)
	return q.Conn.QueryContext(ctx, query, args...)
}

func (q *countingQuerier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	q.queries = append(q.queries, query)
	return q.Conn.ExecContext(ctx, query, args...)
}

// TestStageSQLKnownColumns: a Source that names its columns is staged with
// one DuckDB call (the COPY), one without names costs a DESCRIBE first, and
// both stage the same rows; known columns are checked like described ones.
func TestStageSQLKnownColumns(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `CREATE TEMP TABLE buf AS
		SELECT i::BIGINT AS id, (i * 1.5)::DOUBLE AS amount, 'r' || i AS name, TIMESTAMPTZ '2025-01-01 00:00:00+00' + INTERVAL (i) MINUTE AS ts
		FROM range(20) t(i)`); err != nil {
		t.Fatal(err)
	}
	known := []catalogadapter.SourceColumn{col("id", "BIGINT"), col("amount", "DOUBLE"), col("name", "VARCHAR"), col("ts", "TIMESTAMP WITH TIME ZONE")}
	q := &countingQuerier{Conn: conn}
	r1, err := p.StageSQL(ctx, id, q, catalogadapter.Source{Query: "SELECT * FROM buf WHERE id < 10", Columns: known})
	if err != nil {
		t.Fatal(err)
	}
	if len(q.queries) != 1 || !strings.Contains(q.queries[0], "COPY") {
		t.Errorf("with known columns the stager ran %q, want the COPY alone", q.queries)
	}
	q.queries = nil
	r2, err := p.StageSQL(ctx, id, q, catalogadapter.Source{Query: "SELECT * FROM buf WHERE id >= 10"})
	if err != nil {
		t.Fatal(err)
	}
	if len(q.queries) != 2 || !strings.Contains(q.queries[0], "DESCRIBE") {
		t.Errorf("without known columns the stager ran %q, want a DESCRIBE, then the COPY", q.queries)
	}
	if r1.Rows != 10 || r2.Rows != 10 {
		t.Fatalf("staged %d and %d rows, want 10 and 10", r1.Rows, r2.Rows)
	}
	if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{r1, r2}, catalogadapter.CommitOptions{Epoch: -1}); err != nil {
		t.Fatal(err)
	}
	rs, err := conn.QueryContext(ctx, "SELECT id, amount, name, ts FROM buf ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	var want []row
	for rs.Next() {
		var r row
		if err := rs.Scan(&r.ID, &r.Amount, &r.Name, &r.TS); err != nil {
			t.Fatal(err)
		}
		want = append(want, r)
	}
	rs.Close()
	if diff := cmp.Diff(want, scanRows(t, p, db, id, -1, nil)); diff != "" {
		t.Errorf("rows read back (-staged +read):\n%s", diff)
	}

	// Known columns go through the same checks as described ones, before
	// DuckDB is asked anything.
	for _, tc := range []struct {
		name    string
		cols    []catalogadapter.SourceColumn
		mention string
	}{
		{"missing not null", []catalogadapter.SourceColumn{col("name", "VARCHAR")}, `"id"`},
		{"type", []catalogadapter.SourceColumn{col("id", "BIGINT"), col("amount", "VARCHAR")}, `"amount"`},
		{"extra", []catalogadapter.SourceColumn{col("id", "BIGINT"), col("extra", "INTEGER")}, `"extra"`},
	} {
		q.queries = nil
		_, err := p.StageSQL(ctx, id, q, catalogadapter.Source{Query: "SELECT * FROM buf", Columns: tc.cols})
		if !errors.Is(err, catalogadapter.ErrInvalid) || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%s: got %v, want ErrInvalid naming %s", tc.name, err, tc.mention)
		}
		if len(q.queries) != 0 {
			t.Errorf("%s: refused after running %q", tc.name, q.queries)
		}
	}
}
