package delta

// Writing checkpoints (see checkpoint_read.go for the rules on mandatory
// collections): the Arrow schema of the columns we write, and the builders
// that fill them one action per row.

import (
	"bytes"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

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

// cpqField is a nullable field: Spark writes every checkpoint field as
// optional, and readers expect that.
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
