package delta

// Decoding checkpoint batches into actions (see checkpoint_read.go): one
// decoder per top-level action column, built on the column views of
// checkpoint_columns.go. A row may set at most one action column.

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

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
