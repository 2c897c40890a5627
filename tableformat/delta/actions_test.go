package delta

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func atStr(s string) *string { return &s }
func atI64(v int64) *int64   { return &v }
func atI32(v int32) *int32   { return &v }
func atBool(v bool) *bool    { return &v }

// atAllActions has every action kind with every field set, including null
// partition values, deletion vectors of the three storage types and a
// commitInfo with nested values. commitInfo values use the types
// encoding/json decodes into (float64, string, bool, nil, map, slice), so a
// round trip must give them back unchanged.
func atAllActions() []Action {
	return []Action{
		{CommitInfo: map[string]any{
			"timestamp":           float64(1713400874285),
			"operation":           "WRITE",
			"operationParameters": map[string]any{"mode": "Append", "partitionBy": `["p"]`},
			"isBlindAppend":       true,
			"readVersion":         float64(3),
			"nothing":             nil,
			"list":                []any{"a", float64(1.5), false, nil},
			"engineInfo":          "lakesql ünïcødé <&>",
		}},
		{Protocol: &Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"deletionVectors", "v2Checkpoint"},
			WriterFeatures: []string{"deletionVectors", "v2Checkpoint", "appendOnly"}}},
		{MetaData: &Metadata{
			ID:               "5fba94ed-9794-4965-ba6e-6ee3c0d22af9",
			Name:             atStr("t"),
			Description:      atStr("a \"quoted\" table\nwith a newline"),
			Format:           Format{Provider: "parquet", Options: map[string]string{"k": "v"}},
			SchemaString:     `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"p","type":"string","nullable":true,"metadata":{}}]}`,
			PartitionColumns: []string{"p"},
			CreatedTime:      atI64(1713400874000),
			Configuration:    map[string]string{"delta.checkpointInterval": "3", "delta.appendOnly": "false"},
		}},
		{Txn: &Txn{AppID: "writer-a", Version: 42, LastUpdated: atI64(1713400874285)}},
		{Add: &Add{
			Path:             "p=__HIVE_DEFAULT_PARTITION__/part-00000-%C3%A9%20x.parquet",
			PartitionValues:  map[string]*string{"p": nil, "q": atStr(""), "r": atStr("a/b=c")},
			Size:             1234,
			ModificationTime: 1713400874285,
			DataChange:       true,
			Stats:            `{"numRecords":3,"minValues":{"id":1},"maxValues":{"id":3},"nullCount":{"id":0}}`,
			Tags:             map[string]*string{"INSERTION_TIME": atStr("1677811178336000"), "null": nil},
			DeletionVector: &DeletionVectorDescriptor{StorageType: "u", PathOrInlineDv: "ab^-aqEH.-t@S}K{vb[*k^",
				Offset: atI32(1), SizeInBytes: 36, Cardinality: 2, MaxRowIndex: atI64(9)},
			BaseRowID:               atI64(100),
			DefaultRowCommitVersion: atI64(4),
			ClusteringProvider:      atStr("liquid"),
		}},
		{Add: &Add{Path: "inline.parquet", PartitionValues: map[string]*string{}, Size: 1, DataChange: false,
			DeletionVector: &DeletionVectorDescriptor{StorageType: "i", PathOrInlineDv: "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", SizeInBytes: 40, Cardinality: 6}}},
		{Remove: &Remove{
			Path:                 "file:///abs/path/part-1.parquet",
			DeletionTimestamp:    atI64(1713400874999),
			DataChange:           true,
			ExtendedFileMetadata: atBool(true),
			PartitionValues:      map[string]*string{"p": nil},
			Size:                 atI64(99),
			Stats:                `{"numRecords":1}`,
			Tags:                 map[string]*string{"t": atStr("v")},
			DeletionVector: &DeletionVectorDescriptor{StorageType: "p", PathOrInlineDv: "s3://bucket/dv.bin",
				Offset: atI32(4), SizeInBytes: 10, Cardinality: 1},
			BaseRowID:               atI64(7),
			DefaultRowCommitVersion: atI64(2),
		}},
		{Remove: &Remove{Path: "minimal.parquet"}},
		{CDC: &CDC{Path: "_change_data/cdc-00000.parquet", PartitionValues: map[string]*string{"p": nil},
			Size: 77, DataChange: false, Tags: map[string]*string{"x": atStr("y")}}},
		{DomainMetadata: &DomainMetadata{Domain: "delta.clustering", Configuration: `{"clusteringColumns":[["id"]]}`, Removed: false}},
		{DomainMetadata: &DomainMetadata{Domain: "user.gone", Configuration: "", Removed: true}},
		{CheckpointMetadata: &CheckpointMetadata{Version: 5, Tags: map[string]*string{"k": atStr("v"), "n": nil}}},
		{Sidecar: &Sidecar{Path: "00000000000000000005.checkpoint.0000000001.0000000001.aec23d5c.parquet",
			SizeInBytes: 4096, ModificationTime: 1713400874285, Tags: map[string]*string{"a": atStr("b")}}},
	}
}

// TestActionsRoundTrip encodes every action kind and parses it back.
func TestActionsRoundTrip(t *testing.T) {
	want := atAllActions()
	data, err := EncodeActions(want)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines for %d actions:\n%s", len(lines), len(want), data)
	}
	// One action per line, each a JSON object with exactly one key.
	for i, l := range lines {
		got, err := ParseActions([]byte(l))
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if diff := cmp.Diff(want[i:i+1], got); diff != "" {
			t.Errorf("line %d alone (-want +got):\n%s", i+1, diff)
		}
	}
	// Null partition values are written as JSON null, not dropped or "".
	if !strings.Contains(lines[4], `"p":null`) || !strings.Contains(lines[4], `"q":""`) {
		t.Errorf("null/empty partition values not kept: %s", lines[4])
	}
	// HTML characters are not escaped (Delta readers compare paths verbatim).
	if !strings.Contains(lines[0], "<&>") {
		t.Errorf("commitInfo text escaped: %s", lines[0])
	}
	got, err := ParseActions(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
	again, err := EncodeActions(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, again) {
		t.Fatalf("re-encoding differs:\n%s\n---\n%s", data, again)
	}
	// The DV unique ids used for reconciliation.
	if id := want[4].Add.DeletionVector.UniqueID(); id != "uab^-aqEH.-t@S}K{vb[*k^@1" {
		t.Errorf("UniqueID = %q", id)
	}
	if id := want[5].Add.DeletionVector.UniqueID(); id != "iwi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L" {
		t.Errorf("inline UniqueID = %q", id)
	}
	if id := (*DeletionVectorDescriptor)(nil).UniqueID(); id != "" {
		t.Errorf("nil UniqueID = %q", id)
	}
}

// TestParseActionsRealLines parses lines as Spark and delta-rs write them:
// explicit nulls for absent optional fields, unknown fields inside known
// actions.
func TestParseActionsRealLines(t *testing.T) {
	data := `{"add":{"path":"modified=2021-02-02/part-00001.snappy.parquet","partitionValues":{"modified":"2021-02-02","n":null},"size":789,"modificationTime":1713400874285,"dataChange":true,"stats":"{\"numRecords\":3}","tags":null,"deletionVector":null,"baseRowId":null,"defaultRowCommitVersion":null,"clusteringProvider":null,"someFutureField":{"x":[1,2]}}}
{"txn":{"appId":"my-app","version":3}}
{"remove":{"path":"a%20b.parquet","deletionTimestamp":1677811194426,"dataChange":true,"extendedFileMetadata":true,"partitionValues":{},"size":635}}`
	got, err := ParseActions([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := []Action{
		{Add: &Add{Path: "modified=2021-02-02/part-00001.snappy.parquet",
			PartitionValues: map[string]*string{"modified": atStr("2021-02-02"), "n": nil},
			Size:            789, ModificationTime: 1713400874285, DataChange: true, Stats: `{"numRecords":3}`}},
		{Txn: &Txn{AppID: "my-app", Version: 3}},
		{Remove: &Remove{Path: "a%20b.parquet", DeletionTimestamp: atI64(1677811194426), DataChange: true,
			ExtendedFileMetadata: atBool(true), PartitionValues: map[string]*string{}, Size: atI64(635)}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// TestParseActionsBlankLines: blank lines, whitespace-only lines, CRLF line
// ends and a missing final newline are all fine.
func TestParseActionsBlankLines(t *testing.T) {
	data := "\n\n" + `{"txn":{"appId":"a","version":1}}` + "\r\n   \n\t\r\n" +
		`  {"txn":{"appId":"b","version":2}}  ` + "\n\n" + `{"txn":{"appId":"c","version":3}}`
	got, err := ParseActions([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := []Action{
		{Txn: &Txn{AppID: "a", Version: 1}},
		{Txn: &Txn{AppID: "b", Version: 2}},
		{Txn: &Txn{AppID: "c", Version: 3}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	for _, empty := range []string{"", "\n", "\n\n  \r\n\t"} {
		got, err := ParseActions([]byte(empty))
		if err != nil || len(got) != 0 {
			t.Errorf("ParseActions(%q) = %v, %v; want no actions", empty, got, err)
		}
	}
}

// atKnown drops actions with no known kind set.
func atKnown(actions []Action) []Action {
	var out []Action
	for _, a := range actions {
		if !cmp.Equal(a, Action{}) {
			out = append(out, a)
		}
	}
	return out
}

// TestParseActionsUnknownKinds: actions of kinds this reader does not know
// are not errors and carry nothing into the known actions around them.
func TestParseActionsUnknownKinds(t *testing.T) {
	data := `{"futureAction":{"path":"x","whatever":[1,2,3]}}
{"txn":{"appId":"a","version":1}}
{"someOtherThing":42}
{}
{"add":{"path":"f.parquet","partitionValues":{},"size":1,"modificationTime":0,"dataChange":true},"futureTopLevelField":"ignored"}`
	got, err := ParseActions([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := []Action{
		{Txn: &Txn{AppID: "a", Version: 1}},
		{Add: &Add{Path: "f.parquet", PartitionValues: map[string]*string{}, Size: 1, DataChange: true}},
	}
	if diff := cmp.Diff(want, atKnown(got)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// TestParseActionsUnknownKindsInTable: a commit with unknown actions still
// replays, and they change nothing.
func TestParseActionsUnknownKindsInTable(t *testing.T) {
	ctx := context.Background()
	store, err := NewLocalStorage(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Create(ctx, store, CreateOptions{Schema: atSchema()}); err != nil {
		t.Fatal(err)
	}
	commit := `{"commitInfo":{"timestamp":1,"operation":"WRITE"}}
{"futureAction":{"path":"ghost.parquet"}}
{"add":{"path":"real.parquet","partitionValues":{},"size":5,"modificationTime":1,"dataChange":true,"future":1}}
{"txn":{"appId":"app","version":7}}
`
	if err := store.PutIfAbsent(ctx, commitKey(1), []byte(commit)); err != nil {
		t.Fatal(err)
	}
	snap, err := NewTable(store).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range snap.Files() {
		paths = append(paths, f.Path)
	}
	if diff := cmp.Diff([]string{"real.parquet"}, paths); diff != "" {
		t.Fatalf("files (-want +got):\n%s", diff)
	}
	if v, ok := snap.TxnVersion("app"); !ok || v != 7 {
		t.Fatalf("txn app = %d, %v", v, ok)
	}
}

func atSchema() *StructType {
	return &StructType{Fields: []*StructField{
		{Name: "id", Type: TypeLong, Nullable: true},
		{Name: "v", Type: TypeString, Nullable: true},
	}}
}

// TestParseActionsErrorsNameLine: a bad line is an ErrCorruptLog naming the
// physical line number (blank lines counted).
func TestParseActionsErrorsNameLine(t *testing.T) {
	good := `{"txn":{"appId":"a","version":1}}`
	cases := []struct {
		name, bad string
	}{
		{"truncated", `{"add":{"path":"x.parquet","size":`},
		{"garbage", "\x00\xff\xfe garbage"},
		{"trailing garbage", good + " xyz"},
		{"two objects on a line", good + good},
		{"array", `[{"txn":{"appId":"a","version":1}}]`},
		{"number", `123`},
		{"string", `"add"`},
		{"bool", `true`},
		{"null", `null`},
		{"wrong type", `{"txn":{"appId":"a","version":"1"}}`},
		{"int overflow", `{"txn":{"appId":"a","version":99999999999999999999}}`},
		{"float version", `{"txn":{"appId":"a","version":1.5}}`},
		{"add without path", `{"add":{"partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`},
		{"remove without path", `{"remove":{"path":"","dataChange":true}}`},
		{"txn without appId", `{"txn":{"version":1}}`},
		{"metaData without schema", `{"metaData":{"id":"x","format":{"provider":"parquet"},"partitionColumns":[],"configuration":{}}}`},
		{"cdc without path", `{"cdc":{"partitionValues":{},"size":1,"dataChange":false}}`},
		{"sidecar without path", `{"sidecar":{"sizeInBytes":1,"modificationTime":1}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Line 4: a good line, a blank line, a good line, then the bad one.
			data := good + "\n\n" + good + "\n" + c.bad + "\n" + good + "\n"
			got, err := ParseActions([]byte(data))
			if err == nil {
				t.Fatalf("no error; got %d actions: %+v", len(got), got)
			}
			if !errors.Is(err, ErrCorruptLog) {
				t.Errorf("error does not wrap ErrCorruptLog: %v", err)
			}
			if !strings.Contains(err.Error(), "line 4") {
				t.Errorf("error does not name line 4: %v", err)
			}
			if got != nil {
				t.Errorf("actions returned with the error: %+v", got)
			}
		})
	}
}

// TestParseLogFile classifies log folder names.
func TestParseLogFile(t *testing.T) {
	const d = "_delta_log/"
	cases := []struct {
		key  string
		want logFile
	}{
		{d + "00000000000000000000.json", logFile{kind: kindCommit, version: 0}},
		{d + "00000000000000000123.json", logFile{kind: kindCommit, version: 123}},
		{"00000000000000000007.json", logFile{kind: kindCommit, version: 7}},
		{d + "09223372036854775807.json", logFile{kind: kindCommit, version: 9223372036854775807}},
		{d + "00000000000000000010.checkpoint.parquet", logFile{kind: kindCheckpointClassic, version: 10}},
		{d + "00000000000000000010.checkpoint.0000000001.0000000002.parquet", logFile{kind: kindCheckpointPart, version: 10, part: 1, numParts: 2}},
		{d + "00000000000000000010.checkpoint.0000000002.0000000002.parquet", logFile{kind: kindCheckpointPart, version: 10, part: 2, numParts: 2}},
		{d + "00000000000000000005.checkpoint.0000000003.0000000003.parquet", logFile{kind: kindCheckpointPart, version: 5, part: 3, numParts: 3}},
		{d + "00000000000000000002.checkpoint.6374b053-df23-479b-b2cf-c9c550132b49.json", logFile{kind: kindCheckpointV2, version: 2}},
		{d + "00000000000000000005.checkpoint.f376503f-80c5-44c4-a353-a741181e8197.parquet", logFile{kind: kindCheckpointV2, version: 5}},
		// Not log entries.
		{d + "00000000000000000010.checkpoint.0000000003.0000000002.parquet", logFile{}}, // part > parts
		{d + "00000000000000000010.checkpoint.0000000000.0000000002.parquet", logFile{}}, // part 0
		{d + "00000000000000000010.checkpoint.0000000001.0000000002.json", logFile{}},
		{d + "00000000000000000010.checkpoint.json", logFile{}},
		{d + "00000000000000000010.checkpoint.6374b053-df23-479b-b2cf-c9c550132b49.crc", logFile{}},
		{d + "00000000000000000010.crc", logFile{}},
		{d + ".00000000000000000010.json.crc", logFile{}},
		{d + ".00000000000000000010.checkpoint.parquet.crc", logFile{}},
		{d + "00000000000000000001.00000000000000000009.compacted.json", logFile{}},
		{d + "00000000000000000010.json.tmp-123456", logFile{}},
		{d + ".00000000000000000010.json.tmp-123456", logFile{}},
		{d + "00000000000000000010.jsonx", logFile{}},
		{d + "00000000000000000010.JSON", logFile{}},
		{d + "00000000000000000010.parquet", logFile{}},
		{d + "0000000000000000010.json", logFile{}},   // 19 digits
		{d + "000000000000000000010.json", logFile{}}, // 21 digits
		{d + "0000000000000000001a.json", logFile{}},
		{d + "99999999999999999999.json", logFile{}}, // beyond int64
		{d + "-0000000000000000001.json", logFile{}},
		{d + "_last_checkpoint", logFile{}},
		{d + "_sidecars", logFile{}},
		{d + "garbage", logFile{}},
		{d + "", logFile{}},
		{d + "00000000000000000010.", logFile{}},
	}
	for _, c := range cases {
		c.want.key = c.key
		got := parseLogFile(c.key)
		if c.want.kind == kindOther {
			// The other fields mean nothing for a file replay ignores.
			if got.kind != kindOther || got.key != c.key {
				t.Errorf("parseLogFile(%q) = %+v; want kindOther", c.key, got)
			}
			continue
		}
		if diff := cmp.Diff(c.want, got, cmp.AllowUnexported(logFile{})); diff != "" {
			t.Errorf("parseLogFile(%q) (-want +got):\n%s", c.key, diff)
		}
	}
}

// TestParseLogFileSignedVersion: a version is 20 decimal digits; a sign is
// not a digit, so "+…1.json" or "-…0.json" are not commits (strconv.ParseInt
// alone accepts both).
func TestParseLogFileSignedVersion(t *testing.T) {
	for _, key := range []string{
		"_delta_log/+0000000000000000001.json",
		"_delta_log/-0000000000000000000.json",
		"_delta_log/+0000000000000000001.checkpoint.parquet",
	} {
		if got := parseLogFile(key); got.kind != kindOther {
			t.Errorf("parseLogFile(%q) = kind %d version %d; want kindOther (not 20 digits)", key, got.kind, got.version)
		}
	}
}

// FuzzParseActions: ParseActions never panics; an error wraps ErrCorruptLog
// and names a line; what parses has one action per non-blank line and
// re-encodes to something that parses back to the same actions.
func FuzzParseActions(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join(sharedTestData, "kernel", "*", logDir, "*.json"))
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		if lines := bytes.Split(data, []byte("\n")); len(lines) > 1 {
			f.Add(lines[len(lines)/2])
		}
	}
	all, err := EncodeActions(atAllActions())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(all)
	for _, s := range []string{
		"",
		"\n\n",
		`{"txn":{"appId":"a","version":1}}`,
		`{"add":{"path":"a","partitionValues":{"p":null},"size":1,"modificationTime":2,"dataChange":true,"deletionVector":{"storageType":"u","pathOrInlineDv":"x","offset":1,"sizeInBytes":3,"cardinality":4}}}`,
		`{"remove":{"path":"a","deletionTimestamp":1,"dataChange":false}}` + "\r\n" + `{"futureAction":{}}`,
		`{"commitInfo":{"a":[1,{"b":null}],"c":1e300,"d":-0}}`,
		`{"metaData":{"id":"x","format":{"provider":"parquet"},"schemaString":"{}","partitionColumns":[],"configuration":{}}}`,
		`{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":[],"writerFeatures":["x"]}}`,
		`{"add":{"path":"a","tags":{}}}`,
		`{"domainMetadata":{"domain":"d","configuration":"{}","removed":false}}`,
		`{"checkpointMetadata":{"version":1,"tags":null}}`,
		`{"sidecar":{"path":"s.parquet","sizeInBytes":1,"modificationTime":2}}`,
		`{"cdc":{"path":"c","partitionValues":{},"size":1,"dataChange":false}}`,
		`{"ADD":{"PATH":"case"}}`,
		`{"add":{"path":"x"`,
		`null`,
		"\xff\xfe",
		`{"txn":{"appId":"\u2028\ud800","version":1}}`,
	} {
		f.Add([]byte(s))
	}
	for _, s := range fileActionLines {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, l := range bytes.Split(data, []byte("\n")) {
			checkFileActionDecode(t, bytes.TrimSpace(l))
		}
		actions, err := ParseActions(data)
		if err != nil {
			if !errors.Is(err, ErrCorruptLog) {
				t.Fatalf("error does not wrap ErrCorruptLog: %v", err)
			}
			if !strings.Contains(err.Error(), "line ") {
				t.Fatalf("error does not name a line: %v", err)
			}
			return
		}
		nonBlank := 0
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				nonBlank++
			}
		}
		if len(actions) != nonBlank {
			t.Fatalf("%d actions from %d non-blank lines", len(actions), nonBlank)
		}
		enc, err := EncodeActions(actions)
		if err != nil {
			t.Fatalf("parsed actions do not encode: %v", err)
		}
		again, err := ParseActions(enc)
		if err != nil {
			t.Fatalf("re-encoded actions do not parse: %v\n%s", err, enc)
		}
		// encoding/json omits empty optional maps and slices (tags: {} is
		// written as absent), so empty and nil compare equal here.
		if diff := cmp.Diff(actions, again, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip (-parsed +reparsed):\n%s\nencoded:\n%s", diff, enc)
		}
		enc2, err := EncodeActions(again)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not stable:\n%s\n---\n%s", enc, enc2)
		}
	})
}

// TestFormatOptionsAlwaysWritten: metaData.format.options is written as {}
// when empty or nil, as Spark writes it.
func TestFormatOptionsAlwaysWritten(t *testing.T) {
	for _, opts := range []map[string]string{nil, {}} {
		data, err := EncodeActions([]Action{{MetaData: &Metadata{ID: "x", Format: Format{Provider: "parquet", Options: opts}, SchemaString: "{}"}}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), `"format":{"provider":"parquet","options":{}}`) {
			t.Errorf("options %v encoded as %s", opts, data)
		}
	}
}

// fileActionLines are add and remove lines for decodeFileAction: the
// shapes writers produce, and the odd ones it must leave to encoding/json.
var fileActionLines = []string{
	`{"add":{"path":"d=2026-01-01/part-0.parquet","partitionValues":{"d":"2026-01-01","r":null},"size":41000,"modificationTime":1796621606195,"dataChange":true,"stats":"{\"numRecords\":1006,\"minValues\":{\"a\":\"x\\ty\"}}"}}`,
	`{"add":{"path":"a","partitionValues":{},"size":1,"modificationTime":2,"dataChange":false,"tags":{"k":"v","n":null},"deletionVector":{"storageType":"u","pathOrInlineDv":"ab","offset":1,"sizeInBytes":3,"cardinality":4,"maxRowIndex":9},"baseRowId":5,"defaultRowCommitVersion":6,"clusteringProvider":"liquid"}}`,
	`{"remove":{"path":"a%20b","deletionTimestamp":-3,"dataChange":true,"extendedFileMetadata":false,"partitionValues":{"p":"1"},"size":0,"stats":"","tags":{},"baseRowId":1,"defaultRowCommitVersion":2}}`,
	` { "add" : { "path" : "sp ace" , "size" : -0 } } `,
	`{"add":{"path":"\u00e9\ud800x","stats":"caf\u00e9 \" \/ \b\f\n\r\t"}}`,
	"{\"add\":{\"path\":\"caf\xc3\xa9\xff\"}}",
	`{"add":{"path":"a","partitionValues":{"p":"1","p":"2"}}}`,
	`{"add":{"path":"a","path":"b"}}`,
	`{"add":{"Path":"a"}}`,
	`{"add":{"path":"a","size":1.0}}`,
	`{"add":{"path":"a","size":1e3}}`,
	`{"add":{"path":"a","size":01}}`,
	`{"add":{"path":"a","size":9223372036854775808}}`,
	`{"add":{"path":"a","deletionVector":{"offset":2147483648}}}`,
	`{"add":{"path":"a","size":null}}`,
	`{"add":{"path":"a","dataChange":"true"}}`,
	`{"add":{"path":"a","unknown":{"x":[1]}}}`,
	`{"add":{"path":"a"},"remove":{"path":"b"}}`,
	`{"add":null}`,
	`{"add":{"path":"a"}}x`,
	`{"add":{"path":"a\x"}}`,
	"{\"add\":{\"path\":\"a\tb\"}}",
	`{"add":{"path":"a","dataChange":truex}}`,
	`{"add":{"path":"a"`,
}

// checkFileActionDecode fails when decodeFileAction accepts a line that
// encoding/json decodes otherwise, or rejects.
func checkFileActionDecode(t *testing.T, line []byte) {
	t.Helper()
	fast, ok := decodeFileAction(line)
	if !ok {
		return
	}
	var want Action
	if err := json.Unmarshal(line, &want); err != nil {
		t.Fatalf("decodeFileAction accepts what encoding/json rejects (%v):\n%s", err, line)
	}
	if diff := cmp.Diff(want, fast); diff != "" {
		t.Fatalf("decodeFileAction differs from encoding/json (-json +fast):\n%s\nline: %s", diff, line)
	}
}

// TestDecodeFileAction: the lines writers produce take the fast path and
// decode as encoding/json decodes them; the odd ones are left to it.
func TestDecodeFileAction(t *testing.T) {
	for i, l := range fileActionLines {
		checkFileActionDecode(t, []byte(l))
		_, ok := decodeFileAction([]byte(l))
		if want := i < 7; ok != want {
			t.Errorf("line %d: fast path %v, want %v: %s", i, ok, want, l)
		}
	}
}
