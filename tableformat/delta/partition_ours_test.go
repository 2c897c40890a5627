package delta

import (
	"context"
	"strings"
	"testing"
)

// TestEmptyStringPartitionInNullFolder: an empty string partition value is
// null to the protocol, so its rows land in null's folder
// (__HIVE_DEFAULT_PARTITION__), one file with the NULL rows, as Spark writes
// them, not in a folder "k=" that a reader discovering partitions from
// folder names would read as the empty string.
func TestEmptyStringPartitionInNullFolder(t *testing.T) {
	ctx := context.Background()
	db := openDuckDB(t)
	store, err := NewLocalStorage(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	schema := &StructType{Fields: []*StructField{
		{Name: "id", Type: TypeLong, Nullable: true},
		{Name: "k", Type: TypeString, Nullable: true},
	}}
	snap, err := Create(ctx, store, CreateOptions{Schema: schema, PartitionColumns: []string{"k"}})
	if err != nil {
		t.Fatal(err)
	}
	adds, err := snap.WriteFiles(ctx, db, `SELECT * FROM (VALUES (1::BIGINT, ''), (2, NULL), (3, 'a')) AS t(id, k)`, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var null []string
	for _, a := range adds {
		if a.PartitionValues["k"] == nil {
			null = append(null, a.Path)
			if !strings.HasPrefix(a.Path, "k=__HIVE_DEFAULT_PARTITION__/") {
				t.Errorf("null partition file at %s", a.Path)
			}
		}
	}
	if len(null) != 1 || len(adds) != 2 {
		t.Fatalf("want one file for '' and NULL and one for 'a', got %d files (null ones %v)", len(adds), null)
	}
}
