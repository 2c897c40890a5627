package iceberg

import (
	"fmt"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/codec"
	"github.com/apache/iceberg-go/table"
)

// Content kinds of a staged file.
const (
	ContentData       = "data"
	ContentEqDeletes  = "equality-deletes"
	ContentPosDeletes = "position-deletes"
)

// StagedFile is a data or delete file written but not yet committed, in a
// form that survives JSON: a restarted process can commit or delete it.
// Entry is the file's manifest-entry encoding (Avro), which carries its
// partition, statistics and equality field ids exactly as a manifest will.
type StagedFile struct {
	Path          string `json:"path"`
	Content       string `json:"content"`
	Rows          int64  `json:"rows"`
	Bytes         int64  `json:"bytes"`
	SpecID        int    `json:"spec_id"`
	SchemaID      int    `json:"schema_id"`
	FormatVersion int    `json:"format_version"`
	Entry         []byte `json:"entry"`
}

// Stage encodes a file written against meta's current schema.
func Stage(meta table.Metadata, df ice.DataFile) (StagedFile, error) {
	spec := meta.PartitionSpecByID(int(df.SpecID()))
	if spec == nil {
		return StagedFile{}, fmt.Errorf("%w: file %s names partition spec %d, which the table lacks", ErrInvalid, df.FilePath(), df.SpecID())
	}
	schema := meta.CurrentSchema()
	b, err := codec.EncodeDataFile(df, *spec, schema, meta.Version())
	if err != nil {
		return StagedFile{}, fmt.Errorf("encode staged file %s: %w", df.FilePath(), err)
	}
	s := StagedFile{
		Path: df.FilePath(), Rows: df.Count(), Bytes: df.FileSizeBytes(),
		SpecID: int(df.SpecID()), SchemaID: schema.ID, FormatVersion: meta.Version(), Entry: b,
	}
	switch df.ContentType() {
	case ice.EntryContentData:
		s.Content = ContentData
	case ice.EntryContentEqDeletes:
		s.Content = ContentEqDeletes
	case ice.EntryContentPosDeletes:
		s.Content = ContentPosDeletes
	}
	return s, nil
}

// File decodes the staged file against meta. The table must still have
// the spec and schema it was written for, in the same format version.
func (s StagedFile) File(meta table.Metadata) (ice.DataFile, error) {
	if s.FormatVersion != meta.Version() {
		return nil, fmt.Errorf("%w: file %s was staged for format version %d, the table is at %d",
			ErrConflict, s.Path, s.FormatVersion, meta.Version())
	}
	spec := meta.PartitionSpecByID(s.SpecID)
	if spec == nil {
		return nil, fmt.Errorf("%w: file %s was staged for partition spec %d, which the table lacks", ErrConflict, s.Path, s.SpecID)
	}
	if s.SpecID != meta.DefaultPartitionSpec() {
		return nil, fmt.Errorf("%w: file %s was staged for partition spec %d, the table now writes spec %d",
			ErrConflict, s.Path, s.SpecID, meta.DefaultPartitionSpec())
	}
	var schema *ice.Schema
	for _, sc := range meta.Schemas() {
		if sc.ID == s.SchemaID {
			schema = sc
		}
	}
	if schema == nil {
		return nil, fmt.Errorf("%w: file %s was staged for schema %d, which the table lacks", ErrConflict, s.Path, s.SchemaID)
	}
	df, err := codec.DecodeDataFile(s.Entry, *spec, schema, s.FormatVersion)
	if err != nil {
		return nil, fmt.Errorf("%w: staged file %s: %w", ErrInvalid, s.Path, err)
	}
	if df.FilePath() != s.Path {
		return nil, fmt.Errorf("%w: staged file entry names %s, the receipt %s", ErrInvalid, df.FilePath(), s.Path)
	}
	return df, nil
}
