package deltatest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lakesql/lakesql/tableformat/delta"
)

// CheckFeatureLog checks the log entries of versions from..latest of the
// table against what PROTOCOL.md asks of writers of the features the
// table has at each version:
//   - inCommitTimestamp enabled: commitInfo is the first action and
//     carries inCommitTimestamp, each one above the one before;
//   - rowTracking supported: every add carries baseRowId and
//     defaultRowCommitVersion (a new file's is its version), the live
//     files' row id ranges do not overlap, and the delta.rowTracking
//     high-water mark is at or above every row id assigned;
//   - v2Checkpoint: every checkpoint file of a version checked follows the
//     V2 spec (one checkpointMetadata action naming its version).
//
// It returns the latest snapshot.
func CheckFeatureLog(t testing.TB, table string, from int64) *delta.Snapshot {
	t.Helper()
	ctx := context.Background()
	store, err := delta.NewLocalStorage(table)
	if err != nil {
		t.Fatal(err)
	}
	tbl := delta.NewTable(store)
	latest, err := tbl.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	prevICT := int64(-1)
	for v := from; v <= latest.Version; v++ {
		snap, err := tbl.At(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		actions, err := tbl.ReadCommit(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		conf := snap.Metadata.Configuration
		if snap.Protocol.HasWriterFeature(delta.FeatureInCommitTimestamp) && strings.EqualFold(conf["delta.enableInCommitTimestamps"], "true") {
			if len(actions) == 0 || actions[0].CommitInfo == nil {
				t.Fatalf("%s version %d: in-commit timestamps on, but commitInfo is not the first action", table, v)
			}
			ict, ok := jsonInt(actions[0].CommitInfo["inCommitTimestamp"])
			if !ok {
				t.Fatalf("%s version %d: commitInfo without inCommitTimestamp: %v", table, v, actions[0].CommitInfo)
			}
			if ict <= prevICT {
				t.Fatalf("%s version %d: inCommitTimestamp %d not above the previous %d", table, v, ict, prevICT)
			}
			prevICT = ict
		}
		if snap.Protocol.HasWriterFeature(delta.FeatureRowTracking) && !strings.EqualFold(conf["delta.rowTrackingSuspended"], "true") {
			checkRowIDs(t, table, snap, actions)
		}
	}
	if latest.Protocol.HasWriterFeature(delta.FeatureV2Checkpoint) {
		checkV2Checkpoints(t, table, from)
	}
	return latest
}

func checkRowIDs(t testing.TB, table string, snap *delta.Snapshot, actions []delta.Action) {
	t.Helper()
	for _, a := range actions {
		if a.Add == nil {
			continue
		}
		if a.Add.BaseRowID == nil || a.Add.DefaultRowCommitVersion == nil {
			t.Fatalf("%s version %d: add %s without baseRowId or defaultRowCommitVersion", table, snap.Version, a.Add.Path)
		}
		if *a.Add.DefaultRowCommitVersion > snap.Version {
			t.Fatalf("%s version %d: add %s has defaultRowCommitVersion %d", table, snap.Version, a.Add.Path, *a.Add.DefaultRowCommitVersion)
		}
	}
	hwm, err := snap.RowIDHighWaterMark()
	if err != nil {
		t.Fatal(err)
	}
	type span struct{ lo, hi int64 }
	var spans []span
	for _, f := range snap.Files() {
		if f.BaseRowID == nil {
			continue // from before the feature was on
		}
		n, ok := f.NumRecords()
		if !ok {
			t.Fatalf("%s version %d: %s has no numRecords", table, snap.Version, f.Path)
		}
		if n > 0 {
			spans = append(spans, span{*f.BaseRowID, *f.BaseRowID + n - 1})
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return int(a.lo - b.lo) })
	for i, s := range spans {
		if i > 0 && s.lo <= spans[i-1].hi {
			t.Fatalf("%s version %d: row id ranges %v and %v overlap", table, snap.Version, spans[i-1], s)
		}
		if s.hi > hwm {
			t.Fatalf("%s version %d: row id %d above the high-water mark %d", table, snap.Version, s.hi, hwm)
		}
	}
}

func checkV2Checkpoints(t testing.TB, table string, from int64) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(table, "_delta_log", "*.checkpoint*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		v, err := strconv.ParseInt(filepath.Base(name)[:20], 10, 64)
		if err != nil || v < from {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		actions, err := delta.ReadCheckpointParquet(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var metas []int64
		for _, a := range actions {
			if a.CheckpointMetadata != nil {
				metas = append(metas, a.CheckpointMetadata.Version)
			}
		}
		if len(metas) != 1 || metas[0] != v {
			t.Fatalf("%s: a v2Checkpoint table's checkpoint with checkpointMetadata versions %v, want [%d]", name, metas, v)
		}
	}
}

func jsonInt(v any) (int64, bool) {
	switch x := v.(type) {
	case float64:
		return int64(x), true
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	}
	return 0, false
}
