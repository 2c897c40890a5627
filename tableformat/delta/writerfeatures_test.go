package delta

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// wfCommit commits actions on the latest snapshot at now.
func wfCommit(t *testing.T, tbl *Table, now time.Time, actions ...Action) CommitResult {
	t.Helper()
	snap, err := tbl.Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res, err := snap.Commit(context.Background(), actions, CommitOptions{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// wfCreate creates a two-column table at now.
func wfCreate(t *testing.T, now time.Time, conf map[string]string) *Table {
	t.Helper()
	store, err := NewLocalStorage(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Create(context.Background(), store, CreateOptions{Schema: atSchema(), Configuration: conf,
		Now: func() time.Time { return now }}); err != nil {
		t.Fatal(err)
	}
	return NewTable(store)
}

// wfEntry reads the raw actions of version's entry, in order.
func wfEntry(t *testing.T, tbl *Table, version int64) []Action {
	t.Helper()
	actions, err := tbl.ReadCommit(context.Background(), version)
	if err != nil {
		t.Fatal(err)
	}
	return actions
}

func wfICT(t *testing.T, actions []Action) int64 {
	t.Helper()
	if len(actions) == 0 || actions[0].CommitInfo == nil {
		t.Fatalf("the first action is not commitInfo: %+v", actions)
	}
	ms, ok := jsonInt(actions[0].CommitInfo["inCommitTimestamp"])
	if !ok {
		t.Fatalf("commitInfo has no inCommitTimestamp: %v", actions[0].CommitInfo)
	}
	return ms
}

func TestInCommitTimestampsMonotonic(t *testing.T) {
	ctx := context.Background()
	t0 := time.UnixMilli(1_700_000_000_000).UTC()
	store, err := NewLocalStorage(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Create(ctx, store, CreateOptions{Schema: atSchema(), Now: func() time.Time { return t0 },
		Configuration: map[string]string{"delta.enableInCommitTimestamps": "true"}}); err != nil {
		t.Fatal(err)
	}
	tbl := NewTable(store)
	snap, err := tbl.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Protocol.HasWriterFeature(FeatureInCommitTimestamp) || snap.Protocol.MinWriterVersion != 7 {
		t.Fatalf("protocol %+v lacks inCommitTimestamp at writer 7", snap.Protocol)
	}
	if got := wfICT(t, wfEntry(t, tbl, 0)); got != t0.UnixMilli() {
		t.Fatalf("version 0 inCommitTimestamp %d, want %d", got, t0.UnixMilli())
	}
	// The same clock, then one that went back: each is one millisecond on.
	for i, now := range []time.Time{t0, t0.Add(-time.Hour), t0.Add(time.Minute)} {
		res := wfCommit(t, tbl, now, Action{Add: ctAdd("f" + string(rune('a'+i)))})
		got := wfICT(t, wfEntry(t, tbl, res.Version))
		want := max(now.UnixMilli(), t0.UnixMilli()+int64(i)+1)
		if got != want || !res.Time.Equal(time.UnixMilli(want)) {
			t.Fatalf("version %d: inCommitTimestamp %d (result time %v), want %d", res.Version, got, res.Time, want)
		}
		vi, err := tbl.VersionInfo(ctx, res.Version)
		if err != nil || vi.Timestamp.UnixMilli() != want {
			t.Fatalf("history of version %d: %v, %v; want %d", res.Version, vi.Timestamp, err, want)
		}
	}
	if _, _, ok := ictEnablement(&snap.Metadata); ok {
		t.Fatal("a table created with in-commit timestamps carries enablement properties")
	}
}

func TestInCommitTimestampsEnabledLater(t *testing.T) {
	ctx := context.Background()
	past := time.UnixMilli(1_600_000_000_000).UTC() // long before the entries' modification times
	tbl := wfCreate(t, past.Add(-time.Second), nil)
	wfCommit(t, tbl, past, Action{Add: ctAdd("a")})
	wfCommit(t, tbl, past.Add(time.Second), Action{Add: ctAdd("b")})
	snap, err := tbl.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	md := snap.Metadata
	md.Configuration = map[string]string{"delta.enableInCommitTimestamps": "true"}
	p := WithFeatures(snap.Protocol, FeatureInCommitTimestamp)
	res := wfCommit(t, tbl, past.Add(2*time.Second), Action{Protocol: &p}, Action{MetaData: &md})
	if md.Configuration[propICTEnableVersion] != "" {
		t.Fatal("Commit changed the caller's metaData")
	}
	entry := wfEntry(t, tbl, res.Version)
	ict := wfICT(t, entry)
	prev, err := tbl.store.Stat(ctx, commitKey(res.Version-1))
	if err != nil {
		t.Fatal(err)
	}
	if ict <= prev.ModTime.UnixMilli() {
		t.Fatalf("enabling commit's inCommitTimestamp %d is not after the previous entry's modification time %d", ict, prev.ModTime.UnixMilli())
	}
	snap, err = tbl.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ev, ets, ok := ictEnablement(&snap.Metadata)
	if !ok || ev != res.Version || ets != ict {
		t.Fatalf("enablement %d@%d (%v), want %d@%d", ev, ets, ok, res.Version, ict)
	}
	if !slices.Equal(snap.Protocol.WriterFeatures, []string{"appendOnly", "invariants", "inCommitTimestamp"}) || snap.Protocol.MinReaderVersion != 1 {
		t.Fatalf("protocol %+v", snap.Protocol)
	}
	next := wfCommit(t, tbl, past, Action{Add: ctAdd("c")})
	if got := wfICT(t, wfEntry(t, tbl, next.Version)); got != ict+1 {
		t.Fatalf("after enablement: %d, want %d", got, ict+1)
	}
	// Time travel: at or after the enablement time only versions since it
	// count; before it, only those before.
	if v, found, err := snap.VersionAt(ctx, time.UnixMilli(ict), 0); err != nil || !found || v != res.Version {
		t.Fatalf("VersionAt(enablement) = %d, %v, %v; want %d", v, found, err, res.Version)
	}
	if v, found, err := snap.VersionAt(ctx, past.Add(1500*time.Millisecond), 0); err != nil || !found || v != 2 {
		t.Fatalf("VersionAt(before enablement) = %d, %v, %v; want 2", v, found, err)
	}
}

// wfRowAdd is an add of a file holding rows rows.
func wfRowAdd(path string, rows int) *Add {
	a := ctAdd(path)
	a.Stats = fmt.Sprintf(`{"numRecords":%d}`, rows)
	return a
}

func wfHWM(t *testing.T, tbl *Table) int64 {
	t.Helper()
	snap, err := tbl.Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n, err := snap.RowIDHighWaterMark()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

type rowIDs struct {
	Path          string
	Base, Version int64
}

func wfRowIDs(actions []Action) []rowIDs {
	var out []rowIDs
	for _, a := range actions {
		if a.Add != nil && a.Add.BaseRowID != nil && a.Add.DefaultRowCommitVersion != nil {
			out = append(out, rowIDs{a.Add.Path, *a.Add.BaseRowID, *a.Add.DefaultRowCommitVersion})
		}
	}
	return out
}

func TestRowTrackingAssignsIDs(t *testing.T) {
	ctx := context.Background()
	_, tbl := ctNewTable(t, map[string]string{"delta.enableRowTracking": "true"})
	snap, err := tbl.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{FeatureRowTracking, FeatureDomainMetadata} {
		if !snap.Protocol.HasWriterFeature(f) {
			t.Fatalf("protocol %+v lacks %s", snap.Protocol, f)
		}
	}
	conf := snap.Metadata.Configuration
	if !strings.HasPrefix(conf[propMaterializedRowID], materializedRowIDPrefix) ||
		!strings.HasPrefix(conf[propMaterializedRowCommitVer], materializedRowCommitVerPrefix) {
		t.Fatalf("materialized column names not assigned: %v", conf)
	}
	if wfHWM(t, tbl) != -1 {
		t.Fatal("a new table has a high-water mark")
	}
	a, b := wfRowAdd("a", 3), wfRowAdd("b", 5)
	wfCommit(t, tbl, time.Now(), Action{Add: a}, Action{Add: b})
	if a.BaseRowID != nil {
		t.Fatal("Commit changed the caller's add")
	}
	e1 := wfEntry(t, tbl, 1)
	if diff := cmp.Diff([]rowIDs{{"a", 0, 1}, {"b", 3, 1}}, wfRowIDs(e1)); diff != "" {
		t.Fatalf("row ids (-want +got):\n%s", diff)
	}
	var dm *DomainMetadata
	for _, x := range e1 {
		if x.DomainMetadata != nil {
			dm = x.DomainMetadata
		}
	}
	if dm == nil || dm.Domain != "delta.rowTracking" || dm.Configuration != `{"rowIdHighWaterMark":7}` || dm.Removed {
		t.Fatalf("high-water mark action %+v", dm)
	}
	if tags := e1[0].CommitInfo["tags"]; !cmp.Equal(tags, map[string]any{"delta.rowTracking.preserved": "true"}) {
		t.Fatalf("append tags %v", tags)
	}

	// Two writers on version 1: the loser's retry assigns above the winner's mark.
	s1, err := tbl.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s1.Commit(ctx, []Action{{Add: wfRowAdd("c", 2)}}, CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = s1.Commit(ctx, []Action{{Add: wfRowAdd("d", 4)}}, CommitOptions{})
	var ce *ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("second writer on version 1: %v, want a conflict", err)
	}
	if why := ce.DomainConflict([]Action{{Add: wfRowAdd("d", 4)}}); why != "" {
		t.Fatalf("the high-water mark is no domain conflict: %s", why)
	}
	res := wfCommit(t, tbl, time.Now(), Action{Add: wfRowAdd("d", 4)})
	if diff := cmp.Diff([]rowIDs{{"d", 10, res.Version}}, wfRowIDs(wfEntry(t, tbl, res.Version))); diff != "" {
		t.Fatalf("retried row ids (-want +got):\n%s", diff)
	}
	if got := wfHWM(t, tbl); got != 13 {
		t.Fatalf("high-water mark %d, want 13", got)
	}

	// A recommitted file (a new deletion vector) keeps its ids; its remove carries them.
	snap, err = tbl.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dv := &DeletionVectorDescriptor{StorageType: "i", PathOrInlineDv: "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", SizeInBytes: 40, Cardinality: 1}
	re := wfRowAdd("b", 5)
	re.DeletionVector = dv
	res = wfCommit(t, tbl, time.Now(), Action{Remove: &Remove{Path: "b", DataChange: true}}, Action{Add: re})
	e := wfEntry(t, tbl, res.Version)
	if diff := cmp.Diff([]rowIDs{{"b", 3, 1}}, wfRowIDs(e)); diff != "" {
		t.Fatalf("recommitted row ids (-want +got):\n%s", diff)
	}
	for _, x := range e {
		if x.Remove != nil && (x.Remove.BaseRowID == nil || *x.Remove.BaseRowID != 3 || *x.Remove.DefaultRowCommitVersion != 1) {
			t.Fatalf("remove without the file's row ids: %+v", x.Remove)
		}
		if x.DomainMetadata != nil {
			t.Fatal("a recommit moved the high-water mark")
		}
	}
	if tags := e[0].CommitInfo["tags"]; !cmp.Equal(tags, map[string]any{"delta.rowTracking.preserved": "true"}) {
		t.Fatalf("recommit tags %v", tags)
	}

	// Copy-on-write: the copied rows get fresh ids, and the commit says so.
	res = wfCommit(t, tbl, time.Now(), Action{Remove: &Remove{Path: "a", DataChange: true}}, Action{Add: wfRowAdd("a2", 2)})
	e = wfEntry(t, tbl, res.Version)
	if diff := cmp.Diff([]rowIDs{{"a2", 14, res.Version}}, wfRowIDs(e)); diff != "" {
		t.Fatalf("rewritten row ids (-want +got):\n%s", diff)
	}
	if tags := e[0].CommitInfo["tags"]; !cmp.Equal(tags, map[string]any{"delta.rowTracking.preserved": "false"}) {
		t.Fatalf("rewrite tags %v", tags)
	}

	// What Commit refuses: OPTIMIZE, a file without a row count, our domain.
	snap, err = tbl.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	opt := wfRowAdd("big", 6)
	opt.DataChange = false
	_, err = snap.Commit(ctx, []Action{{Remove: &Remove{Path: "a2"}}, {Remove: &Remove{Path: "c"}}, {Add: opt}}, CommitOptions{})
	if !errors.Is(err, ErrUnsupportedFeature) || !strings.Contains(err.Error(), "OPTIMIZE") {
		t.Fatalf("OPTIMIZE of a row-tracked table: %v", err)
	}
	bare := ctAdd("nostats")
	bare.Stats = ""
	if _, err := snap.Commit(ctx, []Action{{Add: bare}}, CommitOptions{}); err == nil || !strings.Contains(err.Error(), "numRecords") {
		t.Fatalf("add without numRecords: %v", err)
	}
	hw := DomainMetadata{Domain: RowTrackingDomain, Configuration: `{"rowIdHighWaterMark":1}`}
	if _, err := snap.Commit(ctx, []Action{{DomainMetadata: &hw}}, CommitOptions{}); err == nil || !strings.Contains(err.Error(), "system-controlled") {
		t.Fatalf("caller's row tracking domain: %v", err)
	}
}

func TestRowTrackingEnablingNeedsBackfill(t *testing.T) {
	ctx := context.Background()
	_, tbl := ctNewTable(t, nil)
	wfCommit(t, tbl, time.Now(), Action{Add: wfRowAdd("old", 2)})
	snap, err := tbl.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	md := snap.Metadata
	md.Configuration = map[string]string{"delta.enableRowTracking": "true"}
	p := WithFeatures(snap.Protocol, FeatureRowTracking)
	if _, err := snap.Commit(ctx, []Action{{Protocol: &p}, {MetaData: &md}}, CommitOptions{}); !errors.Is(err, ErrUnsupportedFeature) ||
		!strings.Contains(err.Error(), "backfill") {
		t.Fatalf("enabling row tracking over a file without baseRowId: %v", err)
	}
	// Supported but not enabled: ids are assigned, nothing is refused.
	res, err := snap.Commit(ctx, []Action{{Protocol: &p}, {Add: wfRowAdd("new", 3)}}, CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]rowIDs{{"new", 0, res.Version}}, wfRowIDs(wfEntry(t, tbl, res.Version))); diff != "" {
		t.Fatalf("row ids (-want +got):\n%s", diff)
	}
}

func TestV2CheckpointWritten(t *testing.T) {
	ctx := context.Background()
	store, tbl := ctNewTable(t, map[string]string{"delta.checkpointPolicy": "v2", "delta.checkpointInterval": "2"})
	snap, err := tbl.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := snap.Protocol
	if p.MinReaderVersion != 3 || p.MinWriterVersion != 7 || !slices.Contains(p.ReaderFeatures, "v2Checkpoint") || !slices.Contains(p.WriterFeatures, "v2Checkpoint") {
		t.Fatalf("protocol %+v", p)
	}
	wfCommit(t, tbl, time.Now(), Action{Add: ctAdd("a")})
	res := wfCommit(t, tbl, time.Now(), Action{Add: ctAdd("b")})
	if !res.Checkpointed {
		t.Fatalf("version 2 not checkpointed: %v", res.CheckpointErr)
	}
	names, err := filepath.Glob(filepath.Join(store.Root, "_delta_log", "*.checkpoint*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 {
		t.Fatalf("checkpoint files %v, want one", names)
	}
	f := parseLogFile("_delta_log/" + filepath.Base(names[0]))
	if f.kind != kindCheckpointV2 || f.version != 2 || !strings.HasSuffix(names[0], ".parquet") {
		t.Fatalf("checkpoint %s is not a UUID-named Parquet V2 checkpoint of version 2", names[0])
	}
	data, err := os.ReadFile(names[0])
	if err != nil {
		t.Fatal(err)
	}
	actions, err := ReadCheckpointParquet(data)
	if err != nil {
		t.Fatal(err)
	}
	var metas []CheckpointMetadata
	adds := 0
	for _, a := range actions {
		if a.CheckpointMetadata != nil {
			metas = append(metas, *a.CheckpointMetadata)
		}
		if a.Add != nil {
			adds++
		}
		if a.Sidecar != nil {
			t.Fatal("a sidecar in a checkpoint written without them")
		}
	}
	if diff := cmp.Diff([]CheckpointMetadata{{Version: 2}}, metas); diff != "" || adds != 2 {
		t.Fatalf("checkpointMetadata (-want +got):\n%s\nadds %d", diff, adds)
	}
	lc, ok := tbl.readLastCheckpoint(ctx)
	if !ok || lc.Version != 2 || lc.Size != int64(len(actions)) || lc.NumOfAddFiles == nil || *lc.NumOfAddFiles != 2 {
		t.Fatalf("_last_checkpoint %+v", lc)
	}
	// Checkpointing the version again adds no second file.
	if err := tbl.Checkpoint(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if again, _ := filepath.Glob(filepath.Join(store.Root, "_delta_log", "*.checkpoint*")); len(again) != 1 {
		t.Fatalf("checkpoint files after a second checkpoint: %v", again)
	}
	// A fresh reader starts from it.
	snap, err = NewTable(store).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.CheckpointVersion != 2 || len(snap.Files()) != 2 {
		t.Fatalf("read back: checkpoint %d, %d files", snap.CheckpointVersion, len(snap.Files()))
	}
}

func TestDomainMetadataRules(t *testing.T) {
	ctx := context.Background()
	_, tbl := ctNewTable(t, nil)
	snap, err := tbl.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	user := DomainMetadata{Domain: "com.example.x", Configuration: `{"a":1}`}
	if _, err := snap.Commit(ctx, []Action{{DomainMetadata: &user}}, CommitOptions{}); !errors.Is(err, ErrUnsupportedFeature) {
		t.Fatalf("domain on a table without domainMetadata: %v", err)
	}
	p := WithFeatures(snap.Protocol, FeatureDomainMetadata)
	wfCommit(t, tbl, time.Now(), Action{Protocol: &p}, Action{DomainMetadata: &user})
	clustering := DomainMetadata{Domain: "delta.clustering", Configuration: `{"clusteringColumns":["id"]}`}
	snap, err = tbl.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snap.Commit(ctx, []Action{{DomainMetadata: &clustering}}, CommitOptions{}); err == nil || !strings.Contains(err.Error(), "system-controlled") {
		t.Fatalf("a caller's system domain: %v", err)
	}
	// Two writers of one domain conflict; of other domains, not.
	other := DomainMetadata{Domain: "com.example.y", Configuration: `{}`}
	ce := &ConflictError{Version: 3, Winners: []Commit{{Version: 3, Actions: []Action{{DomainMetadata: &user}}}}}
	if why := ce.DomainConflict([]Action{{DomainMetadata: &user}}); !strings.Contains(why, "com.example.x") {
		t.Fatalf("same domain: %q", why)
	}
	if why := ce.DomainConflict([]Action{{DomainMetadata: &other}}); why != "" {
		t.Fatalf("other domain: %q", why)
	}
	// Domains survive a checkpoint.
	if err := tbl.Checkpoint(ctx, 1); err != nil {
		t.Fatal(err)
	}
	snap, err = NewTable(tbl.store).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]DomainMetadata{user}, snap.DomainMetadata()); diff != "" || snap.CheckpointVersion != 1 {
		t.Fatalf("domains after checkpoint %d (-want +got):\n%s", snap.CheckpointVersion, diff)
	}
}

func TestCheckpointProtectionCleanup(t *testing.T) {
	ctx := context.Background()
	old := time.Now().Add(-90 * 24 * time.Hour)
	tbl := wfCreate(t, old.Add(-time.Second), map[string]string{"delta.checkpointInterval": "2"})
	for i := 0; i < 5; i++ {
		wfCommit(t, tbl, old.Add(time.Duration(i)*time.Second), Action{Add: ctAdd(fmt.Sprint("f", i))})
	}
	// Checkpoints at 2 and 4; every commit is past retention by its commitInfo time.
	conf := map[string]string{propCheckpointProtection: "5"}
	out, err := tbl.CleanupLog(ctx, conf)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Deleted) != 0 {
		t.Fatalf("cleanup below the protected version 5 deleted %v", out.Deleted)
	}
	conf[propCheckpointProtection] = "4"
	out, err = tbl.CleanupLog(ctx, conf)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{commitKey(0), commitKey(1), commitKey(2), commitKey(3), checkpointKey(2)}
	if diff := cmp.Diff(want, out.Deleted); diff != "" || out.Oldest != 4 {
		t.Fatalf("cleanup to the protected version (oldest %d; -want +got):\n%s", out.Oldest, diff)
	}
}

func TestWriterFeatureRefusals(t *testing.T) {
	honoured := []string{"inCommitTimestamp", "v2Checkpoint", "rowTracking", "domainMetadata", "clustering",
		"vacuumProtocolCheck", "checkpointProtection"}
	for _, f := range honoured {
		p := WithFeatures(Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, f)
		if err := CheckWritable(p, atSchema()); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, f := range []string{"icebergCompatV1", "icebergCompatV2", "variantType", "catalogManaged", "noSuchFeature"} {
		p := Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{f}}
		err := CheckWritable(p, atSchema())
		if !errors.Is(err, ErrUnsupportedFeature) || !strings.Contains(err.Error(), `"`+f+`"`) {
			t.Errorf("%s: %v, want a refusal naming it", f, err)
		}
	}
}
