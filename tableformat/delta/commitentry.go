package delta

import (
	"bytes"
	"fmt"
)

// parseCommit decodes the log entry of version. An entry without a single
// action is corrupt, never an empty version: Delta writers always write at
// least commitInfo or the changed actions, and ours writes the entry whole
// (a synced file linked into place), so a 0-byte or blank entry is a
// torn or foreign write that replaying, or committing on top of, would
// silently lose. Errors name the file and wrap ErrCorruptLog.
func parseCommit(version int64, data []byte) ([]Action, error) {
	key := commitKey(version)
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, corrupt("commit %d (%s) is empty (%d bytes): a commit holds at least one action", version, key, len(data))
	}
	actions, err := ParseActions(data)
	if err != nil {
		return nil, fmt.Errorf("commit %d (%s): %w", version, key, err)
	}
	return actions, nil
}
