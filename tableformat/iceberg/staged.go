package iceberg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/codec"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/lakesql/lakesql/tableformat/filecache"
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
	// DVBase, on a deletion vector, is the DV it replaces (Change.DVBases).
	DVBase *DVBase `json:"dv_base,omitempty"`
	// StagedAtMs is when a file whose path carries no stage stamp
	// (iceberg-go's own writer names it) was staged, in Unix milliseconds;
	// 0 when the path says it, or an older lakesql staged it.
	StagedAtMs int64 `json:"staged_at_ms,omitempty"`
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

// CheckStaged checks that every staged file is still where its receipt
// says, as big as it says, before a commit names it: a file lost since it
// was staged (a cleanup, a recovery that discarded it, a lost upload)
// would otherwise land in a snapshot whose rows nobody can read. A missing
// or resized file is ErrInvalid; a storage that cannot answer is not (the
// commit may be retried). It costs one stat per file (a HEAD request on
// object storage, a few at once).
func CheckStaged(ctx context.Context, tbl *table.Table, files []StagedFile) error {
	if len(files) == 0 {
		return nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return fmt.Errorf("open the file IO of %s: %w", tbl.Location(), err)
	}
	return filecache.ForEach(ctx, files, func(s StagedFile) error { return checkStaged(fsys, s) })
}

// statIO is the Stat both of iceberg-go's file systems (local, blob) have.
type statIO interface {
	Stat(name string) (fs.FileInfo, error)
}

// checkStaged checks one staged file (see CheckStaged).
func checkStaged(fsys iceio.IO, s StagedFile) error {
	var info fs.FileInfo
	var err error
	if st, ok := fsys.(statIO); ok {
		info, err = st.Stat(s.Path)
	} else {
		var f iceio.File
		if f, err = fsys.Open(s.Path); err == nil {
			info, err = f.Stat()
			f.Close()
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: staged file %s is missing", ErrInvalid, s.Path)
	case err != nil:
		return fmt.Errorf("check staged file %s: %w", s.Path, err)
	case info.IsDir():
		return fmt.Errorf("%w: staged file %s is a directory", ErrInvalid, s.Path)
	case s.Bytes > 0 && info.Size() != s.Bytes:
		return fmt.Errorf("%w: staged file %s has %d bytes, the receipt says %d", ErrInvalid, s.Path, info.Size(), s.Bytes)
	}
	return nil
}
