package iceberg

import (
	"fmt"
	"strconv"

	"github.com/apache/iceberg-go/table"
)

// Snapshot-summary properties of lakesql's commits: the exactly-once
// record (writer id and epoch) and the id of the Commit call that made
// the snapshot, which tells a writer whether a snapshot carrying its epoch
// is its own (a commit whose answer was lost) or another writer's.
const (
	SummaryWriterID = "lakesql.writer-id"
	SummaryEpoch    = "lakesql.epoch"
	SummaryCommitID = "lakesql.commit-id"
)

// EpochRecord is the newest snapshot a writer made on the main branch.
type EpochRecord struct {
	Epoch      int64
	SnapshotID int64
	CommitID   string
}

// LastEpoch walks the main branch back from its head and returns the
// newest snapshot whose summary carries writerID, with its epoch. The walk
// ends at the root or at a snapshot that has been expired: an epoch
// recorded only in expired snapshots is not found.
func LastEpoch(meta table.Metadata, writerID string) (EpochRecord, bool, error) {
	if writerID == "" {
		return EpochRecord{}, false, fmt.Errorf("%w: empty writer id", ErrInvalid)
	}
	head := meta.SnapshotByName(table.MainBranch)
	if head == nil {
		return EpochRecord{}, false, nil
	}
	for _, s := range table.AncestorsOf(head.SnapshotID, meta.SnapshotByID) {
		if s.Summary == nil || s.Summary.Properties[SummaryWriterID] != writerID {
			continue
		}
		v := s.Summary.Properties[SummaryEpoch]
		e, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return EpochRecord{}, false, fmt.Errorf("snapshot %d of writer %q: bad %s %q: %w",
				s.SnapshotID, writerID, SummaryEpoch, v, err)
		}
		return EpochRecord{Epoch: e, SnapshotID: s.SnapshotID, CommitID: s.Summary.Properties[SummaryCommitID]}, true, nil
	}
	return EpochRecord{}, false, nil
}

// EpochSummary is the summary properties that record an epoch.
func EpochSummary(writerID string, epoch int64, commitID string) map[string]string {
	return map[string]string{
		SummaryWriterID: writerID,
		SummaryEpoch:    strconv.FormatInt(epoch, 10),
		SummaryCommitID: commitID,
	}
}
