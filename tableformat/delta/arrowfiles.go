package delta

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/google/uuid"

	"github.com/lakesql/lakesql/internal/fsync"
	"github.com/lakesql/lakesql/internal/stagename"
)

// ErrNeedsDuckDB tells that WriteRecord cannot write a record itself (a
// column whose Arrow type is not ToArrowSchema's, a partition column of a
// type whose text only DuckDB spells as WriteFiles records it): the caller
// writes it with WriteFiles instead.
var ErrNeedsDuckDB = errors.New("record needs DuckDB's writer")

// WriteRecord writes rec as Parquet data files of this table with arrow-go's
// writer, one per partition value, and returns their add actions; nothing
// is committed. It is WriteFiles for a record already in memory, where
// DuckDB's fixed cost per COPY (planning, about 1.5 ms) would dominate: the
// files, their names, partition folders and values, column mapping names
// and field ids, and the statistics follow the same rules (a differential
// test holds the two to it). rec has the table's columns, in table order,
// under their logical names and with ToArrowSchema's types; anything else
// fails with ErrNeedsDuckDB. Each file is one row group: meant for records
// well below the target file size.
func (s *Snapshot) WriteRecord(ctx context.Context, rec arrow.RecordBatch, opts WriteOptions) ([]*Add, error) {
	schema, err := s.Schema()
	if err != nil {
		return nil, err
	}
	if err := checkWritableConf(s.Protocol, schema, s.Metadata.Configuration); err != nil {
		return nil, fmt.Errorf("write data files: %w", err)
	}
	layout, err := s.fileLayout(schema)
	if err != nil {
		return nil, err
	}
	if err := matchesTable(schema, rec); err != nil {
		return nil, err
	}
	parts := map[string]bool{}
	for _, c := range layout.partitionColumns {
		parts[c] = true
	}
	groups, err := partitionGroups(layout, rec)
	if err != nil {
		return nil, err
	}
	fileFields := make([]arrow.Field, 0, len(schema.Fields))
	var dataCols []int
	for i, f := range layout.schema.Fields {
		if parts[f.Name] {
			continue
		}
		fileFields = append(fileFields, parquetField(schema.Fields[i], f, layout.mapped))
		dataCols = append(dataCols, i)
	}
	fileSchema := arrow.NewSchema(fileFields, nil)
	store := s.table.store
	root := store.StagingDir()
	if err := os.MkdirAll(root, fsync.DirMode); err != nil {
		return nil, fmt.Errorf("write data files: %w", err)
	}
	now := nowFunc(opts.Now)()
	token := stagename.New(now)
	var adds []*Add
	for _, g := range groups {
		var a *Add
		a, err = writeGroup(ctx, rec, g, fileSchema, dataCols, layout, parts, root, token)
		if err != nil {
			break
		}
		a.ModificationTime = now.UnixMilli()
		adds = append(adds, a)
	}
	if err == nil {
		err = publish(ctx, store, root, adds)
	}
	if err != nil {
		removeWritten(root, token)
		return nil, errors.Join(err, s.table.DeleteFiles(context.WithoutCancel(ctx), adds))
	}
	return adds, nil
}

// matchesTable checks that rec holds exactly the table's columns, in
// order, with ToArrowSchema's types.
func matchesTable(schema *StructType, rec arrow.RecordBatch) error {
	want, err := ToArrowSchema(schema)
	if err != nil {
		return err
	}
	rs := rec.Schema()
	if rs.NumFields() != want.NumFields() || int(rec.NumCols()) != want.NumFields() {
		return fmt.Errorf("%w: %d columns, the table has %d", ErrNeedsDuckDB, rs.NumFields(), want.NumFields())
	}
	for i, f := range want.Fields() {
		col := rec.Column(i)
		if rs.Field(i).Name != f.Name || !arrow.TypeEqual(col.DataType(), f.Type) || int64(col.Len()) != rec.NumRows() {
			return fmt.Errorf("%w: column %d is %s %s, the table's is %s %s",
				ErrNeedsDuckDB, i, rs.Field(i).Name, col.DataType(), f.Name, f.Type)
		}
	}
	return nil
}

// partitionGroup is the rows of one partition value, in arrival order.
type partitionGroup struct {
	values map[string]*string // partitionValues, by physical name
	folder string             // the Hive-style folders, "" unpartitioned
	rows   []int64            // nil: every row
}

// partitionGroups splits rec's rows by partition value, in the order the
// values first appear.
func partitionGroups(layout fileLayout, rec arrow.RecordBatch) ([]partitionGroup, error) {
	if len(layout.partitionColumns) == 0 {
		return []partitionGroup{{values: map[string]*string{}}}, nil
	}
	index := map[string]int{}
	for i, f := range layout.schema.Fields {
		index[f.Name] = i
	}
	var groups []partitionGroup
	byKey := map[string]int{}
	n := int(rec.NumRows())
	for r := 0; r < n; r++ {
		var key strings.Builder
		vals := make([]*string, len(layout.partitionColumns))
		for k, c := range layout.partitionColumns {
			i := index[c]
			text, err := partitionText(layout.schema.Fields[i].Type, rec.Column(i), r)
			if err != nil {
				return nil, fmt.Errorf("partition column %q: %w", c, err)
			}
			if text != nil {
				if vals[k], err = deltaPartitionString(layout.schema.Fields[i].Type, *text); err != nil {
					return nil, fmt.Errorf("partition column %q: %w", c, err)
				}
			}
			if vals[k] == nil {
				key.WriteString("n")
			} else {
				key.WriteString("v" + strconv.Itoa(len(*vals[k])) + ":" + *vals[k])
			}
		}
		g, ok := byKey[key.String()]
		if !ok {
			g = len(groups)
			byKey[key.String()] = g
			pg := partitionGroup{values: map[string]*string{}}
			folders := make([]string, len(vals))
			for k, c := range layout.partitionColumns {
				pg.values[c] = vals[k]
				v := hiveNull
				if vals[k] != nil {
					v = escapePartitionName(*vals[k])
				}
				folders[k] = escapePartitionName(c) + "=" + v
			}
			pg.folder = strings.Join(folders, "/")
			groups = append(groups, pg)
		}
		groups[g].rows = append(groups[g].rows, int64(r))
	}
	if len(groups) == 1 {
		groups[0].rows = nil
	}
	return groups, nil
}

// hiveNull is the folder of a null partition value.
const hiveNull = "__HIVE_DEFAULT_PARTITION__"

// escapePartitionName escapes a partition folder's column name or value as
// Hive and Spark do (ExternalCatalogUtils.escapePathName): control
// characters and "\"#%'*/:=?\\\x7f{[]^ as %XX.
func escapePartitionName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte("\"#%'*/:=?\\{[]^", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// partitionText is a partition value as DuckDB's CAST to VARCHAR prints it
// (what WriteFiles turns into the protocol's form), nil for null or "".
// Types whose text only DuckDB knows (floats, binary) need DuckDB.
func partitionText(t DataType, col arrow.Array, r int) (*string, error) {
	if col.IsNull(r) {
		return nil, nil
	}
	var s string
	switch c := col.(type) {
	case *array.String:
		s = c.Value(r)
	case *array.Int8:
		s = strconv.FormatInt(int64(c.Value(r)), 10)
	case *array.Int16:
		s = strconv.FormatInt(int64(c.Value(r)), 10)
	case *array.Int32:
		s = strconv.FormatInt(int64(c.Value(r)), 10)
	case *array.Int64:
		s = strconv.FormatInt(c.Value(r), 10)
	case *array.Boolean:
		s = strconv.FormatBool(c.Value(r))
	case *array.Date32:
		v, ok := dateText(int32(c.Value(r)))
		if !ok {
			return nil, noPartitionForm("date", fmt.Sprint(c.Value(r)))
		}
		s = v
	case *array.Timestamp:
		v, ok := timestampText(int64(c.Value(r)))
		if !ok {
			return nil, noPartitionForm("timestamp", fmt.Sprint(c.Value(r)))
		}
		s = v
	case *array.Decimal128:
		s = decimalText(c.Value(r).BigInt(), int(t.(DecimalType).Scale))
	default:
		return nil, fmt.Errorf("%w: partition column of type %s", ErrNeedsDuckDB, t)
	}
	if s == "" {
		return nil, nil
	}
	return &s, nil
}

// writeGroup writes the rows of g as one Parquet file under root and
// returns its add action, without its modification time.
func writeGroup(ctx context.Context, rec arrow.RecordBatch, g partitionGroup, fileSchema *arrow.Schema, dataCols []int,
	layout fileLayout, parts map[string]bool, root, token string) (*Add, error) {
	cols := make([]arrow.Array, len(dataCols))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	var idx arrow.Array
	if g.rows != nil {
		b := array.NewInt64Builder(memory.DefaultAllocator)
		b.AppendValues(g.rows, nil)
		idx = b.NewArray()
		b.Release()
		defer idx.Release()
	}
	for k, i := range dataCols {
		src := rec.Column(i)
		if idx != nil {
			taken, err := compute.TakeArray(ctx, src, idx)
			if err != nil {
				return nil, fmt.Errorf("%w: select the rows of a partition: %v", ErrNeedsDuckDB, err)
			}
			src = taken
		} else {
			src.Retain()
		}
		cols[k] = retype(src, fileSchema.Field(k).Type)
		src.Release()
	}
	n := rec.NumRows()
	if g.rows != nil {
		n = int64(len(g.rows))
	}
	data := array.NewRecordBatch(fileSchema, cols, n)
	defer data.Release()
	rel := "part-" + token + "-" + uuid.NewString() + ".parquet"
	if g.folder != "" {
		rel = g.folder + "/" + rel
	}
	path := filepath.Join(root, filepath.FromSlash(rel))
	size, err := writeParquet(path, data)
	if err != nil {
		return nil, fmt.Errorf("write data file %s: %w", rel, err)
	}
	stats, err := recordStats(layout.schema, parts, data)
	if err != nil {
		return nil, fmt.Errorf("statistics of %s: %w", rel, err)
	}
	return &Add{
		Path:            encodePath(rel),
		PartitionValues: g.values,
		Size:            size,
		DataChange:      true,
		Stats:           stats,
	}, nil
}

// dictionaryMinRows is the fewest rows a small-path file dictionary-encodes.
const dictionaryMinRows = 100

// writeParquet writes data as one Parquet file at path, as DuckDB's COPY
// would: snappy, decimals as integers where they fit. publish syncs it.
func writeParquet(path string, data arrow.RecordBatch) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(path), fsync.DirMode); err != nil {
		return 0, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, err
	}
	props := parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithStoreDecimalAsInteger(true),
		parquet.WithCreatedBy("lakesql"),
		// A dictionary page per column costs more than it saves in a file
		// of a few rows, the common small epoch: two one-row files of a
		// sink took 452 bytes with them, 386 without.
		parquet.WithDictionaryDefault(data.NumRows() >= dictionaryMinRows),
	)
	fw, err := pqarrow.NewFileWriter(data.Schema(), f, props, pqarrow.NewArrowWriterProperties())
	if err == nil {
		err = fw.Write(data)
		err = errors.Join(err, fw.Close()) // closes f too
	} else {
		f.Close()
	}
	if err != nil {
		return 0, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// parquetField is the file's Arrow field for table column f, whose file
// form (physical names under column mapping) is pf: under mapping, it and
// every nested struct field carry their column id as Parquet field id, as
// WriteFiles' FIELD_IDS does.
func parquetField(f, pf *StructField, mapped bool) arrow.Field {
	t, _ := arrowType(pf.Type, pf.Name) // ToArrowSchema accepted the schema
	out := arrow.Field{Name: pf.Name, Type: stripMetadata(t, f.Type, mapped), Nullable: pf.Nullable}
	if mapped {
		id, _ := fieldID(f)
		out.Metadata = arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.FormatInt(id, 10)})
	}
	return out
}

// stripMetadata drops the Delta metadata arrowType puts on nested struct
// fields, putting field ids in its place under mapping; logical is the
// logical type, which holds the ids.
func stripMetadata(t arrow.DataType, logical DataType, mapped bool) arrow.DataType {
	switch tt := t.(type) {
	case *arrow.StructType:
		st := logical.(*StructType)
		fields := make([]arrow.Field, tt.NumFields())
		for i, f := range tt.Fields() {
			fields[i] = arrow.Field{Name: f.Name, Type: stripMetadata(f.Type, st.Fields[i].Type, mapped), Nullable: f.Nullable}
			if mapped {
				id, _ := fieldID(st.Fields[i])
				fields[i].Metadata = arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{strconv.FormatInt(id, 10)})
			}
		}
		return arrow.StructOf(fields...)
	case *arrow.ListType:
		e := tt.ElemField()
		e.Type = stripMetadata(e.Type, logical.(*ArrayType).ElementType, mapped)
		return arrow.ListOfField(e)
	case *arrow.MapType:
		mt := logical.(*MapType)
		k, v := tt.KeyField(), tt.ItemField()
		k.Type = stripMetadata(k.Type, mt.KeyType, mapped)
		v.Type = stripMetadata(v.Type, mt.ValueType, mapped)
		return arrow.MapOfFields(k, v)
	}
	return t
}

// retype returns arr's data under type to, which has the same layout and
// differs only in field names and metadata (the physical names of column
// mapping).
func retype(arr arrow.Array, to arrow.DataType) arrow.Array {
	if arrow.TypeEqual(arr.DataType(), to, arrow.CheckMetadata()) {
		arr.Retain()
		return arr
	}
	d := retypeData(arr.Data(), to)
	defer d.Release()
	return array.MakeFromData(d)
}

func retypeData(d arrow.ArrayData, to arrow.DataType) arrow.ArrayData {
	var childTypes []arrow.DataType
	switch tt := to.(type) {
	case *arrow.StructType:
		for _, f := range tt.Fields() {
			childTypes = append(childTypes, f.Type)
		}
	case *arrow.MapType:
		childTypes = []arrow.DataType{tt.Elem()}
	case *arrow.ListType:
		childTypes = []arrow.DataType{tt.Elem()}
	}
	children := make([]arrow.ArrayData, len(d.Children()))
	for i, c := range d.Children() {
		children[i] = retypeData(c, childTypes[i])
	}
	out := array.NewData(to, d.Len(), d.Buffers(), children, d.NullN(), d.Offset())
	for _, c := range children {
		c.Release()
	}
	return out
}
