package delta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// VersionInfo is what one log entry tells about its version: when and how
// it was made, and what it changed.
type VersionInfo struct {
	Version int64
	// Timestamp is the commit's inCommitTimestamp when it has one, else
	// commitInfo.timestamp, else the entry's modification time.
	Timestamp time.Time
	// Operation, Parameters and Metrics are commitInfo's operation,
	// operationParameters and operationMetrics (values as written: JSON
	// text); empty when the entry has no commitInfo.
	Operation          string
	Parameters         map[string]string
	Metrics            map[string]string
	Txns               []Txn
	Adds               []*Add
	Removes            []*Remove
	inCommitTime       bool
	hasCommitTimestamp bool
}

// VersionInfo reads the log entry of version. It fails with an error
// wrapping ErrNotFound when the entry is not there.
func (t *Table) VersionInfo(ctx context.Context, version int64) (VersionInfo, error) {
	data, err := t.store.Get(ctx, commitKey(version))
	if err != nil {
		return VersionInfo{}, fmt.Errorf("read commit %d: %w", version, err)
	}
	actions, err := parseCommit(version, data)
	if err != nil {
		return VersionInfo{}, err
	}
	vi := versionInfo(version, actions)
	if !vi.inCommitTime && !vi.hasCommitTimestamp {
		info, err := t.store.Stat(ctx, commitKey(version))
		if err != nil {
			return VersionInfo{}, fmt.Errorf("commit %d has no timestamp, and its entry: %w", version, err)
		}
		vi.Timestamp = info.ModTime.UTC()
	}
	return vi, nil
}

func versionInfo(version int64, actions []Action) VersionInfo {
	vi := VersionInfo{Version: version}
	for _, a := range actions {
		switch {
		case a.CommitInfo != nil:
			ci := a.CommitInfo
			vi.Operation, _ = ci["operation"].(string)
			vi.Parameters = stringMap(ci["operationParameters"])
			vi.Metrics = stringMap(ci["operationMetrics"])
			if ms, ok := jsonInt(ci["inCommitTimestamp"]); ok {
				vi.Timestamp, vi.inCommitTime = time.UnixMilli(ms).UTC(), true
			} else if ms, ok := jsonInt(ci["timestamp"]); ok {
				vi.Timestamp, vi.hasCommitTimestamp = time.UnixMilli(ms).UTC(), true
			}
		case a.Txn != nil:
			vi.Txns = append(vi.Txns, *a.Txn)
		case a.Add != nil:
			vi.Adds = append(vi.Adds, a.Add)
		case a.Remove != nil:
			vi.Removes = append(vi.Removes, a.Remove)
		}
	}
	return vi
}

// RowsAdded counts the rows the version's data-changing adds hold (less
// their deletion vectors); ok is false when a file's stats do not tell.
func (vi VersionInfo) RowsAdded() (int64, bool) {
	var n int64
	for _, a := range vi.Adds {
		if !a.DataChange {
			continue
		}
		r, ok := a.NumRecords()
		if !ok {
			return 0, false
		}
		if a.DeletionVector != nil {
			r -= a.DeletionVector.Cardinality
		}
		n += r
	}
	return n, true
}

// RowsRemoved counts the rows the version's data-changing removes took
// out, from the stats removes carry; ok is false when one carries none.
func (vi VersionInfo) RowsRemoved() (int64, bool) {
	var n int64
	for _, r := range vi.Removes {
		if !r.DataChange {
			continue
		}
		a := Add{Stats: r.Stats}
		rows, ok := a.NumRecords()
		if !ok {
			return 0, false
		}
		if r.DeletionVector != nil {
			rows -= r.DeletionVector.Cardinality
		}
		n += rows
	}
	return n, true
}

// CommitTime returns the timestamp of version (VersionInfo.Timestamp).
func (t *Table) CommitTime(ctx context.Context, version int64) (time.Time, error) {
	vi, err := t.VersionInfo(ctx, version)
	if err != nil {
		return time.Time{}, err
	}
	return vi.Timestamp, nil
}

// VersionAt returns the newest version in [oldest, latest] committed at or
// before at, by binary search over the commit times (which are taken to
// grow with the version, as Delta's time travel takes them); found is
// false when even oldest was committed after at.
func (t *Table) VersionAt(ctx context.Context, at time.Time, oldest, latest int64) (version int64, found bool, err error) {
	lo, hi := oldest, latest // invariant: the answer, if any, is in [lo-1, hi]
	found = false
	for lo <= hi {
		mid := lo + (hi-lo)/2
		ts, err := t.CommitTime(ctx, mid)
		if errors.Is(err, ErrNotFound) {
			// Cleaned up under us: everything below is gone too.
			lo = mid + 1
			continue
		}
		if err != nil {
			return 0, false, err
		}
		if ts.After(at) {
			hi = mid - 1
		} else {
			version, found = mid, true
			lo = mid + 1
		}
	}
	return version, found, nil
}

func stringMap(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		out[k] = jsonString(x)
	}
	return out
}

// jsonInt reads a JSON number (or a string holding one) as an int64.
func jsonInt(v any) (int64, bool) {
	switch x := v.(type) {
	case float64:
		return int64(x), true
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil
	}
	return 0, false
}
