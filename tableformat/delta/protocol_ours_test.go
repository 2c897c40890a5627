package delta

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestCreateListsInvariantsForNotNull: at writer 7 (a timestamp_ntz column)
// a NOT NULL column needs the invariants writer feature listed, or Spark
// refuses the table ("enabled in metadata but not listed in protocol:
// invariants"); the table stays writable for us, as NOT NULL is all it holds.
func TestCreateListsInvariantsForNotNull(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		fields []*StructField
		want   bool
	}{
		{"top-level NOT NULL", []*StructField{{Name: "id", Type: TypeLong}, {Name: "t", Type: TypeTimestampNTZ, Nullable: true}}, true},
		{"NOT NULL in a struct", []*StructField{{Name: "s", Type: &StructType{Fields: []*StructField{{Name: "a", Type: TypeLong}}}, Nullable: true}, {Name: "t", Type: TypeTimestampNTZ, Nullable: true}}, true},
		{"all nullable", []*StructField{{Name: "id", Type: TypeLong, Nullable: true}, {Name: "t", Type: TypeTimestampNTZ, Nullable: true}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			store, err := NewLocalStorage(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			snap, err := Create(ctx, store, CreateOptions{Schema: &StructType{Fields: c.fields}})
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(snap.Protocol.WriterFeatures, "invariants"); got != c.want {
				t.Fatalf("writer features %v: invariants listed %v, want %v", snap.Protocol.WriterFeatures, got, c.want)
			}
			if _, err := snap.Commit(ctx, []Action{{Add: ctAdd("x.parquet")}}, CommitOptions{}); err != nil {
				t.Fatalf("our own table must stay writable: %v", err)
			}
		})
	}
}

// TestWriterFeatureInvariantsWithExpression: a writer 7 table listing
// invariants whose nested field carries delta.invariants (which the sink
// does not evaluate) refuses commits, naming the field.
func TestWriterFeatureInvariantsWithExpression(t *testing.T) {
	ctx := context.Background()
	store, err := NewLocalStorage(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	schema := &StructType{Fields: []*StructField{{Name: "x", Type: &StructType{Fields: []*StructField{{Name: "y", Type: TypeInteger, Nullable: true,
		Metadata: map[string]any{invariantKey: `{"expression": {"expression": "x.y > 3"}}`}}}}, Nullable: true}}}
	js, err := schema.JSON()
	if err != nil {
		t.Fatal(err)
	}
	data, err := EncodeActions([]Action{
		{Protocol: &Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"invariants"}}},
		{MetaData: &Metadata{ID: "11111111-2222-3333-4444-555555555555", Format: Format{Provider: "parquet"},
			SchemaString: js, PartitionColumns: []string{}, Configuration: map[string]string{}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutIfAbsent(ctx, commitKey(0), data); err != nil {
		t.Fatal(err)
	}
	snap, err := NewTable(store).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = snap.Commit(ctx, []Action{{Add: ctAdd("x.parquet")}}, CommitOptions{})
	if !errors.Is(err, ErrUnsupportedFeature) || !strings.Contains(err.Error(), `"x.y"`) {
		t.Fatalf("want ErrUnsupportedFeature naming \"x.y\", got %v", err)
	}
	if _, err := os.Stat(store.LocalPath(commitKey(1))); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a refused commit wrote version 1")
	}
}
