package delta

import "strconv"

// Checkpoint protection (protocol RFC checkpoint-protection.md): the
// checkpoints before delta.requireCheckpointProtectionBeforeVersion stay
// until one cleanup truncates all the history before that version, and a
// cleanup deletes commits before checkpoints.

// propCheckpointProtection is the version before which checkpoints are protected.
const propCheckpointProtection = "delta.requireCheckpointProtectionBeforeVersion"

// checkpointProtectionAllows tells whether a log cleanup that deletes every
// version below k may run on a table with configuration conf: always when
// no version is protected, else only when k reaches the protected version
// (the whole protected history goes in one go). An unreadable version
// protects everything.
func checkpointProtectionAllows(conf map[string]string, k int64) bool {
	v, ok := conf[propCheckpointProtection]
	if !ok {
		return true
	}
	b, err := strconv.ParseInt(v, 10, 64)
	return err == nil && k >= b
}

// isCheckpointKey tells a checkpoint file of any kind by its key.
func isCheckpointKey(key string) bool {
	switch parseLogFile(key).kind {
	case kindCheckpointClassic, kindCheckpointPart, kindCheckpointV2:
		return true
	}
	return false
}
