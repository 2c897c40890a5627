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
