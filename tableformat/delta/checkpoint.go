package delta

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// defaultTombstoneRetention is delta.deletedFileRetentionDuration's default.
const defaultTombstoneRetention = 7 * 24 * time.Hour

// Checkpoint writes a classic checkpoint of the table at version and points
// _last_checkpoint at it (unless it already names a newer one). The txn
// actions go into the checkpoint, so the exactly-once record survives log
// cleanup.
func (t *Table) Checkpoint(ctx context.Context, version int64) error {
	if version < 0 {
		return fmt.Errorf("checkpoint %d: version must not be negative", version)
	}
	snap, err := t.snapshot(ctx, version, true)
	if err != nil {
		return fmt.Errorf("checkpoint %d: %w", version, err)
	}
	if err := snap.checkWritable(); err != nil {
		return fmt.Errorf("checkpoint %d: %w", version, err)
	}
	actions := snap.checkpointActions(time.Now())
	data, err := WriteCheckpointParquet(actions)
	if err != nil {
		return fmt.Errorf("checkpoint %d: %w", version, err)
	}
	// Put, not PutIfAbsent: a checkpoint of a version is the same whoever
	// writes it, and rewriting one is harmless.
	if err := t.store.Put(ctx, checkpointKey(version), data); err != nil {
		return fmt.Errorf("checkpoint %d: %w", version, err)
	}
	if lc, ok := t.readLastCheckpoint(ctx); ok && lc.Version >= version {
		return nil
	}
	adds := int64(len(snap.files))
	size := int64(len(data))
	lc, err := json.Marshal(lastCheckpointInfo{
		Version:       version,
		Size:          int64(len(actions)),
		SizeInBytes:   &size,
		NumOfAddFiles: &adds,
	})
	if err != nil {
		return err
	}
	if err := t.store.Put(ctx, lastCheckpointKey, lc); err != nil {
		return fmt.Errorf("checkpoint %d: _last_checkpoint: %w", version, err)
	}
	return nil
}

// checkpointActions is the state as actions: protocol, metadata, txns,
// domain metadata, active files and the tombstones not yet expired.
func (s *Snapshot) checkpointActions(now time.Time) []Action {
	proto, md := s.Protocol, s.Metadata
	out := []Action{{Protocol: &proto}, {MetaData: &md}}
	for _, t := range s.Txns() {
		t := t
		out = append(out, Action{Txn: &t})
	}
	for _, d := range s.DomainMetadata() {
		d := d
		out = append(out, Action{DomainMetadata: &d})
	}
	for _, f := range s.files {
		out = append(out, Action{Add: f})
	}
	retention := defaultTombstoneRetention
	if v, ok := s.Metadata.Configuration["delta.deletedFileRetentionDuration"]; ok {
		if d, err := parseInterval(v); err == nil {
			retention = d
		}
	}
	horizon := now.Add(-retention).UnixMilli()
	for _, r := range s.tombstones {
		if r.DeletionTimestamp != nil && *r.DeletionTimestamp < horizon {
			continue
		}
		out = append(out, Action{Remove: r})
	}
	return out
}

// parseInterval reads Spark's "interval N unit" form of durations.
func parseInterval(s string) (time.Duration, error) {
	var n int64
	var unit string
	if _, err := fmt.Sscanf(s, "interval %d %s", &n, &unit); err != nil {
		return 0, fmt.Errorf("bad interval %q", s)
	}
	units := map[string]time.Duration{
		"second": time.Second, "seconds": time.Second,
		"minute": time.Minute, "minutes": time.Minute,
		"hour": time.Hour, "hours": time.Hour,
		"day": 24 * time.Hour, "days": 24 * time.Hour,
		"week": 7 * 24 * time.Hour, "weeks": 7 * 24 * time.Hour,
	}
	u, ok := units[unit]
	if !ok {
		return 0, fmt.Errorf("bad interval unit in %q", s)
	}
	return time.Duration(n) * u, nil
}

func jsonString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
