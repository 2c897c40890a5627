package delta

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestChangeDataFeedAppendsOnly: a table with the change data feed on, as
// Spark 4 creates it (writer 7 listing changeDataFeed, invariants and
// appendOnly), takes appends, which need no cdc files; a commit removing
// rows, which would need them, is refused with ErrUnsupportedFeature naming
// changeDataFeed, and nothing is written.
func TestChangeDataFeedAppendsOnly(t *testing.T) {
	ctx := context.Background()
	db := openDuckDB(t)
	store, err := NewLocalStorage(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	schema, err := (&StructType{Fields: []*StructField{
		{Name: "id", Type: TypeLong, Nullable: false},
		{Name: "v", Type: TypeString, Nullable: true},
	}}).JSON()
	if err != nil {
		t.Fatal(err)
	}
	data, err := EncodeActions([]Action{
		{Protocol: &Protocol{MinReaderVersion: 1, MinWriterVersion: 7,
			WriterFeatures: []string{"changeDataFeed", "invariants", "appendOnly"}}},
		{MetaData: &Metadata{ID: "8bb223f9-1413-4417-b4fd-5c89ecb1c7c0", Format: Format{Provider: "parquet"},
			SchemaString: schema, PartitionColumns: []string{},
			Configuration: map[string]string{"delta.enableChangeDataFeed": "true"}}},
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
	adds, err := snap.WriteFiles(ctx, db, `SELECT 1::BIGINT AS id, 'a' AS v`, WriteOptions{})
	if err != nil {
		t.Fatalf("write files: %v", err)
	}
	res, err := snap.Commit(ctx, []Action{{Add: adds[0]}}, CommitOptions{})
	if err != nil {
		t.Fatalf("an append must commit: %v", err)
	}
	snap = res.Snapshot
	rm := &Remove{Path: adds[0].Path, DataChange: true, PartitionValues: adds[0].PartitionValues}
	_, err = snap.Commit(ctx, []Action{{Remove: rm}}, CommitOptions{})
	if !errors.Is(err, ErrUnsupportedFeature) || !strings.Contains(err.Error(), "changeDataFeed") {
		t.Fatalf("a remove: want ErrUnsupportedFeature naming changeDataFeed, got %v", err)
	}
	if _, err := os.Stat(store.LocalPath(commitKey(2))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused commit wrote version 2 (%v)", err)
	}
}
