package delta

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// Checkpoint Parquet files (PROTOCOL.md "Checkpoints", "Checkpoint Schema").
//
// A checkpoint holds one action per row: each row has at most one non-null
// top-level struct column (txn, add, remove, metaData, protocol, ...). We go
// through Arrow (pqarrow) and walk the arrays directly instead of converting
// rows to JSON, because opening a large table is dominated by this decode.
//
// Collections the protocol makes mandatory (add.partitionValues,
// metaData.partitionColumns, metaData.configuration, metaData.format.options)
// are canonical as non-nil: the reader returns them empty rather than nil, and
// the writer writes nil as empty, because strict readers (Spark, kernels)
// reject a null there. Optional ones (tags, remove.partitionValues,
// protocol.readerFeatures/writerFeatures) keep the difference between nil and
// empty in both directions.

// cpqFields names, per top-level column, the struct fields we decode.
// Only these leaves are read from the file: stats_parsed,
// partitionValues_parsed and anything unknown are never decompressed.
var cpqFields = map[string][]string{
	"txn": {"appId", "version", "lastUpdated"},
	"add": {"path", "partitionValues", "size", "modificationTime", "dataChange", "stats", "tags",
		"deletionVector", "baseRowId", "defaultRowCommitVersion", "clusteringProvider"},
	"remove": {"path", "deletionTimestamp", "dataChange", "extendedFileMetadata", "partitionValues", "size",
		"stats", "tags", "deletionVector", "baseRowId", "defaultRowCommitVersion"},
	"metaData":           {"id", "name", "description", "format", "schemaString", "partitionColumns", "configuration", "createdTime"},
	"protocol":           {"minReaderVersion", "minWriterVersion", "readerFeatures", "writerFeatures"},
	"domainMetadata":     {"domain", "configuration", "removed"},
	"checkpointMetadata": {"version", "tags"},
	"sidecar":            {"path", "sizeInBytes", "modificationTime", "tags"},
	"cdc":                {"path", "partitionValues", "size", "dataChange", "tags"},
}

// cpqReadBatch bounds the rows decoded at once, so memory stays flat
// for huge checkpoints while batches stay large enough to amortise overhead.
const cpqReadBatch = 64 << 10

// ReadCheckpointParquet decodes a Parquet checkpoint into actions, in file
// order: a classic checkpoint (single file or one part of a multi-part one), a
// V2 checkpoint in Parquet, or a Parquet sidecar. Columns we do not model are
// not read. Anything malformed is an error wrapping ErrCorruptLog.
func ReadCheckpointParquet(data []byte) (actions []Action, err error) {
	return readCheckpointParquet(data, false)
}

// readCheckpointParquet can leave out the remove column: a reader needs no
// tombstones from a checkpoint, and skipping them keeps opening a table with
// a long history of rewrites as cheap as opening a young one. Without
// removes it also skips the row groups that statistics prove hold nothing
// else (see cpqRowGroups): a checkpoint we write keeps its tombstones in row
// groups of their own, and those are most of the file.
func readCheckpointParquet(data []byte, skipRemoves bool) ([]Action, error) {
	actions, _, err := decodeCheckpointParquet(data, skipRemoves)
	return actions, err
}

// decodeCheckpointParquet is readCheckpointParquet that also tells which
// row groups it decoded, so tests can see what was skipped.
func decodeCheckpointParquet(data []byte, skipRemoves bool) (actions []Action, rowGroups []int, err error) {
	// arrow-go trusts the file in places (lengths, offsets); a hostile or torn
	// file must surface as a corrupt log, not bring the process down.
	defer func() {
		if r := recover(); r != nil {
			actions, rowGroups, err = nil, nil, corrupt("checkpoint parquet: %v", r)
		}
	}()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return nil, nil, corrupt("checkpoint parquet: %v", err)
	}
	defer pf.Close()
	if pf.NumRows() < 0 {
		return nil, nil, corrupt("checkpoint parquet: negative row count")
	}

	groups, err := cpqLeaves(pf.MetaData().Schema)
	if err != nil {
		return nil, nil, err
	}
	if skipRemoves {
		groups = slices.DeleteFunc(groups, func(g cpqGroup) bool { return g.name == "remove" })
	}
	if len(groups) == 0 {
		return nil, nil, nil // only removes, and the caller wants none
	}
	rowGroups, rows, err := cpqRowGroups(pf, groups, skipRemoves)
	if err != nil {
		return nil, nil, err
	}
	var leaves []int
	for _, g := range groups {
		if err := cpqPreflight(pf, g.leaves, rowGroups); err != nil {
			return nil, nil, err
		}
		present, err := cpqPresent(pf, g, rowGroups)
		if err != nil {
			return nil, nil, err
		}
		if present {
			leaves = append(leaves, g.leaves...)
		}
	}
	if len(leaves) == 0 || rows == 0 {
		// No row holds an action we model (only commitInfo, say).
		return nil, nil, nil
	}
	// pqarrow reserves every leaf for a whole batch (rounded up to a power of
	// two); a batch of exactly the rows read avoids over-reserving, and
	// pre-sizing string data avoids regrowing it.
	props := pqarrow.ArrowReadProperties{BatchSize: min(rows, cpqReadBatch), PreAllocBinaryData: true}
	fr, err := pqarrow.NewFileReader(pf, props, memory.DefaultAllocator)
	if err != nil {
		return nil, nil, corrupt("checkpoint parquet: %v", err)
	}
	rr, err := fr.GetRecordReader(context.Background(), leaves, rowGroups)
	if err != nil {
		return nil, nil, corrupt("checkpoint parquet: %v", err)
	}
	defer rr.Release()

	// NumRows comes from the footer: trust it as a capacity hint only as far
	// as the file is big enough to hold that many rows (real checkpoints take
	// ten bytes a row or more), so a forged footer cannot make us allocate.
	out := make([]Action, 0, min(rows, int64(len(data)/4+1)))
	numbers := newCPQRowNumbers(pf, rowGroups)
	row := 0
	for rr.Next() {
		rec := rr.RecordBatch()
		dec, err := newCPQBatch(rec)
		if err != nil {
			return nil, nil, err
		}
		n := int(rec.NumRows())
		for i := 0; i < n; i++ {
			// Decode in place: no Action copy, nothing escapes per row.
			out = append(out, Action{})
			ok, err := dec.decodeRow(i, numbers.file(row+i), &out[len(out)-1])
			if err != nil {
				return nil, nil, err
			}
			if !ok {
				out = out[:len(out)-1]
			}
		}
		row += n
	}
	if err := rr.Err(); err != nil {
		return nil, nil, corrupt("checkpoint parquet: %v", err)
	}
	if int64(row) != rows {
		return nil, nil, corrupt("checkpoint parquet: read %d rows, footer says %d", row, rows)
	}
	return out, rowGroups, nil
}

// cpqRowGroups picks the row groups to read and counts their rows.
//
// With skipRemoves it leaves out a row group when its column statistics
// prove that every leaf the groups read is null in every row: then no row
// there holds an action we decode. That holds for a valid file because
// every action we decode has a required field among those leaves (add.path,
// txn.appId, metaData.id, protocol.minReaderVersion, ...), which is not
// null when the action is set. A row group is read whenever the statistics
// are missing, unusable or say otherwise, so checkpoints of other writers
// (Spark mixes every action in one row group) and our own older ones, which
// carry no statistics, read exactly as before; and when nothing is skipped
// the row count checked is the footer's, as it always was.
func cpqRowGroups(pf *file.Reader, groups []cpqGroup, skipRemoves bool) (rowGroups []int, rows int64, err error) {
	md := pf.MetaData()
	ncols := md.Schema.NumColumns()
	var needed []int
	canSkip := skipRemoves
	for _, g := range groups {
		// A required struct is set in every row, whatever its leaves hold.
		canSkip = canSkip && g.optional
		needed = append(needed, g.leaves...)
	}
	var total int64
	for rg := 0; rg < pf.NumRowGroups(); rg++ {
		rmd := md.RowGroup(rg)
		if got := rmd.NumColumns(); got != ncols {
			return nil, 0, corrupt("checkpoint parquet: row group %d has %d columns, schema has %d", rg, got, ncols)
		}
		if rmd.NumRows() < 0 {
			return nil, 0, corrupt("checkpoint parquet: row group %d has a negative row count", rg)
		}
		total += rmd.NumRows()
		if canSkip && cpqAllNull(rmd, needed) {
			continue
		}
		rowGroups = append(rowGroups, rg)
		rows += rmd.NumRows()
	}
	if len(rowGroups) == pf.NumRowGroups() {
		return rowGroups, pf.NumRows(), nil
	}
	if total != pf.NumRows() {
		return nil, 0, corrupt("checkpoint parquet: row groups hold %d rows, footer says %d", total, pf.NumRows())
	}
	return rowGroups, rows, nil
}

// cpqAllNull tells whether the row group's statistics prove every value of
// each leaf null: a null count equal to the chunk's value count, for every
// leaf. Absent statistics, statistics arrow-go deems unreliable for the
// writer's version, a missing null count, or anything odd about the chunk
// (a panic while decoding its statistics included) mean "not proven".
func cpqAllNull(rmd *metadata.RowGroupMetaData, leaves []int) (proven bool) {
	defer func() {
		if recover() != nil {
			proven = false
		}
	}()
	if rmd.NumRows() == 0 {
		return true
	}
	for _, c := range leaves {
		cc, err := rmd.ColumnChunk(c)
		if err != nil {
			return false
		}
		st, err := cc.Statistics()
		if err != nil || st == nil || !st.HasNullCount() {
			return false
		}
		// Each row gives a leaf at least one value (null or not), so fewer
		// values than rows is a chunk we do not understand.
		if cc.NumValues() < rmd.NumRows() || st.NullCount() != cc.NumValues() {
			return false
		}
	}
	return true
}

// cpqRowNumbers turns a row's position among the rows read into its row
// number in the file, so that errors name the row a user would find there
// even when row groups before it were skipped.
type cpqRowNumbers struct {
	ends  []int // position just past each read row group, among rows read
	shift []int // file row number minus position, per read row group
	g     int   // current read row group; positions only move forward
}

func newCPQRowNumbers(pf *file.Reader, rowGroups []int) *cpqRowNumbers {
	n := &cpqRowNumbers{}
	var pos, fileRow, next int
	for _, rg := range rowGroups {
		for ; next < rg; next++ {
			fileRow += int(pf.MetaData().RowGroup(next).NumRows())
		}
		rows := int(pf.MetaData().RowGroup(rg).NumRows())
		n.shift = append(n.shift, fileRow-pos)
		pos += rows
		fileRow += rows
		next = rg + 1
		n.ends = append(n.ends, pos)
	}
	return n
}

// file is the file row number of the row at position pos; positions must
// not decrease from call to call.
func (n *cpqRowNumbers) file(pos int) int {
	for n.g < len(n.ends)-1 && pos >= n.ends[n.g] {
		n.g++
	}
	if len(n.shift) == 0 {
		return pos
	}
	return pos + n.shift[n.g]
}

// cpqLeaves picks the leaf columns under the fields we decode, grouped by
// top-level column in file order. A known top-level name that is not a group,
// or a file with no action column at all, is not a checkpoint.
func cpqLeaves(sc *schema.Schema) ([]cpqGroup, error) {
	root := sc.Root()
	var groups []cpqGroup
	byName := map[string]int{}
	for i := 0; i < root.NumFields(); i++ {
		f := root.Field(i)
		if _, ok := cpqFields[f.Name()]; !ok {
			continue
		}
		if f.Type() != schema.Group {
			return nil, corrupt("checkpoint parquet: column %q is not a struct", f.Name())
		}
		byName[f.Name()] = len(groups)
		groups = append(groups, cpqGroup{name: f.Name(), optional: f.RepetitionType() == parquet.Repetitions.Optional})
	}
	if len(groups) == 0 {
		return nil, corrupt("checkpoint parquet: no action columns")
	}
	for i := 0; i < sc.NumColumns(); i++ {
		p := sc.Column(i).ColumnPath()
		if len(p) < 2 {
			continue
		}
		if g, ok := byName[p[0]]; ok && slices.Contains(cpqFields[p[0]], p[1]) {
			groups[g].leaves = append(groups[g].leaves, i)
		}
	}
	return slices.DeleteFunc(groups, func(g cpqGroup) bool { return len(g.leaves) == 0 }), nil
}

// cpqGroup is one top-level action column and the leaves we read of it.
type cpqGroup struct {
	name     string
	optional bool
	leaves   []int
}

// cpqPresent tells whether any row of the row groups read has the group's
// struct set. A checkpoint of a big table is nearly all add rows; remove,
// domainMetadata and the like are often null throughout, and pqarrow would
// still build full-length arrays for each of their leaves. Reading the
// definition levels of one small leaf is far cheaper than that.
func cpqPresent(pf *file.Reader, g cpqGroup, rowGroups []int) (bool, error) {
	if !g.optional {
		return true, nil
	}
	for _, rg := range rowGroups {
		rgr := pf.RowGroup(rg)
		probe, best := -1, int64(math.MaxInt64)
		for _, c := range g.leaves {
			cc, err := rgr.MetaData().ColumnChunk(c)
			if err != nil {
				return false, corrupt("checkpoint parquet: row group %d column %d: %v", rg, c, err)
			}
			if sz := cc.TotalCompressedSize(); sz < best {
				probe, best = c, sz
			}
		}
		cr, err := rgr.Column(probe)
		if err != nil {
			return false, corrupt("checkpoint parquet: row group %d column %d: %v", rg, probe, err)
		}
		// The top-level struct is the first optional level below the root,
		// so definition level >= 1 means the struct is set in that row.
		found, err := cpqAnyDefined(cr, 1)
		if err != nil {
			return false, corrupt("checkpoint parquet: row group %d column %d: %v", rg, probe, err)
		}
		if found {
			return true, nil
		}
	}
	return false, nil
}

// cpqAnyDefined reports whether any definition level of the column chunk
// reaches level.
func cpqAnyDefined(cr file.ColumnChunkReader, level int16) (bool, error) {
	descr := cr.Descriptor()
	if descr.MaxDefinitionLevel() < level {
		return true, nil
	}
	const n = 4096
	defs := make([]int16, n)
	var reps []int16
	if descr.MaxRepetitionLevel() > 0 {
		reps = make([]int16, n)
	}
	var read func() (int64, error)
	switch r := cr.(type) {
	case *file.BooleanColumnChunkReader:
		v := make([]bool, n)
		read = func() (int64, error) { t, _, err := r.ReadBatch(n, v, defs, reps); return t, err }
	case *file.Int32ColumnChunkReader:
		v := make([]int32, n)
		read = func() (int64, error) { t, _, err := r.ReadBatch(n, v, defs, reps); return t, err }
	case *file.Int64ColumnChunkReader:
		v := make([]int64, n)
		read = func() (int64, error) { t, _, err := r.ReadBatch(n, v, defs, reps); return t, err }
	case *file.Int96ColumnChunkReader:
		v := make([]parquet.Int96, n)
		read = func() (int64, error) { t, _, err := r.ReadBatch(n, v, defs, reps); return t, err }
	case *file.Float32ColumnChunkReader:
		v := make([]float32, n)
		read = func() (int64, error) { t, _, err := r.ReadBatch(n, v, defs, reps); return t, err }
	case *file.Float64ColumnChunkReader:
		v := make([]float64, n)
		read = func() (int64, error) { t, _, err := r.ReadBatch(n, v, defs, reps); return t, err }
	case *file.ByteArrayColumnChunkReader:
		v := make([]parquet.ByteArray, n)
		read = func() (int64, error) { t, _, err := r.ReadBatch(n, v, defs, reps); return t, err }
	case *file.FixedLenByteArrayColumnChunkReader:
		v := make([]parquet.FixedLenByteArray, n)
		read = func() (int64, error) { t, _, err := r.ReadBatch(n, v, defs, reps); return t, err }
	default:
		return true, nil // unknown reader: let pqarrow read it
	}
	for {
		total, err := read()
		if err != nil {
			return false, err
		}
		if total <= 0 {
			return false, cr.Err()
		}
		for _, d := range defs[:min(total, n)] {
			if d >= level {
				return true, nil
			}
		}
	}
}

// cpqPreflight touches the footer metadata of every chunk we will read.
// pqarrow sets up nested column readers on goroutines, where a panic from a
// malformed footer could not be recovered; doing this first on our goroutine
// turns such files into errors. cpqRowGroups has checked the row groups'
// column and row counts.
func cpqPreflight(pf *file.Reader, leaves []int, rowGroups []int) error {
	for _, rg := range rowGroups {
		rgr := pf.RowGroup(rg)
		for _, c := range leaves {
			if _, err := rgr.MetaData().ColumnChunk(c); err != nil {
				return corrupt("checkpoint parquet: row group %d column %d: %v", rg, c, err)
			}
			if _, err := rgr.GetColumnPageReader(c); err != nil {
				return corrupt("checkpoint parquet: row group %d column %d: %v", rg, c, err)
			}
		}
	}
	return nil
}

// cpqDecoder decodes one top-level column of a record batch.
type cpqDecoder interface {
	name() string
	valid(i int) bool
	decode(i, row int, a *Action) error
}

// cpqBatch holds the decoders for the action columns of one batch.
type cpqBatch struct {
	decs []cpqDecoder
}

func newCPQBatch(rec arrow.RecordBatch) (*cpqBatch, error) {
	b := &cpqBatch{}
	sc := rec.Schema()
	for i, f := range sc.Fields() {
		if _, ok := cpqFields[f.Name]; !ok {
			continue
		}
		st, ok := rec.Column(i).(*array.Struct)
		if !ok {
			return nil, corrupt("checkpoint parquet: column %q is %s, not a struct", f.Name, f.Type)
		}
		var (
			d   cpqDecoder
			err error
		)
		switch f.Name {
		case "txn":
			d, err = newCPQTxnDec(st)
		case "add":
			d, err = newCPQAddDec(st)
		case "remove":
			d, err = newCPQRemoveDec(st)
		case "metaData":
			d, err = newCPQMetadataDec(st)
		case "protocol":
			d, err = newCPQProtocolDec(st)
		case "domainMetadata":
			d, err = newCPQDomainDec(st)
		case "checkpointMetadata":
			d, err = newCPQCkptMetaDec(st)
		case "sidecar":
			d, err = newCPQSidecarDec(st)
		case "cdc":
			d, err = newCPQCDCDec(st)
		}
		if err != nil {
			return nil, err
		}
		b.decs = append(b.decs, d)
	}
	return b, nil
}

// decodeRow decodes row i into a; ok is false for a row without any action
// we model (e.g. only commitInfo).
func (b *cpqBatch) decodeRow(i, row int, a *Action) (ok bool, err error) {
	var first cpqDecoder
	for _, d := range b.decs {
		if !d.valid(i) {
			continue
		}
		if first != nil {
			return false, corrupt("checkpoint row %d: both %s and %s are set", row, first.name(), d.name())
		}
		first = d
		if err := d.decode(i, row, a); err != nil {
			return false, err
		}
	}
	if first == nil {
		return false, nil
	}
	if err := a.validate(); err != nil {
		return false, corrupt("checkpoint row %d: %v", row, err)
	}
	return true, nil
}

// ---- column views -------------------------------------------------------
//
// Each view wraps one Arrow child array (nil when the file lacks the field,
// which reads as all-null) and checks its type once per batch, so the per-row
// work is plain slice indexing.

// cpqChild returns the child named name, or nil.
func cpqChild(st *array.Struct, name string) arrow.Array {
	if st == nil {
		return nil
	}
	idx, ok := st.DataType().(*arrow.StructType).FieldIdx(name)
	if !ok {
		return nil
	}
	return st.Field(idx)
}

func cpqValid(a arrow.Array, i int) bool { return a != nil && a.IsValid(i) }

// cpqStrCol reads a string or binary column. The value bytes of the batch are
// copied to one Go string once, and values are substrings of it: no
// allocation per value, and nothing aliases Arrow buffers.
type cpqStrCol struct {
	name  string
	arr   arrow.Array
	off32 []int32
	off64 []int64
	data  string
}

func newCPQStrCol(name string, a arrow.Array) (cpqStrCol, error) {
	c := cpqStrCol{name: name, arr: a}
	switch a := a.(type) {
	case nil:
	case *array.String:
		c.off32, c.data = a.ValueOffsets(), string(a.ValueBytes())
	case *array.Binary:
		c.off32, c.data = a.ValueOffsets(), string(a.ValueBytes())
	case *array.LargeString:
		c.off64, c.data = a.ValueOffsets(), string(a.ValueBytes())
	case *array.LargeBinary:
		c.off64, c.data = a.ValueOffsets(), string(a.ValueBytes())
	case *array.Null:
	default:
		return c, corrupt("checkpoint parquet: %s has type %s, want string", name, a.DataType())
	}
	return c, nil
}

// get returns value i and whether it is non-null.
func (c *cpqStrCol) get(i int) (string, bool) {
	if !cpqValid(c.arr, i) {
		return "", false
	}
	if c.off32 != nil {
		base := c.off32[0]
		return c.data[c.off32[i]-base : c.off32[i+1]-base], true
	}
	if c.off64 != nil {
		base := c.off64[0]
		return c.data[c.off64[i]-base : c.off64[i+1]-base], true
	}
	return "", false // a Null-typed column
}

func (c *cpqStrCol) req(i, row int) (string, error) {
	s, ok := c.get(i)
	if !ok {
		return "", corrupt("checkpoint row %d: %s is null", row, c.name)
	}
	return s, nil
}

func (c *cpqStrCol) opt(i int) *string {
	s, ok := c.get(i)
	if !ok {
		return nil
	}
	return &s
}

// cpqIntCol reads any integer column as int64: Spark writes int where the
// protocol says long in some versions (and other writers the reverse).
type cpqIntCol struct {
	name string
	arr  arrow.Array
	v    []int64
}

func newCPQIntCol(name string, a arrow.Array) (cpqIntCol, error) {
	c := cpqIntCol{name: name, arr: a}
	widen := func(n int, at func(int) int64) {
		c.v = make([]int64, n)
		for i := range c.v {
			c.v[i] = at(i)
		}
	}
	switch a := a.(type) {
	case nil, *array.Null:
		c.arr = nil
	case *array.Int64:
		c.v = a.Int64Values()
	case *array.Int32:
		vs := a.Int32Values()
		widen(len(vs), func(i int) int64 { return int64(vs[i]) })
	case *array.Int16:
		vs := a.Int16Values()
		widen(len(vs), func(i int) int64 { return int64(vs[i]) })
	case *array.Int8:
		vs := a.Int8Values()
		widen(len(vs), func(i int) int64 { return int64(vs[i]) })
	case *array.Uint32:
		vs := a.Uint32Values()
		widen(len(vs), func(i int) int64 { return int64(vs[i]) })
	case *array.Uint16:
		vs := a.Uint16Values()
		widen(len(vs), func(i int) int64 { return int64(vs[i]) })
	case *array.Uint8:
		vs := a.Uint8Values()
		widen(len(vs), func(i int) int64 { return int64(vs[i]) })
	case *array.Uint64:
		vs := a.Uint64Values()
		for i, v := range vs {
			if v > math.MaxInt64 && a.IsValid(i) {
				return c, corrupt("checkpoint parquet: %s value %d overflows a long", name, v)
			}
		}
		widen(len(vs), func(i int) int64 { return int64(vs[i]) })
	default:
		return c, corrupt("checkpoint parquet: %s has type %s, want an integer", name, a.DataType())
	}
	return c, nil
}

func (c *cpqIntCol) get(i int) (int64, bool) {
	if !cpqValid(c.arr, i) {
		return 0, false
	}
	return c.v[i], true
}

func (c *cpqIntCol) req(i, row int) (int64, error) {
	v, ok := c.get(i)
	if !ok {
		return 0, corrupt("checkpoint row %d: %s is null", row, c.name)
	}
	return v, nil
}

func (c *cpqIntCol) opt(i int) *int64 {
	v, ok := c.get(i)
	if !ok {
		return nil
	}
	return &v
}

// req32 is req for fields the protocol types as int.
func (c *cpqIntCol) req32(i, row int) (int32, error) {
	v, err := c.req(i, row)
	if err != nil {
		return 0, err
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, corrupt("checkpoint row %d: %s value %d overflows an int", row, c.name, v)
	}
	return int32(v), nil
}

type cpqBoolCol struct {
	name string
	arr  *array.Boolean
}

func newCPQBoolCol(name string, a arrow.Array) (cpqBoolCol, error) {
	switch a := a.(type) {
	case nil, *array.Null:
		return cpqBoolCol{name: name}, nil
	case *array.Boolean:
		return cpqBoolCol{name: name, arr: a}, nil
	default:
		return cpqBoolCol{}, corrupt("checkpoint parquet: %s has type %s, want boolean", name, a.DataType())
	}
}

func (c *cpqBoolCol) get(i int) (bool, bool) {
	if c.arr == nil || c.arr.IsNull(i) {
		return false, false
	}
	return c.arr.Value(i), true
}

func (c *cpqBoolCol) req(i, row int) (bool, error) {
	v, ok := c.get(i)
	if !ok {
		return false, corrupt("checkpoint row %d: %s is null", row, c.name)
	}
	return v, nil
}

func (c *cpqBoolCol) opt(i int) *bool {
	v, ok := c.get(i)
	if !ok {
		return nil
	}
	return &v
}

// cpqMapCol reads a map<string,string> column.
type cpqMapCol struct {
	name  string
	arr   *array.Map
	keys  cpqStrCol
	items cpqStrCol
	// slab backs the *string values of all maps in the batch: one allocation
	// per batch instead of one per value.
	slab []string
}

func newCPQMapCol(name string, a arrow.Array) (cpqMapCol, error) {
	c := cpqMapCol{name: name}
	switch a := a.(type) {
	case nil, *array.Null:
		return c, nil
	case *array.Map:
		c.arr = a
	default:
		return c, corrupt("checkpoint parquet: %s has type %s, want map<string,string>", name, a.DataType())
	}
	var err error
	if c.keys, err = newCPQStrCol(name+".key", c.arr.Keys()); err != nil {
		return c, err
	}
	if c.items, err = newCPQStrCol(name+".value", c.arr.Items()); err != nil {
		return c, err
	}
	return c, nil
}

// entries returns the [start,end) item range of row i, or ok=false when null.
func (c *cpqMapCol) entries(i int) (start, end int, ok bool) {
	if c.arr == nil || c.arr.IsNull(i) {
		return 0, 0, false
	}
	s, e := c.arr.ValueOffsets(i)
	return int(s), int(e), true
}

// get returns the map of row i with nil values for null entries; nil when null.
func (c *cpqMapCol) get(i, row int) (map[string]*string, error) {
	start, end, ok := c.entries(i)
	if !ok {
		return nil, nil
	}
	m := make(map[string]*string, end-start)
	for j := start; j < end; j++ {
		k, ok := c.keys.get(j)
		if !ok {
			return nil, corrupt("checkpoint row %d: %s has a null key", row, c.name)
		}
		v, ok := c.items.get(j)
		if !ok {
			m[k] = nil
			continue
		}
		if c.slab == nil {
			c.slab = make([]string, c.items.arr.Len())
		}
		c.slab[j] = v
		m[k] = &c.slab[j]
	}
	return m, nil
}

// getNonNil is get for maps the protocol requires: null reads as empty.
func (c *cpqMapCol) getNonNil(i, row int) (map[string]*string, error) {
	m, err := c.get(i, row)
	if m == nil && err == nil {
		m = map[string]*string{}
	}
	return m, err
}

// getPlain returns the map of row i for map[string]string fields; a null value
// reads as "", as it does from a JSON commit.
func (c *cpqMapCol) getPlain(i, row int) (map[string]string, bool, error) {
	start, end, ok := c.entries(i)
	if !ok {
		return nil, false, nil
	}
	m := make(map[string]string, end-start)
	for j := start; j < end; j++ {
		k, ok := c.keys.get(j)
		if !ok {
			return nil, false, corrupt("checkpoint row %d: %s has a null key", row, c.name)
		}
		v, _ := c.items.get(j)
		m[k] = v
	}
	return m, true, nil
}

// cpqListCol reads an array<string> column.
type cpqListCol struct {
	name  string
	arr   array.ListLike
	elems cpqStrCol
}

func newCPQListCol(name string, a arrow.Array) (cpqListCol, error) {
	c := cpqListCol{name: name}
	switch a := a.(type) {
	case nil, *array.Null:
		return c, nil
	case *array.List:
		c.arr = a
	case *array.LargeList:
		c.arr = a
	default:
		return c, corrupt("checkpoint parquet: %s has type %s, want array<string>", name, a.DataType())
	}
	var err error
	c.elems, err = newCPQStrCol(name+".element", c.arr.ListValues())
	return c, err
}

// get returns the list of row i, nil when null; a null element is corrupt.
func (c *cpqListCol) get(i, row int) ([]string, error) {
	if c.arr == nil || c.arr.IsNull(i) {
		return nil, nil
	}
	s, e := c.arr.ValueOffsets(i)
	out := make([]string, 0, e-s)
	for j := int(s); j < int(e); j++ {
		v, ok := c.elems.get(j)
		if !ok {
			return nil, corrupt("checkpoint row %d: %s has a null element", row, c.name)
		}
		out = append(out, v)
	}
	return out, nil
}

// cpqStruct is a nested struct column (add.deletionVector, metaData.format).
func cpqStruct(name string, a arrow.Array) (*array.Struct, error) {
	switch a := a.(type) {
	case nil, *array.Null:
		return nil, nil
	case *array.Struct:
		return a, nil
	default:
		return nil, corrupt("checkpoint parquet: %s has type %s, want a struct", name, a.DataType())
	}
}

// cpqCols collects the first type error while a decoder is being built, so
// the constructors stay one line per field.
type cpqCols struct {
	st     *array.Struct
	prefix string
	err    error
}

func (e *cpqCols) str(name string) cpqStrCol {
	c, err := newCPQStrCol(e.prefix+name, cpqChild(e.st, name))
	e.keep(err)
	return c
}

func (e *cpqCols) int(name string) cpqIntCol {
	c, err := newCPQIntCol(e.prefix+name, cpqChild(e.st, name))
	e.keep(err)
	return c
}

func (e *cpqCols) bool(name string) cpqBoolCol {
	c, err := newCPQBoolCol(e.prefix+name, cpqChild(e.st, name))
	e.keep(err)
	return c
}

func (e *cpqCols) mapc(name string) cpqMapCol {
	c, err := newCPQMapCol(e.prefix+name, cpqChild(e.st, name))
	e.keep(err)
	return c
}

func (e *cpqCols) list(name string) cpqListCol {
	c, err := newCPQListCol(e.prefix+name, cpqChild(e.st, name))
	e.keep(err)
	return c
}

func (e *cpqCols) strct(name string) *array.Struct {
	c, err := cpqStruct(e.prefix+name, cpqChild(e.st, name))
	e.keep(err)
	return c
}

func (e *cpqCols) keep(err error) {
	if e.err == nil {
		e.err = err
	}
}

// ---- per-action decoders --------------------------------------------------

type cpqDVDec struct {
	st                          *array.Struct
	storageType, pathOrInlineDv cpqStrCol
	offset, sizeInBytes         cpqIntCol
	cardinality, maxRowIndex    cpqIntCol
}

func newCPQDVDec(prefix string, st *array.Struct) (cpqDVDec, error) {
	e := cpqCols{st: st, prefix: prefix + "."}
	d := cpqDVDec{
		st:             st,
		storageType:    e.str("storageType"),
		pathOrInlineDv: e.str("pathOrInlineDv"),
		offset:         e.int("offset"),
		sizeInBytes:    e.int("sizeInBytes"),
		cardinality:    e.int("cardinality"),
		maxRowIndex:    e.int("maxRowIndex"),
	}
	return d, e.err
}

func (d *cpqDVDec) get(i, row int) (*DeletionVectorDescriptor, error) {
	if d.st == nil || d.st.IsNull(i) {
		return nil, nil
	}
	var dv DeletionVectorDescriptor
	var err error
	if dv.StorageType, err = d.storageType.req(i, row); err != nil {
		return nil, err
	}
	if dv.PathOrInlineDv, err = d.pathOrInlineDv.req(i, row); err != nil {
		return nil, err
	}
	if _, ok := d.offset.get(i); ok {
		off, err := d.offset.req32(i, row)
		if err != nil {
			return nil, err
		}
		dv.Offset = &off
	}
	if dv.SizeInBytes, err = d.sizeInBytes.req32(i, row); err != nil {
		return nil, err
	}
	if dv.Cardinality, err = d.cardinality.req(i, row); err != nil {
		return nil, err
	}
	dv.MaxRowIndex = d.maxRowIndex.opt(i)
	return &dv, nil
}

type cpqAddDec struct {
	st                          *array.Struct
	path, stats, clustering     cpqStrCol
	partitionValues, tags       cpqMapCol
	size, modTime               cpqIntCol
	baseRowID, defaultRowCommit cpqIntCol
	dataChange                  cpqBoolCol
	dv                          cpqDVDec
	slab                        []Add
}

func newCPQAddDec(st *array.Struct) (*cpqAddDec, error) {
	e := cpqCols{st: st, prefix: "add."}
	d := &cpqAddDec{
		st:               st,
		path:             e.str("path"),
		stats:            e.str("stats"),
		clustering:       e.str("clusteringProvider"),
		partitionValues:  e.mapc("partitionValues"),
		tags:             e.mapc("tags"),
		size:             e.int("size"),
		modTime:          e.int("modificationTime"),
		baseRowID:        e.int("baseRowId"),
		defaultRowCommit: e.int("defaultRowCommitVersion"),
		dataChange:       e.bool("dataChange"),
	}
	dvst := e.strct("deletionVector")
	if e.err != nil {
		return nil, e.err
	}
	var err error
	d.dv, err = newCPQDVDec("add.deletionVector", dvst)
	return d, err
}

func (d *cpqAddDec) name() string     { return "add" }
func (d *cpqAddDec) valid(i int) bool { return d.st.IsValid(i) }

func (d *cpqAddDec) decode(i, row int, a *Action) error {
	// Adds dominate checkpoints: carve them from one slice per batch.
	if d.slab == nil {
		d.slab = make([]Add, 0, d.st.Len()-d.st.NullN())
	}
	if len(d.slab) == cap(d.slab) {
		d.slab = make([]Add, 0, 64)
	}
	d.slab = append(d.slab, Add{})
	add := &d.slab[len(d.slab)-1]
	var err error
	if add.Path, err = d.path.req(i, row); err != nil {
		return err
	}
	if add.PartitionValues, err = d.partitionValues.getNonNil(i, row); err != nil {
		return err
	}
	if add.Size, err = d.size.req(i, row); err != nil {
		return err
	}
	if add.ModificationTime, err = d.modTime.req(i, row); err != nil {
		return err
	}
	if add.DataChange, err = d.dataChange.req(i, row); err != nil {
		return err
	}
	add.Stats, _ = d.stats.get(i)
	if add.Tags, err = d.tags.get(i, row); err != nil {
		return err
	}
	if add.DeletionVector, err = d.dv.get(i, row); err != nil {
		return err
	}
	add.BaseRowID = d.baseRowID.opt(i)
	add.DefaultRowCommitVersion = d.defaultRowCommit.opt(i)
	add.ClusteringProvider = d.clustering.opt(i)
	a.Add = add
	return nil
}

type cpqRemoveDec struct {
	st                          *array.Struct
	path, stats                 cpqStrCol
	partitionValues, tags       cpqMapCol
	deletionTimestamp, size     cpqIntCol
	baseRowID, defaultRowCommit cpqIntCol
	dataChange, extended        cpqBoolCol
	dv                          cpqDVDec
}

func newCPQRemoveDec(st *array.Struct) (*cpqRemoveDec, error) {
	e := cpqCols{st: st, prefix: "remove."}
	d := &cpqRemoveDec{
		st:                st,
		path:              e.str("path"),
		stats:             e.str("stats"),
		partitionValues:   e.mapc("partitionValues"),
		tags:              e.mapc("tags"),
		deletionTimestamp: e.int("deletionTimestamp"),
		size:              e.int("size"),
		baseRowID:         e.int("baseRowId"),
		defaultRowCommit:  e.int("defaultRowCommitVersion"),
		dataChange:        e.bool("dataChange"),
		extended:          e.bool("extendedFileMetadata"),
	}
	dvst := e.strct("deletionVector")
	if e.err != nil {
		return nil, e.err
	}
	var err error
	d.dv, err = newCPQDVDec("remove.deletionVector", dvst)
	return d, err
}

func (d *cpqRemoveDec) name() string     { return "remove" }
func (d *cpqRemoveDec) valid(i int) bool { return d.st.IsValid(i) }

func (d *cpqRemoveDec) decode(i, row int, a *Action) error {
	r := &Remove{}
	var err error
	if r.Path, err = d.path.req(i, row); err != nil {
		return err
	}
	r.DeletionTimestamp = d.deletionTimestamp.opt(i)
	if r.DataChange, err = d.dataChange.req(i, row); err != nil {
		return err
	}
	r.ExtendedFileMetadata = d.extended.opt(i)
	if r.PartitionValues, err = d.partitionValues.get(i, row); err != nil {
		return err
	}
	r.Size = d.size.opt(i)
	r.Stats, _ = d.stats.get(i)
	if r.Tags, err = d.tags.get(i, row); err != nil {
		return err
	}
	if r.DeletionVector, err = d.dv.get(i, row); err != nil {
		return err
	}
	r.BaseRowID = d.baseRowID.opt(i)
	r.DefaultRowCommitVersion = d.defaultRowCommit.opt(i)
	a.Remove = r
	return nil
}

type cpqMetadataDec struct {
	st                                 *array.Struct
	id, tableName, description, schema cpqStrCol
	formatSt                           *array.Struct
	provider                           cpqStrCol
	options, configuration             cpqMapCol
	partitionColumns                   cpqListCol
	createdTime                        cpqIntCol
}

func newCPQMetadataDec(st *array.Struct) (*cpqMetadataDec, error) {
	e := cpqCols{st: st, prefix: "metaData."}
	d := &cpqMetadataDec{
		st:               st,
		id:               e.str("id"),
		tableName:        e.str("name"),
		description:      e.str("description"),
		schema:           e.str("schemaString"),
		configuration:    e.mapc("configuration"),
		partitionColumns: e.list("partitionColumns"),
		createdTime:      e.int("createdTime"),
		formatSt:         e.strct("format"),
	}
	if e.err != nil {
		return nil, e.err
	}
	fe := cpqCols{st: d.formatSt, prefix: "metaData.format."}
	d.provider = fe.str("provider")
	d.options = fe.mapc("options")
	return d, fe.err
}

func (d *cpqMetadataDec) name() string     { return "metaData" }
func (d *cpqMetadataDec) valid(i int) bool { return d.st.IsValid(i) }

func (d *cpqMetadataDec) decode(i, row int, a *Action) error {
	m := &Metadata{}
	var err error
	if m.ID, err = d.id.req(i, row); err != nil {
		return err
	}
	m.Name = d.tableName.opt(i)
	m.Description = d.description.opt(i)
	if d.formatSt == nil || d.formatSt.IsNull(i) {
		return corrupt("checkpoint row %d: metaData.format is null", row)
	}
	if m.Format.Provider, err = d.provider.req(i, row); err != nil {
		return err
	}
	if m.Format.Options, _, err = d.options.getPlain(i, row); err != nil {
		return err
	}
	if m.Format.Options == nil {
		m.Format.Options = map[string]string{}
	}
	if m.SchemaString, err = d.schema.req(i, row); err != nil {
		return err
	}
	if m.PartitionColumns, err = d.partitionColumns.get(i, row); err != nil {
		return err
	}
	if m.PartitionColumns == nil {
		m.PartitionColumns = []string{}
	}
	m.CreatedTime = d.createdTime.opt(i)
	if m.Configuration, _, err = d.configuration.getPlain(i, row); err != nil {
		return err
	}
	if m.Configuration == nil {
		m.Configuration = map[string]string{}
	}
	a.MetaData = m
	return nil
}

type cpqProtocolDec struct {
	st                             *array.Struct
	minReader, minWriter           cpqIntCol
	readerFeatures, writerFeatures cpqListCol
}

func newCPQProtocolDec(st *array.Struct) (*cpqProtocolDec, error) {
	e := cpqCols{st: st, prefix: "protocol."}
	d := &cpqProtocolDec{
		st:             st,
		minReader:      e.int("minReaderVersion"),
		minWriter:      e.int("minWriterVersion"),
		readerFeatures: e.list("readerFeatures"),
		writerFeatures: e.list("writerFeatures"),
	}
	return d, e.err
}

func (d *cpqProtocolDec) name() string     { return "protocol" }
func (d *cpqProtocolDec) valid(i int) bool { return d.st.IsValid(i) }

func (d *cpqProtocolDec) decode(i, row int, a *Action) error {
	r, err := d.minReader.req32(i, row)
	if err != nil {
		return err
	}
	w, err := d.minWriter.req32(i, row)
	if err != nil {
		return err
	}
	if r < 0 || w < 0 {
		return corrupt("checkpoint row %d: negative protocol version %d/%d", row, r, w)
	}
	p := &Protocol{MinReaderVersion: int(r), MinWriterVersion: int(w)}
	if p.ReaderFeatures, err = d.readerFeatures.get(i, row); err != nil {
		return err
	}
	if p.WriterFeatures, err = d.writerFeatures.get(i, row); err != nil {
		return err
	}
	a.Protocol = p
	return nil
}

type cpqTxnDec struct {
	st                   *array.Struct
	appID                cpqStrCol
	version, lastUpdated cpqIntCol
}

func newCPQTxnDec(st *array.Struct) (*cpqTxnDec, error) {
	e := cpqCols{st: st, prefix: "txn."}
	d := &cpqTxnDec{st: st, appID: e.str("appId"), version: e.int("version"), lastUpdated: e.int("lastUpdated")}
	return d, e.err
}

func (d *cpqTxnDec) name() string     { return "txn" }
func (d *cpqTxnDec) valid(i int) bool { return d.st.IsValid(i) }

func (d *cpqTxnDec) decode(i, row int, a *Action) error {
	t := &Txn{}
	var err error
	if t.AppID, err = d.appID.req(i, row); err != nil {
		return err
	}
	if t.Version, err = d.version.req(i, row); err != nil {
		return err
	}
	t.LastUpdated = d.lastUpdated.opt(i)
	a.Txn = t
	return nil
}

type cpqDomainDec struct {
	st                    *array.Struct
	domain, configuration cpqStrCol
	removed               cpqBoolCol
}

func newCPQDomainDec(st *array.Struct) (*cpqDomainDec, error) {
	e := cpqCols{st: st, prefix: "domainMetadata."}
	d := &cpqDomainDec{st: st, domain: e.str("domain"), configuration: e.str("configuration"), removed: e.bool("removed")}
	return d, e.err
}

func (d *cpqDomainDec) name() string     { return "domainMetadata" }
func (d *cpqDomainDec) valid(i int) bool { return d.st.IsValid(i) }

func (d *cpqDomainDec) decode(i, row int, a *Action) error {
	dm := &DomainMetadata{}
	var err error
	if dm.Domain, err = d.domain.req(i, row); err != nil {
		return err
	}
	if dm.Configuration, err = d.configuration.req(i, row); err != nil {
		return err
	}
	if dm.Removed, err = d.removed.req(i, row); err != nil {
		return err
	}
	a.DomainMetadata = dm
	return nil
}

type cpqCkptMetaDec struct {
	st      *array.Struct
	version cpqIntCol
	tags    cpqMapCol
}

func newCPQCkptMetaDec(st *array.Struct) (*cpqCkptMetaDec, error) {
	e := cpqCols{st: st, prefix: "checkpointMetadata."}
	d := &cpqCkptMetaDec{st: st, version: e.int("version"), tags: e.mapc("tags")}
	return d, e.err
}

func (d *cpqCkptMetaDec) name() string     { return "checkpointMetadata" }
func (d *cpqCkptMetaDec) valid(i int) bool { return d.st.IsValid(i) }

func (d *cpqCkptMetaDec) decode(i, row int, a *Action) error {
	cm := &CheckpointMetadata{}
	var err error
	if cm.Version, err = d.version.req(i, row); err != nil {
		return err
	}
	if cm.Tags, err = d.tags.get(i, row); err != nil {
		return err
	}
	a.CheckpointMetadata = cm
	return nil
}

type cpqSidecarDec struct {
	st                        *array.Struct
	path                      cpqStrCol
	sizeInBytes, modification cpqIntCol
	tags                      cpqMapCol
}

func newCPQSidecarDec(st *array.Struct) (*cpqSidecarDec, error) {
	e := cpqCols{st: st, prefix: "sidecar."}
	d := &cpqSidecarDec{st: st, path: e.str("path"), sizeInBytes: e.int("sizeInBytes"),
		modification: e.int("modificationTime"), tags: e.mapc("tags")}
	return d, e.err
}

func (d *cpqSidecarDec) name() string     { return "sidecar" }
func (d *cpqSidecarDec) valid(i int) bool { return d.st.IsValid(i) }

func (d *cpqSidecarDec) decode(i, row int, a *Action) error {
	s := &Sidecar{}
	var err error
	if s.Path, err = d.path.req(i, row); err != nil {
		return err
	}
	if s.SizeInBytes, err = d.sizeInBytes.req(i, row); err != nil {
		return err
	}
	if s.ModificationTime, err = d.modification.req(i, row); err != nil {
		return err
	}
	if s.Tags, err = d.tags.get(i, row); err != nil {
		return err
	}
	a.Sidecar = s
	return nil
}

// cpqCDCDec exists only to tolerate checkpoints that carry a cdc column; the
// protocol keeps cdc out of checkpoints, so a row with it set is rare.
type cpqCDCDec struct {
	st                    *array.Struct
	path                  cpqStrCol
	partitionValues, tags cpqMapCol
	size                  cpqIntCol
	dataChange            cpqBoolCol
}

func newCPQCDCDec(st *array.Struct) (*cpqCDCDec, error) {
	e := cpqCols{st: st, prefix: "cdc."}
	d := &cpqCDCDec{st: st, path: e.str("path"), partitionValues: e.mapc("partitionValues"),
		tags: e.mapc("tags"), size: e.int("size"), dataChange: e.bool("dataChange")}
	return d, e.err
}

func (d *cpqCDCDec) name() string     { return "cdc" }
func (d *cpqCDCDec) valid(i int) bool { return d.st.IsValid(i) }

func (d *cpqCDCDec) decode(i, row int, a *Action) error {
	c := &CDC{}
	var err error
	if c.Path, err = d.path.req(i, row); err != nil {
		return err
	}
	if c.PartitionValues, err = d.partitionValues.getNonNil(i, row); err != nil {
		return err
	}
	if c.Size, err = d.size.req(i, row); err != nil {
		return err
	}
	if c.DataChange, err = d.dataChange.req(i, row); err != nil {
		return err
	}
	if c.Tags, err = d.tags.get(i, row); err != nil {
		return err
	}
	a.CDC = c
	return nil
}

// ---- writer ---------------------------------------------------------------

var (
	cpqStrMapType   = arrow.MapOf(arrow.BinaryTypes.String, arrow.BinaryTypes.String)
	cpqStrListType  = arrow.ListOf(arrow.BinaryTypes.String)
	cpqDVStructType = arrow.StructOf(
		cpqField("storageType", arrow.BinaryTypes.String),
		cpqField("pathOrInlineDv", arrow.BinaryTypes.String),
		cpqField("offset", arrow.PrimitiveTypes.Int32),
		cpqField("sizeInBytes", arrow.PrimitiveTypes.Int32),
		cpqField("cardinality", arrow.PrimitiveTypes.Int64),
		cpqField("maxRowIndex", arrow.PrimitiveTypes.Int64),
	)
	cpqTxnType = arrow.StructOf(
		cpqField("appId", arrow.BinaryTypes.String),
		cpqField("version", arrow.PrimitiveTypes.Int64),
		cpqField("lastUpdated", arrow.PrimitiveTypes.Int64),
	)
	cpqAddType = arrow.StructOf(
		cpqField("path", arrow.BinaryTypes.String),
		cpqField("partitionValues", cpqStrMapType),
		cpqField("size", arrow.PrimitiveTypes.Int64),
		cpqField("modificationTime", arrow.PrimitiveTypes.Int64),
		cpqField("dataChange", arrow.FixedWidthTypes.Boolean),
		cpqField("stats", arrow.BinaryTypes.String),
		cpqField("tags", cpqStrMapType),
		cpqField("deletionVector", cpqDVStructType),
		cpqField("baseRowId", arrow.PrimitiveTypes.Int64),
		cpqField("defaultRowCommitVersion", arrow.PrimitiveTypes.Int64),
		cpqField("clusteringProvider", arrow.BinaryTypes.String),
	)
	cpqRemoveType = arrow.StructOf(
		cpqField("path", arrow.BinaryTypes.String),
		cpqField("deletionTimestamp", arrow.PrimitiveTypes.Int64),
		cpqField("dataChange", arrow.FixedWidthTypes.Boolean),
		cpqField("extendedFileMetadata", arrow.FixedWidthTypes.Boolean),
		cpqField("partitionValues", cpqStrMapType),
		cpqField("size", arrow.PrimitiveTypes.Int64),
		cpqField("stats", arrow.BinaryTypes.String),
		cpqField("tags", cpqStrMapType),
		cpqField("deletionVector", cpqDVStructType),
		cpqField("baseRowId", arrow.PrimitiveTypes.Int64),
		cpqField("defaultRowCommitVersion", arrow.PrimitiveTypes.Int64),
	)
	cpqMetadataType = arrow.StructOf(
		cpqField("id", arrow.BinaryTypes.String),
		cpqField("name", arrow.BinaryTypes.String),
		cpqField("description", arrow.BinaryTypes.String),
		cpqField("format", arrow.StructOf(
			cpqField("provider", arrow.BinaryTypes.String),
			cpqField("options", cpqStrMapType),
		)),
		cpqField("schemaString", arrow.BinaryTypes.String),
		cpqField("partitionColumns", cpqStrListType),
		cpqField("configuration", cpqStrMapType),
		cpqField("createdTime", arrow.PrimitiveTypes.Int64),
	)
	cpqProtocolType = arrow.StructOf(
		cpqField("minReaderVersion", arrow.PrimitiveTypes.Int32),
		cpqField("minWriterVersion", arrow.PrimitiveTypes.Int32),
		cpqField("readerFeatures", cpqStrListType),
		cpqField("writerFeatures", cpqStrListType),
	)
	cpqDomainType = arrow.StructOf(
		cpqField("domain", arrow.BinaryTypes.String),
		cpqField("configuration", arrow.BinaryTypes.String),
		cpqField("removed", arrow.FixedWidthTypes.Boolean),
	)
	cpqCkptMetaType = arrow.StructOf(
		cpqField("version", arrow.PrimitiveTypes.Int64),
		cpqField("tags", cpqStrMapType),
	)
	cpqSidecarType = arrow.StructOf(
		cpqField("path", arrow.BinaryTypes.String),
		cpqField("sizeInBytes", arrow.PrimitiveTypes.Int64),
		cpqField("modificationTime", arrow.PrimitiveTypes.Int64),
		cpqField("tags", cpqStrMapType),
	)
)

// nf is a nullable field: Spark writes every checkpoint field as optional,
// and readers expect that.
func cpqField(name string, t arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: true}
}

// WriteCheckpointParquet writes actions, one per row, as a classic checkpoint
// Parquet file with the protocol's checkpoint schema, zstd-compressed.
// Columns txn, add, remove, metaData and protocol are always present;
// domainMetadata, checkpointMetadata and sidecar only when some action needs
// them. commitInfo and cdc never belong in a checkpoint and are refused.
//
// Rows are grouped by kind: first every action other than add and remove,
// then the adds, both in one row group, then the removes in a row group of
// their own, each kind in the order given. A checkpoint is reconciled
// state, in which no two actions cancel out, so the order of its rows means
// nothing (PROTOCOL.md sets none); the grouping lets a reader that needs no
// tombstones skip their row group by its statistics (readCheckpointParquet),
// and a table with a long history of rewrites keeps far more tombstones
// than live files.
func WriteCheckpointParquet(actions []Action) ([]byte, error) {
	fields, err := cpqCheckActions(actions)
	if err != nil {
		return nil, err
	}
	sc := arrow.NewSchema(fields, nil)
	mem := memory.DefaultAllocator
	var buf bytes.Buffer
	fw, err := pqarrow.NewFileWriter(sc, &buf, cpqWriterProps(mem), pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem)))
	if err != nil {
		return nil, fmt.Errorf("checkpoint parquet: %w", err)
	}
	rb := array.NewRecordBuilder(mem, sc)
	defer rb.Release()
	for _, rows := range cpqRowGroupsOf(actions) {
		if err := cpqWriteRowGroup(fw, rb, actions, rows); err != nil {
			fw.Close()
			return nil, err
		}
	}
	if err := fw.Close(); err != nil {
		return nil, fmt.Errorf("checkpoint parquet: %w", err)
	}
	return buf.Bytes(), nil
}

// cpqCheckActions checks that each action is a single valid checkpoint
// action and returns the columns the file needs.
func cpqCheckActions(actions []Action) ([]arrow.Field, error) {
	var hasDomain, hasCkptMeta, hasSidecar bool
	for i := range actions {
		a := &actions[i]
		n := 0
		for _, set := range []bool{a.Add != nil, a.Remove != nil, a.MetaData != nil, a.Protocol != nil,
			a.Txn != nil, a.DomainMetadata != nil, a.CheckpointMetadata != nil, a.Sidecar != nil} {
			if set {
				n++
			}
		}
		switch {
		case a.CommitInfo != nil || a.CDC != nil:
			return nil, fmt.Errorf("checkpoint action %d: commitInfo and cdc do not belong in a checkpoint", i)
		case n == 0:
			return nil, fmt.Errorf("checkpoint action %d: no action set", i)
		case n > 1:
			return nil, fmt.Errorf("checkpoint action %d: more than one action set", i)
		}
		if err := a.validate(); err != nil {
			return nil, fmt.Errorf("checkpoint action %d: %w", i, err)
		}
		hasDomain = hasDomain || a.DomainMetadata != nil
		hasCkptMeta = hasCkptMeta || a.CheckpointMetadata != nil
		hasSidecar = hasSidecar || a.Sidecar != nil
	}

	fields := []arrow.Field{cpqField("txn", cpqTxnType), cpqField("add", cpqAddType), cpqField("remove", cpqRemoveType),
		cpqField("metaData", cpqMetadataType), cpqField("protocol", cpqProtocolType)}
	if hasDomain {
		fields = append(fields, cpqField("domainMetadata", cpqDomainType))
	}
	if hasCkptMeta {
		fields = append(fields, cpqField("checkpointMetadata", cpqCkptMetaType))
	}
	if hasSidecar {
		fields = append(fields, cpqField("sidecar", cpqSidecarType))
	}
	return fields, nil
}

// cpqMaxStatsSize caps the min and max values kept in column statistics:
// numbers keep theirs, long strings (paths, JSON stats, schemas) lose them,
// as nobody prunes checkpoint row groups by them and they would only bloat
// the footer every open parses. Null counts are always kept: they are what
// lets a reader skip the row groups of a kind it does not need.
const cpqMaxStatsSize = 64

func cpqWriterProps(mem memory.Allocator) *parquet.WriterProperties {
	return parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithStats(true),
		parquet.WithMaxStatsSize(cpqMaxStatsSize),
		// Paths and stats are unique per row, so dictionaries only cost time;
		// zstd already squeezes repeated partition values.
		parquet.WithDictionaryDefault(false),
		parquet.WithAllocator(mem),
	)
}

// cpqRowGroupsOf splits the actions' indexes into the row groups we write:
// every action other than add and remove followed by the adds, then the
// removes, each kind in input order, and an empty group left out. Every
// reader needs the first group and a snapshot reader needs nothing of the
// second, so splitting the first further would only add per-row-group
// overhead to every open. With no actions at all it is one empty row
// group, as a single write of an empty batch has always made.
func cpqRowGroupsOf(actions []Action) [][]int {
	var other, adds, removes []int
	for i := range actions {
		switch {
		case actions[i].Add != nil:
			adds = append(adds, i)
		case actions[i].Remove != nil:
			removes = append(removes, i)
		default:
			other = append(other, i)
		}
	}
	var out [][]int
	for _, g := range [][]int{append(other, adds...), removes} {
		if len(g) > 0 {
			out = append(out, g)
		}
	}
	if len(out) == 0 {
		out = append(out, nil)
	}
	return out
}

// cpqWriteRowGroup writes the actions at rows as one row group: pqarrow's
// Write makes a row group per call (up to MaxRowGroupLength rows, far more
// than any checkpoint).
func cpqWriteRowGroup(fw *pqarrow.FileWriter, rb *array.RecordBuilder, actions []Action, rows []int) error {
	fields := rb.Schema().Fields()
	cols := make([]*array.StructBuilder, len(fields))
	for c := range fields {
		cols[c] = rb.Field(c).(*array.StructBuilder)
	}
	for _, i := range rows {
		if err := cpqAppendAction(cols, fields, &actions[i]); err != nil {
			return fmt.Errorf("checkpoint action %d: %w", i, err)
		}
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	if err := fw.Write(rec); err != nil {
		return fmt.Errorf("checkpoint parquet: %w", err)
	}
	return nil
}

// cpqAppendAction appends one row: the action in its column, null elsewhere.
func cpqAppendAction(cols []*array.StructBuilder, fields []arrow.Field, a *Action) error {
	w := cpqWriter{}
	for c, f := range fields {
		sb := cols[c]
		switch {
		case f.Name == "txn" && a.Txn != nil:
			w.txn(sb, a.Txn)
		case f.Name == "add" && a.Add != nil:
			w.add(sb, a.Add)
		case f.Name == "remove" && a.Remove != nil:
			w.remove(sb, a.Remove)
		case f.Name == "metaData" && a.MetaData != nil:
			w.metadata(sb, a.MetaData)
		case f.Name == "protocol" && a.Protocol != nil:
			if err := w.protocol(sb, a.Protocol); err != nil {
				return err
			}
		case f.Name == "domainMetadata" && a.DomainMetadata != nil:
			w.domain(sb, a.DomainMetadata)
		case f.Name == "checkpointMetadata" && a.CheckpointMetadata != nil:
			w.ckptMeta(sb, a.CheckpointMetadata)
		case f.Name == "sidecar" && a.Sidecar != nil:
			w.sidecar(sb, a.Sidecar)
		default:
			sb.AppendNull()
		}
	}
	return nil
}

// cpqWriter appends actions to struct builders laid out as the ckpt* types.
type cpqWriter struct{}

func (cpqWriter) txn(sb *array.StructBuilder, t *Txn) {
	sb.Append(true)
	cpqAppendStr(sb.FieldBuilder(0), t.AppID)
	sb.FieldBuilder(1).(*array.Int64Builder).Append(t.Version)
	cpqAppendOptInt64(sb.FieldBuilder(2), t.LastUpdated)
}

func (w cpqWriter) add(sb *array.StructBuilder, a *Add) {
	sb.Append(true)
	cpqAppendStr(sb.FieldBuilder(0), a.Path)
	cpqAppendStrPtrMap(sb.FieldBuilder(1), a.PartitionValues, true)
	sb.FieldBuilder(2).(*array.Int64Builder).Append(a.Size)
	sb.FieldBuilder(3).(*array.Int64Builder).Append(a.ModificationTime)
	sb.FieldBuilder(4).(*array.BooleanBuilder).Append(a.DataChange)
	cpqAppendOptStr(sb.FieldBuilder(5), a.Stats)
	cpqAppendStrPtrMap(sb.FieldBuilder(6), a.Tags, false)
	w.dv(sb.FieldBuilder(7).(*array.StructBuilder), a.DeletionVector)
	cpqAppendOptInt64(sb.FieldBuilder(8), a.BaseRowID)
	cpqAppendOptInt64(sb.FieldBuilder(9), a.DefaultRowCommitVersion)
	cpqAppendStrPtr(sb.FieldBuilder(10), a.ClusteringProvider)
}

func (w cpqWriter) remove(sb *array.StructBuilder, r *Remove) {
	sb.Append(true)
	cpqAppendStr(sb.FieldBuilder(0), r.Path)
	cpqAppendOptInt64(sb.FieldBuilder(1), r.DeletionTimestamp)
	sb.FieldBuilder(2).(*array.BooleanBuilder).Append(r.DataChange)
	if r.ExtendedFileMetadata != nil {
		sb.FieldBuilder(3).(*array.BooleanBuilder).Append(*r.ExtendedFileMetadata)
	} else {
		sb.FieldBuilder(3).AppendNull()
	}
	cpqAppendStrPtrMap(sb.FieldBuilder(4), r.PartitionValues, false)
	cpqAppendOptInt64(sb.FieldBuilder(5), r.Size)
	cpqAppendOptStr(sb.FieldBuilder(6), r.Stats)
	cpqAppendStrPtrMap(sb.FieldBuilder(7), r.Tags, false)
	w.dv(sb.FieldBuilder(8).(*array.StructBuilder), r.DeletionVector)
	cpqAppendOptInt64(sb.FieldBuilder(9), r.BaseRowID)
	cpqAppendOptInt64(sb.FieldBuilder(10), r.DefaultRowCommitVersion)
}

func (cpqWriter) dv(sb *array.StructBuilder, dv *DeletionVectorDescriptor) {
	if dv == nil {
		sb.AppendNull()
		return
	}
	sb.Append(true)
	cpqAppendStr(sb.FieldBuilder(0), dv.StorageType)
	cpqAppendStr(sb.FieldBuilder(1), dv.PathOrInlineDv)
	if dv.Offset != nil {
		sb.FieldBuilder(2).(*array.Int32Builder).Append(*dv.Offset)
	} else {
		sb.FieldBuilder(2).AppendNull()
	}
	sb.FieldBuilder(3).(*array.Int32Builder).Append(dv.SizeInBytes)
	sb.FieldBuilder(4).(*array.Int64Builder).Append(dv.Cardinality)
	cpqAppendOptInt64(sb.FieldBuilder(5), dv.MaxRowIndex)
}

func (cpqWriter) metadata(sb *array.StructBuilder, m *Metadata) {
	sb.Append(true)
	cpqAppendStr(sb.FieldBuilder(0), m.ID)
	cpqAppendStrPtr(sb.FieldBuilder(1), m.Name)
	cpqAppendStrPtr(sb.FieldBuilder(2), m.Description)
	fb := sb.FieldBuilder(3).(*array.StructBuilder)
	fb.Append(true)
	cpqAppendStr(fb.FieldBuilder(0), m.Format.Provider)
	cpqAppendStrMap(fb.FieldBuilder(1), m.Format.Options)
	cpqAppendStr(sb.FieldBuilder(4), m.SchemaString)
	cpqAppendStrList(sb.FieldBuilder(5), m.PartitionColumns, true)
	cpqAppendStrMap(sb.FieldBuilder(6), m.Configuration)
	cpqAppendOptInt64(sb.FieldBuilder(7), m.CreatedTime)
}

func (cpqWriter) protocol(sb *array.StructBuilder, p *Protocol) error {
	if p.MinReaderVersion < 0 || p.MinReaderVersion > math.MaxInt32 ||
		p.MinWriterVersion < 0 || p.MinWriterVersion > math.MaxInt32 {
		return fmt.Errorf("protocol versions %d/%d out of range", p.MinReaderVersion, p.MinWriterVersion)
	}
	sb.Append(true)
	sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(p.MinReaderVersion))
	sb.FieldBuilder(1).(*array.Int32Builder).Append(int32(p.MinWriterVersion))
	cpqAppendStrList(sb.FieldBuilder(2), p.ReaderFeatures, false)
	cpqAppendStrList(sb.FieldBuilder(3), p.WriterFeatures, false)
	return nil
}

func (cpqWriter) domain(sb *array.StructBuilder, d *DomainMetadata) {
	sb.Append(true)
	cpqAppendStr(sb.FieldBuilder(0), d.Domain)
	cpqAppendStr(sb.FieldBuilder(1), d.Configuration)
	sb.FieldBuilder(2).(*array.BooleanBuilder).Append(d.Removed)
}

func (cpqWriter) ckptMeta(sb *array.StructBuilder, c *CheckpointMetadata) {
	sb.Append(true)
	sb.FieldBuilder(0).(*array.Int64Builder).Append(c.Version)
	cpqAppendStrPtrMap(sb.FieldBuilder(1), c.Tags, false)
}

func (cpqWriter) sidecar(sb *array.StructBuilder, s *Sidecar) {
	sb.Append(true)
	cpqAppendStr(sb.FieldBuilder(0), s.Path)
	sb.FieldBuilder(1).(*array.Int64Builder).Append(s.SizeInBytes)
	sb.FieldBuilder(2).(*array.Int64Builder).Append(s.ModificationTime)
	cpqAppendStrPtrMap(sb.FieldBuilder(3), s.Tags, false)
}

func cpqAppendStr(b array.Builder, s string) { b.(*array.StringBuilder).Append(s) }

// cpqAppendOptStr writes "" as null: for stats, absent and empty are the same.
func cpqAppendOptStr(b array.Builder, s string) {
	if s == "" {
		b.AppendNull()
		return
	}
	b.(*array.StringBuilder).Append(s)
}

func cpqAppendStrPtr(b array.Builder, s *string) {
	if s == nil {
		b.AppendNull()
		return
	}
	b.(*array.StringBuilder).Append(*s)
}

func cpqAppendOptInt64(b array.Builder, v *int64) {
	if v == nil {
		b.AppendNull()
		return
	}
	b.(*array.Int64Builder).Append(*v)
}

// cpqAppendStrPtrMap writes a map with sorted keys (stable output); nil is null
// unless required, when it is written empty.
func cpqAppendStrPtrMap(b array.Builder, m map[string]*string, required bool) {
	mb := b.(*array.MapBuilder)
	if m == nil && !required {
		mb.AppendNull()
		return
	}
	mb.Append(true)
	kb := mb.KeyBuilder().(*array.StringBuilder)
	ib := mb.ItemBuilder().(*array.StringBuilder)
	for _, k := range cpqSortedKeys(m) {
		kb.Append(k)
		if v := m[k]; v != nil {
			ib.Append(*v)
		} else {
			ib.AppendNull()
		}
	}
}

// cpqAppendStrMap writes a protocol-required map[string]string: nil is empty.
func cpqAppendStrMap(b array.Builder, m map[string]string) {
	mb := b.(*array.MapBuilder)
	mb.Append(true)
	kb := mb.KeyBuilder().(*array.StringBuilder)
	ib := mb.ItemBuilder().(*array.StringBuilder)
	for _, k := range cpqSortedKeys(m) {
		kb.Append(k)
		ib.Append(m[k])
	}
}

func cpqAppendStrList(b array.Builder, l []string, required bool) {
	lb := b.(*array.ListBuilder)
	if l == nil && !required {
		lb.AppendNull()
		return
	}
	lb.Append(true)
	vb := lb.ValueBuilder().(*array.StringBuilder)
	for _, s := range l {
		vb.Append(s)
	}
}

func cpqSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
