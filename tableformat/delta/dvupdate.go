package delta

// What a writer needs to mark rows deleted with deletion vectors: whether
// the table allows it, the row positions of a scan, and the add action that
// replaces a file's DV (PROTOCOL.md "Deletion Vectors", "Per-file
// Statistics").

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// EnableDeletionVectorsKey is the table property that lets writers write
// new deletion vectors.
const EnableDeletionVectorsKey = "delta.enableDeletionVectors"

// PositionFileColumn and PositionRowColumn are the columns PositionsSQL
// adds to each row: the local path of its data file and its 0-based index.
const (
	PositionFileColumn = fileColumn
	PositionRowColumn  = rowNumColumn
)

// DeletionVectorsEnabled reports whether a table configuration turns on
// writing deletion vectors.
func DeletionVectorsEnabled(conf map[string]string) bool {
	return strings.EqualFold(conf[EnableDeletionVectorsKey], "true")
}

// HasDeletionVectorFeature reports whether p supports deletion vectors:
// reader 3 and writer 7 with deletionVectors in both feature lists.
func HasDeletionVectorFeature(p Protocol) bool {
	return p.MinReaderVersion >= 3 && p.MinWriterVersion >= 7 &&
		slices.Contains(p.ReaderFeatures, "deletionVectors") && slices.Contains(p.WriterFeatures, "deletionVectors")
}

// CanWriteDeletionVectors tells whether writers may add new deletion
// vectors to the snapshot's table: the feature is in its protocol and the
// property is on.
func (s *Snapshot) CanWriteDeletionVectors() bool {
	return HasDeletionVectorFeature(s.Protocol) && DeletionVectorsEnabled(s.Metadata.Configuration)
}

// PositionsSQL is ScanFilesSQL (rows already deleted by a file's DV left
// out) with two more columns, PositionFileColumn and PositionRowColumn;
// files maps each local path the first yields back to its add action.
func (s *Snapshot) PositionsSQL(ctx context.Context, q Querier, files []*Add) (query string, byPath map[string]*Add, err error) {
	if len(files) == 0 {
		return "", nil, fmt.Errorf("positions of no files")
	}
	query, paths, err := s.scanFilesSQL(ctx, q, files, true)
	if err != nil {
		return "", nil, err
	}
	byPath = make(map[string]*Add, len(paths))
	for a, p := range paths {
		byPath[p] = a
	}
	return query, byPath, nil
}

// WithDeletionVector returns the add action that replaces f in a commit
// that gives it the DV d: the same file and metadata, dataChange true, and
// stats whose numRecords stays the physical count and whose bounds are
// marked wide (tightBounds false), since they still cover deleted rows.
// f must have numRecords stats: the protocol requires them with a DV.
func WithDeletionVector(f *Add, d *DeletionVectorDescriptor) (*Add, error) {
	if _, ok := f.NumRecords(); !ok {
		return nil, fmt.Errorf("file %s has no numRecords statistic, which a deletion vector needs", f.Path)
	}
	var st map[string]json.RawMessage
	if err := json.Unmarshal([]byte(f.Stats), &st); err != nil {
		return nil, fmt.Errorf("stats of %s: %w", f.Path, err)
	}
	st["tightBounds"] = json.RawMessage("false")
	stats, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	a := *f
	a.DataChange = true
	a.Stats = string(stats)
	a.DeletionVector = d
	return &a, nil
}

// RemoveOf is the remove action that takes f (with its DV) out at time now
// (milliseconds): what a rewrite or a DV update commits for the old file.
func RemoveOf(f *Add, now int64) *Remove {
	size, ext := f.Size, true
	return &Remove{
		Path:                    f.Path,
		DeletionTimestamp:       &now,
		DataChange:              true,
		ExtendedFileMetadata:    &ext,
		PartitionValues:         f.PartitionValues,
		Size:                    &size,
		Stats:                   f.Stats,
		Tags:                    f.Tags,
		DeletionVector:          f.DeletionVector,
		BaseRowID:               f.BaseRowID,
		DefaultRowCommitVersion: f.DefaultRowCommitVersion,
	}
}

// DeletionVectorProtocol returns p upgraded to support deletion vectors:
// reader 3 and writer 7 with deletionVectors in both lists. A legacy
// protocol turns into table features listing what its versions implied
// (writer 2: appendOnly and invariants); writer versions 3 to 6 and reader
// 2 imply features (check constraints, generated and identity columns,
// column mapping) whose listing would ask more of writers, so they are
// refused: such a table gets deletion vectors by a writer that honours
// them, or by being created with them.
func DeletionVectorProtocol(p Protocol) (Protocol, error) {
	if HasDeletionVectorFeature(p) {
		return p, nil
	}
	out := Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
		ReaderFeatures: slices.Clone(p.ReaderFeatures), WriterFeatures: slices.Clone(p.WriterFeatures)}
	if p.MinWriterVersion < 7 {
		if p.MinWriterVersion > 2 || p.MinReaderVersion == 2 {
			return p, unsupported("deletion vectors on a table at reader %d / writer %d: upgrading it to table features would list features lakesql does not write",
				p.MinReaderVersion, p.MinWriterVersion)
		}
		out.ReaderFeatures, out.WriterFeatures = []string{}, []string{}
		if p.MinWriterVersion == 2 {
			out.WriterFeatures = append(out.WriterFeatures, "appendOnly", "invariants")
		}
	}
	if out.ReaderFeatures == nil {
		out.ReaderFeatures = []string{}
	}
	if !slices.Contains(out.ReaderFeatures, "deletionVectors") {
		out.ReaderFeatures = append(out.ReaderFeatures, "deletionVectors")
	}
	if !slices.Contains(out.WriterFeatures, "deletionVectors") {
		out.WriterFeatures = append(out.WriterFeatures, "deletionVectors")
	}
	return out, nil
}
