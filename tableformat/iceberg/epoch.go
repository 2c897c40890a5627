package iceberg

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

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

// EpochPropertyPrefix opens the table property that keeps a writer's
// exactly-once record once the snapshot that carried it has expired:
// "lakesql.epoch.<writer id>", whose value is an epochProperty in JSON.
// Snapshot expiry writes it in the same metadata commit that removes the
// writer's newest snapshot, so the record is never in neither place.
const EpochPropertyPrefix = "lakesql.epoch."

// EpochRecord is the newest snapshot a writer made on the main branch.
// SnapshotID may name a snapshot that has expired since (the record then
// comes from the table's properties); TimestampMs is its commit time.
type EpochRecord struct {
	Epoch          int64
	SnapshotID     int64
	CommitID       string
	TimestampMs    int64
	SequenceNumber int64
}

// epochProperty is the JSON value of an EpochPropertyPrefix property.
type epochProperty struct {
	Epoch          int64  `json:"epoch"`
	SnapshotID     int64  `json:"snapshot-id"`
	SequenceNumber int64  `json:"sequence-number"`
	TimestampMs    int64  `json:"timestamp-ms"`
	CommitID       string `json:"commit-id"`
}

// LastEpoch returns writerID's exactly-once record: the newest snapshot on
// the main branch whose summary carries writerID, or, when expiry removed
// it, the record the table's properties kept (EpochPropertyPrefix). When
// both exist the newer (by sequence number) wins; the ancestry walk ends at
// the root or at the first expired snapshot.
func LastEpoch(meta table.Metadata, writerID string) (EpochRecord, bool, error) {
	if writerID == "" {
		return EpochRecord{}, false, fmt.Errorf("%w: empty writer id", ErrInvalid)
	}
	kept, hasKept, err := propertyEpoch(meta, writerID)
	if err != nil {
		return EpochRecord{}, false, err
	}
	head := meta.SnapshotByName(table.MainBranch)
	if head == nil {
		return kept, hasKept, nil
	}
	for _, s := range table.AncestorsOf(head.SnapshotID, meta.SnapshotByID) {
		rec, ok, err := snapshotEpoch(s, writerID)
		if err != nil {
			return EpochRecord{}, false, err
		}
		if !ok {
			continue
		}
		if hasKept && kept.SequenceNumber > rec.SequenceNumber {
			return kept, true, nil
		}
		return rec, true, nil
	}
	return kept, hasKept, nil
}

// snapshotEpoch reads the epoch record of s when its writer is writerID.
func snapshotEpoch(s table.Snapshot, writerID string) (EpochRecord, bool, error) {
	if s.Summary == nil || s.Summary.Properties[SummaryWriterID] != writerID {
		return EpochRecord{}, false, nil
	}
	v := s.Summary.Properties[SummaryEpoch]
	e, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return EpochRecord{}, false, fmt.Errorf("snapshot %d of writer %q: bad %s %q: %w",
			s.SnapshotID, writerID, SummaryEpoch, v, err)
	}
	return EpochRecord{Epoch: e, SnapshotID: s.SnapshotID, CommitID: s.Summary.Properties[SummaryCommitID],
		TimestampMs: s.TimestampMs, SequenceNumber: s.SequenceNumber}, true, nil
}

// propertyEpoch reads the record the table's properties keep for writerID.
func propertyEpoch(meta table.Metadata, writerID string) (EpochRecord, bool, error) {
	key := EpochPropertyPrefix + writerID
	v, ok := meta.Properties()[key]
	if !ok {
		return EpochRecord{}, false, nil
	}
	var p epochProperty
	if err := json.Unmarshal([]byte(v), &p); err != nil {
		return EpochRecord{}, false, fmt.Errorf("%w: table property %s = %q: %w", ErrInvalid, key, v, err)
	}
	return EpochRecord{Epoch: p.Epoch, SnapshotID: p.SnapshotID, CommitID: p.CommitID,
		TimestampMs: p.TimestampMs, SequenceNumber: p.SequenceNumber}, true, nil
}

// KeptEpochs are the exactly-once records the table's properties keep, by
// writer id (records whose snapshots have expired).
func KeptEpochs(meta table.Metadata) (map[string]EpochRecord, error) {
	out := map[string]EpochRecord{}
	for k := range meta.Properties() {
		w, ok := strings.CutPrefix(k, EpochPropertyPrefix)
		if !ok {
			continue
		}
		rec, _, err := propertyEpoch(meta, w)
		if err != nil {
			return nil, err
		}
		out[w] = rec
	}
	return out, nil
}

// ExpiryEpochProperties are the table properties a commit that removes the
// snapshots in expired must set so that no writer's record is lost: one
// for every writer whose newest snapshot on the main branch is among them.
// A writer whose newest snapshot stays needs none (LastEpoch finds it);
// one whose record only the properties hold already keeps it.
func ExpiryEpochProperties(meta table.Metadata, expired map[int64]bool) (map[string]string, error) {
	out := map[string]string{}
	head := meta.SnapshotByName(table.MainBranch)
	if head == nil {
		return out, nil
	}
	seen := map[string]bool{}
	for _, s := range table.AncestorsOf(head.SnapshotID, meta.SnapshotByID) {
		if s.Summary == nil {
			continue
		}
		w := s.Summary.Properties[SummaryWriterID]
		if w == "" || seen[w] {
			continue
		}
		seen[w] = true
		if !expired[s.SnapshotID] {
			continue
		}
		rec, ok, err := LastEpoch(meta, w)
		if err != nil {
			return nil, err
		}
		if !ok || rec.SnapshotID != s.SnapshotID {
			continue // the properties already hold a newer record
		}
		b, err := json.Marshal(epochProperty{Epoch: rec.Epoch, SnapshotID: rec.SnapshotID, SequenceNumber: rec.SequenceNumber,
			TimestampMs: rec.TimestampMs, CommitID: rec.CommitID})
		if err != nil {
			return nil, err
		}
		out[EpochPropertyPrefix+w] = string(b)
	}
	return out, nil
}

// EpochSummary is the summary properties that record an epoch.
func EpochSummary(writerID string, epoch int64, commitID string) map[string]string {
	return map[string]string{
		SummaryWriterID: writerID,
		SummaryEpoch:    strconv.FormatInt(epoch, 10),
		SummaryCommitID: commitID,
	}
}
