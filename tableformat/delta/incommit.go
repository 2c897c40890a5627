package delta

// In-Commit Timestamps (PROTOCOL.md, "In-Commit Timestamps"): with the
// feature enabled, every commit's commitInfo is its first action and
// carries inCommitTimestamp, the larger of the time the writer attempted
// the commit and one millisecond after the previous commit's.

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"time"
)

// The table properties of in-commit timestamps.
const (
	propEnableICT          = "delta.enableInCommitTimestamps"
	propICTEnableVersion   = "delta.inCommitTimestampEnablementVersion"
	propICTEnableTimestamp = "delta.inCommitTimestampEnablementTimestamp"
)

// inCommitTimestamps reports whether in-commit timestamps are enabled: the
// feature in the protocol and delta.enableInCommitTimestamps = true.
func inCommitTimestamps(p Protocol, m *Metadata) bool {
	return p.HasWriterFeature(FeatureInCommitTimestamp) && isTrue(m.Configuration[propEnableICT])
}

// ictEnablement reads delta.inCommitTimestampEnablementVersion and
// -Timestamp; ok is false when the table does not carry both (in-commit
// timestamps off, or on since version 0).
func ictEnablement(m *Metadata) (version, ts int64, ok bool) {
	v, err1 := strconv.ParseInt(m.Configuration[propICTEnableVersion], 10, 64)
	t, err2 := strconv.ParseInt(m.Configuration[propICTEnableTimestamp], 10, 64)
	return v, t, err1 == nil && err2 == nil
}

// nextState is the protocol and metadata the table has once actions are
// committed on s.
func (s *Snapshot) nextState(actions []Action) (Protocol, *Metadata) {
	p, md := s.Protocol, &s.Metadata
	for _, a := range actions {
		if a.Protocol != nil {
			p = *a.Protocol
		}
		if a.MetaData != nil {
			md = a.MetaData
		}
	}
	return p, md
}

// inCommitTimestamp returns the inCommitTimestamp of the commit of actions
// as version s.Version+1 attempted at now, or ok false when the feature is
// off after it. A commit that turns the feature on gets the enablement
// properties in its metaData action (a copy: the caller's is not changed),
// and a timestamp after the previous entry's modification time, as the
// protocol requires.
func (s *Snapshot) inCommitTimestamp(ctx context.Context, now time.Time, actions []Action) (int64, []Action, bool, error) {
	p, md := s.nextState(actions)
	if !inCommitTimestamps(p, md) {
		return 0, actions, false, nil
	}
	ts := now.UnixMilli()
	if inCommitTimestamps(s.Protocol, &s.Metadata) {
		prev, err := s.table.VersionInfo(ctx, s.Version)
		if err != nil {
			return 0, nil, false, fmt.Errorf("in-commit timestamp: the previous commit: %w", err)
		}
		if !prev.inCommitTime {
			return 0, nil, false, corrupt("version %d has in-commit timestamps on but its commitInfo carries no inCommitTimestamp", s.Version)
		}
		return max(ts, prev.Timestamp.UnixMilli()+1), actions, true, nil
	}
	// This commit turns the feature on.
	info, err := s.table.store.Stat(ctx, commitKey(s.Version))
	if err != nil {
		return 0, nil, false, fmt.Errorf("in-commit timestamp: the previous commit: %w", err)
	}
	ts = max(ts, info.ModTime.UnixMilli()+1)
	m := *md
	m.Configuration = maps.Clone(m.Configuration)
	m.Configuration[propICTEnableVersion] = strconv.FormatInt(s.Version+1, 10)
	m.Configuration[propICTEnableTimestamp] = strconv.FormatInt(ts, 10)
	out := make([]Action, 0, len(actions)+1)
	placed := false
	for _, a := range actions {
		if a.MetaData != nil {
			a.MetaData, placed = &m, true
		}
		out = append(out, a)
	}
	if !placed { // the protocol alone turned it on: the properties need a metaData action
		out = append(out, Action{MetaData: &m})
	}
	return ts, out, true, nil
}

// VersionAt is Table.VersionAt over [oldest, s.Version] as PROTOCOL.md
// recommends for a table that turned in-commit timestamps on after
// version 0: at or after delta.inCommitTimestampEnablementTimestamp only
// the versions since the enablement count, before it only those before.
func (s *Snapshot) VersionAt(ctx context.Context, at time.Time, oldest int64) (int64, bool, error) {
	lo, hi := oldest, s.Version
	if inCommitTimestamps(s.Protocol, &s.Metadata) {
		if ev, ets, ok := ictEnablement(&s.Metadata); ok {
			if at.UnixMilli() >= ets {
				lo = max(lo, ev)
			} else {
				hi = min(hi, ev-1)
			}
		}
	}
	return s.table.VersionAt(ctx, at, lo, hi)
}
