package delta

// Schema evolution: the protocol and metaData actions of ALTER TABLE ...
// ADD / CHANGE / RENAME / DROP COLUMN, checked against PROTOCOL.md before
// anything is written. Adding a nullable column needs no feature; widening
// a type needs typeWidening ("Type Widening"); renaming and dropping need
// column mapping ("Column Mapping"), since data files keep the physical
// names and a rename or drop only edits the schema.

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// ErrSchemaChange marks a schema change the protocol, or our writer, does
// not allow; the error names the rule.
var ErrSchemaChange = errors.New("schema change not allowed")

// SchemaChangeKind names one kind of schema change.
type SchemaChangeKind int

// The schema changes Evolve applies.
const (
	AddColumn SchemaChangeKind = iota + 1
	WidenColumn
	RenameColumn
	DropColumn
)

// SchemaChange is one change of the table's top-level columns.
type SchemaChange struct {
	Kind SchemaChangeKind
	// Column is the column changed; for AddColumn, the new column.
	Column string
	// NewName is RenameColumn's new name.
	NewName string
	// Type is AddColumn's type and WidenColumn's wider type.
	Type DataType
	// Comment is AddColumn's column comment (field metadata "comment").
	Comment string
}

// Feature names and properties of schema evolution.
const (
	featureTypeWidening    = "typeWidening"
	featureTimestampNTZ    = "timestampNtz"
	propEnableTypeWidening = "delta.enableTypeWidening"
	propColumnMappingMode  = "delta.columnMapping.mode"
	propMaxColumnID        = "delta.columnMapping.maxColumnId"
	keyTypeChanges         = "delta.typeChanges"
	keyPhysicalName        = "delta.columnMapping.physicalName"
)

// Evolved is the table after a schema change: the protocol to write when
// it changed (nil otherwise) and the new metaData action.
type Evolved struct {
	Protocol *Protocol
	Metadata *Metadata
}

// Actions are the actions that commit the change.
func (e Evolved) Actions() []Action {
	var out []Action
	if e.Protocol != nil {
		out = append(out, Action{Protocol: e.Protocol})
	}
	return append(out, Action{MetaData: e.Metadata})
}

// Evolve applies changes, in order, to the snapshot's schema and returns
// the protocol and metadata that commit them. A change the protocol does
// not allow fails with an error wrapping ErrSchemaChange that names the
// rule. The snapshot is not changed.
func (s *Snapshot) Evolve(changes []SchemaChange) (Evolved, error) {
	if len(changes) == 0 {
		return Evolved{}, fmt.Errorf("%w: no change given", ErrSchemaChange)
	}
	schema, err := s.Schema()
	if err != nil {
		return Evolved{}, err
	}
	ev := &evolution{
		proto:  s.Protocol,
		md:     s.Metadata,
		fields: slices.Clone(schema.Fields),
		mode:   s.Metadata.Configuration[propColumnMappingMode],
	}
	ev.md.Configuration = maps.Clone(s.Metadata.Configuration)
	if ev.md.Configuration == nil {
		ev.md.Configuration = map[string]string{}
	}
	for _, c := range changes {
		if err := ev.apply(c); err != nil {
			return Evolved{}, err
		}
	}
	next := &StructType{Fields: ev.fields}
	if ev.md.SchemaString, err = next.JSON(); err != nil {
		return Evolved{}, fmt.Errorf("%w: %w", ErrSchemaChange, err)
	}
	out := Evolved{Metadata: &ev.md}
	if !protocolEqual(ev.proto, s.Protocol) {
		out.Protocol = &ev.proto
	}
	return out, nil
}

// WithEvolved returns a copy of the snapshot as it would be after e: the
// files a commit of e adds are written for it (WriteFiles), before e is
// committed. It is never committed on.
func (s *Snapshot) WithEvolved(e Evolved) *Snapshot {
	c := *s
	if e.Protocol != nil {
		c.Protocol = *e.Protocol
	}
	c.Metadata = *e.Metadata
	c.schema = nil
	return &c
}

// evolution is the table's state while changes are applied.
type evolution struct {
	proto  Protocol
	md     Metadata
	fields []*StructField
	mode   string // column mapping mode
}

func (ev *evolution) mapped() bool { return ev.mode == "name" || ev.mode == "id" }

// find returns the index of the column named name (exactly, else in any
// case, as Delta's names are), or -1.
func (ev *evolution) find(name string) int {
	if i := slices.IndexFunc(ev.fields, func(f *StructField) bool { return f.Name == name }); i >= 0 {
		return i
	}
	return slices.IndexFunc(ev.fields, func(f *StructField) bool { return strings.EqualFold(f.Name, name) })
}

func (ev *evolution) isPartition(name string) bool {
	return slices.Contains(ev.md.PartitionColumns, name)
}

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSchemaChange, fmt.Sprintf(format, args...))
}

func (ev *evolution) apply(c SchemaChange) error {
	if strings.TrimSpace(c.Column) == "" {
		return refuse("a column name is required")
	}
	switch c.Kind {
	case AddColumn:
		return ev.add(c)
	case WidenColumn:
		return ev.widen(c)
	case RenameColumn:
		return ev.rename(c)
	case DropColumn:
		return ev.drop(c)
	}
	return refuse("unknown schema change kind %d", c.Kind)
}

// specialName matches the characters Spark refuses in a column name
// without column mapping (Parquet column names).
var specialName = regexp.MustCompile(`[ ,;{}()\n\t=]`)

func (ev *evolution) checkNewName(name, verb string) error {
	if strings.TrimSpace(name) == "" {
		return refuse("%s: the new column name is empty", verb)
	}
	if i := ev.find(name); i >= 0 {
		return refuse("%s: column %q already exists (as %q; Delta column names are case-insensitive)", verb, name, ev.fields[i].Name)
	}
	if !ev.mapped() && specialName.MatchString(name) {
		return refuse("%s: column name %q has a character (space or one of ,;{}()=) that Delta allows only with column mapping", verb, name)
	}
	return nil
}

// add appends a nullable column; under column mapping it gets the next
// column id and a physical name of its own, at every nesting level.
func (ev *evolution) add(c SchemaChange) error {
	if err := ev.checkNewName(c.Column, "ADD COLUMN"); err != nil {
		return err
	}
	if c.Type == nil {
		return refuse("ADD COLUMN %q: no type given", c.Column)
	}
	f := &StructField{Name: c.Column, Type: c.Type, Nullable: true}
	if c.Comment != "" {
		f.Metadata = map[string]any{"comment": c.Comment}
	}
	if hasType(c.Type, TypeTimestampNTZ) {
		ev.proto = withFeature(ev.proto, featureTimestampNTZ, true)
	}
	if ev.mapped() {
		next, err := ev.maxColumnID()
		if err != nil {
			return err
		}
		assignColumnIDs(f, &next, ev.md.ID)
		ev.md.Configuration[propMaxColumnID] = strconv.FormatInt(next, 10)
	}
	ev.fields = append(ev.fields, f)
	return nil
}

// maxColumnID is the largest column id assigned so far: the table property,
// or the largest id in the schema when that is larger.
func (ev *evolution) maxColumnID() (int64, error) {
	var max int64
	if v, ok := ev.md.Configuration[propMaxColumnID]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, corrupt("%s is %q, not a number", propMaxColumnID, v)
		}
		max = n
	}
	var walk func(t DataType)
	walk = func(t DataType) {
		switch t := t.(type) {
		case *StructType:
			for _, f := range t.Fields {
				if id, ok := fieldID(f); ok && id > max {
					max = id
				}
				walk(f.Type)
			}
		case *ArrayType:
			walk(t.ElementType)
		case *MapType:
			walk(t.KeyType)
			walk(t.ValueType)
		}
	}
	walk(&StructType{Fields: ev.fields})
	return max, nil
}

// assignColumnIDs gives f, and every struct field inside it, the next id
// and a physical name. The name is derived from the table's id and the
// column id, so two writers that stage the same change name it alike, and
// since ids only grow it is unique across the table's versions.
func assignColumnIDs(f *StructField, next *int64, tableID string) {
	*next++
	md := maps.Clone(f.Metadata)
	if md == nil {
		md = map[string]any{}
	}
	md[columnMappingIDKey] = *next
	md[keyPhysicalName] = "col-" + uuid.NewSHA1(uuid.NameSpaceOID, []byte(tableID+"/"+strconv.FormatInt(*next, 10))).String()
	f.Metadata = md
	f.Type = withColumnIDs(f.Type, next, tableID)
}

func withColumnIDs(t DataType, next *int64, tableID string) DataType {
	switch t := t.(type) {
	case *StructType:
		out := &StructType{}
		for _, sf := range t.Fields {
			c := *sf
			assignColumnIDs(&c, next, tableID)
			out.Fields = append(out.Fields, &c)
		}
		return out
	case *ArrayType:
		return &ArrayType{ElementType: withColumnIDs(t.ElementType, next, tableID), ContainsNull: t.ContainsNull}
	case *MapType:
		return &MapType{KeyType: withColumnIDs(t.KeyType, next, tableID), ValueType: withColumnIDs(t.ValueType, next, tableID),
			ValueContainsNull: t.ValueContainsNull}
	}
	return t
}

// widen changes a column's type to a wider one through typeWidening: the
// protocol gets the feature in both lists (reader 3, writer 7), the table
// delta.enableTypeWidening, and the column's metadata records the change
// in delta.typeChanges. Old files keep their type; readers cast them up.
func (ev *evolution) widen(c SchemaChange) error {
	i := ev.find(c.Column)
	if i < 0 {
		return refuse("MODIFY COLUMN: column %q does not exist", c.Column)
	}
	f := ev.fields[i]
	if c.Type == nil {
		return refuse("MODIFY COLUMN %q: no type given", f.Name)
	}
	if typeString(f.Type) == typeString(c.Type) {
		return refuse("MODIFY COLUMN %q: the column is already %s", f.Name, f.Type)
	}
	if why := wideningRule(f.Type, c.Type); why != "" {
		return refuse("MODIFY COLUMN %q from %s to %s: %s", f.Name, f.Type, c.Type, why)
	}
	if ev.icebergCompat() && !icebergPromotion(f.Type, c.Type) {
		return refuse("MODIFY COLUMN %q from %s to %s: the table is Iceberg-compatible (icebergCompatV1/V2), "+
			"which allows only Iceberg's promotions (int to long, float to double, decimal precision up)", f.Name, f.Type, c.Type)
	}
	if v, ok := ev.md.Configuration[propEnableTypeWidening]; ok && !strings.EqualFold(v, "true") {
		return refuse("MODIFY COLUMN %q: the table sets %s = %s; type changes need it true", f.Name, propEnableTypeWidening, v)
	}
	ev.md.Configuration[propEnableTypeWidening] = "true"
	ev.proto = withFeature(ev.proto, featureTypeWidening, true)
	if c.Type == TypeTimestampNTZ {
		ev.proto = withFeature(ev.proto, featureTimestampNTZ, true)
	}
	nf := *f
	nf.Type = c.Type
	nf.Metadata = maps.Clone(f.Metadata)
	if nf.Metadata == nil {
		nf.Metadata = map[string]any{}
	}
	changes, _ := nf.Metadata[keyTypeChanges].([]any)
	nf.Metadata[keyTypeChanges] = append(slices.Clone(changes), map[string]any{
		"fromType": typeString(f.Type), "toType": typeString(c.Type)})
	ev.fields[i] = &nf
	return nil
}

// wideningRule returns "" when from may widen to to under PROTOCOL.md's
// "Type Widening", else the rule that refuses it.
func wideningRule(from, to DataType) string {
	fr, tr := intRank(from), intRank(to)
	switch {
	case fr > 0 && tr > 0:
		if tr > fr {
			return ""
		}
		return "narrowing an integer type loses values; only byte -> short -> integer -> long widen"
	case fr > 0 && fr <= 3 && to == TypeDouble, from == TypeFloat && to == TypeDouble:
		return ""
	case from == TypeDate && to == TypeTimestampNTZ:
		return ""
	}
	if td, ok := to.(DecimalType); ok {
		switch fd, isDec := from.(DecimalType); {
		case isDec:
			k1, k2 := td.Precision-fd.Precision, td.Scale-fd.Scale
			if k2 >= 0 && k1 >= k2 {
				return ""
			}
			return "a decimal widens only to decimal(p + k1, s + k2) with k1 >= k2 >= 0 (no fewer integer or fraction digits)"
		case fr > 0 && fr <= 3:
			if td.Precision-td.Scale >= 10 {
				return ""
			}
			return "byte, short and integer widen only to a decimal with at least 10 integer digits (decimal(10 + k1, k2), k1 >= k2)"
		case fr == 4:
			if td.Precision-td.Scale >= 20 {
				return ""
			}
			return "long widens only to a decimal with at least 20 integer digits (decimal(20 + k1, k2), k1 >= k2)"
		}
	}
	return "Delta's type widening allows byte -> short -> integer -> long, float -> double, byte/short/integer -> double, " +
		"date -> timestamp_ntz and decimal precision up (scale up by at most as much); no other change"
}

// icebergPromotion tells whether from -> to is also one of Iceberg V2's
// promotions, which icebergCompat tables are limited to.
func icebergPromotion(from, to DataType) bool {
	fr, tr := intRank(from), intRank(to)
	if fr > 0 && tr > 0 {
		return true
	}
	if from == TypeFloat && to == TypeDouble {
		return true
	}
	fd, ok1 := from.(DecimalType)
	td, ok2 := to.(DecimalType)
	return ok1 && ok2 && fd.Scale == td.Scale
}

func (ev *evolution) icebergCompat() bool {
	for _, k := range []string{"delta.enableIcebergCompatV1", "delta.enableIcebergCompatV2"} {
		if strings.EqualFold(ev.md.Configuration[k], "true") {
			return true
		}
	}
	return slices.Contains(ev.proto.WriterFeatures, "icebergCompatV1") || slices.Contains(ev.proto.WriterFeatures, "icebergCompatV2")
}

// intRank orders the integer types; 0 for any other type.
func intRank(t DataType) int {
	switch t {
	case TypeByte:
		return 1
	case TypeShort:
		return 2
	case TypeInteger:
		return 3
	case TypeLong:
		return 4
	}
	return 0
}

// needsColumnMapping refuses what only column mapping allows.
func (ev *evolution) needsColumnMapping(verb, col string) error {
	if ev.mapped() {
		return nil
	}
	return refuse("%s %q needs column mapping (data files keep the column's name, so without it a rename or drop "+
		"would need a rewrite of every file): run ALTER SINK name SET (column_mapping = 'name') first", verb, col)
}

// rename changes a column's logical name; its physical name and id stay,
// so the data files and their stats need no change.
func (ev *evolution) rename(c SchemaChange) error {
	i := ev.find(c.Column)
	if i < 0 {
		return refuse("RENAME COLUMN: column %q does not exist", c.Column)
	}
	f := ev.fields[i]
	if err := ev.needsColumnMapping("RENAME COLUMN", f.Name); err != nil {
		return err
	}
	if ev.isPartition(f.Name) {
		return refuse("RENAME COLUMN %q: it is a partition column; the table's partitioning is fixed "+
			"(partitionColumns and the sink's definition name it)", f.Name)
	}
	if !strings.EqualFold(f.Name, c.NewName) {
		if err := ev.checkNewName(c.NewName, "RENAME COLUMN"); err != nil {
			return err
		}
	} else if f.Name == c.NewName {
		return refuse("RENAME COLUMN %q: the new name is the same", f.Name)
	}
	if err := ev.notReferenced(f.Name, "RENAME COLUMN"); err != nil {
		return err
	}
	nf := *f
	nf.Name = c.NewName
	ev.fields[i] = &nf
	return nil
}

// drop removes a column from the schema; its data stays in the files,
// unread (a physical name is never given to another column).
func (ev *evolution) drop(c SchemaChange) error {
	i := ev.find(c.Column)
	if i < 0 {
		return refuse("DROP COLUMN: column %q does not exist", c.Column)
	}
	f := ev.fields[i]
	if ev.isPartition(f.Name) {
		return refuse("DROP COLUMN %q: it is a partition column; Delta cannot drop one (every file's partition values name it)", f.Name)
	}
	if err := ev.needsColumnMapping("DROP COLUMN", f.Name); err != nil {
		return err
	}
	if len(ev.fields)-len(ev.md.PartitionColumns) <= 1 {
		return refuse("DROP COLUMN %q: it is the table's last data column", f.Name)
	}
	if err := ev.notReferenced(f.Name, "DROP COLUMN"); err != nil {
		return err
	}
	ev.fields = slices.Delete(ev.fields, i, i+1)
	return nil
}

// notReferenced refuses to rename or drop a column that a CHECK
// constraint or a generation expression names: the expression would then
// name a column that is gone.
func (ev *evolution) notReferenced(col, verb string) error {
	word := regexp.MustCompile(`(?i)(^|[^A-Za-z0-9_])` + "`?" + regexp.QuoteMeta(col) + "`?" + `($|[^A-Za-z0-9_])`)
	for _, k := range slices.Sorted(maps.Keys(ev.md.Configuration)) {
		if strings.HasPrefix(k, "delta.constraints.") && word.MatchString(ev.md.Configuration[k]) {
			return refuse("%s %q: CHECK constraint %s uses it; drop the constraint first", verb, col, strings.TrimPrefix(k, "delta.constraints."))
		}
	}
	for _, f := range ev.fields {
		if g, ok := f.Metadata["delta.generationExpression"].(string); ok && f.Name != col && word.MatchString(g) {
			return refuse("%s %q: generated column %q is computed from it", verb, col, f.Name)
		}
	}
	return nil
}

// withFeature returns p with the table feature name supported: on the
// table features protocol (reader 3 when reader is set, writer 7), the
// legacy versions' implied features listed, as PROTOCOL.md's "Table
// Features" asks of an upgrade.
func withFeature(p Protocol, name string, reader bool) Protocol {
	out := Protocol{MinReaderVersion: p.MinReaderVersion, MinWriterVersion: 7,
		ReaderFeatures: slices.Clone(p.ReaderFeatures), WriterFeatures: slices.Clone(p.WriterFeatures)}
	if p.MinWriterVersion < 7 {
		out.WriterFeatures = impliedWriterFeatures(p.MinWriterVersion)
	}
	if reader && out.MinReaderVersion < 3 {
		if out.MinReaderVersion == 2 {
			out.ReaderFeatures = []string{"columnMapping"}
			out.WriterFeatures = appendMissing(out.WriterFeatures, "columnMapping")
		}
		out.MinReaderVersion = 3
	}
	if out.MinReaderVersion >= 3 && out.ReaderFeatures == nil {
		out.ReaderFeatures = []string{}
	}
	if reader {
		out.ReaderFeatures = appendMissing(out.ReaderFeatures, name)
	}
	out.WriterFeatures = appendMissing(out.WriterFeatures, name)
	return out
}

// impliedWriterFeatures are the features a legacy writer version implies.
func impliedWriterFeatures(v int) []string {
	all := []string{"appendOnly", "invariants", "checkConstraints", "changeDataFeed", "generatedColumns", "columnMapping", "identityColumns"}
	n := map[int]int{2: 2, 3: 3, 4: 5, 5: 6, 6: 7}[v]
	return slices.Clone(all[:n])
}

func appendMissing(list []string, name string) []string {
	if slices.Contains(list, name) {
		return list
	}
	return append(list, name)
}

func protocolEqual(a, b Protocol) bool {
	return a.MinReaderVersion == b.MinReaderVersion && a.MinWriterVersion == b.MinWriterVersion &&
		slices.Equal(a.ReaderFeatures, b.ReaderFeatures) && slices.Equal(a.WriterFeatures, b.WriterFeatures)
}
