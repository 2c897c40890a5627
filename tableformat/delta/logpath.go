package delta

import (
	"fmt"
	"path"
	"strconv"
	"strings"
)

// logDir is the folder of the Delta log, relative to the table root.
const logDir = "_delta_log"

// commitKey is the log entry of a version: 20 zero-padded digits.
func commitKey(version int64) string {
	return fmt.Sprintf("%s/%020d.json", logDir, version)
}

func checkpointKey(version int64) string {
	return fmt.Sprintf("%s/%020d.checkpoint.parquet", logDir, version)
}

func checkpointPartKey(version int64, part, parts int) string {
	return fmt.Sprintf("%s/%020d.checkpoint.%010d.%010d.parquet", logDir, version, part, parts)
}

const lastCheckpointKey = logDir + "/_last_checkpoint"

// logFileKind classifies a file of the log folder by its name.
type logFileKind int

const (
	kindOther logFileKind = iota
	kindCommit
	kindCheckpointClassic // N.checkpoint.parquet
	kindCheckpointPart    // N.checkpoint.P.T.parquet
	kindCheckpointV2      // N.checkpoint.UUID.json|parquet
)

// logFile is a parsed log file name.
type logFile struct {
	key      string
	kind     logFileKind
	version  int64
	part     int // for multi-part checkpoints, 1-based
	numParts int
	data     []byte // the content, when it was read while finding the file
}

// parseLogFile recognises the names PROTOCOL.md defines; anything else
// (.crc, compacted logs, temp files) is kindOther and ignored by replay.
func parseLogFile(key string) logFile {
	name := path.Base(key)
	f := logFile{key: key}
	if len(name) < 21 || name[20] != '.' {
		return f
	}
	if !allDigits(name[:20]) {
		return f
	}
	v, err := strconv.ParseInt(name[:20], 10, 64)
	if err != nil {
		return f
	}
	f.version = v
	rest := name[21:]
	switch {
	case rest == "json":
		f.kind = kindCommit
	case rest == "checkpoint.parquet":
		f.kind = kindCheckpointClassic
	case strings.HasPrefix(rest, "checkpoint."):
		parts := strings.Split(rest, ".")
		// checkpoint.P.T.parquet or checkpoint.UUID.(json|parquet)
		if len(parts) == 4 && parts[3] == "parquet" {
			p, err1 := strconv.Atoi(parts[1])
			t, err2 := strconv.Atoi(parts[2])
			if err1 == nil && err2 == nil && allDigits(parts[1]) && allDigits(parts[2]) && p >= 1 && p <= t {
				f.kind, f.part, f.numParts = kindCheckpointPart, p, t
			}
		} else if len(parts) == 3 && (parts[2] == "json" || parts[2] == "parquet") {
			f.kind = kindCheckpointV2
		}
	}
	return f
}
