package delta

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
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
	key, actions := checkpointFile(snap.Protocol, version, snap.checkpointActions(nowFunc(t.now)()))
	if key != checkpointKey(version) {
		if lc, ok := t.readLastCheckpoint(ctx); ok && lc.Version == version {
			return nil // a UUID-named one is there: another would only add a file
		}
	}
	data, err := WriteCheckpointParquet(actions)
	if err != nil {
		return fmt.Errorf("checkpoint %d: %w", version, err)
	}
	// Put, not PutIfAbsent: a checkpoint of a version is the same whoever
	// writes it, and rewriting one is harmless.
	if err := t.store.Put(ctx, key, data); err != nil {
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
// domain metadata, active files and the tombstones not yet expired. A txn
// expires only when the table sets delta.setTransactionRetentionDuration
// (PROTOCOL.md lets a checkpoint drop the txns whose lastUpdated is older);
// lakesql sets none on the tables it creates, so the exactly-once record
// of every writer is carried forward for ever.
func (s *Snapshot) checkpointActions(now time.Time) []Action {
	proto, md := s.Protocol, s.Metadata
	out := []Action{{Protocol: &proto}, {MetaData: &md}}
	txnHorizon, expireTxns := int64(0), false
	// An unreadable retention expires nothing: keeping a record is safe.
	if d, ok, err := s.Metadata.TxnRetention(); ok && err == nil && d >= 0 {
		txnHorizon, expireTxns = now.Add(-d).UnixMilli(), true
	}
	for _, t := range s.Txns() {
		t := t
		if expireTxns && t.LastUpdated != nil && *t.LastUpdated < txnHorizon {
			continue
		}
		out = append(out, Action{Txn: &t})
	}
	for _, d := range s.DomainMetadata() {
		d := d
		out = append(out, Action{DomainMetadata: &d})
	}
	for _, f := range s.files {
		out = append(out, Action{Add: f})
	}
	horizon := now.Add(-TombstoneRetention(s.Metadata.Configuration)).UnixMilli()
	for _, r := range s.tombstones {
		if r.DeletionTimestamp != nil && *r.DeletionTimestamp < horizon {
			continue
		}
		out = append(out, Action{Remove: r})
	}
	return out
}

// TombstoneRetention is the table's delta.deletedFileRetentionDuration:
// how long removed files stay for time travel (7 days when unset or
// unreadable).
func TombstoneRetention(conf map[string]string) time.Duration {
	if d, ok := intervalProperty(conf, "delta.deletedFileRetentionDuration"); ok {
		return d
	}
	return defaultTombstoneRetention
}

func intervalProperty(conf map[string]string, key string) (time.Duration, bool) {
	v, ok := conf[key]
	if !ok {
		return 0, false
	}
	d, err := parseInterval(v)
	if err != nil || d < 0 {
		return 0, false
	}
	return d, true
}

// parseInterval reads Spark's "interval N unit" form of durations, as
// Spark writes and accepts them: case-insensitive, with or without the
// word interval, several "N unit" pairs summed ("interval 1 day 12
// hours"), units from microseconds to weeks, singular or plural.
func parseInterval(s string) (time.Duration, error) {
	f := strings.Fields(strings.ToLower(strings.TrimSpace(s)))
	if len(f) > 0 && f[0] == "interval" {
		f = f[1:]
	}
	if len(f) == 0 || len(f)%2 != 0 {
		return 0, fmt.Errorf("bad interval %q", s)
	}
	units := map[string]time.Duration{
		"microsecond": time.Microsecond, "millisecond": time.Millisecond,
		"second": time.Second, "minute": time.Minute, "hour": time.Hour,
		"day": 24 * time.Hour, "week": 7 * 24 * time.Hour,
	}
	var total time.Duration
	for i := 0; i < len(f); i += 2 {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("bad interval %q", s)
		}
		u, ok := units[strings.TrimSuffix(f[i+1], "s")]
		if !ok {
			return 0, fmt.Errorf("bad interval unit in %q", s)
		}
		if n > int64(math.MaxInt64/u) || n < -int64(math.MaxInt64/u) {
			return 0, fmt.Errorf("interval %q is too long", s)
		}
		total += time.Duration(n) * u
	}
	return total, nil
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
