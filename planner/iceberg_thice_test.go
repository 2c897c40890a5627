package planner

import (
	"context"
	"strings"
	"testing"

	icego "github.com/apache/iceberg-go"

	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// TestIcebergAttachUnreadableTypes: a table another engine made with a
// column of an Iceberg type lakesql has no column type for (fixed, uuid,
// time, also inside a struct) is refused when a sink attaches to it, with
// 1235 naming the type; a fixed column used to attach and leave a sink
// without columns that failed on every read.
func TestIcebergAttachUnreadableTypes(t *testing.T) {
	dir := t.TempDir()
	cat, err := icetable.OpenCatalog(context.Background(), icetable.CatalogConfig{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	id := icego.NestedField{ID: 1, Name: "id", Type: icego.PrimitiveTypes.Int64, Required: true}
	cases := map[string]icego.Type{
		"fx":   icego.FixedTypeOf(4),
		"u":    icego.PrimitiveTypes.UUID,
		"tm":   icego.PrimitiveTypes.Time,
		"deep": &icego.StructType{FieldList: []icego.NestedField{{ID: 3, Name: "f", Type: icego.FixedTypeOf(2)}}},
	}
	want := map[string]string{"fx": "fixed[4]", "u": "uuid", "tm": "time", "deep": "fixed[2]"}
	for name, typ := range cases {
		s := icego.NewSchema(0, id, icego.NestedField{ID: 2, Name: "c", Type: typ})
		if _, err := cat.CreateTable(context.Background(), []string{"db", name}, icetable.TableDef{Schema: s}); err != nil {
			t.Fatal(err)
		}
	}
	cat.Close()
	te := openTestEngine(t, dir)
	s := te.session()
	for name := range cases {
		q := "CREATE SINK " + name + " INTO ICEBERG 'db." + name + "'"
		_, err := te.e.Exec(context.Background(), s, q)
		if err == nil {
			t.Errorf("%s: attached, want 1235", q)
			continue
		}
		me := MySQLError(err)
		if me.Num != 1235 || !strings.Contains(me.Message, "Iceberg type "+want[name]) {
			t.Errorf("%s: error %d %q, want 1235 naming Iceberg type %s", q, me.Num, me.Message, want[name])
		}
	}
}

// TestIcebergCopyOnWriteMerge: on a table whose write.merge.mode is
// copy-on-write (pyiceberg 0.12 reads no equality deletes), an upsert
// sink rewrites the files holding its keys and writes no delete files.
func TestIcebergCopyOnWriteMerge(t *testing.T) {
	dir := t.TempDir()
	cat, err := icetable.OpenCatalog(context.Background(), icetable.CatalogConfig{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	s := icego.NewSchema(0,
		icego.NestedField{ID: 1, Name: "id", Type: icego.PrimitiveTypes.Int64, Required: true},
		icego.NestedField{ID: 2, Name: "v", Type: icego.PrimitiveTypes.String})
	if _, err := cat.CreateTable(context.Background(), []string{"db", "cow"}, icetable.TableDef{
		Schema: s, Properties: map[string]string{icetable.MergeModeKey: "copy-on-write"}}); err != nil {
		t.Fatal(err)
	}
	cat.Close()
	te := openTestEngine(t, dir)
	ss := te.session()
	te.exec(ss, "CREATE SINK cow INTO ICEBERG 'db.cow' (id BIGINT NOT NULL, v LONGTEXT, PRIMARY KEY (id)) WITH (mode = 'upsert')")
	te.exec(ss, "INSERT INTO cow VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	te.exec(ss, "INSERT INTO cow VALUES (2, 'B'), (4, 'd')")
	te.exec(ss, "DELETE FROM cow WHERE id = 3")
	if got, want := icebergRowsOf(t, dir, "db.cow"), []string{"1|a", "2|B", "4|d"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("rows %q, want %q", got, want)
	}
	for _, snap := range icebergSnapshots(t, dir, "db.cow") {
		for _, k := range []string{"added-delete-files", "added-equality-delete-files", "added-position-delete-files"} {
			if v := snap.Summary.Properties[k]; v != "" && v != "0" {
				t.Errorf("snapshot %d: %s = %s; want no delete files", snap.SnapshotID, k, v)
			}
		}
	}
}
