package delta

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/go-cmp/cmp"
)

// allTypesSchema has every primitive type and the nested ones, plus
// partition columns of several types.
func allTypesSchema() *StructType {
	f := func(name string, t DataType) *StructField { return &StructField{Name: name, Type: t, Nullable: true} }
	return &StructType{Fields: []*StructField{
		{Name: "id", Type: TypeLong, Nullable: false},
		f("c_byte", TypeByte), f("c_short", TypeShort), f("c_int", TypeInteger),
		f("c_float", TypeFloat), f("c_double", TypeDouble),
		f("c_dec", DecimalType{Precision: 10, Scale: 2}), f("c_dec38", DecimalType{Precision: 38, Scale: 6}),
		f("c_bool", TypeBoolean), f("c_str", TypeString), f("c_bin", TypeBinary),
		f("c_date", TypeDate), f("c_ts", TypeTimestamp), f("c_ntz", TypeTimestampNTZ),
		f("c_struct", &StructType{Fields: []*StructField{f("a", TypeInteger), f("b", TypeString)}}),
		f("c_arr", &ArrayType{ElementType: TypeLong, ContainsNull: true}),
		f("c_map", &MapType{KeyType: TypeString, ValueType: TypeInteger, ValueContainsNull: true}),
		f("p_str", TypeString), f("p_int", TypeInteger), f("p_date", TypeDate), f("p_ts", TypeTimestamp),
	}}
}

// allTypesRows yields rows for commit k: edge values, nulls, and partition
// values with special characters and nulls.
func allTypesRows(k int) string {
	return fmt.Sprintf(`SELECT
  (%[1]d * 1000 + i)::BIGINT AS id,
  CASE i %% 4 WHEN 0 THEN -128 WHEN 1 THEN 127 WHEN 2 THEN NULL ELSE i END::TINYINT AS c_byte,
  CASE i %% 3 WHEN 0 THEN -32768 WHEN 1 THEN 32767 ELSE NULL END::SMALLINT AS c_short,
  CASE i %% 3 WHEN 0 THEN -2147483648 WHEN 1 THEN 2147483647 ELSE NULL END::INTEGER AS c_int,
  CASE i %% 4 WHEN 0 THEN 'NaN'::FLOAT WHEN 1 THEN 'inf'::FLOAT WHEN 2 THEN NULL ELSE 1.5 END::FLOAT AS c_float,
  CASE i %% 4 WHEN 0 THEN -1e308 WHEN 1 THEN 5e-324 WHEN 2 THEN NULL ELSE i / 3 END::DOUBLE AS c_double,
  CASE WHEN i %% 5 = 0 THEN NULL ELSE (i * 1.25 - 3)::DECIMAL(10,2) END AS c_dec,
  CASE WHEN i %% 5 = 1 THEN NULL ELSE 99999999999999999999999999999999.123456::DECIMAL(38,6) * (i %% 2 * 2 - 1) END AS c_dec38,
  CASE WHEN i %% 3 = 0 THEN NULL ELSE i %% 2 = 0 END AS c_bool,
  CASE i %% 4 WHEN 0 THEN NULL WHEN 1 THEN '' WHEN 2 THEN 'ünïcødé ' || repeat('x', 40) ELSE 'it''s "q"' END AS c_str,
  CASE WHEN i %% 3 = 0 THEN NULL ELSE ('\x00\xFF' || i::VARCHAR)::BLOB END AS c_bin,
  CASE WHEN i %% 4 = 0 THEN NULL ELSE DATE '1970-01-01' + (i * 1000)::INTEGER END AS c_date,
  CASE WHEN i %% 4 = 0 THEN NULL ELSE TIMESTAMPTZ '2024-02-29 23:59:59.123456+00' + INTERVAL (i) HOUR END AS c_ts,
  CASE WHEN i %% 4 = 1 THEN NULL ELSE TIMESTAMP '1900-01-01 00:00:00.000001' + INTERVAL (i) DAY END AS c_ntz,
  CASE WHEN i %% 5 = 0 THEN NULL ELSE {'a': i, 'b': 'b' || i} END AS c_struct,
  CASE WHEN i %% 5 = 1 THEN NULL WHEN i %% 5 = 2 THEN [] ELSE [i, NULL, -i] END AS c_arr,
  CASE WHEN i %% 5 = 3 THEN NULL ELSE MAP {'k' || i: i, 'z': NULL} END AS c_map,
  CASE i %% 4 WHEN 0 THEN NULL WHEN 1 THEN 'a/b=c %%d' WHEN 2 THEN 'x y#?&:é' ELSE 'plain' END AS p_str,
  CASE WHEN i %% 3 = 0 THEN NULL ELSE i %% 2 END::INTEGER AS p_int,
  CASE WHEN i %% 2 = 0 THEN NULL ELSE DATE '2024-01-01' + %[1]d::INTEGER END AS p_date,
  CASE WHEN i %% 7 = 0 THEN NULL ELSE TIMESTAMPTZ '2024-01-01 10:00:00.5+00' END AS p_ts
FROM range(12) t(i)`, k)
}

// TestRoundTrip writes many commits with every type and partitions across
// several checkpoints, reopens the table and compares rows, schema, version
// and txn with what was written.
func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := openDuckDB(t)
	store, err := NewLocalStorage(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	schema := allTypesSchema()
	parts := []string{"p_str", "p_int", "p_date", "p_ts"}
	snap, err := Create(ctx, store, CreateOptions{Name: "rt", Schema: schema, PartitionColumns: parts,
		Configuration: map[string]string{"delta.checkpointInterval": "5"}})
	if err != nil {
		t.Fatal(err)
	}
	const commits = 23
	if _, err := db.ExecContext(ctx, "CREATE TABLE want AS "+allTypesRows(0)+" LIMIT 0"); err != nil {
		t.Fatal(err)
	}
	table := NewTable(store)
	for k := 1; k <= commits; k++ {
		adds, err := snap.WriteFiles(ctx, db, allTypesRows(k), WriteOptions{})
		if err != nil {
			t.Fatalf("commit %d: %v", k, err)
		}
		actions := []Action{{Txn: &Txn{AppID: "writer-a", Version: int64(100 + k)}}}
		for _, a := range adds {
			actions = append(actions, Action{Add: a})
		}
		if k%4 == 0 {
			actions = append(actions, Action{Txn: &Txn{AppID: "writer-b", Version: int64(k)}})
		}
		res, err := snap.Commit(ctx, actions, CommitOptions{})
		if err != nil {
			t.Fatalf("commit %d: %v", k, err)
		}
		if res.CheckpointErr != nil {
			t.Fatalf("checkpoint at %d: %v", res.Version, res.CheckpointErr)
		}
		if res.Checkpointed != (res.Version%5 == 0) {
			t.Fatalf("version %d: checkpointed = %v", res.Version, res.Checkpointed)
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO want "+allTypesRows(k)); err != nil {
			t.Fatal(err)
		}
		if snap, err = table.Latest(ctx); err != nil {
			t.Fatalf("reopen after commit %d: %v", k, err)
		}
	}

	// A fresh table object reads from disk only.
	again, err := NewTable(store).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again.Version != commits || again.CheckpointVersion != 20 {
		t.Fatalf("version %d checkpoint %d, want %d and 20", again.Version, again.CheckpointVersion, commits)
	}
	if v, ok := again.TxnVersion("writer-a"); !ok || v != 100+commits {
		t.Fatalf("txn writer-a = %d, %v", v, ok)
	}
	if v, ok := again.TxnVersion("writer-b"); !ok || v != 20 {
		t.Fatalf("txn writer-b = %d, %v", v, ok)
	}
	gotSchema, err := again.Schema()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(schema, gotSchema); diff != "" {
		t.Fatalf("schema (-written +read):\n%s", diff)
	}
	compareRows(t, db, again, wantRowsQuery(schema))

	// Time travel: version 7 holds the rows of commits 1..7.
	v7, err := NewTable(store).At(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE want7 AS SELECT * FROM want WHERE id < 8000"); err != nil {
		t.Fatal(err)
	}
	compareRows(t, db, v7, "SELECT * FROM want7")
}

// wantRowsQuery reads the reference table with the partition rule applied:
// an empty string partition value reads back as NULL.
func wantRowsQuery(schema *StructType) string {
	return "SELECT * REPLACE (NULLIF(p_str, '') AS p_str) FROM want"
}

func compareRows(t *testing.T, db *sql.DB, snap *Snapshot, wantQuery string) {
	t.Helper()
	ctx := context.Background()
	query, err := snap.ScanSQL(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	got, cols, err := rowsAsText(ctx, db, query, nil)
	if err != nil {
		t.Fatalf("scan version %d: %v", snap.Version, err)
	}
	want, wantCols, err := rowsAsText(ctx, db, wantQuery, cols)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(colNames(wantCols), colNames(cols)); diff != "" {
		t.Fatalf("version %d columns (-want +got):\n%s", snap.Version, diff)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("version %d rows (-want +got):\n%s", snap.Version, diff)
	}
	if len(got) == 0 {
		t.Fatalf("version %d: no rows", snap.Version)
	}
}

func colNames(cols []colType) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// TestScanArrow reads a snapshot as Arrow record batches and checks them
// against the table's Arrow schema and its row count.
func TestScanArrow(t *testing.T) {
	ctx := context.Background()
	db := openDuckDB(t)
	store, err := NewLocalStorage(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	schema := allTypesSchema()
	snap, err := Create(ctx, store, CreateOptions{Schema: schema, PartitionColumns: []string{"p_str", "p_date"}})
	if err != nil {
		t.Fatal(err)
	}
	adds, err := snap.WriteFiles(ctx, db, allTypesRows(1), WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var actions []Action
	for _, a := range adds {
		actions = append(actions, Action{Add: a})
	}
	if _, err := snap.Commit(ctx, actions, CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, err = NewTable(store).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rr, err := snap.Scan(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	want, err := ToArrowSchema(schema)
	if err != nil {
		t.Fatal(err)
	}
	got := rr.Schema()
	if len(got.Fields()) != len(want.Fields()) {
		t.Fatalf("%d columns, want %d", len(got.Fields()), len(want.Fields()))
	}
	for i, f := range want.Fields() {
		g := got.Field(i)
		// DuckDB hands strings out as views or plain strings; both are Delta strings.
		gs, err := FromArrowSchema(arrow.NewSchema([]arrow.Field{{Name: g.Name, Type: g.Type, Nullable: true}}, nil))
		if err != nil {
			t.Fatalf("column %s: %v", g.Name, err)
		}
		if g.Name != f.Name || gs.Fields[0].Type.String() != schema.Fields[i].Type.String() {
			t.Errorf("column %d: got %s %s, want %s %s", i, g.Name, g.Type, f.Name, f.Type)
		}
	}
	rows := int64(0)
	for rr.Next() {
		rows += rr.RecordBatch().NumRows()
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	if rows != 12 {
		t.Fatalf("%d rows, want 12", rows)
	}
}

// TestScanColumnMappingIDMode: in column mapping id mode a column is found
// in a data file by its Parquet field id, whatever name the file gives it
// (an Iceberg table converted to Delta after a rename writes such files).
// Top-level columns are read by id; a column no file holds, and a struct a
// file lacks, read as NULL. Files DuckDB would read wrongly are refused:
// one holding a column under its physical name but without a field id,
// and one holding a nested field id under another name (nested fields are
// matched by name).
func TestScanColumnMappingIDMode(t *testing.T) {
	ctx := context.Background()
	db := openDuckDB(t)
	field := func(name, phys string, id int, typ string) string {
		return fmt.Sprintf(`{"name":%q,"type":%s,"nullable":true,"metadata":{"delta.columnMapping.id":%d,"delta.columnMapping.physicalName":%q}}`,
			name, typ, id, phys)
	}
	schema := `{"type":"struct","fields":[` + field("id", "c1", 1, `"long"`) + `,` + field("name", "c2", 2, `"string"`) + `,` +
		field("s", "c3", 3, `{"type":"struct","fields":[`+field("a", "c4", 4, `"integer"`)+`]}`) + `,` +
		field("added", "c5", 5, `"integer"`) + `,` + field("p", "c6", 6, `"string"`) + `]}`
	// table writes an id-mode table of one data file per COPY statement,
	// partition value p = the file's name.
	type dataFile struct {
		query, opts string
		deleted     []uint64 // rows removed by an inline deletion vector
	}
	table := func(t *testing.T, copies ...dataFile) *Snapshot {
		t.Helper()
		dir := t.TempDir()
		store, err := NewLocalStorage(dir)
		if err != nil {
			t.Fatal(err)
		}
		actions := []Action{
			{Protocol: &Protocol{MinReaderVersion: 2, MinWriterVersion: 5}},
			{MetaData: &Metadata{ID: "t", Format: Format{Provider: "parquet"}, SchemaString: schema, PartitionColumns: []string{"p"},
				Configuration: map[string]string{"delta.columnMapping.mode": "id", "delta.columnMapping.maxColumnId": "6"}}},
		}
		for i, c := range copies {
			name := fmt.Sprintf("f%d.parquet", i)
			if _, err := db.ExecContext(ctx, fmt.Sprintf("COPY (%s) TO '%s/%s' (FORMAT parquet%s)", c.query, dir, name, c.opts)); err != nil {
				t.Fatal(err)
			}
			info, err := os.Stat(dir + "/" + name)
			if err != nil {
				t.Fatal(err)
			}
			add := &Add{Path: name, PartitionValues: map[string]*string{"c6": &name}, Size: info.Size(), ModificationTime: 1, DataChange: true}
			if len(c.deleted) > 0 {
				b := encodeDVForTest(c.deleted, dvTestEncoding{})
				add.DeletionVector = &DeletionVectorDescriptor{StorageType: "i", PathOrInlineDv: encodeZ85ForTest(b),
					SizeInBytes: int32(len(b)), Cardinality: int64(len(c.deleted))}
			}
			actions = append(actions, Action{Add: add})
		}
		biWriteCommit(t, store, 0, actions)
		snap, err := NewTable(store).Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return snap
	}
	rows := func(t *testing.T, snap *Snapshot) (string, error) {
		t.Helper()
		q, err := snap.ScanSQL(ctx, db)
		if err != nil {
			return "", err
		}
		var got string
		err = db.QueryRowContext(ctx, `SELECT string_agg(concat_ws('|', id, name, coalesce(s::VARCHAR, 'null'), coalesce(added::VARCHAR, 'null'), p), '; ' ORDER BY id) FROM (`+q+`)`).Scan(&got)
		return got, err
	}

	t.Run("resolved by field id", func(t *testing.T) {
		snap := table(t,
			dataFile{query: `SELECT 7::BIGINT AS old_id, 'x' AS old_name, {'c4': 1} AS old_s`,
				opts: `, FIELD_IDS {old_id: 1, old_name: 2, old_s: {__duckdb_field_id: 3, c4: 4}}`},
			dataFile{query: `SELECT * FROM (VALUES ('y', 8::BIGINT), ('z', 9)) v(c2, c1)`, opts: `, FIELD_IDS {c2: 2, c1: 1}`, deleted: []uint64{1}},
		)
		got, err := rows(t, snap)
		if err != nil {
			t.Fatal(err)
		}
		if want := "7|x|{'a': 1}|null|f0.parquet; 8|y|null|null|f1.parquet"; got != want {
			t.Fatalf("rows = %q, want %q", got, want)
		}
	})

	for _, c := range []struct {
		name, query, opts, want string
	}{
		{"column without field id", `SELECT 7::BIGINT AS c1, 'x' AS c2`, ``, `"c1" is held without its field id 1`},
		{"nested field id under another name", `SELECT 7::BIGINT AS c1, {'old_a': 1, 'c4': 2} AS c3`,
			`, FIELD_IDS {c1: 1, c3: {__duckdb_field_id: 3, old_a: 4, c4: 9}}`, `nested field id 4 is held as "old_a"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := rows(t, table(t, dataFile{query: c.query, opts: c.opts}))
			if !errors.Is(err, ErrUnsupportedFeature) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want ErrUnsupportedFeature saying %q, got %v", c.want, err)
			}
		})
	}
}
