package deltalake

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/clocktest"
)

// TestSessionTimeZone: StageSQL and ScanSQL switch the session they are
// given to UTC even when it has a TimeZone of its own (a plain SET
// TimeZone is per session, and SET GLOBAL does not override it), and rows
// staged from such a session keep their instants, partition value included.
func TestSessionTimeZone(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{PartitionSpec: catalogadapter.PartitionSpec{
		Fields: []catalogadapter.PartitionField{{Name: "ts", Transform: catalogadapter.Transform{Kind: catalogadapter.Identity}}}}})
	zone := func(c *sql.Conn) string {
		t.Helper()
		var z string
		if err := c.QueryRowContext(ctx, "SELECT current_setting('TimeZone')").Scan(&z); err != nil {
			t.Fatal(err)
		}
		return z
	}
	newYork := func(c *sql.Conn) {
		t.Helper()
		if _, err := c.ExecContext(ctx, "SET TimeZone = 'America/New_York'"); err != nil {
			t.Fatal(err)
		}
		if z := zone(c); z != "America/New_York" {
			t.Fatalf("session zone %q", z)
		}
	}
	buf, err := openDB(t).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()
	newYork(buf)
	r, err := p.StageSQL(ctx, id, buf, catalogadapter.Source{Query: "SELECT 7::BIGINT AS id, TIMESTAMPTZ '2025-01-01 00:30:00+00' AS ts"})
	if err != nil {
		t.Fatal(err)
	}
	if z := zone(buf); z != "UTC" {
		t.Errorf("after StageSQL the session zone is %q, want UTC", z)
	}
	if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{Epoch: -1}); err != nil {
		t.Fatal(err)
	}
	want := time.Date(2025, 1, 1, 0, 30, 0, 0, time.UTC)
	_, files, err := p.Files(ctx, id)
	if err != nil || len(files) != 1 {
		t.Fatalf("files %v %v", files, err)
	}
	if pv, ok := files[0].Partition["ts"].(time.Time); !ok || !pv.Equal(want) {
		t.Errorf("partition value %v, want %v", files[0].Partition["ts"], want)
	}

	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	newYork(conn)
	q, err := p.ScanSQL(ctx, id, conn, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if z := zone(conn); z != "UTC" {
		t.Errorf("after ScanSQL the session zone is %q, want UTC", z)
	}
	var got time.Time
	if err := conn.QueryRowContext(ctx, "SELECT ts FROM ("+q+")").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if !got.Equal(want) {
		t.Errorf("read back %v, want %v", got, want)
	}
}

// TestUnpartitionedTimeZone: a table without partition columns is staged
// without switching the session's TimeZone (the statistics do not depend
// on it), yet from a New York session its timestamps keep their instants,
// in the rows and in the statistics; a nested column, whose casts do
// depend on it, is staged under UTC.
func TestUnpartitionedTimeZone(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	want := time.Date(2025, 1, 1, 0, 30, 0, 0, time.UTC)
	buf, err := openDB(t).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()
	if _, err := buf.ExecContext(ctx, "SET TimeZone = 'America/New_York'"); err != nil {
		t.Fatal(err)
	}
	readTS := func(id catalogadapter.TableIdent, expr string) time.Time {
		t.Helper()
		q, err := p.ScanSQL(ctx, id, db, -1, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got time.Time
		if err := db.QueryRowContext(ctx, "SELECT "+expr+" FROM ("+q+")").Scan(&got); err != nil {
			t.Fatal(err)
		}
		return got
	}

	flat := newTable(t, p, catalogadapter.TableDef{})
	r, err := p.StageSQL(ctx, flat, buf, catalogadapter.Source{Query: "SELECT 7::BIGINT AS id, TIMESTAMPTZ '2025-01-01 00:30:00+00' AS ts"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Commit(ctx, flat, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{Epoch: -1}); err != nil {
		t.Fatal(err)
	}
	if got := readTS(flat, "ts"); !got.Equal(want) {
		t.Errorf("read back %v, want %v", got, want)
	}
	_, files, err := p.Files(ctx, flat)
	if err != nil || len(files) != 1 {
		t.Fatalf("files %v %v", files, err)
	}
	for name, bound := range map[string]any{"min": files[0].Min["ts"], "max": files[0].Max["ts"]} {
		s, _ := bound.(string)
		if got, err := time.Parse(time.RFC3339Nano, s); err != nil || !got.Equal(want) {
			t.Errorf("%s statistic of ts is %v, want %v", name, bound, want)
		}
	}

	nested := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true}), Nullable: true},
	}, nil)
	nid := newTable(t, p, catalogadapter.TableDef{Schema: nested})
	// A wall-clock time in a struct becomes an instant by the cast: UTC's.
	r, err = p.StageSQL(ctx, nid, buf, catalogadapter.Source{Query: "SELECT 7::BIGINT AS id, {'at': TIMESTAMP '2025-01-01 00:30:00'} AS s"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Commit(ctx, nid, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{Epoch: -1}); err != nil {
		t.Fatal(err)
	}
	if got := readTS(nid, "s.at"); !got.Equal(want) {
		t.Errorf("nested timestamp read back %v, want %v", got, want)
	}
}
