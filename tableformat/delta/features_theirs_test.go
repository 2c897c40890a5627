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

// TestWriteDeletionVectorTable: a table with deletion vectors (as Spark
// writes it: reader 3 / writer 7 listing deletionVectors, a file of 4 rows
// of which a vector deletes 2) takes a copy-on-write rewrite of that file,
// which carries over its live rows only and removes the file with its
// vector, and then an append; the table reads those rows plus the appended one.
func TestWriteDeletionVectorTable(t *testing.T) {
	ctx := context.Background()
	db := openDuckDB(t)
	dir := t.TempDir()
	store, err := NewLocalStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "COPY (SELECT * FROM (VALUES (1::BIGINT), (2), (3), (4)) v(id)) TO '"+dir+"/f0.parquet' (FORMAT parquet)"); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(dir + "/f0.parquet")
	if err != nil {
		t.Fatal(err)
	}
	b := encodeDVForTest([]uint64{1, 2}, dvTestEncoding{})
	biWriteCommit(t, store, 0, []Action{
		{Protocol: &Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"},
			WriterFeatures: []string{"deletionVectors", "invariants", "appendOnly"}}},
		{MetaData: &Metadata{ID: "c88abb2e-10c7-479f-b4c5-1a33c5a38871", Format: Format{Provider: "parquet"},
			SchemaString:     `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`,
			PartitionColumns: []string{}, Configuration: map[string]string{"delta.enableDeletionVectors": "true"}}},
		{Add: &Add{Path: "f0.parquet", PartitionValues: map[string]*string{}, Size: info.Size(), ModificationTime: 1, DataChange: true,
			DeletionVector: &DeletionVectorDescriptor{StorageType: "i", PathOrInlineDv: encodeZ85ForTest(b),
				SizeInBytes: int32(len(b)), Cardinality: 2}}},
	})
	table := NewTable(store)
	snap, err := table.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	count := func(s *Snapshot) int {
		t.Helper()
		q, err := s.ScanSQL(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM ("+q+")").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	live := count(snap)
	if live != 2 {
		t.Fatalf("the table reads %d rows, want 2", live)
	}
	files := snap.Files()
	if len(files) != 1 || files[0].DeletionVector == nil {
		t.Fatalf("want one file with a deletion vector, got %+v", files)
	}
	q, err := snap.ScanFilesSQL(ctx, db, files)
	if err != nil {
		t.Fatal(err)
	}
	rewritten, err := snap.WriteFiles(ctx, db, q, WriteOptions{})
	if err != nil {
		t.Fatalf("write files into a DV table: %v", err)
	}
	size := files[0].Size
	rm := &Remove{Path: files[0].Path, DataChange: true, PartitionValues: files[0].PartitionValues,
		Size: &size, DeletionVector: files[0].DeletionVector}
	actions := []Action{{Remove: rm}}
	for _, a := range rewritten {
		actions = append(actions, Action{Add: a})
	}
	res, err := snap.Commit(ctx, actions, CommitOptions{})
	if err != nil {
		t.Fatalf("rewrite commit: %v", err)
	}
	if got := count(res.Snapshot); got != live {
		t.Fatalf("after the rewrite %d rows, want %d", got, live)
	}
	for _, f := range res.Snapshot.Files() {
		if f.DeletionVector != nil {
			t.Fatalf("a deletion vector survived the rewrite: %+v", f)
		}
	}
	appended, err := res.Snapshot.WriteFiles(ctx, db, q+" LIMIT 1", WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err = res.Snapshot.Commit(ctx, []Action{{Add: appended[0]}}, CommitOptions{})
	if err != nil {
		t.Fatalf("append commit: %v", err)
	}
	reread, err := NewTable(store).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := count(reread); got != live+1 {
		t.Fatalf("after the append %d rows, want %d", got, live+1)
	}
}

// TestLegacyWriterVersionNamesFeatures: legacy writer versions 3 to 6 are
// written when each feature they imply is honoured or unused (Spark's ADD
// CONSTRAINT, generated columns and column mapping are honoured); a
// version 6 table with an identity column is refused, naming the features
// the version implies and the column.
func TestLegacyWriterVersionNamesFeatures(t *testing.T) {
	for _, v := range []int{3, 4, 5, 6} {
		if err := CheckWritable(Protocol{MinReaderVersion: 2, MinWriterVersion: v}, nil); err != nil {
			t.Errorf("writer %d: %v", v, err)
		}
	}
	ident := &StructType{Fields: []*StructField{{Name: "i", Type: TypeLong, Nullable: true,
		Metadata: map[string]any{"delta.identity.start": 1}}}}
	err := CheckWritable(Protocol{MinReaderVersion: 2, MinWriterVersion: 6}, ident)
	if !errors.Is(err, ErrUnsupportedFeature) || !strings.Contains(err.Error(), "columnMapping, identityColumns)") ||
		!strings.Contains(err.Error(), "column i is an identity column") {
		t.Errorf("writer 6 with an identity column: want ErrUnsupportedFeature naming the features and the column, got %v", err)
	}
}
