package delta

import (
	"context"
	"time"
)

// featureCommit is what the table's writer features add to one commit:
// the actions with row ids and the high-water mark assigned, and the
// commitInfo fields (inCommitTimestamp, tags).
type featureCommit struct {
	actions []Action
	ict     int64 // inCommitTimestamp, when hasICT
	hasICT  bool
	tags    map[string]string
}

// withFeatures prepares the commit of actions as version, attempted at
// now, for the features the table has after it. The caller's actions are
// not changed.
func (s *Snapshot) withFeatures(ctx context.Context, version int64, now time.Time, actions []Action) (featureCommit, error) {
	p, _ := s.nextState(actions)
	if err := checkDomains(p, actions, nil); err != nil {
		return featureCommit{}, err
	}
	out, tags, err := s.assignRowIDs(version, actions)
	if err != nil {
		return featureCommit{}, err
	}
	if err := checkDomains(p, out, map[string]bool{RowTrackingDomain: true}); err != nil {
		return featureCommit{}, err
	}
	ict, out, hasICT, err := s.inCommitTimestamp(ctx, now, out)
	if err != nil {
		return featureCommit{}, err
	}
	return featureCommit{actions: out, ict: ict, hasICT: hasICT, tags: tags}, nil
}

// stamp writes the features' fields into the commitInfo ci. With
// in-commit timestamps, timestamp is the in-commit one too, so readers of
// either field see one time.
func (fc featureCommit) stamp(ci map[string]any) {
	if fc.hasICT {
		ci["inCommitTimestamp"] = fc.ict
		ci["timestamp"] = fc.ict
	}
	if len(fc.tags) > 0 {
		ci["tags"] = fc.tags
	}
}

// time is the commit's time: the in-commit timestamp when there is one.
func (fc featureCommit) time(now time.Time) time.Time {
	if fc.hasICT {
		return time.UnixMilli(fc.ict).UTC()
	}
	return now
}
