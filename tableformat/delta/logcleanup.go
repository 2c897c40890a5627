package delta

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DefaultLogRetention is delta.logRetentionDuration's default: how long
// log entries stay for time travel once a checkpoint covers them.
const DefaultLogRetention = 30 * 24 * time.Hour

// LogRetention is the table's delta.logRetentionDuration (30 days when
// unset or unreadable).
func LogRetention(conf map[string]string) time.Duration {
	if d, ok := intervalProperty(conf, "delta.logRetentionDuration"); ok {
		return d
	}
	return DefaultLogRetention
}

// LogCleanup reports a CleanupLog.
type LogCleanup struct {
	// Oldest is the oldest version the log can rebuild afterwards (the
	// checkpoint it now starts at), -1 when nothing was deleted.
	Oldest  int64
	Deleted []string // keys, in the order deleted
}

// CleanupLog deletes what the log no longer needs, as Spark's metadata
// cleanup does: every log file (commits, their .crc, checkpoints of any
// kind, compacted entries) of the versions below K, where K is the newest
// complete checkpoint at or below the oldest version committed less than
// delta.logRetentionDuration ago (conf is the table's configuration), and
// the V2 checkpoint sidecars that no checkpoint kept names and that are
// older than the retention too. So the table is read from its latest
// checkpoint as before, and every version within retention, rebuilt from
// checkpoint K, stays readable. Commit times are the versions' own
// (VersionInfo.Timestamp). Files go oldest first, so the log left is
// always a contiguous run. delta.enableExpiredLogCleanup = false turns it
// off. The txn records are in every checkpoint, so the exactly-once
// record survives.
func (t *Table) CleanupLog(ctx context.Context, conf map[string]string) (LogCleanup, error) {
	out := LogCleanup{Oldest: -1}
	if strings.EqualFold(strings.TrimSpace(conf["delta.enableExpiredLogCleanup"]), "false") {
		return out, nil
	}
	cutoff := nowFunc(t.now)().Add(-LogRetention(conf))
	objs, err := t.store.List(ctx, logDir+"/", "")
	if err != nil {
		return out, fmt.Errorf("log cleanup: %w", err)
	}
	var files []logFile
	var commits []int64
	for _, o := range objs {
		f := parseLogFile(o.Key)
		if f.kind == kindOther {
			continue
		}
		files = append(files, f)
		if f.kind == kindCommit {
			commits = append(commits, f.version)
		}
	}
	cps := completeCheckpoints(files)
	if len(cps) == 0 {
		return out, nil
	}
	newestCP := cps[len(cps)-1]
	sort.Slice(commits, func(i, j int) bool { return commits[i] < commits[j] })
	// firstKept: the oldest version within retention, or the newest
	// checkpoint, whichever is older: nothing at or after it goes.
	firstKept := newestCP
	for _, v := range commits {
		if v >= newestCP {
			break
		}
		ts, err := t.CommitTime(ctx, v)
		if err != nil {
			return out, fmt.Errorf("log cleanup: %w", err)
		}
		if ts.After(cutoff) {
			firstKept = v
			break
		}
	}
	k := int64(-1)
	for _, c := range cps {
		if c <= firstKept {
			k = c
		}
	}
	if k <= 0 || !checkpointProtectionAllows(conf, k) {
		return out, nil
	}
	type doomed struct {
		key     string
		version int64
	}
	var del []doomed
	for _, o := range objs {
		name := path.Base(o.Key)
		if path.Dir(o.Key) != logDir || strings.HasPrefix(name, ".") {
			continue
		}
		if v, ok := logFileVersion(name); ok && v < k {
			del = append(del, doomed{o.Key, v})
		}
	}
	sort.SliceStable(del, func(i, j int) bool { return del[i].version < del[j].version })
	if _, ok := conf[propCheckpointProtection]; ok {
		// Commits before checkpoints: a cleanup cut short keeps the checkpoints.
		sort.SliceStable(del, func(i, j int) bool { return !isCheckpointKey(del[i].key) && isCheckpointKey(del[j].key) })
	}
	for _, d := range del {
		if err := t.store.Delete(ctx, d.key); err != nil {
			return out, fmt.Errorf("log cleanup: %w", err)
		}
		out.Deleted = append(out.Deleted, d.key)
	}
	out.Oldest = k
	sidecars, err := t.store.ListAll(ctx, logDir+"/_sidecars/")
	if err != nil {
		return out, fmt.Errorf("log cleanup: %w", err)
	}
	if len(sidecars) == 0 {
		return out, nil
	}
	named := map[string]bool{}
	for _, f := range files {
		// A V2 checkpoint may also have a classic name: read every kept one.
		if f.kind == kindCommit || f.version < k {
			continue
		}
		actions, err := t.readActionsFile(ctx, f, true)
		if err != nil {
			return out, fmt.Errorf("log cleanup: sidecars of %s: %w", f.key, err)
		}
		for _, a := range actions {
			if a.Sidecar != nil {
				if key, err := sidecarKey(a.Sidecar.Path); err == nil {
					named[key] = true
				}
			}
		}
	}
	for _, o := range sidecars {
		if named[o.Key] || o.ModTime.IsZero() || !o.ModTime.Before(cutoff) {
			continue
		}
		if err := t.store.Delete(ctx, o.Key); err != nil {
			return out, fmt.Errorf("log cleanup: %w", err)
		}
		out.Deleted = append(out.Deleted, o.Key)
	}
	return out, nil
}

// logFileVersion reads the version a log file name starts with: 20 digits
// and a dot (commits, .crc, checkpoints); a compacted entry
// "A.B.compacted.json" counts as its last version B.
func logFileVersion(name string) (int64, bool) {
	if len(name) < 21 || name[20] != '.' || !allDigits(name[:20]) {
		return 0, false
	}
	v, err := strconv.ParseInt(name[:20], 10, 64)
	if err != nil {
		return 0, false
	}
	rest := name[21:]
	if len(rest) > 21 && rest[20] == '.' && allDigits(rest[:20]) && strings.HasSuffix(rest, ".compacted.json") {
		if b, err := strconv.ParseInt(rest[:20], 10, 64); err == nil {
			return b, true
		}
	}
	return v, true
}
