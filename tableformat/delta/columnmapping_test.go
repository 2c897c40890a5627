package delta

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/internal/sqlquote"
)

// cmSchema is allTypesSchema with struct fields nested in a list and a
// map, which column mapping names physically too.
func cmSchema() *StructType {
	s := allTypesSchema()
	f := func(name string, t DataType) *StructField { return &StructField{Name: name, Type: t, Nullable: true} }
	inner := &StructType{Fields: []*StructField{f("x", TypeInteger), f("y", TypeString)}}
	s.Fields = append(s.Fields, f("c_list_struct", &ArrayType{ElementType: inner, ContainsNull: true}),
		f("c_map_struct", &MapType{KeyType: TypeString, ValueType: inner, ValueContainsNull: true}))
	return s
}

func cmRows(k int) string {
	return `SELECT *, CASE WHEN id % 3 = 0 THEN NULL ELSE [{'x': id::INTEGER, 'y': 'y' || id}, NULL] END AS c_list_struct,
  CASE WHEN id % 4 = 0 THEN NULL ELSE MAP {'k': {'x': -id::INTEGER, 'y': NULL}} END AS c_map_struct
FROM (` + allTypesRows(k) + `)`
}

// TestColumnMappingRoundTrip writes a table created with column mapping,
// in each mode, over several commits and a checkpoint, and checks what the
// protocol asks of the writer: the protocol versions, unique ids under
// maxColumnId, data files whose columns and nested fields carry the
// physical names and the ids as Parquet field ids, and partition values
// and statistics keyed by physical name. Rows read back under the logical
// names.
func TestColumnMappingRoundTrip(t *testing.T) {
	for _, mode := range []string{"name", "id"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			db := openDuckDB(t)
			dir := t.TempDir()
			store, err := NewLocalStorage(dir)
			if err != nil {
				t.Fatal(err)
			}
			parts := []string{"p_str", "p_int", "p_date", "p_ts"}
			snap, err := Create(ctx, store, CreateOptions{Schema: cmSchema(), PartitionColumns: parts,
				Configuration: map[string]string{ColumnMappingModeKey: mode, "delta.checkpointInterval": "2"}})
			if err != nil {
				t.Fatal(err)
			}
			// c_ntz makes the table reader 3 / writer 7: the feature is listed.
			p := snap.Protocol
			if p.MinReaderVersion != 3 || p.MinWriterVersion != 7 || !SupportsColumnMapping(p) {
				t.Fatalf("protocol %+v, want 3/7 with columnMapping in both lists", p)
			}
			if _, err := db.ExecContext(ctx, "CREATE TABLE want AS "+cmRows(0)+" LIMIT 0"); err != nil {
				t.Fatal(err)
			}
			for k := 1; k <= 3; k++ {
				adds, err := snap.WriteFiles(ctx, db, cmRows(k), WriteOptions{})
				if err != nil {
					t.Fatalf("write %d: %v", k, err)
				}
				actions := make([]Action, len(adds))
				for i, a := range adds {
					actions[i] = Action{Add: a}
				}
				if _, err := snap.Commit(ctx, actions, CommitOptions{}); err != nil {
					t.Fatal(err)
				}
				if _, err := db.ExecContext(ctx, "INSERT INTO want "+cmRows(k)); err != nil {
					t.Fatal(err)
				}
				if snap, err = NewTable(store).Latest(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if snap.CheckpointVersion != 2 {
				t.Errorf("checkpoint at %d, want 2", snap.CheckpointVersion)
			}
			schema, _ := snap.Schema()
			if err := CheckColumnMapping(snap.Protocol, schema, snap.Metadata.Configuration); err != nil {
				t.Fatal(err)
			}
			checkMappedFiles(t, db, dir, snap)
			compareRows(t, db, snap, wantRowsQuery(schema))
		})
	}
}

// checkMappedFiles checks every data file of snap against its schema:
// Parquet column names and field ids, stats and partition value keys.
func checkMappedFiles(t *testing.T, db *sql.DB, dir string, snap *Snapshot) {
	t.Helper()
	schema, _ := snap.Schema()
	want := map[string]int64{} // physical name path -> id, data columns
	var walk func(dt DataType, path string)
	walk = func(dt DataType, path string) {
		switch dt := dt.(type) {
		case *StructType:
			for _, f := range dt.Fields {
				id, _ := fieldID(f)
				p := childPath(path, physicalName(f, true))
				want[p] = id
				walk(f.Type, p)
			}
		case *ArrayType:
			walk(dt.ElementType, path)
		case *MapType:
			walk(dt.KeyType, path)
			walk(dt.ValueType, path)
		}
	}
	partPhys := map[string]bool{}
	for _, f := range schema.Fields {
		if snap.Metadata.PartitionColumns != nil && contains(snap.Metadata.PartitionColumns, f.Name) {
			partPhys[physicalName(f, true)] = true
			continue
		}
		walk(&StructType{Fields: []*StructField{f}}, "")
	}
	if len(snap.Files()) == 0 {
		t.Fatal("no files")
	}
	for _, a := range snap.Files() {
		for k := range a.PartitionValues {
			if !partPhys[k] {
				t.Errorf("file %s: partition value key %q is not a partition column's physical name", a.Path, k)
			}
		}
		var st struct{ NullCount map[string]any }
		if err := json.Unmarshal([]byte(a.Stats), &st); err != nil || len(st.NullCount) == 0 {
			t.Fatalf("file %s: stats %s (%v)", a.Path, a.Stats, err)
		}
		for k := range st.NullCount {
			if _, ok := want[k]; !ok {
				t.Errorf("file %s: nullCount key %q is not a physical name", a.Path, k)
			}
		}
		rel, _ := url.PathUnescape(a.Path)
		rows, err := db.Query(fmt.Sprintf(`SELECT name, field_id FROM parquet_schema(%s) WHERE field_id IS NOT NULL`,
			sqlquote.String(filepath.Join(dir, rel))))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var name string
			var id int64
			if err := rows.Scan(&name, &id); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%s=%d", name, id))
		}
		rows.Close()
		var wantLeaf []string
		for p, id := range want {
			parts := strings.Split(p, ".")
			wantLeaf = append(wantLeaf, fmt.Sprintf("%s=%d", parts[len(parts)-1], id))
		}
		sort.Strings(got)
		sort.Strings(wantLeaf)
		if d := cmp.Diff(wantLeaf, got); d != "" {
			t.Errorf("file %s: Parquet names and field ids (-schema +file):\n%s", a.Path, d)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestColumnMappingLegacyProtocol: without timestampNtz a mapped table is
// created reader 2 / writer 5, as Spark makes it, and it is writable
// because the features writer 5 implies are honoured or unused; a writer 5
// table with a generated column or a CHECK constraint is refused, naming
// the use.
func TestColumnMappingLegacyProtocol(t *testing.T) {
	ctx := context.Background()
	store, err := NewLocalStorage(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	schema := &StructType{Fields: []*StructField{{Name: "a", Type: TypeLong, Nullable: true}, {Name: "b", Type: TypeString, Nullable: true}}}
	snap, err := Create(ctx, store, CreateOptions{Schema: schema, Configuration: map[string]string{ColumnMappingModeKey: "Name"}})
	if err != nil {
		t.Fatal(err)
	}
	if p := snap.Protocol; p.MinReaderVersion != 2 || p.MinWriterVersion != 5 || p.ReaderFeatures != nil {
		t.Fatalf("protocol %+v, want 2/5", p)
	}
	if got := snap.Metadata.Configuration; got[ColumnMappingModeKey] != "name" || got[ColumnMappingMaxIDKey] != "2" {
		t.Fatalf("configuration %v", got)
	}
	got, _ := snap.Schema()
	for i, f := range got.Fields {
		if id, _ := fieldID(f); id != int64(i+1) || !strings.HasPrefix(physicalName(f, true), "col-") {
			t.Errorf("field %s: id %d physical name %q", f.Name, id, physicalName(f, true))
		}
	}
	if err := checkWritableConf(snap.Protocol, got, snap.Metadata.Configuration); err != nil {
		t.Fatalf("writer 5 without constraints or generated columns: %v", err)
	}
	// Generated columns and CHECK constraints, which writer 5 implies, are
	// honoured (the sink evaluates them); identity columns, which writer 6
	// adds, are not.
	gen := &StructType{Fields: []*StructField{{Name: "g", Type: TypeLong, Nullable: true,
		Metadata: map[string]any{"delta.generationExpression": "a + 1"}}}}
	if err := checkWritableConf(snap.Protocol, gen, map[string]string{"delta.constraints.pos": "a > 0"}); err != nil {
		t.Errorf("writer 5 with a generated column and a CHECK constraint: %v", err)
	}
	ident := &StructType{Fields: []*StructField{{Name: "i", Type: TypeLong, Nullable: true,
		Metadata: map[string]any{"delta.identity.start": 1}}}}
	p6 := Protocol{MinReaderVersion: 2, MinWriterVersion: 6}
	if err := checkWritableConf(p6, ident, map[string]string{}); !errors.Is(err, ErrUnsupportedFeature) ||
		!strings.Contains(err.Error(), "column i is an identity column") {
		t.Errorf("identity column at writer 6: %v", err)
	}
}

// TestCheckColumnMappingRefuses: the rules a committed mapped schema must
// keep, each broken once.
func TestCheckColumnMappingRefuses(t *testing.T) {
	p := Protocol{MinReaderVersion: 2, MinWriterVersion: 5}
	field := func(name string, id int, phys string) *StructField {
		md := map[string]any{}
		if id > 0 {
			md[ColumnIDKey] = json.Number(fmt.Sprint(id))
		}
		if phys != "" {
			md[PhysicalNameKey] = phys
		}
		return &StructField{Name: name, Type: TypeLong, Nullable: true, Metadata: md}
	}
	conf := map[string]string{ColumnMappingModeKey: "name", ColumnMappingMaxIDKey: "2"}
	for name, c := range map[string]struct {
		p      Protocol
		fields []*StructField
		want   string
	}{
		"no id":           {p, []*StructField{field("a", 0, "pa")}, "has no delta.columnMapping.id"},
		"no name":         {p, []*StructField{field("a", 1, "")}, "has no delta.columnMapping.physicalName"},
		"shared id":       {p, []*StructField{field("a", 1, "pa"), field("b", 1, "pb")}, "share column id 1"},
		"shared physical": {p, []*StructField{field("a", 1, "pa"), field("b", 2, "pa")}, "used twice"},
		"above max":       {p, []*StructField{field("a", 3, "pa")}, "above delta.columnMapping.maxColumnId 2"},
		"old protocol":    {Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, []*StructField{field("a", 1, "pa")}, "needs reader 2 / writer 5"},
	} {
		err := CheckColumnMapping(c.p, &StructType{Fields: c.fields}, conf)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", name, err, c.want)
		}
	}
	ok := &StructType{Fields: []*StructField{field("a", 1, "pa"), field("b", 2, "pb")}}
	if err := CheckColumnMapping(p, ok, conf); err != nil {
		t.Errorf("valid schema refused: %v", err)
	}
}

// TestMapNewColumn: a column added under column mapping gets the next ids
// (its nested fields too) and fresh physical names, never ones it came
// with; without mapping it passes unchanged.
func TestMapNewColumn(t *testing.T) {
	conf := map[string]string{ColumnMappingModeKey: "name", ColumnMappingMaxIDKey: "7"}
	f := &StructField{Name: "s", Nullable: true, Metadata: map[string]any{ColumnIDKey: json.Number("1"), PhysicalNameKey: "a"},
		Type: &StructType{Fields: []*StructField{{Name: "x", Type: TypeInteger, Nullable: true}}}}
	got, next, err := MapNewColumn(f, conf)
	if err != nil {
		t.Fatal(err)
	}
	inner := got.Type.(*StructType).Fields[0]
	ids := []int64{}
	for _, g := range []*StructField{got, inner} {
		id, _ := fieldID(g)
		ids = append(ids, id)
		if p := physicalName(g, true); !strings.HasPrefix(p, "col-") {
			t.Errorf("field %s: physical name %q", g.Name, p)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	if d := cmp.Diff([]int64{8, 9}, ids); d != "" || next[ColumnMappingMaxIDKey] != "9" || conf[ColumnMappingMaxIDKey] != "7" {
		t.Errorf("ids %v, max %s (caller's conf %s)", ids, next[ColumnMappingMaxIDKey], conf[ColumnMappingMaxIDKey])
	}
	plain, same, err := MapNewColumn(f, map[string]string{})
	if err != nil || plain != f || len(same) != 0 {
		t.Errorf("without mapping: %v %v %v", plain, same, err)
	}
}
