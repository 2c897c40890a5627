package apacheiceberg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/icebergtest"
)

var evolveID = catalogadapter.TableIdent{Namespace: []string{"db"}, Name: "evolve"}

// evolveSchema has a column of every type Iceberg promotes.
var evolveSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "qty", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "price", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "cost", Type: &arrow.Decimal128Type{Precision: 9, Scale: 2}, Nullable: true},
	{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// stageQuery stages the rows of a DuckDB query and commits them as one
// epoch of writer w.
func stageQuery(t testing.TB, p *Provider, db *sql.DB, id catalogadapter.TableIdent, epoch int64, q string) {
	t.Helper()
	ctx := context.Background()
	rc, err := p.StageSQL(ctx, id, db, catalogadapter.Source{Query: q})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{rc}, catalogadapter.CommitOptions{WriterID: "w", Epoch: epoch}); err != nil {
		t.Fatal(err)
	}
}

// upsertQuery commits the rows of q as an upsert keyed on id (equality
// deletes on id, then the rows).
func upsertQuery(t testing.TB, p *Provider, db *sql.DB, id catalogadapter.TableIdent, epoch int64, q string) {
	t.Helper()
	ctx := context.Background()
	rcs, err := p.StageRowDelta(ctx, id, db, []string{"id"}, "SELECT id FROM ("+q+")", q)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Commit(ctx, id, rcs, catalogadapter.CommitOptions{WriterID: "w", Epoch: epoch}); err != nil {
		t.Fatal(err)
	}
}

// duckTable reads every column of id through our DuckDB scan: the header
// (name:type) and the rows, sorted.
func duckTable(t testing.TB, p *Provider, db *sql.DB, id catalogadapter.TableIdent) []string {
	t.Helper()
	q, err := p.ScanSQL(context.Background(), id, db, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := db.Query("SELECT * FROM (" + q + ")")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	cols, _ := rs.ColumnTypes()
	var head []string
	for _, c := range cols {
		head = append(head, c.Name()+":"+c.DatabaseTypeName())
	}
	var out []string
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = icebergtest.Cell(v)
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return append([]string{strings.Join(head, ",")}, out...)
}

// iceTable reads every column of id with iceberg-go's own scan through a
// fresh catalog handle (the independent reader): rows sorted, values as
// Arrow spells them.
func iceTable(t testing.TB, dir string, id catalogadapter.TableIdent) []string {
	t.Helper()
	tbl := icebergtest.Lake{Dir: dir}.Table(t, id)
	at, err := tbl.Scan().ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	if _, rows := icebergtest.ArrowRows(at); len(rows) > 0 {
		return rows
	}
	return nil
}

func alter(t testing.TB, p *Provider, id catalogadapter.TableIdent, changes ...catalogadapter.SchemaChange) catalogadapter.TableSpec {
	t.Helper()
	spec, err := p.AlterSchema(context.Background(), id, changes)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func fieldIDs(spec catalogadapter.TableSpec) string {
	var parts []string
	for _, f := range spec.SchemaSpec.Fields {
		parts = append(parts, fmt.Sprintf("%d:%s:%s", f.ID, f.Name, f.Type))
	}
	return strings.Join(parts, " ")
}

// TestAlterSchemaReadsByFieldID: ADD, widening, RENAME and DROP are one
// metadata commit each and no snapshot; files written before and after
// read right through both our DuckDB scan and iceberg-go's (added columns
// NULL in old files, promoted ones cast, renamed ones by id, a column
// added again under a dropped one's name gets a new id and does not bring
// the old values back); upserts keep working; the exactly-once record is
// unchanged.
func TestAlterSchemaReadsByFieldID(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := openProvider(t, dir)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := p.CreateTable(ctx, evolveID, catalogadapter.TableDef{Schema: evolveSchema}); err != nil {
		t.Fatal(err)
	}
	stageQuery(t, p, db, evolveID, 1, "SELECT 1::BIGINT AS id, 10::INTEGER AS qty, 1.5::FLOAT AS price, 2.25::DECIMAL(9,2) AS cost, 'eu' AS region")
	before := snapshots(t, dir, evolveID)
	metaLog := len(slices.Collect(freshTable(t, dir, evolveID).Metadata().PreviousFiles()))

	spec := alter(t, p, evolveID,
		catalogadapter.SchemaChange{Kind: catalogadapter.AddColumn, Column: "note", Type: arrow.BinaryTypes.String, Comment: "free text"},
		catalogadapter.SchemaChange{Kind: catalogadapter.WidenColumn, Column: "qty", Type: arrow.PrimitiveTypes.Int64},
		catalogadapter.SchemaChange{Kind: catalogadapter.WidenColumn, Column: "price", Type: arrow.PrimitiveTypes.Float64},
		catalogadapter.SchemaChange{Kind: catalogadapter.WidenColumn, Column: "cost", Type: &arrow.Decimal128Type{Precision: 20, Scale: 2}},
		catalogadapter.SchemaChange{Kind: catalogadapter.RenameColumn, Column: "region", NewName: "area"},
	)
	if got, want := fieldIDs(spec), "1:id:long 2:qty:long 3:price:double 4:cost:decimal(20, 2) 5:area:string 6:note:string"; got != want {
		t.Fatalf("schema after ALTER %q, want %q", got, want)
	}
	if doc := spec.SchemaSpec.Fields[5].Doc; doc != "free text" {
		t.Fatalf("comment %q", doc)
	}
	tbl := freshTable(t, dir, evolveID)
	if got := len(slices.Collect(tbl.Metadata().PreviousFiles())); got != metaLog+1 {
		t.Fatalf("%d metadata commits for one ALTER, want 1", got-metaLog)
	}
	if got := snapshots(t, dir, evolveID); len(got) != len(before) {
		t.Fatalf("ALTER made a snapshot: %d, want %d", len(got), len(before))
	}
	if e, ok, err := p.LastEpoch(ctx, evolveID, "w"); err != nil || !ok || e != 1 {
		t.Fatalf("exactly-once record after ALTER: %d %v %v, want epoch 1", e, ok, err)
	}
	wantHead := "id:BIGINT,qty:BIGINT,price:DOUBLE,cost:DECIMAL(20,2),area:VARCHAR,note:VARCHAR"
	want := []string{wantHead, "1|10|1.5|2.25|eu|NULL"}
	if diff := cmp.Diff(want, duckTable(t, p, db, evolveID)); diff != "" {
		t.Fatalf("DuckDB scan after ALTER (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[1:], iceTable(t, dir, evolveID)); diff != "" {
		t.Fatalf("iceberg-go scan after ALTER (-want +got):\n%s", diff)
	}

	// Writes after the change carry the new ids; an upsert keyed on id
	// replaces a row written under the old schema.
	stageQuery(t, p, db, evolveID, 2, "SELECT 2::BIGINT AS id, 5000000000::BIGINT AS qty, 0.1::DOUBLE AS price, 123456789012.25::DECIMAL(20,2) AS cost, 'us' AS area, 'new' AS note")
	upsertQuery(t, p, db, evolveID, 3, "SELECT 1::BIGINT AS id, 11::BIGINT AS qty, 2.5::DOUBLE AS price, 3.25::DECIMAL(20,2) AS cost, 'eu2' AS area, 'upd' AS note")
	want = []string{wantHead, "1|11|2.5|3.25|eu2|upd", "2|5000000000|0.1|123456789012.25|us|new"}
	if diff := cmp.Diff(want, duckTable(t, p, db, evolveID)); diff != "" {
		t.Fatalf("DuckDB scan after writes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[1:], iceTable(t, dir, evolveID)); diff != "" {
		t.Fatalf("iceberg-go scan after writes (-want +got):\n%s", diff)
	}

	// DROP, then ADD under the same name: a new field id, and the old
	// values stay gone.
	alter(t, p, evolveID, catalogadapter.SchemaChange{Kind: catalogadapter.DropColumn, Column: "price"})
	spec = alter(t, p, evolveID, catalogadapter.SchemaChange{Kind: catalogadapter.AddColumn, Column: "price", Type: arrow.PrimitiveTypes.Float64})
	if got, want := fieldIDs(spec), "1:id:long 2:qty:long 4:cost:decimal(20, 2) 5:area:string 6:note:string 7:price:double"; got != want {
		t.Fatalf("schema after DROP and ADD %q, want %q", got, want)
	}
	upsertQuery(t, p, db, evolveID, 4, "SELECT 2::BIGINT AS id, 7::BIGINT AS qty, 1.25::DECIMAL(20,2) AS cost, 'us' AS area, 'again' AS note, 9.5::DOUBLE AS price")
	want = []string{"id:BIGINT,qty:BIGINT,cost:DECIMAL(20,2),area:VARCHAR,note:VARCHAR,price:DOUBLE",
		"1|11|3.25|eu2|upd|NULL", "2|7|1.25|us|again|9.5"}
	if diff := cmp.Diff(want, duckTable(t, p, db, evolveID)); diff != "" {
		t.Fatalf("DuckDB scan after DROP, ADD (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[1:], iceTable(t, dir, evolveID)); diff != "" {
		t.Fatalf("iceberg-go scan after DROP, ADD (-want +got):\n%s", diff)
	}
	if e, ok, err := p.LastEpoch(ctx, evolveID, "w"); err != nil || !ok || e != 4 {
		t.Fatalf("exactly-once record: %d %v %v, want epoch 4", e, ok, err)
	}
}

// TestAlterSchemaRefusals: each change Iceberg does not allow fails with
// ErrSchemaChange naming the rule, and the table's metadata is untouched.
func TestAlterSchemaRefusals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := openProvider(t, dir)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	schema := arrow.NewSchema(append(evolveSchema.Fields(), arrow.Field{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true}), nil)
	def := catalogadapter.TableDef{Schema: schema, PartitionSpec: catalogadapter.PartitionSpec{Fields: []catalogadapter.PartitionField{{Name: "id", Transform: catalogadapter.Transform{Kind: catalogadapter.Bucket, Param: 4}}}}}
	if err := p.CreateTable(ctx, evolveID, def); err != nil {
		t.Fatal(err)
	}
	upsertQuery(t, p, db, evolveID, 1, "SELECT 1::BIGINT AS id, 1::INTEGER AS qty, NULL::FLOAT AS price, NULL::DECIMAL(9,2) AS cost, 'x' AS region, NULL::DATE AS day")
	widen := func(col string, dt arrow.DataType) catalogadapter.SchemaChange {
		return catalogadapter.SchemaChange{Kind: catalogadapter.WidenColumn, Column: col, Type: dt}
	}
	for _, tc := range []struct {
		name   string
		change catalogadapter.SchemaChange
		want   string
		is     error
	}{
		{"narrow long to int", widen("id", arrow.PrimitiveTypes.Int32), "long to int", catalogadapter.ErrSchemaChange},
		{"int to double", widen("qty", arrow.PrimitiveTypes.Float64), "promotes only int to long", catalogadapter.ErrSchemaChange},
		{"string to binary", widen("region", arrow.BinaryTypes.Binary), "promotes only", catalogadapter.ErrSchemaChange},
		{"decimal scale", widen("cost", &arrow.Decimal128Type{Precision: 12, Scale: 3}), "changes the scale", catalogadapter.ErrSchemaChange},
		{"decimal narrower", widen("cost", &arrow.Decimal128Type{Precision: 5, Scale: 2}), "narrows the precision", catalogadapter.ErrSchemaChange},
		{"date to timestamp on v2", widen("day", &arrow.TimestampType{Unit: arrow.Microsecond}), "needs format version 3", catalogadapter.ErrSchemaChange},
		{"rename onto existing", catalogadapter.SchemaChange{Kind: catalogadapter.RenameColumn, Column: "qty", NewName: "region"}, `column "region" already exists`, catalogadapter.ErrSchemaChange},
		{"rename onto existing, other case", catalogadapter.SchemaChange{Kind: catalogadapter.RenameColumn, Column: "qty", NewName: "Region"}, `column "region" already exists`, catalogadapter.ErrSchemaChange},
		{"add existing", catalogadapter.SchemaChange{Kind: catalogadapter.AddColumn, Column: "QTY", Type: arrow.PrimitiveTypes.Int64}, `column "qty" already exists`, catalogadapter.ErrSchemaChange},
		{"drop partition source", catalogadapter.SchemaChange{Kind: catalogadapter.DropColumn, Column: "id"}, "partition spec 0 is built on it", catalogadapter.ErrSchemaChange},
		{"unknown column", catalogadapter.SchemaChange{Kind: catalogadapter.DropColumn, Column: "nope"}, `column "nope" is not in the table`, catalogadapter.ErrInvalid},
		{"add uint64", catalogadapter.SchemaChange{Kind: catalogadapter.AddColumn, Column: "u", Type: arrow.PrimitiveTypes.Uint64}, "no Iceberg counterpart", catalogadapter.ErrUnsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := freshTable(t, dir, evolveID).MetadataLocation()
			_, err := p.AlterSchema(ctx, evolveID, []catalogadapter.SchemaChange{tc.change})
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %v naming %q", err, tc.is, tc.want)
			}
			if after := freshTable(t, dir, evolveID).MetadataLocation(); after != before {
				t.Fatalf("a refused change wrote metadata %s", after)
			}
		})
	}
	// A column live equality deletes are keyed on, in a table partitioned
	// on something else: the deletes would no longer be readable.
	other := catalogadapter.TableIdent{Namespace: []string{"db"}, Name: "keyed"}
	if err := p.CreateTable(ctx, other, catalogadapter.TableDef{Schema: evolveSchema}); err != nil {
		t.Fatal(err)
	}
	upsertQuery(t, p, db, other, 1, "SELECT 1::BIGINT AS id, 1::INTEGER AS qty, NULL::FLOAT AS price, NULL::DECIMAL(9,2) AS cost, 'x' AS region")
	if _, err := p.AlterSchema(ctx, other, []catalogadapter.SchemaChange{{Kind: catalogadapter.DropColumn, Column: "id"}}); !errors.Is(err, catalogadapter.ErrSchemaChange) ||
		!strings.Contains(err.Error(), "equality deletes") {
		t.Fatalf("drop of an equality-delete key: %v", err)
	}
	// Widening to the same type changes nothing and commits nothing.
	before := freshTable(t, dir, other).MetadataLocation()
	alter(t, p, other, widen("id", arrow.PrimitiveTypes.Int64))
	if after := freshTable(t, dir, other).MetadataLocation(); after != before {
		t.Fatalf("a no-op change wrote metadata %s", after)
	}
}

// TestAlterSchemaRace: an ALTER that loses the race to another ALTER is
// checked again on the new schema and retried; one that has become
// invalid (the column now exists) fails by name and writes nothing.
func TestAlterSchemaRace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, b := openProvider(t, dir), openProvider(t, dir)
	if err := a.CreateTable(ctx, evolveID, catalogadapter.TableDef{Schema: evolveSchema}); err != nil {
		t.Fatal(err)
	}
	add := func(name string) []catalogadapter.SchemaChange {
		return []catalogadapter.SchemaChange{{Kind: catalogadapter.AddColumn, Column: name, Type: arrow.PrimitiveTypes.Int64}}
	}
	a.beforeCommit = func(attempt int) {
		if attempt == 0 {
			if _, err := b.AlterSchema(ctx, evolveID, add("b1")); err != nil {
				t.Error(err)
			}
		}
	}
	spec, err := a.AlterSchema(ctx, evolveID, add("a1"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fieldIDs(spec), "1:id:long 2:qty:int 3:price:float 4:cost:decimal(9, 2) 5:region:string 6:b1:long 7:a1:long"; got != want {
		t.Fatalf("schema %q, want %q", got, want)
	}
	a.beforeCommit = func(attempt int) {
		if attempt == 0 {
			if _, err := b.AlterSchema(ctx, evolveID, add("both")); err != nil {
				t.Error(err)
			}
		}
	}
	if _, err := a.AlterSchema(ctx, evolveID, add("both")); !errors.Is(err, catalogadapter.ErrSchemaChange) || !strings.Contains(err.Error(), `"both" already exists`) {
		t.Fatalf("the loser of the same ADD: %v", err)
	}
	if n := len(freshTable(t, dir, evolveID).Schema().Fields()); n != 8 {
		t.Fatalf("%d columns, want 8", n)
	}
}

// TestEvolveInCommit: rows staged for a schema change (automatic
// evolution) land with the change in one metadata commit, one snapshot,
// carrying the new column's field id; a data commit of another writer in
// between is retried over; an ALTER in between that changes what the
// changes produce fails the commit with ErrConflict and lands nothing.
func TestEvolveInCommit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p, other := openProvider(t, dir), openProvider(t, dir)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := p.CreateTable(ctx, evolveID, catalogadapter.TableDef{Schema: evolveSchema}); err != nil {
		t.Fatal(err)
	}
	add := []catalogadapter.SchemaChange{
		{Kind: catalogadapter.AddColumn, Column: "note", Type: arrow.BinaryTypes.String},
		{Kind: catalogadapter.WidenColumn, Column: "qty", Type: arrow.PrimitiveTypes.Int64},
	}
	q := "SELECT 1::BIGINT AS id, 5000000000::BIGINT AS qty, 'n1' AS note"
	rc, err := p.StageSQL(ctx, evolveID, db, catalogadapter.Source{Query: q, Evolve: add})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(freshTable(t, dir, evolveID).Schema().Fields()); got != 5 {
		t.Fatalf("staging changed the schema: %d columns", got)
	}
	// Another writer's epoch lands between staging and commit.
	p.beforeCommit = func(attempt int) {
		if attempt == 0 {
			stageQuery(t, other, db, evolveID, 1, "SELECT 2::BIGINT AS id, 7::INTEGER AS qty")
		}
	}
	out, err := p.Commit(ctx, evolveID, []catalogadapter.Receipt{rc}, catalogadapter.CommitOptions{WriterID: "auto", Epoch: 1, SchemaChanges: add})
	if err != nil {
		t.Fatal(err)
	}
	p.beforeCommit = nil
	if out.Retries != 1 {
		t.Fatalf("outcome %+v, want one retry over the other writer's epoch", out)
	}
	tbl := freshTable(t, dir, evolveID)
	if got, want := fieldIDs(mustSpec(t, p)), "1:id:long 2:qty:long 3:price:float 4:cost:decimal(9, 2) 5:region:string 6:note:string"; got != want {
		t.Fatalf("schema %q, want %q", got, want)
	}
	if s := tbl.CurrentSnapshot(); s == nil || s.Summary.Properties["added-data-files"] != "1" {
		t.Fatalf("the evolving commit is not one snapshot adding its file: %+v", s)
	}
	want := []string{"id:BIGINT,qty:BIGINT,price:FLOAT,cost:DECIMAL(9,2),region:VARCHAR,note:VARCHAR",
		"1|5000000000|NULL|NULL|NULL|n1", "2|7|NULL|NULL|NULL|NULL"}
	if diff := cmp.Diff(want, duckTable(t, p, db, evolveID)); diff != "" {
		t.Fatalf("DuckDB scan (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[1:], iceTable(t, dir, evolveID)); diff != "" {
		t.Fatalf("iceberg-go scan (-want +got):\n%s", diff)
	}

	// An ALTER between staging and commit: the changes now give another
	// schema (note2 would get another id): a conflict, nothing lands.
	add2 := []catalogadapter.SchemaChange{{Kind: catalogadapter.AddColumn, Column: "note2", Type: arrow.BinaryTypes.String}}
	rc, err = p.StageSQL(ctx, evolveID, db, catalogadapter.Source{Query: "SELECT 3::BIGINT AS id, 'x' AS note2", Evolve: add2})
	if err != nil {
		t.Fatal(err)
	}
	alter(t, other, evolveID, catalogadapter.SchemaChange{Kind: catalogadapter.AddColumn, Column: "meanwhile", Type: arrow.PrimitiveTypes.Int64})
	before := freshTable(t, dir, evolveID).MetadataLocation()
	if _, err := p.Commit(ctx, evolveID, []catalogadapter.Receipt{rc}, catalogadapter.CommitOptions{WriterID: "auto", Epoch: 2, SchemaChanges: add2}); !errors.Is(err, catalogadapter.ErrConflict) {
		t.Fatalf("commit after a concurrent ALTER: %v, want ErrConflict", err)
	}
	if after := freshTable(t, dir, evolveID).MetadataLocation(); after != before {
		t.Fatal("the conflicting commit wrote metadata")
	}
	if e, ok, err := p.LastEpoch(ctx, evolveID, "auto"); err != nil || !ok || e != 1 {
		t.Fatalf("record %d %v %v, want epoch 1", e, ok, err)
	}
}

func mustSpec(t testing.TB, p *Provider) catalogadapter.TableSpec {
	t.Helper()
	spec, err := p.TableSpec(context.Background(), evolveID)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// TestPromotePartitionSource: promoting the source column of an identity
// and a bucket partition (int to long: Iceberg's transforms give the same
// values) keeps old and new files readable, partition pruning included.
func TestPromotePartitionSource(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := openProvider(t, dir)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	def := catalogadapter.TableDef{Schema: evolveSchema, PartitionSpec: catalogadapter.PartitionSpec{Fields: []catalogadapter.PartitionField{
		{Name: "qty"}, {Name: "id", Transform: catalogadapter.Transform{Kind: catalogadapter.Bucket, Param: 3}}}}}
	if err := p.CreateTable(ctx, evolveID, def); err != nil {
		t.Fatal(err)
	}
	stageQuery(t, p, db, evolveID, 1, "SELECT 1::BIGINT AS id, 7::INTEGER AS qty UNION ALL SELECT 2::BIGINT AS id, 8::INTEGER AS qty")
	alter(t, p, evolveID, catalogadapter.SchemaChange{Kind: catalogadapter.WidenColumn, Column: "qty", Type: arrow.PrimitiveTypes.Int64})
	stageQuery(t, p, db, evolveID, 2, "SELECT 3::BIGINT AS id, 7::BIGINT AS qty UNION ALL SELECT 4::BIGINT AS id, 9000000000::BIGINT AS qty")
	want := []string{"id:BIGINT,qty:BIGINT,price:FLOAT,cost:DECIMAL(9,2),region:VARCHAR",
		"1|7|NULL|NULL|NULL", "2|8|NULL|NULL|NULL", "3|7|NULL|NULL|NULL", "4|9000000000|NULL|NULL|NULL"}
	if diff := cmp.Diff(want, duckTable(t, p, db, evolveID)); diff != "" {
		t.Fatalf("DuckDB scan (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[1:], iceTable(t, dir, evolveID)); diff != "" {
		t.Fatalf("iceberg-go scan (-want +got):\n%s", diff)
	}
	_, files, err := p.Files(ctx, evolveID)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, f := range files {
		parts = append(parts, fmt.Sprint(f.Partition["qty"]))
	}
	sort.Strings(parts)
	if got := strings.Join(parts, " "); got != "7 7 8 9000000000" {
		t.Fatalf("partition values of qty %q", got)
	}
}
