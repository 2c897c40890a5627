package delta

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
//
// This file opens a checkpoint and picks the row groups and columns to read;
// checkpoint_decode.go turns the batches read into actions through the column
// views of checkpoint_columns.go, and checkpoint_write.go writes checkpoints.

import (
	"bytes"
	"context"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

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
