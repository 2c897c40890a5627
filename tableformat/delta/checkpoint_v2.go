package delta

import (
	"fmt"

	"github.com/google/uuid"
)

// A table with the v2Checkpoint feature gets checkpoints that follow the
// V2 spec (PROTOCOL.md, "V2 Spec"), in their simplest allowed form: one
// UUID-named Parquet file, N.checkpoint.UUID.parquet, whose first row is
// the checkpointMetadata action and which holds every add and remove
// itself, with no sidecar files. Never a classic V1 checkpoint, and never
// a multi-part one, which the feature forbids.

// v2CheckpointKey names a new UUID-named checkpoint of version.
func v2CheckpointKey(version int64) string {
	return fmt.Sprintf("%s/%020d.checkpoint.%s.parquet", logDir, version, uuid.NewString())
}

// checkpointFile returns the key to write the checkpoint of version at and
// its actions: V2 (with checkpointMetadata) when the protocol has the
// v2Checkpoint feature, classic otherwise.
func checkpointFile(p Protocol, version int64, actions []Action) (string, []Action) {
	if !p.HasWriterFeature(FeatureV2Checkpoint) {
		return checkpointKey(version), actions
	}
	out := make([]Action, 0, len(actions)+1)
	out = append(out, Action{CheckpointMetadata: &CheckpointMetadata{Version: version}})
	return v2CheckpointKey(version), append(out, actions...)
}
