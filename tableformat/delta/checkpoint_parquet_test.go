package delta

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/google/go-cmp/cmp"
)

func cpqTStr(s string) *string { return &s }
func cpqTI64(v int64) *int64   { return &v }
func cpqTI32(v int32) *int32   { return &v }
func cpqTBool(v bool) *bool    { return &v }

// cpqTSampleActions covers every action kind and the nil/empty/null
// distinctions the format must keep.
func cpqTSampleActions() []Action {
	out := []Action{
		{Protocol: &Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"deletionVectors", "v2Checkpoint"},
			WriterFeatures: []string{"deletionVectors", "rowTracking", "domainMetadata"}}},
		{Protocol: &Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{Protocol: &Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{}, WriterFeatures: []string{}}},
		{MetaData: &Metadata{
			ID: "5f1d6c5e-0b8e-4a5e-9b63-1f3c1e0d2a11", Name: cpqTStr("events"), Description: cpqTStr("désc ✓"),
			Format:           Format{Provider: "parquet", Options: map[string]string{"a": "1", "": "empty-key"}},
			SchemaString:     `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`,
			PartitionColumns: []string{"date", "region"},
			CreatedTime:      cpqTI64(1697495744923),
			Configuration:    map[string]string{"delta.enableDeletionVectors": "true", "k": ""},
		}},
		{MetaData: &Metadata{ID: "x", Format: Format{Provider: "parquet", Options: map[string]string{}},
			SchemaString: `{"type":"struct","fields":[]}`, PartitionColumns: []string{}, Configuration: map[string]string{}}},
		{Txn: &Txn{AppID: "writer-1", Version: 42, LastUpdated: cpqTI64(1700000000000)}},
		{Txn: &Txn{AppID: "writer-2", Version: -1}},
		{DomainMetadata: &DomainMetadata{Domain: "delta.rowTracking", Configuration: `{"rowIdHighWaterMark":99}`}},
		{DomainMetadata: &DomainMetadata{Domain: "user.x", Configuration: "", Removed: true}},
		{CheckpointMetadata: &CheckpointMetadata{Version: 10, Tags: map[string]*string{"t": cpqTStr("v"), "n": nil}}},
		{CheckpointMetadata: &CheckpointMetadata{Version: 11}},
		{Sidecar: &Sidecar{Path: "0000.checkpoint.0001.0001.abc.parquet", SizeInBytes: 1234, ModificationTime: 99}},
		{Sidecar: &Sidecar{Path: "b.parquet", SizeInBytes: 1, ModificationTime: 2, Tags: map[string]*string{}}},
	}
	for i := 0; i < 60; i++ {
		add := &Add{
			Path:             fmt.Sprintf("date=2024-01-%02d/part-%05d-%c.snappy.parquet", i%28+1, i, 'a'+rune(i%26)),
			PartitionValues:  map[string]*string{"date": cpqTStr(fmt.Sprintf("2024-01-%02d", i%28+1))},
			Size:             int64(1000 + i),
			ModificationTime: 1700000000000 + int64(i),
			DataChange:       i%2 == 0,
		}
		switch i % 6 {
		case 0:
			add.PartitionValues["region"] = nil // null partition value
			add.Stats = `{"numRecords":10,"minValues":{"id":1},"maxValues":{"id":10},"nullCount":{"id":0}}`
		case 1:
			add.PartitionValues = map[string]*string{} // unpartitioned
			add.Tags = map[string]*string{}
		case 2:
			add.Tags = map[string]*string{"INSERTION_TIME": cpqTStr("1700000000000000"), "nullTag": nil}
			add.DeletionVector = &DeletionVectorDescriptor{StorageType: "u", PathOrInlineDv: "ab^-aqEH.-t@S}K{vb[*k^",
				Offset: cpqTI32(4), SizeInBytes: 40, Cardinality: 6, MaxRowIndex: cpqTI64(99)}
		case 3:
			add.DeletionVector = &DeletionVectorDescriptor{StorageType: "i", PathOrInlineDv: "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L",
				SizeInBytes: 12, Cardinality: 1}
			add.BaseRowID = cpqTI64(int64(i) * 100)
			add.DefaultRowCommitVersion = cpqTI64(3)
		case 4:
			add.PartitionValues["date"] = cpqTStr("") // empty string is not null
			add.ClusteringProvider = cpqTStr("liquid")
			add.Stats = strings.Repeat("x", 5000)
		case 5:
			add.Path = fmt.Sprintf("s3://bucket/abs/path%%20with%%20space-%d.parquet", i)
		}
		out = append(out, Action{Add: add})
	}
	for i := 0; i < 30; i++ {
		r := &Remove{Path: fmt.Sprintf("old-%d.parquet", i), DataChange: i%3 == 0}
		switch i % 5 {
		case 0:
			r.DeletionTimestamp = cpqTI64(1700000000000 + int64(i))
			r.ExtendedFileMetadata = cpqTBool(true)
			r.PartitionValues = map[string]*string{"date": cpqTStr("2024-01-01"), "region": nil}
			r.Size = cpqTI64(77)
		case 1:
			r.ExtendedFileMetadata = cpqTBool(false)
			r.PartitionValues = map[string]*string{}
			r.Tags = map[string]*string{}
		case 2:
			r.DeletionVector = &DeletionVectorDescriptor{StorageType: "p", PathOrInlineDv: "s3://b/dv.bin", Offset: cpqTI32(1), SizeInBytes: 3, Cardinality: 2}
			r.BaseRowID = cpqTI64(5)
			r.DefaultRowCommitVersion = cpqTI64(6)
			r.Tags = map[string]*string{"a": cpqTStr("b")}
		case 3:
			r.Stats = `{"numRecords":1}`
		}
		out = append(out, Action{Remove: r})
	}
	return out
}

// cpqTCanonical fills the protocol-required collections the way the reader
// returns them (empty, never nil).
func cpqTCanonical(actions []Action) []Action {
	out := make([]Action, len(actions))
	for i, a := range actions {
		if a.Add != nil && a.Add.PartitionValues == nil {
			c := *a.Add
			c.PartitionValues = map[string]*string{}
			a.Add = &c
		}
		if a.CDC != nil && a.CDC.PartitionValues == nil {
			c := *a.CDC
			c.PartitionValues = map[string]*string{}
			a.CDC = &c
		}
		if m := a.MetaData; m != nil && (m.PartitionColumns == nil || m.Configuration == nil || m.Format.Options == nil) {
			c := *m
			if c.PartitionColumns == nil {
				c.PartitionColumns = []string{}
			}
			if c.Configuration == nil {
				c.Configuration = map[string]string{}
			}
			if c.Format.Options == nil {
				c.Format.Options = map[string]string{}
			}
			a.MetaData = &c
		}
		out[i] = a
	}
	return out
}

func TestCheckpointParquetRoundTrip(t *testing.T) {
	in := cpqTSampleActions()
	data, err := WriteCheckpointParquet(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadCheckpointParquet(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, got); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
}

func TestCheckpointParquetRoundTripCanonicalizesRequired(t *testing.T) {
	in := []Action{
		{Add: &Add{Path: "a", Size: 1}},
		{MetaData: &Metadata{ID: "id", Format: Format{Provider: "parquet"}, SchemaString: "{}"}},
	}
	data, err := WriteCheckpointParquet(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadCheckpointParquet(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cpqTGrouped(cpqTCanonical(in)), got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// cpqTGrouped is the order the writer stores actions in: every action but
// add and remove, then the adds, then the removes, each in input order.
func cpqTGrouped(in []Action) []Action {
	var other, adds, removes []Action
	for _, a := range in {
		switch {
		case a.Add != nil:
			adds = append(adds, a)
		case a.Remove != nil:
			removes = append(removes, a)
		default:
			other = append(other, a)
		}
	}
	return slices.Concat(other, adds, removes)
}

// TestCheckpointParquetManyBatchesAndRowGroups crosses the reader's batch
// size and re-encodes the file with many small row groups, as other writers
// may produce.
func TestCheckpointParquetManyBatchesAndRowGroups(t *testing.T) {
	var in []Action
	for i := 0; i < cpqReadBatch+1500; i++ {
		add := &Add{Path: fmt.Sprintf("f%d", i), PartitionValues: map[string]*string{"p": cpqTStr(fmt.Sprint(i % 7))},
			Size: int64(i), ModificationTime: int64(i), DataChange: true}
		if i%1000 == 0 {
			add.PartitionValues["p"] = nil
		}
		in = append(in, Action{Add: add})
		if i%9999 == 0 {
			in = append(in, Action{Remove: &Remove{Path: fmt.Sprintf("r%d", i), Size: cpqTI64(int64(i))}})
		}
	}
	data, err := WriteCheckpointParquet(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadCheckpointParquet(data)
	if err != nil {
		t.Fatal(err)
	}
	// The writer groups the removes after the adds.
	in = cpqTGrouped(in)
	// cmp is slow on 66k actions: only ask it for a diff on failure.
	if !reflect.DeepEqual(in, got) {
		t.Fatalf("as written (-want +got):\n%s", cmp.Diff(in, got))
	}

	tbl, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(data), nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	var buf bytes.Buffer
	if err := pqarrow.WriteTable(tbl, &buf, 4000, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	pf, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if pf.NumRowGroups() < 10 {
		t.Fatalf("want many row groups, got %d", pf.NumRowGroups())
	}
	got, err = ReadCheckpointParquet(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, got) {
		t.Fatalf("many row groups (-want +got):\n%s", cmp.Diff(in, got))
	}
}

func TestWriteCheckpointParquetRejects(t *testing.T) {
	for name, a := range map[string]Action{
		"empty":      {},
		"two":        {Add: &Add{Path: "a"}, Remove: &Remove{Path: "a"}},
		"commitInfo": {CommitInfo: map[string]any{"operation": "WRITE"}},
		"cdc":        {CDC: &CDC{Path: "c"}},
		"no path":    {Add: &Add{}},
		"protocol":   {Protocol: &Protocol{MinReaderVersion: -1, MinWriterVersion: 2}},
	} {
		if _, err := WriteCheckpointParquet([]Action{a}); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	// No actions is a valid (empty) file.
	data, err := WriteCheckpointParquet(nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadCheckpointParquet(data)
	if err != nil || len(got) != 0 {
		t.Fatalf("empty checkpoint: %v, %v", got, err)
	}
}

// cpqTParquet writes JSON rows with an explicit Arrow schema, to build the
// odd files other writers (or corruption) produce.
func cpqTParquet(t testing.TB, sc *arrow.Schema, rows string) []byte {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(sc, &buf, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func cpqTSchema(fields ...arrow.Field) *arrow.Schema { return arrow.NewSchema(fields, nil) }

// TestReadCheckpointParquetIntVariants: writers differ on int vs long; both
// must decode. Unknown fields and columns, and rows holding only commitInfo,
// are skipped; a stray cdc row still decodes.
func TestReadCheckpointParquetIntVariants(t *testing.T) {
	sc := cpqTSchema(
		cpqField("add", arrow.StructOf(
			cpqField("path", arrow.BinaryTypes.String),
			cpqField("size", arrow.PrimitiveTypes.Int32),
			cpqField("modificationTime", arrow.PrimitiveTypes.Int32),
			cpqField("dataChange", arrow.FixedWidthTypes.Boolean),
			cpqField("partitionValues", cpqStrMapType),
			cpqField("deletionVector", arrow.StructOf(
				cpqField("storageType", arrow.BinaryTypes.String),
				cpqField("pathOrInlineDv", arrow.BinaryTypes.Binary),
				cpqField("offset", arrow.PrimitiveTypes.Int64),
				cpqField("sizeInBytes", arrow.PrimitiveTypes.Int64),
				cpqField("cardinality", arrow.PrimitiveTypes.Int32),
			)),
			cpqField("stats_parsed", arrow.StructOf(cpqField("numRecords", arrow.PrimitiveTypes.Int64))),
			cpqField("futureField", arrow.PrimitiveTypes.Float64),
		)),
		cpqField("protocol", arrow.StructOf(
			cpqField("minReaderVersion", arrow.PrimitiveTypes.Int64),
			cpqField("minWriterVersion", arrow.PrimitiveTypes.Int16),
		)),
		cpqField("txn", arrow.StructOf(
			cpqField("appId", arrow.BinaryTypes.LargeString),
			cpqField("version", arrow.PrimitiveTypes.Int32),
		)),
		cpqField("somethingNew", arrow.StructOf(cpqField("x", arrow.PrimitiveTypes.Int64))),
		cpqField("commitInfo", arrow.StructOf(cpqField("operation", arrow.BinaryTypes.String))),
		cpqField("cdc", arrow.StructOf(
			cpqField("path", arrow.BinaryTypes.String),
			cpqField("size", arrow.PrimitiveTypes.Int64),
			cpqField("dataChange", arrow.FixedWidthTypes.Boolean),
			cpqField("tags", cpqStrMapType),
		)),
	)
	data := cpqTParquet(t, sc, `[
		{"add": {"path": "a", "size": 5, "modificationTime": 6, "dataChange": true,
		         "partitionValues": [{"key": "p", "value": null}, {"key": "q", "value": "1"}],
		         "deletionVector": {"storageType": "u", "pathOrInlineDv": "YWJj", "offset": 1, "sizeInBytes": 2, "cardinality": 3},
		         "stats_parsed": {"numRecords": 9}, "futureField": 1.5}},
		{"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
		{"txn": {"appId": "app", "version": 7}},
		{"somethingNew": {"x": 1}},
		{"commitInfo": {"operation": "WRITE"}},
		{"cdc": {"path": "_change_data/c.parquet", "size": 3, "dataChange": false, "tags": []}}
	]`)
	got, err := ReadCheckpointParquet(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []Action{
		{Add: &Add{Path: "a", Size: 5, ModificationTime: 6, DataChange: true,
			PartitionValues: map[string]*string{"p": nil, "q": cpqTStr("1")},
			DeletionVector: &DeletionVectorDescriptor{StorageType: "u", PathOrInlineDv: "abc",
				Offset: cpqTI32(1), SizeInBytes: 2, Cardinality: 3}}},
		{Protocol: &Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{Txn: &Txn{AppID: "app", Version: 7}},
		{CDC: &CDC{Path: "_change_data/c.parquet", PartitionValues: map[string]*string{}, Size: 3, Tags: map[string]*string{}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestReadCheckpointParquetCorrupt(t *testing.T) {
	good, err := WriteCheckpointParquet(cpqTSampleActions())
	if err != nil {
		t.Fatal(err)
	}
	addSchema := func(fields ...arrow.Field) *arrow.Schema {
		return cpqTSchema(cpqField("add", arrow.StructOf(fields...)))
	}
	addOK := []arrow.Field{
		cpqField("path", arrow.BinaryTypes.String),
		cpqField("size", arrow.PrimitiveTypes.Int64),
		cpqField("modificationTime", arrow.PrimitiveTypes.Int64),
		cpqField("dataChange", arrow.FixedWidthTypes.Boolean),
	}
	cases := map[string][]byte{
		"empty":     nil,
		"garbage":   []byte("this is not a parquet file at all, not even close......"),
		"truncated": good[:len(good)/2],
		"no tail":   good[:len(good)-3],
		"flipped": func() []byte {
			b := bytes.Clone(good)
			for i := 4; i < len(b)/2; i += 97 {
				b[i] ^= 0x5a
			}
			return b
		}(),
		"not a checkpoint": cpqTParquet(t, cpqTSchema(cpqField("id", arrow.PrimitiveTypes.Int64)), `[{"id": 1}]`),
		"add not a struct": cpqTParquet(t, cpqTSchema(cpqField("add", arrow.BinaryTypes.String)), `[{"add": "x"}]`),
		"null path": cpqTParquet(t, addSchema(addOK...),
			`[{"add": {"path": null, "size": 1, "modificationTime": 1, "dataChange": true}}]`),
		"null size": cpqTParquet(t, addSchema(addOK...),
			`[{"add": {"path": "p", "size": null, "modificationTime": 1, "dataChange": true}}]`),
		"missing dataChange": cpqTParquet(t, addSchema(addOK[:3]...),
			`[{"add": {"path": "p", "size": 1, "modificationTime": 1}}]`),
		"path is a number": cpqTParquet(t, addSchema(cpqField("path", arrow.PrimitiveTypes.Int64)),
			`[{"add": {"path": 1}}]`),
		"size is a string": cpqTParquet(t, addSchema(cpqField("path", arrow.BinaryTypes.String), cpqField("size", arrow.BinaryTypes.String)),
			`[{"add": {"path": "p", "size": "1"}}]`),
		"partitionValues is a list": cpqTParquet(t, addSchema(append(slices.Clone(addOK), cpqField("partitionValues", cpqStrListType))...),
			`[{"add": {"path": "p", "size": 1, "modificationTime": 1, "dataChange": true, "partitionValues": ["a"]}}]`),
		"two actions in a row": cpqTParquet(t, cpqTSchema(
			cpqField("add", arrow.StructOf(addOK...)),
			cpqField("txn", arrow.StructOf(cpqField("appId", arrow.BinaryTypes.String), cpqField("version", arrow.PrimitiveTypes.Int64)))),
			`[{"add": {"path": "p", "size": 1, "modificationTime": 1, "dataChange": true}, "txn": {"appId": "a", "version": 1}}]`),
		"offset overflows int": cpqTParquet(t, addSchema(append(slices.Clone(addOK), cpqField("deletionVector", arrow.StructOf(
			cpqField("storageType", arrow.BinaryTypes.String), cpqField("pathOrInlineDv", arrow.BinaryTypes.String),
			cpqField("offset", arrow.PrimitiveTypes.Int64), cpqField("sizeInBytes", arrow.PrimitiveTypes.Int32),
			cpqField("cardinality", arrow.PrimitiveTypes.Int64))))...),
			`[{"add": {"path": "p", "size": 1, "modificationTime": 1, "dataChange": true,
			  "deletionVector": {"storageType": "u", "pathOrInlineDv": "x", "offset": 4294967296, "sizeInBytes": 1, "cardinality": 1}}}]`),
		"null feature": cpqTParquet(t, cpqTSchema(cpqField("protocol", arrow.StructOf(
			cpqField("minReaderVersion", arrow.PrimitiveTypes.Int32), cpqField("minWriterVersion", arrow.PrimitiveTypes.Int32),
			cpqField("readerFeatures", cpqStrListType)))),
			`[{"protocol": {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["a", null]}}]`),
		"metaData without format": cpqTParquet(t, cpqTSchema(cpqField("metaData", arrow.StructOf(
			cpqField("id", arrow.BinaryTypes.String), cpqField("schemaString", arrow.BinaryTypes.String)))),
			`[{"metaData": {"id": "i", "schemaString": "{}"}}]`),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ReadCheckpointParquet(data)
			if err == nil {
				t.Fatalf("want an error, got %d actions", len(got))
			}
			if !errors.Is(err, ErrCorruptLog) {
				t.Fatalf("error %v does not wrap ErrCorruptLog", err)
			}
			t.Log(err)
		})
	}
}

// ---- real checkpoints ---------------------------------------------------------

// cpqTState is the reconciled table state, from JSON replay or a checkpoint.
type cpqTState struct {
	adds     map[string]*Add // by path + DV id
	removes  map[string]bool // paths
	protocol *Protocol
	metadata *Metadata
	txns     map[string]int64
	domains  map[string]DomainMetadata
}

func cpqTFileKey(path string, dv *DeletionVectorDescriptor) string { return path + "#" + dv.UniqueID() }

func (s *cpqTState) apply(actions []Action) {
	for _, a := range actions {
		switch {
		case a.Add != nil:
			s.adds[cpqTFileKey(a.Add.Path, a.Add.DeletionVector)] = a.Add
			delete(s.removes, a.Add.Path)
		case a.Remove != nil:
			delete(s.adds, cpqTFileKey(a.Remove.Path, a.Remove.DeletionVector))
			s.removes[a.Remove.Path] = true
		case a.Protocol != nil:
			s.protocol = a.Protocol
		case a.MetaData != nil:
			s.metadata = a.MetaData
		case a.Txn != nil:
			s.txns[a.Txn.AppID] = a.Txn.Version
		case a.DomainMetadata != nil:
			if a.DomainMetadata.Removed {
				delete(s.domains, a.DomainMetadata.Domain)
			} else {
				s.domains[a.DomainMetadata.Domain] = *a.DomainMetadata
			}
		}
	}
}

func newCPQTState() *cpqTState {
	return &cpqTState{adds: map[string]*Add{}, removes: map[string]bool{}, txns: map[string]int64{}, domains: map[string]DomainMetadata{}}
}

// cpqTReplayJSON replays commits 0..upto of logDir.
func cpqTReplayJSON(t *testing.T, logDir string, upto int64) *cpqTState {
	t.Helper()
	s := newCPQTState()
	for v := int64(0); v <= upto; v++ {
		data, err := os.ReadFile(filepath.Join(logDir, fmt.Sprintf("%020d.json", v)))
		if err != nil {
			t.Fatal(err)
		}
		actions, err := ParseActions(data)
		if err != nil {
			t.Fatalf("commit %d: %v", v, err)
		}
		s.apply(actions)
	}
	return s
}

// cpqTCheckpointFiles finds the checkpoint of logDir (classic, multi-part or
// V2) and returns its version and Parquet files, parts in order.
func cpqTCheckpointFiles(t *testing.T, logDir string) (int64, []string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(logDir, "*.checkpoint*.parquet"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no checkpoint in %s: %v", logDir, err)
	}
	sort.Strings(files)
	var version int64
	if _, err := fmt.Sscanf(filepath.Base(files[0]), "%020d", &version); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !strings.HasPrefix(filepath.Base(f), fmt.Sprintf("%020d.", version)) {
			t.Fatalf("more than one checkpoint version in %s", logDir)
		}
	}
	return version, files
}

// cpqTReadCheckpoint reads every part of a checkpoint and, for V2, its
// sidecars; it also returns the files read, sidecars included.
func cpqTReadCheckpoint(t *testing.T, logDir string, files []string) ([]Action, []string) {
	t.Helper()
	var all []Action
	read := slices.Clone(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		actions, err := ReadCheckpointParquet(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		all = append(all, actions...)
		for _, a := range actions {
			if a.Sidecar == nil {
				continue
			}
			sf := filepath.Join(logDir, "_sidecars", a.Sidecar.Path)
			sdata, err := os.ReadFile(sf)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(sdata)) != a.Sidecar.SizeInBytes {
				t.Errorf("sidecar %s: size %d, action says %d", sf, len(sdata), a.Sidecar.SizeInBytes)
			}
			sactions, err := ReadCheckpointParquet(sdata)
			if err != nil {
				t.Fatalf("%s: %v", sf, err)
			}
			for _, sa := range sactions {
				if sa.Add == nil && sa.Remove == nil {
					t.Errorf("sidecar %s holds a non-file action %+v", sf, sa)
				}
			}
			all = append(all, sactions...)
			read = append(read, sf)
		}
	}
	return all, read
}

// cpqTDuckDB opens an in-memory DuckDB.
func cpqTDuckDB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// cpqTDuckDBActions decodes a Parquet checkpoint independently: DuckDB turns
// each row into JSON and ParseActions reads that, as if it were a commit.
func cpqTDuckDBActions(t testing.TB, db *sql.DB, path string) []Action {
	t.Helper()
	q := fmt.Sprintf(`SELECT to_json(t)::VARCHAR FROM read_parquet('%s', file_row_number = true) t ORDER BY file_row_number`,
		strings.ReplaceAll(path, "'", "''"))
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("duckdb %s: %v", path, err)
	}
	defer rows.Close()
	var ndjson bytes.Buffer
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		ndjson.WriteString(line)
		ndjson.WriteByte('\n')
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	parsed, err := ParseActions(ndjson.Bytes())
	if err != nil {
		t.Fatalf("duckdb rows of %s: %v", path, err)
	}
	var out []Action
	for _, a := range parsed {
		if a.Add != nil || a.Remove != nil || a.MetaData != nil || a.Protocol != nil || a.Txn != nil ||
			a.DomainMetadata != nil || a.CheckpointMetadata != nil || a.Sidecar != nil {
			out = append(out, a)
		}
	}
	return cpqTCanonical(out)
}

// cpqTCheckTable checks a table's checkpoint against two independent
// decodings: DuckDB row by row, and replay of the JSON commits up to it.
func cpqTCheckTable(t *testing.T, tableDir string, wantAdds int) {
	logDir := filepath.Join(tableDir, "_delta_log")
	version, files := cpqTCheckpointFiles(t, logDir)
	ckpt, read := cpqTReadCheckpoint(t, logDir, files)

	db := cpqTDuckDB(t)
	var viaDuck []Action
	for _, f := range read {
		viaDuck = append(viaDuck, cpqTDuckDBActions(t, db, f)...)
	}
	if diff := cmp.Diff(viaDuck, ckpt); diff != "" {
		t.Errorf("checkpoint vs DuckDB decoding (-duckdb +ours):\n%s", diff)
	}

	fromCkpt := newCPQTState()
	fromCkpt.apply(ckpt)
	replay := cpqTReplayJSON(t, logDir, version)

	if len(fromCkpt.adds) != wantAdds {
		t.Errorf("checkpoint has %d active files, want %d", len(fromCkpt.adds), wantAdds)
	}
	// What a checkpoint keeps of an add: dataChange is reset and stats may be
	// rewritten (struct stats only), so compare the identity and layout.
	type fileID struct {
		Path            string
		Size            int64
		ModTime         int64
		PartitionValues map[string]*string
		DV              *DeletionVectorDescriptor
	}
	ids := func(m map[string]*Add) map[string]fileID {
		out := map[string]fileID{}
		for k, a := range m {
			out[k] = fileID{a.Path, a.Size, a.ModificationTime, a.PartitionValues, a.DeletionVector}
		}
		return out
	}
	if diff := cmp.Diff(ids(replay.adds), ids(fromCkpt.adds)); diff != "" {
		t.Errorf("active files: JSON replay vs checkpoint (-json +checkpoint):\n%s", diff)
	}
	for p := range fromCkpt.removes {
		if !replay.removes[p] {
			t.Errorf("checkpoint tombstone %s is not a removed file in the JSON log", p)
		}
	}
	if diff := cmp.Diff(replay.protocol, fromCkpt.protocol); diff != "" {
		t.Errorf("protocol (-json +checkpoint):\n%s", diff)
	}
	if diff := cmp.Diff(replay.metadata, fromCkpt.metadata); diff != "" {
		t.Errorf("metadata (-json +checkpoint):\n%s", diff)
	}
	if diff := cmp.Diff(replay.txns, fromCkpt.txns); diff != "" {
		t.Errorf("txns (-json +checkpoint):\n%s", diff)
	}
	if diff := cmp.Diff(replay.domains, fromCkpt.domains); diff != "" {
		t.Errorf("domain metadata (-json +checkpoint):\n%s", diff)
	}
}

func TestReadCheckpointParquetKernelTables(t *testing.T) {
	requireSharedTestData(t)
	for _, tc := range []struct {
		name     string
		wantAdds int
	}{
		{"with_checkpoint_no_last_checkpoint", 1},
		{"app-txn-checkpoint", 4},
		{"v1-multi-part-struct-stats-only", 5},
		{"v2-classic-parquet-struct-stats-only", 5},
		{"v2-parquet-sidecars-struct-stats-only", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cpqTCheckTable(t, filepath.Join(sharedTestData, "kernel", tc.name), tc.wantAdds)
		})
	}
}

func TestReadCheckpointParquetV2Sidecars(t *testing.T) {
	requireSharedTestData(t)
	logDir := filepath.Join(sharedTestData, "kernel", "v2-parquet-sidecars-struct-stats-only", "_delta_log")
	_, files := cpqTCheckpointFiles(t, logDir)
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	actions, err := ReadCheckpointParquet(data)
	if err != nil {
		t.Fatal(err)
	}
	var meta, sidecars int
	for _, a := range actions {
		if a.CheckpointMetadata != nil {
			meta++
			if a.CheckpointMetadata.Version != 5 {
				t.Errorf("checkpointMetadata.version = %d, want 5", a.CheckpointMetadata.Version)
			}
		}
		if a.Sidecar != nil {
			sidecars++
		}
		if a.Add != nil {
			t.Errorf("V2 top-level file unexpectedly holds add %s", a.Add.Path)
		}
	}
	if meta != 1 || sidecars == 0 {
		t.Fatalf("got %d checkpointMetadata and %d sidecar actions", meta, sidecars)
	}
}

func TestReadCheckpointParquetGolden(t *testing.T) {
	requireSharedTestData(t)
	dir := t.TempDir()
	untarZst(t, filepath.Join(sharedTestData, "golden", "checkpoint.tar.zst"), dir)
	tableDir := filepath.Join(dir, "checkpoint", "delta")
	cpqTCheckTable(t, tableDir, 1)

	// _last_checkpoint records the action count Spark wrote.
	data, err := os.ReadFile(filepath.Join(tableDir, "_delta_log", "00000000000000000010.checkpoint.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	actions, err := ReadCheckpointParquet(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(actions) != 13 {
		t.Errorf("got %d actions, _last_checkpoint says 13", len(actions))
	}
}

// TestWriteCheckpointParquetDuckDB: what we write must read back in DuckDB,
// field for field.
func TestWriteCheckpointParquetDuckDB(t *testing.T) {
	in := cpqTSampleActions()
	data, err := WriteCheckpointParquet(in)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "00000000000000000010.checkpoint.parquet")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	db := cpqTDuckDB(t)
	var nAdd, nTxn, nRemove, nMeta, nProto int
	q := fmt.Sprintf(`SELECT count(add), count(txn), count(remove), count(metaData), count(protocol) FROM read_parquet('%s')`, path)
	if err := db.QueryRow(q).Scan(&nAdd, &nTxn, &nRemove, &nMeta, &nProto); err != nil {
		t.Fatal(err)
	}
	var wantAdd, wantTxn, wantRemove, wantMeta, wantProto int
	for _, a := range in {
		switch {
		case a.Add != nil:
			wantAdd++
		case a.Txn != nil:
			wantTxn++
		case a.Remove != nil:
			wantRemove++
		case a.MetaData != nil:
			wantMeta++
		case a.Protocol != nil:
			wantProto++
		}
	}
	if got, want := []int{nAdd, nTxn, nRemove, nMeta, nProto}, []int{wantAdd, wantTxn, wantRemove, wantMeta, wantProto}; !slices.Equal(got, want) {
		t.Fatalf("duckdb counts add/txn/remove/metaData/protocol = %v, want %v", got, want)
	}

	rows, err := db.Query(fmt.Sprintf(`SELECT add.path, map_extract(add.partitionValues, 'date')[1], cardinality(add.partitionValues),
		add.deletionVector.cardinality FROM read_parquet('%s') WHERE add IS NOT NULL ORDER BY add.path`, path))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	byPath := map[string]*Add{}
	for _, a := range in {
		if a.Add != nil {
			byPath[a.Add.Path] = a.Add
		}
	}
	n := 0
	for rows.Next() {
		var p string
		var date sql.NullString
		var card int
		var dvCard sql.NullInt64
		if err := rows.Scan(&p, &date, &card, &dvCard); err != nil {
			t.Fatal(err)
		}
		n++
		want := byPath[p]
		if want == nil {
			t.Fatalf("duckdb returned unknown path %q", p)
		}
		wantDate := want.PartitionValues["date"]
		if (wantDate == nil) != !date.Valid || (wantDate != nil && *wantDate != date.String) {
			t.Errorf("%s: date partition = %v, want %v", p, date, wantDate)
		}
		if card != len(want.PartitionValues) {
			t.Errorf("%s: %d partition values, want %d", p, card, len(want.PartitionValues))
		}
		if (want.DeletionVector != nil) != dvCard.Valid || (dvCard.Valid && dvCard.Int64 != want.DeletionVector.Cardinality) {
			t.Errorf("%s: DV cardinality %v, want %+v", p, dvCard, want.DeletionVector)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != wantAdd {
		t.Fatalf("duckdb listed %d adds, want %d", n, wantAdd)
	}

	// Every field of every action, through DuckDB's own Parquet reader.
	if diff := cmp.Diff(cpqTCanonical(in), cpqTDuckDBActions(t, db, path)); diff != "" {
		t.Fatalf("written file as DuckDB reads it (-want +duckdb):\n%s", diff)
	}
}

func FuzzReadCheckpointParquet(f *testing.F) {
	seed, err := WriteCheckpointParquet(cpqTSampleActions()[:20])
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	small, err := WriteCheckpointParquet([]Action{{Add: &Add{Path: "a", PartitionValues: map[string]*string{"p": nil}, Size: 1}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(small)
	// Row groups per kind, with the statistics a read without removes skips by.
	grouped, err := WriteCheckpointParquet(cpqTLongHistory(3, 30))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(grouped)
	if files, _ := filepath.Glob(filepath.Join(sharedTestData, "kernel", "app-txn-checkpoint", "_delta_log", "*.parquet")); len(files) > 0 {
		if data, err := os.ReadFile(files[0]); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("PAR1"))
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Without removes the reader trusts statistics to skip row groups:
		// whatever they say, it must fail cleanly, never panic.
		if _, err := readCheckpointParquet(data, true); err != nil && !errors.Is(err, ErrCorruptLog) {
			t.Fatalf("without removes: error %v does not wrap ErrCorruptLog", err)
		}
		actions, err := ReadCheckpointParquet(data)
		if err != nil {
			if !errors.Is(err, ErrCorruptLog) {
				t.Fatalf("error %v does not wrap ErrCorruptLog", err)
			}
			return
		}
		// Whatever decodes must be writable again.
		for _, a := range actions {
			if a.CDC != nil {
				return
			}
		}
		if _, err := WriteCheckpointParquet(actions); err != nil {
			t.Fatalf("decoded actions do not re-encode: %v", err)
		}
	})
}

// cpqTBenchCheckpoint is a checkpoint of a partitioned table with n files.
func cpqTBenchCheckpoint(tb testing.TB, n int) []byte {
	actions := []Action{
		{Protocol: &Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{MetaData: &Metadata{ID: "bench", Format: Format{Provider: "parquet", Options: map[string]string{}},
			SchemaString:     `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"date","type":"string","nullable":true,"metadata":{}}]}`,
			PartitionColumns: []string{"date"}, Configuration: map[string]string{}}},
	}
	for i := 0; i < n; i++ {
		date := fmt.Sprintf("2024-%02d-%02d", i%12+1, i%28+1)
		actions = append(actions, Action{Add: &Add{
			Path:             fmt.Sprintf("date=%s/part-%05d-6b0c7b9e-1c7a-4d8e-9f21-%012d.c000.snappy.parquet", date, i, i),
			PartitionValues:  map[string]*string{"date": &date},
			Size:             int64(100000 + i),
			ModificationTime: 1700000000000 + int64(i),
			DataChange:       false,
			Stats: fmt.Sprintf(`{"numRecords":%d,"minValues":{"id":%d,"name":"a%d"},"maxValues":{"id":%d,"name":"z%d"},"nullCount":{"id":0,"name":%d}}`,
				1000+i, i*1000, i, i*1000+999, i, i%3),
		}})
	}
	data, err := WriteCheckpointParquet(actions)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

func BenchmarkReadCheckpointParquet10k(b *testing.B) {
	data := cpqTBenchCheckpoint(b, 10000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		actions, err := ReadCheckpointParquet(data)
		if err != nil {
			b.Fatal(err)
		}
		if len(actions) != 10002 {
			b.Fatalf("got %d actions", len(actions))
		}
	}
}

func BenchmarkWriteCheckpointParquet10k(b *testing.B) { benchmarkWriteCheckpoint(b, 10000) }

// A checkpoint of a table auto-compaction keeps small, written every ten
// commits: its cost is the per-column work, not the rows.
func BenchmarkWriteCheckpointParquet30(b *testing.B) { benchmarkWriteCheckpoint(b, 30) }

func benchmarkWriteCheckpoint(b *testing.B, adds int) {
	data := cpqTBenchCheckpoint(b, adds)
	actions, err := ReadCheckpointParquet(data)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := WriteCheckpointParquet(actions); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(data)), "file-bytes")
}
