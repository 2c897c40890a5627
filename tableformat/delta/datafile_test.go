package delta

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWriteFilesStatsAndPartitions checks what WriteFiles puts in add
// actions: stats as the protocol prescribes, partition values in their
// string forms, null partitions under __HIVE_DEFAULT_PARTITION__, escaped
// folder names and URI-encoded paths that resolve to real files.
func TestWriteFilesStatsAndPartitions(t *testing.T) {
	ctx := context.Background()
	db := openDuckDB(t)
	store, err := NewLocalStorage(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := func(name string, t DataType) *StructField { return &StructField{Name: name, Type: t, Nullable: true} }
	schema := &StructType{Fields: []*StructField{
		f("id", TypeLong), f("s", TypeString), f("ts", TypeTimestamp), f("ntz", TypeTimestampNTZ),
		f("d", DecimalType{Precision: 5, Scale: 2}), f("st", &StructType{Fields: []*StructField{f("x", TypeInteger)}}),
		f("b", TypeBoolean), f("part", TypeString), f("pts", TypeTimestamp),
	}}
	snap, err := Create(ctx, store, CreateOptions{Schema: schema, PartitionColumns: []string{"part", "pts"}})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("é", 40)
	adds, err := snap.WriteFiles(ctx, db, `
		SELECT * FROM (VALUES
		  (1, 'a', TIMESTAMPTZ '2024-01-01 00:00:00.123789+00', TIMESTAMP '2024-01-01 00:00:00.999999', 1.50, {'x': 5}, true, 'a/b %=c', TIMESTAMPTZ '2024-05-06 07:08:09.5+00'),
		  (7, '`+long+`', NULL, TIMESTAMP '1999-12-31 23:59:59', -2.25, NULL, NULL, 'a/b %=c', TIMESTAMPTZ '2024-05-06 07:08:09.5+00'),
		  (3, NULL, NULL, NULL, NULL, {'x': NULL}, false, NULL, NULL)
		) v(id, s, ts, ntz, d, st, b, part, pts)`, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(adds) != 2 {
		t.Fatalf("%d files, want 2 (one per partition)", len(adds))
	}
	byPart := map[string]*Add{}
	for _, a := range adds {
		key := "null"
		if v := a.PartitionValues["part"]; v != nil {
			key = *v
		}
		byPart[key] = a
		tbl := NewTable(store)
		p, err := tbl.dataFile(context.Background(), tbl.rules(), a.Path, 0)
		if err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(p); err != nil || st.Size() != a.Size {
			t.Fatalf("%s: file %s: %v (size %d)", a.Path, p, err, a.Size)
		}
	}
	special, null := byPart["a/b %=c"], byPart["null"]
	if special == nil || null == nil {
		t.Fatalf("partitions: %v", byPart)
	}
	if got := *special.PartitionValues["pts"]; got != "2024-05-06T07:08:09.500000Z" {
		t.Errorf("timestamp partition value %q", got)
	}
	if null.PartitionValues["pts"] != nil || !strings.Contains(null.Path, "part=__HIVE_DEFAULT_PARTITION__/") {
		t.Errorf("null partition: path %s values %v", null.Path, null.PartitionValues)
	}
	if !strings.HasPrefix(special.Path, "part=a%252Fb%2520%2525%253Dc/") {
		t.Errorf("special partition path %s", special.Path)
	}

	var got map[string]any
	if err := json.Unmarshal([]byte(special.Stats), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"numRecords": 2.0,
		"minValues": map[string]any{
			"id": 1.0, "s": "a", "ts": "2024-01-01T00:00:00.123Z", "ntz": "1999-12-31T23:59:59.000",
			"d": -2.25, "st": map[string]any{"x": 5.0},
		},
		"maxValues": map[string]any{
			"id": 7.0, "s": strings.Repeat("é", 32) + "\U0010FFFF", "ts": "2024-01-01T00:00:00.123Z",
			"ntz": "2024-01-01T00:00:00.999", "d": 1.5, "st": map[string]any{"x": 5.0},
		},
		"nullCount": map[string]any{"id": 0.0, "s": 0.0, "ts": 1.0, "ntz": 0.0, "d": 0.0, "st": map[string]any{"x": 1.0}, "b": 1.0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	if n, ok := null.NumRecords(); !ok || n != 1 {
		t.Errorf("null partition numRecords = %d, %v", n, ok)
	}
}

// TestWriteFilesFailureLeavesNoFiles makes DuckDB fail halfway through a
// write that has already produced files: none of them may stay behind.
func TestWriteFilesFailureLeavesNoFiles(t *testing.T) {
	ctx := context.Background()
	db := openDuckDB(t)
	if _, err := db.ExecContext(ctx, "SET threads = 1"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	store, err := NewLocalStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	schema := &StructType{Fields: []*StructField{{Name: "id", Type: TypeLong, Nullable: true}, {Name: "s", Type: TypeString, Nullable: true}}}
	snap, err := Create(ctx, store, CreateOptions{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	// The cast fails on the last rows, after several small files are written.
	query := `SELECT CASE WHEN i < 1900000 THEN i::VARCHAR ELSE 'not a number' END AS id, md5(i::VARCHAR) AS s FROM range(2000000) t(i)`
	_, err = snap.WriteFiles(ctx, db, query, WriteOptions{TargetFileSize: 1 << 20})
	if err == nil {
		t.Fatal("a failing query wrote files without an error")
	}
	var left []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".parquet") {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Fatalf("%d files left after a failed write: %v", len(left), left[:1])
	}
}

// TestStatsOfFloatsWithNaN: DuckDB leaves NaN out of a float column's min
// and max (and says has_nan); Spark orders NaN above every number, so a
// file holding NaN and 5 must not claim max 5, or readers skip it for
// x > 6 and for NaN. Such a column gets no bounds, its null count stays.
func TestStatsOfFloatsWithNaN(t *testing.T) {
	ctx := context.Background()
	db := openDuckDB(t)
	store, err := NewLocalStorage(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	schema := &StructType{Fields: []*StructField{
		{Name: "id", Type: TypeLong, Nullable: true},
		{Name: "x", Type: TypeDouble, Nullable: true},
		{Name: "f", Type: TypeFloat, Nullable: true},
	}}
	snap, err := Create(ctx, store, CreateOptions{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	adds, err := snap.WriteFiles(ctx, db, `SELECT * FROM (VALUES (1, 'NaN'::DOUBLE, 1::FLOAT), (2, 5.0::DOUBLE, 'NaN'::FLOAT), (3, NULL, 2::FLOAT)) v(id, x, f)`, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(adds) != 1 {
		t.Fatalf("%d files, want 1", len(adds))
	}
	var st struct {
		MinValues, MaxValues, NullCount map[string]any
	}
	if err := json.Unmarshal([]byte(adds[0].Stats), &st); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"x", "f"} {
		if v, ok := st.MaxValues[c]; ok {
			t.Errorf("stats %s: maxValues.%s = %v for a column holding NaN, want none", adds[0].Stats, c, v)
		}
		if v, ok := st.MinValues[c]; ok {
			t.Errorf("stats %s: minValues.%s = %v for a column holding NaN, want none", adds[0].Stats, c, v)
		}
	}
	if st.MinValues["id"] != float64(1) || st.MaxValues["id"] != float64(3) || st.NullCount["x"] != float64(1) {
		t.Errorf("stats %s: want id 1..3 and one null x", adds[0].Stats)
	}
}

// TestWriteFilesRefusesPartitionValuesWithoutForm: the protocol spells
// date and timestamp partition values with four-digit years. DuckDB prints
// BC values with a "(BC)" suffix, years past 9999 with five digits, and
// infinities as words; written as they are, no reader (ours included) could
// parse them and the whole table would stop reading. WriteFiles refuses
// them, naming the column and the value, and leaves no file behind; the
// years 0001 and 9999 are written and read back.
func TestWriteFilesRefusesPartitionValuesWithoutForm(t *testing.T) {
	ctx := context.Background()
	db := openDuckDB(t)
	write := func(t *testing.T, typ DataType, value string) (string, []*Add, error) {
		t.Helper()
		dir := t.TempDir()
		store, err := NewLocalStorage(dir)
		if err != nil {
			t.Fatal(err)
		}
		schema := &StructType{Fields: []*StructField{{Name: "id", Type: TypeLong, Nullable: true}, {Name: "p", Type: typ, Nullable: true}}}
		snap, err := Create(ctx, store, CreateOptions{Schema: schema, PartitionColumns: []string{"p"}})
		if err != nil {
			t.Fatal(err)
		}
		adds, err := snap.WriteFiles(ctx, db, `SELECT 1::BIGINT AS id, `+value+` AS p`, WriteOptions{})
		return dir, adds, err
	}
	for _, c := range []struct {
		typ   DataType
		value string
		text  string // how DuckDB prints it: the error quotes it
	}{
		{TypeDate, `DATE '-0044-03-15'`, "0045-03-15 (BC)"},
		{TypeDate, `DATE '12345-01-01'`, "12345-01-01"},
		{TypeDate, `'infinity'::DATE`, "infinity"},
		{TypeTimestamp, `TIMESTAMP '-0044-03-15 10:00:00'`, "(BC)"},
		{TypeTimestamp, `TIMESTAMP '12345-01-01 00:00:00'`, "12345-01-01"},
		{TypeTimestampNTZ, `TIMESTAMP '-0044-03-15 10:00:00'`, "(BC)"},
		{TypeTimestampNTZ, `'-infinity'::TIMESTAMP`, "-infinity"},
	} {
		t.Run(c.typ.String()+" "+c.value, func(t *testing.T) {
			dir, _, err := write(t, c.typ, c.value)
			if !errors.Is(err, ErrUnsupportedFeature) || !strings.Contains(err.Error(), `"p"`) || !strings.Contains(err.Error(), c.text) {
				t.Fatalf("want ErrUnsupportedFeature naming column \"p\" and %q, got %v", c.text, err)
			}
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && strings.HasSuffix(p, ".parquet") {
					t.Errorf("file left after a refused write: %s", p)
				}
				return nil
			})
		})
	}
	for _, c := range []struct {
		typ   DataType
		value string
	}{
		{TypeDate, `DATE '0001-01-01'`},
		{TypeDate, `DATE '9999-12-31'`},
		{TypeTimestamp, `TIMESTAMPTZ '0001-01-01 00:00:00+00'`},
		{TypeTimestamp, `TIMESTAMPTZ '9999-12-31 23:59:59.999999+00'`},
		{TypeTimestampNTZ, `TIMESTAMP '0001-01-01 00:00:00'`},
		{TypeTimestampNTZ, `TIMESTAMP '9999-12-31 23:59:59.999999'`},
	} {
		t.Run(c.typ.String()+" "+c.value, func(t *testing.T) {
			_, adds, err := write(t, c.typ, c.value)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ParsePartitionValue(c.typ, adds[0].PartitionValues["p"]); err != nil {
				t.Fatalf("written partition value does not parse: %v", err)
			}
		})
	}
}
