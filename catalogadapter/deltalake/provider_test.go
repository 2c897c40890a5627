package deltalake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/clocktest"
	"github.com/lakesql/lakesql/tableformat/delta"
)

func TestCreateTableAndTableSpec(t *testing.T) {
	ctx := context.Background()
	clock := clocktest.New(t0)
	opts := testOptions(clock)
	opts.CheckpointInterval = 7
	p := New(openDB(t), opts)
	schema := arrow.NewSchema(append(ordersSchema().Fields(),
		arrow.Field{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true,
			Metadata: arrow.NewMetadata([]string{"comment"}, []string{`"sales region"`})}), nil)
	id := newTable(t, p, catalogadapter.TableDef{
		Schema:        schema,
		PartitionSpec: catalogadapter.PartitionSpec{Fields: []catalogadapter.PartitionField{{Name: "region", Transform: catalogadapter.Transform{Kind: catalogadapter.Identity}}}},
		Properties:    map[string]string{"owner": "tests"},
	})
	spec, err := p.TableSpec(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !spec.Schema.Equal(schema) {
		t.Errorf("arrow schema:\n got %v\nwant %v", spec.Schema, schema)
	}
	spec.Schema = nil
	want := catalogadapter.TableSpec{
		SchemaSpec: catalogadapter.SchemaSpec{Version: 0, Timestamp: t0, Fields: []catalogadapter.FieldSpec{
			{ID: 1, Name: "id", Type: "long"},
			{ID: 2, Name: "amount", Type: "double", Nullable: true},
			{ID: 3, Name: "name", Type: "string", Nullable: true},
			{ID: 4, Name: "ts", Type: "timestamp", Nullable: true},
			{ID: 5, Name: "region", Type: "string", Nullable: true, Doc: "sales region"},
		}},
		PartitionSpec: catalogadapter.PartitionSpec{Fields: []catalogadapter.PartitionField{
			{SourceID: 5, Name: "region", Transform: catalogadapter.Transform{Kind: catalogadapter.Identity}},
		}},
		Properties: map[string]string{"owner": "tests", "delta.checkpointInterval": "7"},
		Version:    0,
	}
	if d := cmp.Diff(want, spec); d != "" {
		t.Errorf("table spec (-want +got):\n%s", d)
	}

	// Creating again, or over a table whose version 0 is gone, finds it.
	if err := p.CreateTable(ctx, id, catalogadapter.TableDef{Schema: schema}); !errors.Is(err, catalogadapter.ErrTableExists) {
		t.Errorf("second create: got %v, want ErrTableExists", err)
	}
	if err := p.CreateTable(ctx, catalogadapter.TableIdent{Name: filepath.Join(t.TempDir(), "x")}, catalogadapter.TableDef{
		Schema: schema,
		PartitionSpec: catalogadapter.PartitionSpec{Fields: []catalogadapter.PartitionField{
			{Name: "id", Transform: catalogadapter.Transform{Kind: catalogadapter.Bucket, Param: 16}}}},
	}); !errors.Is(err, catalogadapter.ErrUnsupported) {
		t.Errorf("bucket partition: got %v, want ErrUnsupported", err)
	}
	for _, tc := range []struct {
		name string
		def  catalogadapter.TableDef
		want error
	}{
		{"nil schema", catalogadapter.TableDef{}, catalogadapter.ErrInvalid},
		{"no columns", catalogadapter.TableDef{Schema: arrow.NewSchema(nil, nil)}, catalogadapter.ErrInvalid},
		{"uint64", catalogadapter.TableDef{Schema: arrow.NewSchema([]arrow.Field{{Name: "u", Type: arrow.PrimitiveTypes.Uint64}}, nil)}, catalogadapter.ErrUnsupported},
		{"unknown partition", catalogadapter.TableDef{Schema: schema, PartitionSpec: catalogadapter.PartitionSpec{Fields: []catalogadapter.PartitionField{{Name: "nope"}}}}, catalogadapter.ErrInvalid},
		{"bad interval", catalogadapter.TableDef{Schema: schema, Properties: map[string]string{"delta.checkpointInterval": "0"}}, catalogadapter.ErrInvalid},
	} {
		err := p.CreateTable(ctx, catalogadapter.TableIdent{Name: filepath.Join(t.TempDir(), "t")}, tc.def)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
}

// TestIdentErrors: a regular file where the table should be is no table.
// The refused identifiers are the conformance suite's (TestConformance).
func TestIdentErrors(t *testing.T) {
	ctx := context.Background()
	p := New(openDB(t), Options{})
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := p.TableSpec(ctx, catalogadapter.TableIdent{Name: file}); !errors.Is(err, catalogadapter.ErrNoTable) {
		t.Errorf("TableSpec(file): got %v, want ErrNoTable", err)
	}
}

func TestUnreadableTable(t *testing.T) {
	ctx := context.Background()
	p := New(openDB(t), Options{})
	dir := filepath.Join(t.TempDir(), "t")
	log := filepath.Join(dir, "_delta_log")
	if err := os.MkdirAll(log, 0o755); err != nil {
		t.Fatal(err)
	}
	v0 := `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["futureFeature"],"writerFeatures":[]}}
{"metaData":{"id":"x","format":{"provider":"parquet"},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{}}}
`
	if err := os.WriteFile(filepath.Join(log, "00000000000000000000.json"), []byte(v0), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := p.TableSpec(ctx, catalogadapter.TableIdent{Name: dir})
	if !errors.Is(err, catalogadapter.ErrUnsupported) || !errors.Is(err, delta.ErrUnsupportedFeature) {
		t.Errorf("got %v, want ErrUnsupported wrapping delta.ErrUnsupportedFeature", err)
	}
}

func TestWriteBatchCommitScan(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	clock := clocktest.New(t0)
	p := New(db, testOptions(clock))
	id := newTable(t, p, catalogadapter.TableDef{})

	rows := []row{
		{ID: 1, Amount: amount(9.5), Name: name("alice"), TS: ts(t0)},
		{ID: 2, Name: name("bob"), TS: ts(t0.Add(1500 * time.Microsecond))},
		{ID: 3, Amount: amount(-1), TS: ts(time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC))},
	}
	// A checked allocator proves the batch's memory is released exactly
	// once, whatever DuckDB does with the Arrow stream.
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	rec := record(t, alloc, rows)
	receipt, err := p.WriteBatch(ctx, id, rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	alloc.AssertSize(t, 0)
	if receipt.Rows != 3 || receipt.Bytes <= 0 {
		t.Errorf("receipt counts: rows %d bytes %d", receipt.Rows, receipt.Bytes)
	}
	var adds []*delta.Add
	if err := json.Unmarshal(receipt.Metadata, &adds); err != nil || len(adds) == 0 {
		t.Fatalf("receipt metadata %s: %v", receipt.Metadata, err)
	}

	// Staged files are invisible until Commit.
	if got := scanRows(t, p, db, id, -1, nil); len(got) != 0 {
		t.Fatalf("before commit: %d rows visible", len(got))
	}
	// A receipt survives a JSON round trip.
	b, err := json.Marshal(receipt)
	if err != nil {
		t.Fatal(err)
	}
	var back catalogadapter.Receipt
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	out, err := p.Commit(ctx, id, []catalogadapter.Receipt{back}, catalogadapter.CommitOptions{WriterID: "w", Epoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(catalogadapter.CommitOutcome{Version: 1, CommitTime: t0.Add(time.Minute)}, out); d != "" {
		t.Errorf("outcome (-want +got):\n%s", d)
	}
	if d := cmp.Diff(rows, scanRows(t, p, db, id, -1, nil)); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	if got := scanRows(t, p, db, id, 0, nil); len(got) != 0 {
		t.Errorf("version 0 has %d rows", len(got))
	}
	if epoch, ok, err := p.LastEpoch(ctx, id, "w"); err != nil || !ok || epoch != 1 {
		t.Errorf("LastEpoch = %d, %v, %v; want 1, true", epoch, ok, err)
	}
	if _, ok, err := p.LastEpoch(ctx, id, "other"); err != nil || ok {
		t.Errorf("LastEpoch(other) = %v, %v; want not found", ok, err)
	}

	// Files reports the committed file with its stats.
	version, files, err := p.Files(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if version != 1 || len(files) != 1 {
		t.Fatalf("Files: version %d, %d files", version, len(files))
	}
	f := files[0]
	if f.Path != adds[0].Path || f.Rows != 3 || f.Min["id"] != 1.0 || f.Max["id"] != 3.0 || f.Max["name"] != "bob" || f.Partition != nil {
		t.Errorf("file %+v", f)
	}
}

func TestEmptyBatchAndMissingColumns(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})

	r := writeRows(t, p, id, nil)
	if r.Rows != 0 || string(r.Metadata) != "[]" {
		t.Errorf("empty batch receipt %+v", r)
	}
	// Only id: the nullable columns come back NULL.
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{
		{Name: "ID", Type: arrow.PrimitiveTypes.Int32}, // case-insensitive match, widened to long
		{Name: "_seq", Type: arrow.PrimitiveTypes.Uint64},
	}, nil))
	b.Field(0).(*array.Int32Builder).AppendValues([]int32{5, 6}, nil)
	b.Field(1).(*array.Uint64Builder).AppendValues([]uint64{1, 2}, nil)
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	r2, err := p.WriteBatch(ctx, id, rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{r, r2}, catalogadapter.CommitOptions{Epoch: -1}); err != nil {
		t.Fatal(err)
	}
	want := []row{{ID: 5}, {ID: 6}}
	if d := cmp.Diff(want, scanRows(t, p, db, id, -1, nil)); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}

	// A record of metadata columns only, into a table of nullable columns:
	// rows of NULLs.
	nid := newTable(t, p, catalogadapter.TableDef{Schema: arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)})
	b = array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "_op", Type: arrow.BinaryTypes.String}}, nil))
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"I", "I", "I"}, nil)
	meta := b.NewRecordBatch()
	b.Release()
	defer meta.Release()
	r3, err := p.WriteBatch(ctx, nid, meta)
	if err != nil || r3.Rows != 3 {
		t.Fatalf("metadata-only record: %+v %v", r3, err)
	}
}

func TestWriteBatchErrors(t *testing.T) {
	ctx := context.Background()
	p := New(openDB(t), testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})
	build := func(fields []arrow.Field, fill func(b *array.RecordBuilder)) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
		defer b.Release()
		fill(b)
		return b.NewRecordBatch()
	}
	idField := arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}
	for _, tc := range []struct {
		name    string
		rec     arrow.RecordBatch
		mention string
	}{
		{"extra column", build([]arrow.Field{idField, {Name: "extra", Type: arrow.PrimitiveTypes.Int64}}, func(b *array.RecordBuilder) {
			b.Field(0).(*array.Int64Builder).Append(1)
			b.Field(1).(*array.Int64Builder).Append(1)
		}), `"extra"`},
		{"type mismatch", build([]arrow.Field{idField, {Name: "name", Type: arrow.PrimitiveTypes.Int64}}, func(b *array.RecordBuilder) {
			b.Field(0).(*array.Int64Builder).Append(1)
			b.Field(1).(*array.Int64Builder).Append(1)
		}), `"name"`},
		{"narrowing", build([]arrow.Field{idField, {Name: "amount", Type: arrow.BinaryTypes.String}}, func(b *array.RecordBuilder) {
			b.Field(0).(*array.Int64Builder).Append(1)
			b.Field(1).(*array.StringBuilder).Append("1.5")
		}), `"amount"`},
		{"ntz into timestamp", build([]arrow.Field{idField, {Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}}}, func(b *array.RecordBuilder) {
			b.Field(0).(*array.Int64Builder).Append(1)
			b.Field(1).(*array.TimestampBuilder).Append(0)
		}), `"ts"`},
		{"missing not null", build([]arrow.Field{{Name: "name", Type: arrow.BinaryTypes.String}}, func(b *array.RecordBuilder) {
			b.Field(0).(*array.StringBuilder).Append("x")
		}), `"id"`},
		{"null in not null", build([]arrow.Field{idField}, func(b *array.RecordBuilder) {
			b.Field(0).(*array.Int64Builder).Append(1)
			b.Field(0).AppendNull()
		}), `"id"`},
		{"duplicate", build([]arrow.Field{idField, {Name: "ID", Type: arrow.PrimitiveTypes.Int64}}, func(b *array.RecordBuilder) {
			b.Field(0).(*array.Int64Builder).Append(1)
			b.Field(1).(*array.Int64Builder).Append(1)
		}), `"id"`},
		{"uint64", build([]arrow.Field{idField, {Name: "amount", Type: arrow.PrimitiveTypes.Uint64}}, func(b *array.RecordBuilder) {
			b.Field(0).(*array.Int64Builder).Append(1)
			b.Field(1).(*array.Uint64Builder).Append(1)
		}), `"amount"`},
	} {
		_, err := p.WriteBatch(ctx, id, tc.rec)
		tc.rec.Release()
		if !errors.Is(err, catalogadapter.ErrInvalid) || !strings.Contains(fmt.Sprint(err), tc.mention) {
			t.Errorf("%s: got %v, want ErrInvalid naming %s", tc.name, err, tc.mention)
		}
	}
	if _, err := p.WriteBatch(ctx, id, nil); !errors.Is(err, catalogadapter.ErrInvalid) {
		t.Errorf("nil record: got %v", err)
	}
	// A record that lies about its row count is refused, not a panic.
	rec := record(t, memory.DefaultAllocator, idRows(0, 2))
	defer rec.Release()
	if _, err := p.WriteBatch(ctx, id, tallRecord{rec}); !errors.Is(err, catalogadapter.ErrInvalid) {
		t.Errorf("inconsistent record: got %v", err)
	}
	// Nothing was staged by the failures.
	entries, err := os.ReadDir(id.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "_delta_log" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestStageSQL(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})
	buf, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()
	if _, err := buf.ExecContext(ctx, `CREATE TEMP TABLE buf AS
		SELECT i::BIGINT AS id, i * 1.5 AS amount, 'r' || i AS name, TIMESTAMPTZ '2025-01-01 00:00:00+00' + INTERVAL (i) MINUTE AS ts, 'I' AS _op
		FROM range(100) t(i)`); err != nil {
		t.Fatal(err)
	}
	r, err := p.StageSQL(ctx, id, buf, catalogadapter.Source{Query: "SELECT * FROM buf WHERE id < 10;"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Rows != 10 {
		t.Errorf("rows %d", r.Rows)
	}
	// A subset of the columns: name and ts are NULL.
	r2, err := p.StageSQL(ctx, id, buf, catalogadapter.Source{Query: "SELECT id + 1000 AS id, amount FROM buf WHERE id = 0"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{r, r2}, catalogadapter.CommitOptions{Epoch: -1}); err != nil {
		t.Fatal(err)
	}
	got := scanRows(t, p, db, id, -1, nil)
	if len(got) != 11 || got[10] != (row{ID: 1000, Amount: amount(0)}) || got[3].Name != name("r3") ||
		got[3].TS.Time != time.Date(2025, 1, 1, 0, 3, 0, 0, time.UTC) {
		t.Errorf("rows %+v", got)
	}

	for _, tc := range []struct{ name, query, mention string }{
		{"extra", "SELECT id, 1 AS extra FROM buf", `"extra"`},
		{"type", "SELECT id, name AS amount FROM buf", `"amount"`},
		{"ntz", "SELECT id, ts::TIMESTAMP AS ts FROM buf", `"ts"`},
		{"missing not null", "SELECT name FROM buf", `"id"`},
		{"null in not null", "SELECT CASE WHEN id = 5 THEN NULL ELSE id END AS id FROM buf", `"id"`},
		{"empty", " ; ", "empty query"},
	} {
		_, err := p.StageSQL(ctx, id, buf, catalogadapter.Source{Query: tc.query})
		if !errors.Is(err, catalogadapter.ErrInvalid) || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%s: got %v, want ErrInvalid naming %s", tc.name, err, tc.mention)
		}
	}
	if _, err := p.StageSQL(ctx, id, nil, catalogadapter.Source{Query: "SELECT 1"}); !errors.Is(err, catalogadapter.ErrInvalid) {
		t.Errorf("nil querier: %v", err)
	}
}

func TestExactlyOnce(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})

	r := writeRows(t, p, id, idRows(1, 3))
	first, err := p.Commit(ctx, id, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{WriterID: "svc", Epoch: 5})
	if err != nil || first.Skipped || first.Version != 1 {
		t.Fatalf("first commit %+v, %v", first, err)
	}
	// The replay of epoch 5, and an older epoch, are skipped.
	for _, epoch := range []int64{5, 4, 0} {
		again := writeRows(t, p, id, idRows(100, 3))
		out, err := p.Commit(ctx, id, []catalogadapter.Receipt{again}, catalogadapter.CommitOptions{WriterID: "svc", Epoch: epoch})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(catalogadapter.CommitOutcome{Version: 1, Skipped: true}, out); d != "" {
			t.Errorf("epoch %d (-want +got):\n%s", epoch, d)
		}
	}
	if got := scanRows(t, p, db, id, -1, nil); len(got) != 3 {
		t.Errorf("%d rows after replays, want 3", len(got))
	}
	// Another writer's epoch 5 is its own; a later epoch of ours lands.
	out, err := p.Commit(ctx, id, []catalogadapter.Receipt{writeRows(t, p, id, idRows(10, 1))}, catalogadapter.CommitOptions{WriterID: "other", Epoch: 5})
	if err != nil || out.Skipped || out.Version != 2 {
		t.Errorf("other writer: %+v, %v", out, err)
	}
	// An empty epoch still records itself, so its replay is skipped too.
	out, err = p.Commit(ctx, id, nil, catalogadapter.CommitOptions{WriterID: "svc", Epoch: 6})
	if err != nil || out.Skipped || out.Version != 3 {
		t.Errorf("empty epoch: %+v, %v", out, err)
	}
	if e, ok, err := p.LastEpoch(ctx, id, "svc"); err != nil || !ok || e != 6 {
		t.Errorf("LastEpoch = %d %v %v", e, ok, err)
	}
	// With nothing to record, nothing is written.
	out, err = p.Commit(ctx, id, nil, catalogadapter.CommitOptions{Epoch: -1})
	if err != nil || out.Version != 3 || out.Skipped {
		t.Errorf("no-op commit: %+v, %v", out, err)
	}
}

func TestUpsertRemovesAndAdds(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{
		Schema: arrow.NewSchema(append(ordersSchema().Fields(), arrow.Field{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true}), nil),
		PartitionSpec: catalogadapter.PartitionSpec{Fields: []catalogadapter.PartitionField{
			{Name: "region", Transform: catalogadapter.Transform{Kind: catalogadapter.Identity}}}},
	})
	buf, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()
	stage := func(query string) catalogadapter.Receipt {
		t.Helper()
		r, err := p.StageSQL(ctx, id, buf, catalogadapter.Source{Query: query})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r1 := stage("SELECT i::BIGINT AS id, i::DOUBLE AS amount, CASE WHEN i < 5 THEN 'eu' ELSE 'us a/b' END AS region FROM range(10) t(i)")
	if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{r1}, catalogadapter.CommitOptions{WriterID: "w", Epoch: 1}); err != nil {
		t.Fatal(err)
	}
	_, files, err := p.Files(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("%d files, want one per region", len(files))
	}
	var eu catalogadapter.DataFile
	for _, f := range files {
		if f.Partition["region"] == "eu" {
			eu = f
		}
	}
	if eu.Path == "" || eu.Rows != 5 {
		t.Fatalf("no eu file among %+v", files)
	}
	// Rewrite the eu file: keys 0..4 get amount * 10, key 3 is deleted.
	scan, err := p.ScanSQL(ctx, id, buf, -1, []string{eu.Path})
	if err != nil {
		t.Fatal(err)
	}
	r2 := stage("SELECT id, amount * 10 AS amount, region FROM (" + scan + ") WHERE id <> 3")
	out, err := p.Commit(ctx, id, []catalogadapter.Receipt{r2}, catalogadapter.CommitOptions{
		WriterID: "w", Epoch: 2, Removes: []string{eu.Path}, Operation: "MERGE"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Version != 2 {
		t.Errorf("version %d", out.Version)
	}
	q, err := p.ScanSQL(ctx, id, db, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var sum float64
	if err := db.QueryRowContext(ctx, "SELECT count(*), sum(amount) FROM ("+q+")").Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	// eu: (0+1+2+4)*10 = 70; us: 5+6+7+8+9 = 35.
	if n != 9 || sum != 105 {
		t.Errorf("after upsert: %d rows, sum %v; want 9, 105", n, sum)
	}
	// The commit is one version with the remove and the add.
	data, err := os.ReadFile(filepath.Join(id.Name, "_delta_log", "00000000000000000002.json"))
	if err != nil {
		t.Fatal(err)
	}
	actions, err := delta.ParseActions(data)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, a := range actions {
		switch {
		case a.CommitInfo != nil:
			kinds = append(kinds, "commitInfo:"+fmt.Sprint(a.CommitInfo["operation"]))
		case a.Txn != nil:
			kinds = append(kinds, fmt.Sprintf("txn:%s:%d", a.Txn.AppID, a.Txn.Version))
		case a.Remove != nil:
			kinds = append(kinds, "remove")
			if a.Remove.Path != eu.Path || a.Remove.Size == nil || *a.Remove.Size <= 0 || a.Remove.ExtendedFileMetadata == nil ||
				a.Remove.DeletionTimestamp == nil || *a.Remove.DeletionTimestamp != t0.UnixMilli() || !a.Remove.DataChange ||
				a.Remove.PartitionValues["region"] == nil || *a.Remove.PartitionValues["region"] != "eu" {
				t.Errorf("remove action %+v", a.Remove)
			}
		case a.Add != nil:
			kinds = append(kinds, "add")
		}
	}
	if d := cmp.Diff([]string{"commitInfo:MERGE", "txn:w:2", "remove", "add"}, kinds); d != "" {
		t.Errorf("actions (-want +got):\n%s", d)
	}
	// The removed file is gone from scans by path: someone removed it.
	if _, err := p.ScanSQL(ctx, id, db, -1, []string{eu.Path}); !errors.Is(err, catalogadapter.ErrConflict) {
		t.Errorf("scan of removed file: %v", err)
	}
	// But time travel still reads it.
	if got := scanRows(t, p, db, id, 1, []string{eu.Path}); len(got) != 5 {
		t.Errorf("version 1, eu file: %d rows", len(got))
	}
	// Removing it again is a conflict: the caller must redo its merge.
	_, err = p.Commit(ctx, id, nil, catalogadapter.CommitOptions{WriterID: "w", Epoch: 3, Removes: []string{eu.Path}})
	if !errors.Is(err, catalogadapter.ErrConflict) {
		t.Errorf("second remove: got %v, want ErrConflict", err)
	}
}

func TestConcurrentBlindAppends(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})
	receipts := []catalogadapter.Receipt{writeRows(t, p, id, idRows(0, 50)), writeRows(t, p, id, idRows(50, 50))}

	// Both commits read version 0 before either writes: one must lose the
	// race for version 1 and retry.
	var arrived sync.WaitGroup
	arrived.Add(2)
	p.beforeCommit = func(attempt int) {
		if attempt == 0 {
			arrived.Done()
			arrived.Wait()
		}
	}
	outs := make([]catalogadapter.CommitOutcome, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			outs[i], errs[i] = p.Commit(ctx, id, receipts[i:i+1], catalogadapter.CommitOptions{
				WriterID: fmt.Sprintf("writer-%d", i), Epoch: 1})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	versions := []int64{outs[0].Version, outs[1].Version}
	if !(versions[0] == 1 && versions[1] == 2 || versions[0] == 2 && versions[1] == 1) {
		t.Errorf("versions %v, want 1 and 2", versions)
	}
	if outs[0].Retries+outs[1].Retries < 1 || outs[0].Skipped || outs[1].Skipped {
		t.Errorf("outcomes %+v", outs)
	}
	got := scanRows(t, p, db, id, -1, nil)
	if d := cmp.Diff(idRows(0, 100), got); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	for i := range 2 {
		if e, ok, err := p.LastEpoch(ctx, id, fmt.Sprintf("writer-%d", i)); err != nil || !ok || e != 1 {
			t.Errorf("writer-%d epoch %d %v %v", i, e, ok, err)
		}
	}
}

func TestConcurrentRemovesConflict(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})
	if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{writeRows(t, p, id, idRows(0, 10))}, catalogadapter.CommitOptions{Epoch: -1}); err != nil {
		t.Fatal(err)
	}
	_, files, err := p.Files(ctx, id)
	if err != nil || len(files) != 1 {
		t.Fatalf("files %v %v", files, err)
	}
	receipts := []catalogadapter.Receipt{writeRows(t, p, id, idRows(0, 10)), writeRows(t, p, id, idRows(0, 10))}
	var arrived sync.WaitGroup
	arrived.Add(2)
	p.beforeCommit = func(attempt int) {
		if attempt == 0 {
			arrived.Done()
			arrived.Wait()
		}
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			_, errs[i] = p.Commit(ctx, id, receipts[i:i+1], catalogadapter.CommitOptions{
				WriterID: fmt.Sprintf("w%d", i), Epoch: 1, Removes: []string{files[0].Path}})
		})
	}
	wg.Wait()
	var won, conflicted int
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case errors.Is(err, catalogadapter.ErrConflict):
			conflicted++
			if !errors.Is(err, delta.ErrConflict) {
				t.Errorf("conflict error lost the Delta conflict: %v", err)
			}
		default:
			t.Errorf("unexpected error %v", err)
		}
	}
	if won != 1 || conflicted != 1 {
		t.Errorf("won %d, conflicted %d; errors %v", won, conflicted, errs)
	}
	if got := scanRows(t, p, db, id, -1, nil); len(got) != 10 {
		t.Errorf("%d rows, want 10", len(got))
	}
}

func TestRetryExhaustionAndRacingReplay(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	other := New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})

	// Another writer always gets in first: the loop gives up.
	p.beforeCommit = func(attempt int) {
		if _, err := other.Commit(ctx, id, nil, catalogadapter.CommitOptions{WriterID: "other", Epoch: int64(attempt)}); err != nil {
			t.Error(err)
		}
	}
	_, err := p.Commit(ctx, id, []catalogadapter.Receipt{writeRows(t, p, id, idRows(0, 1))},
		catalogadapter.CommitOptions{WriterID: "me", Epoch: 1, MaxRetries: 2})
	if !errors.Is(err, catalogadapter.ErrConflict) || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Errorf("got %v, want ErrConflict after 3 attempts", err)
	}

	// A replay of our own epoch wins the race: we are skipped.
	p.beforeCommit = func(attempt int) {
		if attempt == 0 {
			if _, err := other.Commit(ctx, id, nil, catalogadapter.CommitOptions{WriterID: "me", Epoch: 1}); err != nil {
				t.Error(err)
			}
		}
	}
	out, err := p.Commit(ctx, id, []catalogadapter.Receipt{writeRows(t, p, id, idRows(0, 1))},
		catalogadapter.CommitOptions{WriterID: "me", Epoch: 1})
	if err != nil || !out.Skipped || out.Version != 4 {
		t.Errorf("racing replay: %+v, %v; want skipped at version 4", out, err)
	}

	// A cancelled context stops the retries.
	cctx, cancel := context.WithCancel(ctx)
	p.beforeCommit = func(attempt int) {
		other.Commit(ctx, id, nil, catalogadapter.CommitOptions{WriterID: "other", Epoch: int64(100 + attempt)})
		cancel()
	}
	_, err = p.Commit(cctx, id, []catalogadapter.Receipt{writeRows(t, p, id, idRows(0, 1))}, catalogadapter.CommitOptions{Epoch: -1})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestBadReceipts(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})
	good := writeRows(t, p, id, idRows(0, 2))
	var adds []*delta.Add
	if err := json.Unmarshal(good.Metadata, &adds); err != nil {
		t.Fatal(err)
	}
	withPath := func(path string) string {
		a := *adds[0]
		a.Path = path
		b, _ := json.Marshal([]*delta.Add{&a})
		return string(b)
	}
	for _, meta := range []string{
		`{`, `{"path":"x"}`, `[null]`, `[{"path":""}]`,
		withPath("../escape.parquet"), withPath("/etc/passwd"), withPath("file:///etc/passwd"),
		withPath("_delta_log/00000000000000000000.json"), withPath("missing.parquet"), withPath("a/../" + adds[0].Path),
		withPath("%zz"),
	} {
		_, err := p.Commit(ctx, id, []catalogadapter.Receipt{{Metadata: json.RawMessage(meta)}}, catalogadapter.CommitOptions{Epoch: -1})
		if !errors.Is(err, catalogadapter.ErrInvalid) {
			t.Errorf("receipt %s: got %v, want ErrInvalid", meta, err)
		}
	}
	// The same file twice, and a file both added and removed.
	if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{good, good}, catalogadapter.CommitOptions{Epoch: -1}); !errors.Is(err, catalogadapter.ErrInvalid) {
		t.Errorf("duplicate receipt: %v", err)
	}
	if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{good}, catalogadapter.CommitOptions{Epoch: -1, Removes: []string{adds[0].Path}}); !errors.Is(err, catalogadapter.ErrInvalid) {
		t.Errorf("add and remove: %v", err)
	}
	if _, err := p.Commit(ctx, id, nil, catalogadapter.CommitOptions{Epoch: -1, Removes: []string{"never-there.parquet"}}); !errors.Is(err, catalogadapter.ErrConflict) {
		t.Errorf("unknown remove: %v", err)
	}
	if v, _, _ := p.Files(ctx, id); v != 0 {
		t.Errorf("a bad commit moved the table to version %d", v)
	}
}

func TestScanSQLErrors(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})
	if _, err := p.ScanSQL(ctx, id, db, 5, nil); !errors.Is(err, catalogadapter.ErrInvalid) {
		t.Errorf("future version: %v", err)
	}
	if _, err := p.ScanSQL(ctx, id, db, -1, []string{"nope.parquet"}); !errors.Is(err, catalogadapter.ErrConflict) {
		t.Errorf("unknown path: %v", err)
	}
	if _, err := p.ScanSQL(ctx, id, nil, -1, nil); !errors.Is(err, catalogadapter.ErrInvalid) {
		t.Errorf("nil querier: %v", err)
	}
	// An empty, non-nil path list reads nothing.
	if got := scanRows(t, p, db, id, -1, []string{}); len(got) != 0 {
		t.Errorf("%d rows", len(got))
	}
}

func TestSecurityContext(t *testing.T) {
	ctx := context.Background()
	clock := clocktest.New(t0)
	p := New(openDB(t), testOptions(clock))
	id := catalogadapter.TableIdent{Name: filepath.Join(t.TempDir(), "t")}
	sc, err := p.SecurityContext(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	token := sc.Credential.Token.Reveal()
	if len(token) != 64 || sc.Encryption.Level != catalogadapter.EncryptionNone ||
		sc.Credential.Scope != catalogadapter.ScopeTableReadWrite || !sc.Credential.ExpiresAt.Equal(t0.Add(15*time.Minute)) {
		t.Errorf("security context %+v (token length %d)", sc, len(token))
	}
	js, _ := json.Marshal(sc)
	for _, s := range []string{fmt.Sprint(sc), fmt.Sprintf("%+v %#v %q %x %s", sc, sc, sc.Credential.Token, sc.Credential.Token, sc.Credential.Token), string(js)} {
		if strings.Contains(s, token) || strings.Contains(s, fmt.Sprintf("%x", token)) {
			t.Errorf("token leaked: %s", s)
		}
	}
	// Cached until a minute before expiry, then renewed; never expired.
	clock.Advance(13 * time.Minute)
	if sc2, _ := p.SecurityContext(ctx, id); sc2.Credential.Token.Reveal() != token {
		t.Error("credential renewed too early")
	}
	clock.Advance(90 * time.Second)
	sc3, err := p.SecurityContext(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if sc3.Credential.Token.Reveal() == token || !sc3.Credential.Valid(clock.Now()) {
		t.Errorf("credential not renewed near expiry: %+v", sc3)
	}
	if _, err := p.SecurityContext(ctx, catalogadapter.TableIdent{Name: "rel"}); !errors.Is(err, catalogadapter.ErrInvalid) {
		t.Errorf("relative ident: %v", err)
	}
}

func TestAssignable(t *testing.T) {
	for _, tc := range []struct {
		from, to delta.DataType
		want     bool
	}{
		{delta.TypeInteger, delta.TypeLong, true},
		{delta.TypeLong, delta.TypeInteger, false},
		{delta.TypeInteger, delta.TypeDouble, true},
		{delta.TypeLong, delta.TypeDouble, false},
		{delta.TypeFloat, delta.TypeDouble, true},
		{delta.TypeDouble, delta.TypeFloat, false},
		{delta.DecimalType{Precision: 10, Scale: 2}, delta.DecimalType{Precision: 12, Scale: 4}, true},
		{delta.DecimalType{Precision: 10, Scale: 2}, delta.DecimalType{Precision: 10, Scale: 3}, false},
		{delta.TypeInteger, delta.DecimalType{Precision: 12, Scale: 2}, true},
		{delta.TypeLong, delta.DecimalType{Precision: 12, Scale: 2}, false},
		{delta.TypeTimestamp, delta.TypeTimestampNTZ, false},
		{&delta.ArrayType{ElementType: delta.TypeLong}, &delta.ArrayType{ElementType: delta.TypeLong, ContainsNull: true}, true},
		{delta.DecimalType{Precision: 21, Scale: 1}, delta.TypeDouble, true},
		{delta.DecimalType{Precision: 21, Scale: 1}, delta.TypeFloat, false},
		{delta.TypeString, nil, false},
	} {
		if got := assignable(tc.from, tc.to); got != tc.want {
			t.Errorf("assignable(%v, %v) = %v", tc.from, tc.to, got)
		}
	}
}

// tallRecord claims more rows than its columns hold.
type tallRecord struct{ arrow.RecordBatch }

func (r tallRecord) NumRows() int64 { return r.RecordBatch.NumRows() + 1 }

func TestEpochSurvivesCheckpoint(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	opts := testOptions(clocktest.New(t0))
	opts.CheckpointInterval = 2
	p := New(db, opts)
	id := newTable(t, p, catalogadapter.TableDef{})
	for epoch := int64(1); epoch <= 5; epoch++ {
		r := writeRows(t, p, id, idRows(epoch*10, 2))
		if out, err := p.Commit(ctx, id, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{WriterID: "w", Epoch: epoch}); err != nil || out.Version != epoch {
			t.Fatalf("epoch %d: %+v %v", epoch, out, err)
		}
	}
	if _, err := os.Stat(filepath.Join(id.Name, "_delta_log", "00000000000000000004.checkpoint.parquet")); err != nil {
		t.Fatalf("no checkpoint: %v", err)
	}
	// Read from the checkpoint on, the txn record is still there.
	if e, ok, err := p.LastEpoch(ctx, id, "w"); err != nil || !ok || e != 5 {
		t.Errorf("LastEpoch = %d %v %v", e, ok, err)
	}
	out, err := p.Commit(ctx, id, []catalogadapter.Receipt{writeRows(t, p, id, idRows(100, 1))}, catalogadapter.CommitOptions{WriterID: "w", Epoch: 3})
	if err != nil || !out.Skipped || out.Version != 5 {
		t.Errorf("replay after checkpoint: %+v %v", out, err)
	}
	if got := scanRows(t, p, db, id, -1, nil); len(got) != 10 {
		t.Errorf("%d rows, want 10", len(got))
	}
	spec, err := p.TableSpec(ctx, id)
	if err != nil || spec.Properties["delta.checkpointInterval"] != "2" || spec.Version != 5 {
		t.Errorf("spec %+v %v", spec, err)
	}
}

func TestAppendOnlyTable(t *testing.T) {
	ctx := context.Background()
	p := New(openDB(t), testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{Properties: map[string]string{"delta.appendOnly": "true"}})
	if _, err := p.Commit(ctx, id, []catalogadapter.Receipt{writeRows(t, p, id, idRows(0, 2))}, catalogadapter.CommitOptions{Epoch: -1}); err != nil {
		t.Fatal(err)
	}
	_, files, err := p.Files(ctx, id)
	if err != nil || len(files) != 1 {
		t.Fatalf("files %v %v", files, err)
	}
	if _, err := p.Commit(ctx, id, nil, catalogadapter.CommitOptions{Epoch: -1, Removes: []string{files[0].Path}}); !errors.Is(err, catalogadapter.ErrInvalid) {
		t.Errorf("remove from append-only table: %v", err)
	}
}

// TestDiscard: a forged receipt deletes nothing outside the table. That
// Discard deletes staged files and keeps committed ones is the
// conformance suite's check (TestConformance).
func TestDiscard(t *testing.T) {
	ctx := context.Background()
	p := New(openDB(t), testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{})
	outside := filepath.Join(filepath.Dir(id.Name), "precious")
	if err := os.WriteFile(outside, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	forged := catalogadapter.Receipt{Metadata: json.RawMessage(`[{"path":"../precious","size":1}]`)}
	if err := p.Discard(ctx, id, []catalogadapter.Receipt{forged}); !errors.Is(err, catalogadapter.ErrInvalid) {
		t.Errorf("forged receipt: %v", err)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Error("a forged receipt deleted a file outside the table")
	}
}
