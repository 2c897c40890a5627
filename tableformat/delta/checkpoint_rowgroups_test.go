package delta

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/google/go-cmp/cmp"
)

// Checkpoints keep tombstones in row groups of their own, and a reader that
// needs no tombstones skips those row groups by their statistics.

// cpqTLongHistory is the checkpoint of a table with a long history of
// rewrites: a few live files and many tombstones. The input interleaves
// the kinds, as the writer must group them whatever order it is given.
func cpqTLongHistory(adds, removes int) []Action {
	ts := int64(1700000000000)
	out := []Action{{Protocol: &Protocol{MinReaderVersion: 1, MinWriterVersion: 2}}}
	step := removes/adds + 1 // an add after every step removes
	for i := 0; i < removes; i++ {
		out = append(out, Action{Remove: &Remove{Path: fmt.Sprintf("gone-%05d.parquet", i), DeletionTimestamp: &ts,
			DataChange: true, Size: cpqTI64(int64(i))}})
		if k := i / step; i%step == 0 && k < adds {
			out = append(out, Action{Add: &Add{Path: fmt.Sprintf("live-%05d.parquet", k), Size: int64(k + 1),
				PartitionValues: map[string]*string{}, ModificationTime: ts, Stats: `{"numRecords":1}`}})
		}
		if i == removes/2 {
			out = append(out, Action{MetaData: &Metadata{ID: "t", Format: Format{Provider: "parquet", Options: map[string]string{}},
				SchemaString: `{"type":"struct","fields":[]}`, PartitionColumns: []string{}, Configuration: map[string]string{}}})
			out = append(out, Action{Txn: &Txn{AppID: "app", Version: 7}})
		}
	}
	return out
}

// cpqTKinds counts, per row group, the rows whose add, remove and other
// action columns are set, read back whole through pqarrow: independent of
// statistics and of our reader.
func cpqTKinds(t *testing.T, data []byte) [][3]int {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	var out [][3]int
	for rg := 0; rg < pf.NumRowGroups(); rg++ {
		tbl, err := fr.ReadRowGroups(context.Background(), cpqTAllLeaves(pf), []int{rg})
		if err != nil {
			t.Fatal(err)
		}
		var kinds [3]int
		for c := 0; c < int(tbl.NumCols()); c++ {
			k := 2
			switch tbl.Schema().Field(c).Name {
			case "add":
				k = 0
			case "remove":
				k = 1
			}
			for _, chunk := range tbl.Column(c).Data().Chunks() {
				kinds[k] += chunk.Len() - chunk.NullN()
			}
		}
		tbl.Release()
		out = append(out, kinds)
	}
	return out
}

// cpqTAllLeaves lists every leaf column of the file (pqarrow reads none
// for a nil list).
func cpqTAllLeaves(pf *file.Reader) []int {
	out := make([]int, pf.MetaData().Schema.NumColumns())
	for i := range out {
		out[i] = i
	}
	return out
}

// cpqTWithoutRemoves is what a read that skips removes must return.
func cpqTWithoutRemoves(in []Action) []Action {
	return slices.DeleteFunc(slices.Clone(in), func(a Action) bool { return a.Remove != nil })
}

func TestWriteCheckpointParquetRemovesInOwnRowGroups(t *testing.T) {
	in := cpqTLongHistory(100, 10000)
	data, err := WriteCheckpointParquet(in)
	if err != nil {
		t.Fatal(err)
	}
	// Protocol, metaData, txn and the adds; the removes.
	want := [][3]int{{100, 0, 3}, {0, 10000, 0}}
	if got := cpqTKinds(t, data); !reflect.DeepEqual(got, want) {
		t.Fatalf("rows per row group as [add remove other]: got %v, want %v", got, want)
	}

	// The statistics a reader skips by: null counts on every leaf.
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	rmd := pf.MetaData().RowGroup(1)
	for c := 0; c < rmd.NumColumns(); c++ {
		cc, err := rmd.ColumnChunk(c)
		if err != nil {
			t.Fatal(err)
		}
		st, err := cc.Statistics()
		if err != nil || st == nil || !st.HasNullCount() {
			t.Fatalf("%s: no null count in the statistics (%v)", cc.PathInSchema(), err)
		}
		p := cc.PathInSchema()
		switch {
		case p[0] == "remove" && p[1] == "path" && st.NullCount() != 0,
			p[0] != "remove" && st.NullCount() != cc.NumValues():
			t.Errorf("%s in the remove row group: %d nulls of %d values", p, st.NullCount(), cc.NumValues())
		}
	}
}

func TestWriteCheckpointParquetRowGroupsPerKind(t *testing.T) {
	add := Action{Add: &Add{Path: "a", Size: 1, PartitionValues: map[string]*string{}}}
	remove := Action{Remove: &Remove{Path: "r"}}
	proto := Action{Protocol: &Protocol{MinReaderVersion: 1, MinWriterVersion: 2}}
	for name, tc := range map[string]struct {
		in   []Action
		want [][3]int
	}{
		"nothing":      {nil, [][3]int{{0, 0, 0}}},
		"adds only":    {[]Action{add, add}, [][3]int{{2, 0, 0}}},
		"removes only": {[]Action{remove, remove}, [][3]int{{0, 2, 0}}},
		"no adds":      {[]Action{remove, proto}, [][3]int{{0, 0, 1}, {0, 1, 0}}},
		"no removes":   {[]Action{add, proto, add}, [][3]int{{2, 0, 1}}},
		"interleaved":  {[]Action{remove, add, proto, remove, add}, [][3]int{{2, 0, 1}, {0, 2, 0}}},
	} {
		t.Run(name, func(t *testing.T) {
			data, err := WriteCheckpointParquet(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := cpqTKinds(t, data); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("rows per row group as [add remove other]: got %v, want %v", got, tc.want)
			}
			got, err := ReadCheckpointParquet(data)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(cpqTGrouped(tc.in), got); diff != "" {
				t.Errorf("read back (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadCheckpointParquetSkipsRemoveRowGroups(t *testing.T) {
	in := cpqTLongHistory(100, 10000)
	data, err := WriteCheckpointParquet(in)
	if err != nil {
		t.Fatal(err)
	}
	want := cpqTGrouped(in)

	got, read, err := decodeCheckpointParquet(data, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(read, []int{0}) {
		t.Errorf("without removes decoded row groups %v, want [0]", read)
	}
	if diff := cmp.Diff(cpqTWithoutRemoves(want), got); diff != "" {
		t.Errorf("without removes (-want +got):\n%s", diff)
	}

	// With removes nothing is skipped and every tombstone comes back.
	got, read, err = decodeCheckpointParquet(data, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(read, []int{0, 1}) {
		t.Errorf("with removes decoded row groups %v, want [0 1]", read)
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("with removes (-want +got):\n%s", cmp.Diff(want, got))
	}
}

// cpqTRewrite copies a checkpoint row group for row group into a file
// written with props, so the same rows come with other statistics.
func cpqTRewrite(t *testing.T, data []byte, props *parquet.WriterProperties) []byte {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := fr.Schema()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(sc, &buf, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	for rg := 0; rg < pf.NumRowGroups(); rg++ {
		tbl, err := fr.ReadRowGroups(context.Background(), cpqTAllLeaves(pf), []int{rg})
		if err != nil {
			t.Fatal(err)
		}
		rec := cpqTRecord(t, tbl)
		if err := fw.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		tbl.Release()
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// cpqTRecord turns a table into one record batch, so that one Write makes
// one row group.
func cpqTRecord(t *testing.T, tbl arrow.Table) arrow.RecordBatch {
	t.Helper()
	tr := array.NewTableReader(tbl, tbl.NumRows()+1)
	defer tr.Release()
	if !tr.Next() {
		t.Fatal("empty row group")
	}
	rec := tr.RecordBatch()
	rec.Retain()
	return rec
}

// TestReadCheckpointParquetNeedsStatistics: a row group is skipped only when
// statistics prove it holds no action we read; when they are absent, even
// for a single leaf, or a row group mixes kinds, it is read.
func TestReadCheckpointParquetNeedsStatistics(t *testing.T) {
	in := cpqTLongHistory(10, 1000)
	ours, err := WriteCheckpointParquet(in)
	if err != nil {
		t.Fatal(err)
	}
	mixed := append(slices.Clone(in), Action{Add: &Add{Path: "late.parquet", Size: 9, PartitionValues: map[string]*string{}}})
	// Row group 1 holds the removes and one add.
	mixedFile := cpqTMixedFile(t, mixed)
	for name, tc := range map[string]struct {
		data []byte
		in   []Action
		read []int
	}{
		"ours":                 {ours, in, []int{0}},
		"rewritten with stats": {cpqTRewrite(t, ours, parquet.NewWriterProperties()), in, []int{0}},
		"no statistics":        {cpqTRewrite(t, ours, parquet.NewWriterProperties(parquet.WithStats(false))), in, []int{0, 1}},
		"one leaf without":     {cpqTRewrite(t, ours, parquet.NewWriterProperties(parquet.WithStatsFor("metaData.createdTime", false))), in, []int{0, 1}},
		"an add among removes": {mixedFile, mixed, []int{0, 1}},
	} {
		t.Run(name, func(t *testing.T) {
			got, read, err := decodeCheckpointParquet(tc.data, true)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(read, tc.read) {
				t.Errorf("decoded row groups %v, want %v", read, tc.read)
			}
			full, err := ReadCheckpointParquet(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			if len(full) != len(tc.in) {
				t.Fatalf("full read: %d actions, want %d", len(full), len(tc.in))
			}
			if diff := cmp.Diff(cpqTWithoutRemoves(full), got); diff != "" {
				t.Errorf("without removes vs full read (-full +got):\n%s", diff)
			}
		})
	}
}

// cpqTMixedFile writes actions as our writer does, except that the last
// action, an add, goes into the removes' row group.
func cpqTMixedFile(t *testing.T, actions []Action) []byte {
	t.Helper()
	fields, err := cpqCheckActions(actions)
	if err != nil {
		t.Fatal(err)
	}
	sc := arrow.NewSchema(fields, nil)
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(sc, &buf, cpqWriterProps(memory.DefaultAllocator), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer rb.Release()
	groups := cpqRowGroupsOf(actions[:len(actions)-1])
	if len(groups) != 2 {
		t.Fatalf("want 2 row groups, got %d", len(groups))
	}
	groups[1] = append(groups[1], len(actions)-1)
	for _, rows := range groups {
		if err := cpqWriteRowGroup(fw, rb, actions, rows); err != nil {
			t.Fatal(err)
		}
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReadCheckpointParquetRowNumbersAfterSkip: an error names the row's
// number in the file, not its position among the rows read.
func TestReadCheckpointParquetRowNumbersAfterSkip(t *testing.T) {
	addOK := []arrow.Field{
		cpqField("path", arrow.BinaryTypes.String),
		cpqField("size", arrow.PrimitiveTypes.Int64),
		cpqField("modificationTime", arrow.PrimitiveTypes.Int64),
		cpqField("dataChange", arrow.FixedWidthTypes.Boolean),
	}
	sc := cpqTSchema(cpqField("add", arrow.StructOf(addOK...)), cpqField("remove", arrow.StructOf(
		cpqField("path", arrow.BinaryTypes.String), cpqField("dataChange", arrow.FixedWidthTypes.Boolean))))
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(sc, &buf, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	for _, rows := range []string{
		`[{"remove": {"path": "r1", "dataChange": true}}, {"remove": {"path": "r2", "dataChange": true}},
		  {"remove": {"path": "r3", "dataChange": true}}]`,
		`[{"add": {"path": "a", "size": 1, "modificationTime": 1, "dataChange": true}},
		  {"add": {"path": "b", "size": null, "modificationTime": 1, "dataChange": true}}]`,
	} {
		rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, bytes.NewReader([]byte(rows)))
		if err != nil {
			t.Fatal(err)
		}
		if err := fw.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	_, read, err := decodeCheckpointParquet(buf.Bytes(), true)
	if !errors.Is(err, ErrCorruptLog) {
		t.Fatalf("want a corrupt log error, got %v", err)
	}
	if read != nil {
		t.Errorf("decoded row groups %v on error", read)
	}
	for _, skip := range []bool{true, false} {
		_, err := readCheckpointParquet(buf.Bytes(), skip)
		if err == nil || !strings.Contains(err.Error(), "row 4:") {
			t.Errorf("skipRemoves=%v: error %v does not name row 4", skip, err)
		}
	}
}

func TestCPQRowNumbers(t *testing.T) {
	// Row groups of 3, 2, 4 and 5 rows; reading 1 and 3 skips 3 rows, then 4.
	sc := cpqTSchema(cpqField("txn", cpqTxnType))
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(sc, &buf, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{3, 2, 4, 5} {
		rows := "[" + strings.TrimSuffix(strings.Repeat(`{"txn": null},`, n), ",") + "]"
		rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, bytes.NewReader([]byte(rows)))
		if err != nil {
			t.Fatal(err)
		}
		if err := fw.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	pf, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	n := newCPQRowNumbers(pf, []int{1, 3})
	var got []int
	for pos := 0; pos < 7; pos++ {
		got = append(got, n.file(pos))
	}
	if want := []int{3, 4, 9, 10, 11, 12, 13}; !slices.Equal(got, want) {
		t.Errorf("file rows %v, want %v", got, want)
	}
	all := newCPQRowNumbers(pf, []int{0, 1, 2, 3})
	for pos := 0; pos < 14; pos++ {
		if f := all.file(pos); f != pos {
			t.Errorf("reading everything: position %d is file row %d", pos, f)
		}
	}
}

// TestReadCheckpointParquetSharedSkipRemoves: every Parquet checkpoint and
// sidecar of the shared tables (Spark's, delta-kernel's) reads without
// removes exactly as the full read minus its removes.
func TestReadCheckpointParquetSharedSkipRemoves(t *testing.T) {
	var files []string
	for _, g := range collectGoldenTables(t) {
		for _, pattern := range []string{"*.parquet", "_sidecars/*.parquet"} {
			m, _ := filepath.Glob(filepath.Join(g.root, logDir, pattern))
			files = append(files, m...)
		}
	}
	compared, skipped := 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		full, err := ReadCheckpointParquet(data)
		if err != nil {
			t.Logf("%s: %v (not compared)", f, err)
			continue
		}
		got, read, err := decodeCheckpointParquet(data, true)
		if err != nil {
			t.Errorf("%s: without removes: %v", f, err)
			continue
		}
		if diff := cmp.Diff(cpqTWithoutRemoves(full), got); diff != "" {
			t.Errorf("%s: without removes vs full read (-full +got):\n%s", f, diff)
		}
		if pf, err := file.NewParquetReader(bytes.NewReader(data)); err == nil && len(read) < pf.NumRowGroups() {
			skipped++
		}
		compared++
	}
	if compared < 20 {
		t.Fatalf("compared only %d checkpoint files", compared)
	}
	t.Logf("compared %d checkpoint files, %d with row groups skipped", compared, skipped)
}

// TestCheckpointLongHistoryOpens: a table whose checkpoint holds many
// tombstones opens with exactly its live files, and a snapshot that keeps
// tombstones (as the next checkpoint needs) still has every one.
func TestCheckpointLongHistoryOpens(t *testing.T) {
	ctx := context.Background()
	store, err := NewLocalStorage(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	schema := &StructType{Fields: []*StructField{{Name: "id", Type: TypeLong}}}
	if _, err := Create(ctx, store, CreateOptions{Schema: schema}); err != nil {
		t.Fatal(err)
	}
	table := NewTable(store)
	const versions, live = 300, 20
	now := time.Now().UnixMilli()
	for v := int64(1); v <= versions; v++ {
		actions := []Action{{Add: &Add{Path: fmt.Sprintf("part-%05d.parquet", v), Size: v, ModificationTime: now, DataChange: true}}}
		if v > live {
			actions = append(actions, Action{Remove: &Remove{Path: fmt.Sprintf("part-%05d.parquet", v-live), DeletionTimestamp: &now, DataChange: true}})
		}
		data, err := EncodeActions(actions)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.PutIfAbsent(ctx, commitKey(v), data); err != nil {
			t.Fatal(err)
		}
	}
	if err := table.Checkpoint(ctx, versions); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(store.LocalPath(checkpointKey(versions)))
	if err != nil {
		t.Fatal(err)
	}
	if _, read, err := decodeCheckpointParquet(data, true); err != nil || !slices.Equal(read, []int{0}) {
		t.Fatalf("opening decodes row groups %v (%v), want the tombstones' skipped", read, err)
	}

	snap, err := NewTable(store).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range snap.Files() {
		paths = append(paths, f.Path)
	}
	var want []string
	for v := versions - live + 1; v <= versions; v++ {
		want = append(want, fmt.Sprintf("part-%05d.parquet", v))
	}
	if snap.Version != versions || !slices.Equal(paths, want) {
		t.Fatalf("version %d files %v, want version %d files %v", snap.Version, paths, versions, want)
	}

	withTombstones, err := NewTable(store).snapshot(ctx, versions, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(withTombstones.tombstones); got != versions-live {
		t.Fatalf("%d tombstones, want %d", got, versions-live)
	}
	for i, r := range withTombstones.tombstones {
		if want := fmt.Sprintf("part-%05d.parquet", i+1); r.Path != want {
			t.Fatalf("tombstone %d is %s, want %s", i, r.Path, want)
		}
	}
}
