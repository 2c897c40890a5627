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

// evolveTable creates a table of the given schema (and configuration) in
// a temp dir and returns its snapshot.
func evolveTable(t *testing.T, schema *StructType, parts []string, conf map[string]string) *Snapshot {
	t.Helper()
	store, err := NewLocalStorage(filepath.Join(t.TempDir(), "t"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := Create(context.Background(), store, CreateOptions{Schema: schema, PartitionColumns: parts, Configuration: conf})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func evolveSchema() *StructType {
	return &StructType{Fields: []*StructField{
		{Name: "id", Type: TypeLong},
		{Name: "i", Type: TypeInteger, Nullable: true},
		{Name: "d", Type: DecimalType{Precision: 5, Scale: 2}, Nullable: true},
		{Name: "day", Type: TypeDate, Nullable: true},
		{Name: "p", Type: TypeString, Nullable: true},
	}}
}

// commitEvolved commits e on snap and returns the new snapshot and the
// entry as written.
func commitEvolved(t *testing.T, snap *Snapshot, e Evolved) (*Snapshot, []Action) {
	t.Helper()
	ctx := context.Background()
	res, err := snap.Commit(ctx, e.Actions(), CommitOptions{Operation: "ALTER"})
	if err != nil {
		t.Fatal(err)
	}
	written, err := snap.Table().ReadCommit(ctx, res.Version)
	if err != nil {
		t.Fatal(err)
	}
	next, err := snap.Table().Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return next, written
}

// fieldJSON is one field of a schemaString as raw JSON maps.
func fieldJSON(t *testing.T, md *Metadata, name string) map[string]any {
	t.Helper()
	var s struct {
		Fields []map[string]any `json:"fields"`
	}
	if err := json.Unmarshal([]byte(md.SchemaString), &s); err != nil {
		t.Fatal(err)
	}
	for _, f := range s.Fields {
		if f["name"] == name {
			return f
		}
	}
	t.Fatalf("no field %q in %s", name, md.SchemaString)
	return nil
}

func TestEvolveAddColumnKeepsProtocol(t *testing.T) {
	snap := evolveTable(t, evolveSchema(), []string{"p"}, nil)
	e, err := snap.Evolve([]SchemaChange{{Kind: AddColumn, Column: "note", Type: TypeString, Comment: "free text"}})
	if err != nil {
		t.Fatal(err)
	}
	if e.Protocol != nil {
		t.Fatalf("adding a nullable column needs no protocol change, got %+v", e.Protocol)
	}
	next, written := commitEvolved(t, snap, e)
	if len(written) != 2 || written[1].MetaData == nil {
		t.Fatalf("want commitInfo + metaData, got %+v", written)
	}
	md := written[1].MetaData
	if md.ID != snap.Metadata.ID || !cmp.Equal(md.PartitionColumns, []string{"p"}) {
		t.Fatalf("metaData must keep the table id and partitioning: %+v", md)
	}
	want := map[string]any{"name": "note", "type": "string", "nullable": true, "metadata": map[string]any{"comment": "free text"}}
	if diff := cmp.Diff(want, fieldJSON(t, md, "note")); diff != "" {
		t.Fatal(diff)
	}
	if next.Protocol.MinReaderVersion != 1 || next.Protocol.MinWriterVersion != 2 {
		t.Fatalf("protocol changed: %+v", next.Protocol)
	}
}

func TestEvolveWidenUpgradesProtocol(t *testing.T) {
	snap := evolveTable(t, evolveSchema(), nil, nil)
	e, err := snap.Evolve([]SchemaChange{
		{Kind: WidenColumn, Column: "i", Type: TypeLong},
		{Kind: WidenColumn, Column: "d", Type: DecimalType{Precision: 9, Scale: 2}},
		{Kind: WidenColumn, Column: "day", Type: TypeTimestampNTZ},
	})
	if err != nil {
		t.Fatal(err)
	}
	next, written := commitEvolved(t, snap, e)
	var proto *Protocol
	for _, a := range written {
		if a.Protocol != nil {
			proto = a.Protocol
		}
	}
	want := &Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
		ReaderFeatures: []string{"typeWidening", "timestampNtz"},
		WriterFeatures: []string{"appendOnly", "invariants", "typeWidening", "timestampNtz"}}
	if diff := cmp.Diff(want, proto); diff != "" {
		t.Fatalf("protocol (-want +got):\n%s", diff)
	}
	if got := next.Metadata.Configuration["delta.enableTypeWidening"]; got != "true" {
		t.Fatalf("delta.enableTypeWidening = %q", got)
	}
	i := fieldJSON(t, &next.Metadata, "i")
	wantI := map[string]any{"name": "i", "type": "long", "nullable": true, "metadata": map[string]any{
		"delta.typeChanges": []any{map[string]any{"fromType": "integer", "toType": "long"}}}}
	if diff := cmp.Diff(wantI, i); diff != "" {
		t.Fatal(diff)
	}
	// A second widening keeps the history.
	e2, err := next.Evolve([]SchemaChange{{Kind: WidenColumn, Column: "d", Type: DecimalType{Precision: 12, Scale: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	if e2.Protocol != nil {
		t.Fatalf("the feature is there already: %+v", e2.Protocol)
	}
	d := fieldJSON(t, e2.Metadata, "d")["metadata"].(map[string]any)["delta.typeChanges"]
	wantD := []any{map[string]any{"fromType": "decimal(5,2)", "toType": "decimal(9,2)"},
		map[string]any{"fromType": "decimal(9,2)", "toType": "decimal(12,3)"}}
	if diff := cmp.Diff(wantD, d); diff != "" {
		t.Fatal(diff)
	}
	if err := CheckWritable(*proto, mustSchema(t, next)); err != nil {
		t.Fatalf("we must be able to write the table we widened: %v", err)
	}
}

func mustSchema(t *testing.T, s *Snapshot) *StructType {
	t.Helper()
	sc, err := s.Schema()
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestEvolveRefusals(t *testing.T) {
	snap := evolveTable(t, evolveSchema(), []string{"p"}, nil)
	off := evolveTable(t, evolveSchema(), nil, map[string]string{"delta.enableTypeWidening": "false"})
	ice := evolveTable(t, evolveSchema(), nil, map[string]string{"delta.enableIcebergCompatV2": "true"})
	cases := []struct {
		name   string
		on     *Snapshot
		change SchemaChange
		want   string
	}{
		{"narrow", snap, SchemaChange{Kind: WidenColumn, Column: "id", Type: TypeInteger}, "narrowing an integer type"},
		{"string to int", snap, SchemaChange{Kind: WidenColumn, Column: "p", Type: TypeInteger}, "no other change"},
		{"decimal scale down", snap, SchemaChange{Kind: WidenColumn, Column: "d", Type: DecimalType{Precision: 10, Scale: 1}}, "k1 >= k2 >= 0"},
		{"decimal fewer integer digits", snap, SchemaChange{Kind: WidenColumn, Column: "d", Type: DecimalType{Precision: 6, Scale: 4}}, "k1 >= k2 >= 0"},
		{"int to small decimal", snap, SchemaChange{Kind: WidenColumn, Column: "i", Type: DecimalType{Precision: 9, Scale: 0}}, "at least 10 integer digits"},
		{"long to double", snap, SchemaChange{Kind: WidenColumn, Column: "id", Type: TypeDouble}, "no other change"},
		{"same type", snap, SchemaChange{Kind: WidenColumn, Column: "i", Type: TypeInteger}, "already integer"},
		{"widen missing", snap, SchemaChange{Kind: WidenColumn, Column: "nope", Type: TypeLong}, "does not exist"},
		{"widening off", off, SchemaChange{Kind: WidenColumn, Column: "i", Type: TypeLong}, "delta.enableTypeWidening = false"},
		{"iceberg compat", ice, SchemaChange{Kind: WidenColumn, Column: "day", Type: TypeTimestampNTZ}, "Iceberg-compatible"},
		{"add existing", snap, SchemaChange{Kind: AddColumn, Column: "ID", Type: TypeLong}, "already exists"},
		{"add special name", snap, SchemaChange{Kind: AddColumn, Column: "a b", Type: TypeLong}, "only with column mapping"},
		{"rename unmapped", snap, SchemaChange{Kind: RenameColumn, Column: "i", NewName: "j"}, "SET (column_mapping = 'name') first"},
		{"drop unmapped", snap, SchemaChange{Kind: DropColumn, Column: "i"}, "SET (column_mapping = 'name') first"},
		{"drop partition", snap, SchemaChange{Kind: DropColumn, Column: "p"}, "partition column"},
		{"drop missing", snap, SchemaChange{Kind: DropColumn, Column: "nope"}, "does not exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.on.Evolve([]SchemaChange{c.change})
			if !errors.Is(err, ErrSchemaChange) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want ErrSchemaChange with %q, got %v", c.want, err)
			}
		})
	}
}

func TestEvolveAllowedWidenings(t *testing.T) {
	snap := evolveTable(t, &StructType{Fields: []*StructField{
		{Name: "b", Type: TypeByte, Nullable: true}, {Name: "s", Type: TypeShort, Nullable: true},
		{Name: "f", Type: TypeFloat, Nullable: true}, {Name: "l", Type: TypeLong, Nullable: true},
		{Name: "i", Type: TypeInteger, Nullable: true},
	}}, nil, nil)
	for _, c := range []SchemaChange{
		{Kind: WidenColumn, Column: "b", Type: TypeShort},
		{Kind: WidenColumn, Column: "s", Type: TypeDouble},
		{Kind: WidenColumn, Column: "f", Type: TypeDouble},
		{Kind: WidenColumn, Column: "l", Type: DecimalType{Precision: 22, Scale: 2}},
		{Kind: WidenColumn, Column: "i", Type: DecimalType{Precision: 10, Scale: 0}},
	} {
		if _, err := snap.Evolve([]SchemaChange{c}); err != nil {
			t.Errorf("%s to %s: %v", c.Column, c.Type, err)
		}
	}
}

// A column-mapped table: rename keeps the physical name and id, drop
// removes the field, add assigns the next id and a physical name.
func TestEvolveColumnMapped(t *testing.T) {
	schema := &StructType{Fields: []*StructField{
		{Name: "id", Type: TypeLong, Metadata: map[string]any{columnMappingIDKey: json.Number("1"), keyPhysicalName: "col-1"}},
		{Name: "a", Type: TypeString, Nullable: true, Metadata: map[string]any{columnMappingIDKey: json.Number("2"), keyPhysicalName: "col-2"}},
		{Name: "b", Type: TypeString, Nullable: true, Metadata: map[string]any{columnMappingIDKey: json.Number("3"), keyPhysicalName: "col-3"}},
	}}
	snap := evolveTable(t, schema, nil, map[string]string{propColumnMappingMode: "name", propMaxColumnID: "3"})
	e, err := snap.Evolve([]SchemaChange{
		{Kind: RenameColumn, Column: "a", NewName: "alpha"},
		{Kind: DropColumn, Column: "b"},
		{Kind: AddColumn, Column: "b", Type: TypeLong},
	})
	if err != nil {
		t.Fatal(err)
	}
	alpha := fieldJSON(t, e.Metadata, "alpha")["metadata"].(map[string]any)
	if alpha[keyPhysicalName] != "col-2" || alpha[columnMappingIDKey] != float64(2) {
		t.Fatalf("rename must keep the physical name and id: %v", alpha)
	}
	b := fieldJSON(t, e.Metadata, "b")
	bm := b["metadata"].(map[string]any)
	if b["type"] != "long" || bm[columnMappingIDKey] != float64(4) || bm[keyPhysicalName] == "col-3" ||
		!strings.HasPrefix(bm[keyPhysicalName].(string), "col-") {
		t.Fatalf("the new b needs id 4 and a new physical name: %v", b)
	}
	if got := e.Metadata.Configuration[propMaxColumnID]; got != "4" {
		t.Fatalf("maxColumnId = %q, want 4", got)
	}
	again, err := snap.Evolve([]SchemaChange{{Kind: RenameColumn, Column: "a", NewName: "alpha"},
		{Kind: DropColumn, Column: "b"}, {Kind: AddColumn, Column: "b", Type: TypeLong}})
	if err != nil || again.Metadata.SchemaString != e.Metadata.SchemaString {
		t.Fatalf("the same change on the same table must give the same schema (physical names): %v", err)
	}
	if _, err := snap.Evolve([]SchemaChange{{Kind: RenameColumn, Column: "a", NewName: "B"}}); !errors.Is(err, ErrSchemaChange) {
		t.Fatalf("renaming onto an existing name: %v", err)
	}
	// Files written before the change still fit after it.
	after := snap.WithEvolved(e)
	if err := after.FilesFit(snap); err != nil {
		t.Fatalf("files of the old schema fit the new one: %v", err)
	}
}

func TestFilesFit(t *testing.T) {
	snap := evolveTable(t, evolveSchema(), nil, nil)
	added, err := snap.Evolve([]SchemaChange{{Kind: AddColumn, Column: "x", Type: TypeLong},
		{Kind: WidenColumn, Column: "i", Type: TypeLong}})
	if err != nil {
		t.Fatal(err)
	}
	if err := snap.WithEvolved(added).FilesFit(snap); err != nil {
		t.Fatalf("old files fit after ADD and widening: %v", err)
	}
	// The other way round: files with a long i do not fit an integer i.
	if err := snap.FilesFit(snap.WithEvolved(added)); err == nil || !strings.Contains(err.Error(), `column "i" is long in the files`) {
		t.Fatalf("want a type misfit, got %v", err)
	}
	// Another engine made a column NOT NULL-less string: not a widening.
	other := *snap
	md := snap.Metadata
	md.SchemaString = strings.Replace(snap.Metadata.SchemaString, `"name":"i","type":"integer"`, `"name":"i","type":"string"`, 1)
	other.Metadata, other.schema = md, nil
	if err := other.FilesFit(snap); err == nil {
		t.Fatal("integer files under a string column must not fit")
	}
	withCheck := *snap
	md = snap.Metadata
	md.Configuration = map[string]string{"delta.constraints.pos": "i > 0"}
	withCheck.Metadata, withCheck.schema = md, nil
	if err := withCheck.FilesFit(snap); err == nil || !strings.Contains(err.Error(), "CHECK constraint pos") {
		t.Fatalf("a constraint added since staging: %v", err)
	}
}

// Spark's type-widening table (kernel/type-widening): files written
// before and after the widening read in the wide types.
func TestGoldenTypeWidening(t *testing.T) {
	requireSharedTestData(t)
	dir := filepath.Join(sharedTestData, "kernel", "type-widening")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("SKIPPING: %s not found: %v", dir, err)
	}
	// Copy: we write into it.
	tmp := filepath.Join(t.TempDir(), "tw")
	if err := os.CopyFS(tmp, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	store, err := NewLocalStorage(tmp)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	snap, err := OpenTable(store, TableOptions{}).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db := openDuckDB(t)
	read := func(s *Snapshot) [][]string {
		q, err := s.ScanSQL(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := db.QueryContext(ctx, "SELECT byte_long::VARCHAR, int_long::VARCHAR, float_double::VARCHAR, decimal_decimal_greater_scale::VARCHAR, "+
			"long_decimal::VARCHAR, date_timestamp_ntz::VARCHAR FROM ("+q+") ORDER BY byte_long")
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		var out [][]string
		for rs.Next() {
			r := make([]string, 6)
			ptrs := make([]any, 6)
			for i := range r {
				ptrs[i] = &r[i]
			}
			if err := rs.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	got := read(snap)
	if len(got) != 2 {
		t.Fatalf("want 2 rows, got %v", got)
	}
	if diff := cmp.Diff([]string{"1", "2", "3.4000000953674316", "67.89000", "4.0", "2024-09-09 00:00:00"}, got[0]); diff != "" {
		t.Fatalf("the row written before the widening, cast up (-want +got):\n%s", diff)
	}
	// Spark wrote it with the preview feature, whose type changes carry a
	// tableVersion we do not write: the table is read-only for us, by name.
	e, err := snap.Evolve([]SchemaChange{{Kind: WidenColumn, Column: "decimal_decimal_greater_scale", Type: DecimalType{Precision: 25, Scale: 6}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snap.Commit(ctx, e.Actions(), CommitOptions{}); !errors.Is(err, ErrUnsupportedFeature) ||
		!strings.Contains(err.Error(), "typeWidening-preview") {
		t.Fatalf("want the preview feature refused by name, got %v", err)
	}
}
