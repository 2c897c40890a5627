package sqlsink

import (
	"context"
	"fmt"
	"strings"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/sqlquote"
)

// DeleteMode is how an upsert or a delete takes rows out of the files that
// hold them.
type DeleteMode string

// Delete modes.
const (
	// DeleteModeDeletionVectors marks the rows deleted in deletion vectors
	// and leaves the files as they are (Delta tables with the feature on).
	DeleteModeDeletionVectors DeleteMode = "deletion_vectors"
	// DeleteModeCopyOnWrite rewrites the files without the rows.
	DeleteModeCopyOnWrite DeleteMode = "copy_on_write"
)

func (m DeleteMode) check() error {
	switch m {
	case "", DeleteModeDeletionVectors, DeleteModeCopyOnWrite:
		return nil
	}
	return fmt.Errorf("unknown delete mode %q (deletion_vectors or copy_on_write)", string(m))
}

// mergeStep stages one try of an upsert merge on the table as it is now:
// the receipts, the files it takes out, and the version it read.
type mergeStep func(ctx context.Context, scanner catalogadapter.Scanner, keys []string) ([]catalogadapter.Receipt, []string, int64, error)

// mergeFunc picks the merge of this epoch: deletion vectors when the
// delete mode and the table allow them, else copy-on-write. An explicit
// deletion_vectors on a table that takes none is refused, not ignored.
func (s *Sink) mergeFunc(ctx context.Context) (mergeStep, error) {
	if s.cfg.DeleteMode == DeleteModeCopyOnWrite {
		return s.rewriteKeys, nil
	}
	dv, on, err := s.deletionVectors(ctx)
	if err != nil {
		return nil, err
	}
	if !on {
		if s.cfg.DeleteMode == DeleteModeDeletionVectors {
			return nil, s.noDeletionVectors(catalogadapter.ErrUnsupported)
		}
		return s.rewriteKeys, nil
	}
	return func(ctx context.Context, scanner catalogadapter.Scanner, keys []string) ([]catalogadapter.Receipt, []string, int64, error) {
		return s.markKeys(ctx, dv, scanner, keys)
	}, nil
}

// deletionVectors returns the provider's DV stager and whether the table
// takes deletion vectors now.
func (s *Sink) deletionVectors(ctx context.Context) (catalogadapter.DeletionVectorStager, bool, error) {
	dv, ok := s.cfg.Provider.(catalogadapter.DeletionVectorStager)
	if !ok {
		return nil, false, nil
	}
	on, err := dv.DeletionVectors(ctx, s.cfg.Table)
	if err != nil {
		return nil, false, fmt.Errorf("check deletion vectors: %w", err)
	}
	return dv, on, nil
}

func (s *Sink) noDeletionVectors(kind error) error {
	return fmt.Errorf("%w: delete_mode = 'deletion_vectors', but table %s takes no deletion vectors (a Delta table needs the deletionVectors feature and delta.enableDeletionVectors = true: create it WITH (deletion_vectors = TRUE))",
		kind, s.cfg.Table)
}

// checkDeleteMode refuses, when the sink opens, delete_mode =
// 'deletion_vectors' on a table that takes none; each merge checks again,
// since another writer may turn them off.
func (s *Sink) checkDeleteMode(ctx context.Context) error {
	if s.cfg.DeleteMode != DeleteModeDeletionVectors {
		return nil
	}
	if _, on, err := s.deletionVectors(ctx); err != nil || !on {
		if err != nil {
			return err
		}
		return s.noDeletionVectors(ErrConfig)
	}
	return nil
}

// markKeys is the deletion-vector half of an upsert merge: the rows of the
// table holding the epoch's keys are marked deleted in deletion vectors of
// their files, and the rows that upsert are staged as a new file. Nothing
// is rewritten, so nothing is removed.
func (s *Sink) markKeys(ctx context.Context, dv catalogadapter.DeletionVectorStager, scanner catalogadapter.Scanner,
	keys []string) ([]catalogadapter.Receipt, []string, int64, error) {
	b := s.buf
	version, files, err := scanner.Files(ctx, s.cfg.Table)
	if err != nil {
		return nil, nil, -1, fmt.Errorf("list table files: %w", err)
	}
	// Rows added after version could hold the keys: the commit is refused
	// then, and the merge done again.
	s.requires = []catalogadapter.Requirement{catalogadapter.NoNewDataSince(version)}
	candidates, err := s.pruneByStats(ctx, files)
	if err != nil {
		return nil, nil, version, err
	}
	var receipts []catalogadapter.Receipt
	if len(candidates) > 0 {
		paths := make([]string, len(candidates))
		for i, f := range candidates {
			paths[i] = f.Path
		}
		r, _, err := dv.StageDeletionVectors(ctx, s.cfg.Table, b.conn, version, paths, s.cfg.Key,
			"SELECT "+strings.Join(keys, ", ")+" FROM collapsed")
		if err != nil {
			return nil, nil, version, err
		}
		receipts = append(receipts, r)
	}
	r, err := s.stage(ctx, catalogadapter.Source{Query: fmt.Sprintf("SELECT %s FROM collapsed WHERE %s = %d",
		b.selectList(), sqlquote.Ident(opBufCol), OpUpsert)})
	if err != nil {
		s.discardFiles(ctx, receipts)
		return nil, nil, version, err
	}
	return append(receipts, r), nil, version, nil
}
