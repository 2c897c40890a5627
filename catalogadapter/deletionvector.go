package catalogadapter

import "context"

// DeletionVectorStager marks rows of live data files deleted without
// rewriting the files: Delta's deletion vectors. The sink's upserts and
// changelog deletes use it instead of copy-on-write when the table takes
// them (delete_mode, see sqlsink.Config.DeleteMode).
type DeletionVectorStager interface {
	// DeletionVectors tells whether the table takes new deletion vectors
	// now (Delta: the deletionVectors feature and
	// delta.enableDeletionVectors = true).
	DeletionVectors(ctx context.Context, id TableIdent) (bool, error)
	// StageDeletionVectors finds the rows of the table at version, in the
	// files named (DataFile.Path), whose key columns equal a row of
	// keysQuery, run on q, and stages a receipt that deletes them: for
	// each file holding such rows, its current deletion vector united
	// with them. Committed, it fails with ErrConflict when another writer
	// removed one of those files or changed its deletion vector since
	// version. Rows it deletes counts what it marks. It fails with
	// ErrUnsupported when the table takes no deletion vectors.
	StageDeletionVectors(ctx context.Context, id TableIdent, q Querier, version int64, files []string,
		key []string, keysQuery string) (r Receipt, rowsDeleted int64, err error)
}
