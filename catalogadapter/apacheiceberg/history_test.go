package apacheiceberg

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/icebergtest"
)

// TestHistory: the main branch's snapshots newest first, with their
// operation, writer and epoch, and the summary's counts (-1 where a
// summary leaves one out); a limit keeps the newest.
func TestHistory(t *testing.T) {
	ctx := context.Background()
	l := icebergtest.Local(t)
	p := lakeProvider(t, l)
	createOrders(t, p)
	s1 := commitEpoch(t, p, "a", 1, nil, row{ID: 1}, row{ID: 2})
	_, files, err := p.Files(ctx, ordersID)
	if err != nil {
		t.Fatal(err)
	}
	s2 := commitEpoch(t, p, "b", 5, []string{files[0].Path}, row{ID: 1, Amount: 9})
	s3 := commitEpoch(t, p, "", -1, nil, row{ID: 3})
	got, err := p.History(ctx, ordersID, 0)
	if err != nil {
		t.Fatal(err)
	}
	ts := map[int64]time.Time{}
	for _, s := range l.Snapshots(t, ordersID) {
		ts[s.SnapshotID] = time.UnixMilli(s.TimestampMs).UTC()
	}
	want := []catalogadapter.HistoryEntry{
		{Version: s3.Version, Timestamp: ts[s3.Version], Operation: "APPEND", Epoch: -1, RowsAdded: 1, RowsRemoved: -1, FilesAdded: 1, FilesRemoved: -1},
		{Version: s2.Version, Timestamp: ts[s2.Version], Operation: "OVERWRITE", WriterID: "b", Epoch: 5, RowsAdded: 1, RowsRemoved: 2, FilesAdded: 1, FilesRemoved: 1},
		{Version: s1.Version, Timestamp: ts[s1.Version], Operation: "APPEND", WriterID: "a", Epoch: 1, RowsAdded: 2, RowsRemoved: -1, FilesAdded: 1, FilesRemoved: -1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	if got, err := p.History(ctx, ordersID, 2); err != nil || len(got) != 2 || got[0].Version != s3.Version || got[1].Version != s2.Version {
		t.Errorf("history limit 2: %+v %v", got, err)
	}
}

// TestVersionAt: the snapshot current at a time, from the snapshot log;
// before the first snapshot is invalid, before the oldest one kept after
// an expiry is a VersionUnavailableError naming it.
func TestVersionAt(t *testing.T) {
	ctx := context.Background()
	l := icebergtest.Local(t)
	p := lakeProvider(t, l)
	createOrders(t, p)
	for e := int64(1); e <= 3; e++ {
		commitEpoch(t, p, "a", e, nil, row{ID: e})
	}
	snaps := l.Snapshots(t, ordersID)
	at := func(ms int64) time.Time { return time.UnixMilli(ms) }
	if !(snaps[0].TimestampMs < snaps[1].TimestampMs && snaps[1].TimestampMs < snaps[2].TimestampMs) {
		t.Fatalf("snapshots not in time order: %+v", snaps)
	}
	for _, c := range []struct {
		t    time.Time
		want int64
	}{
		{at(snaps[0].TimestampMs), snaps[0].SnapshotID},
		{at(snaps[1].TimestampMs - 1), snaps[0].SnapshotID},
		{at(snaps[1].TimestampMs), snaps[1].SnapshotID},
		{at(snaps[2].TimestampMs + 3600_000), snaps[2].SnapshotID},
	} {
		if got, err := p.VersionAt(ctx, ordersID, c.t); err != nil || got != c.want {
			t.Errorf("VersionAt(%v) = %d %v, want %d", c.t, got, err, c.want)
		}
	}
	if _, err := p.VersionAt(ctx, ordersID, at(snaps[0].TimestampMs-1)); !errors.Is(err, catalogadapter.ErrInvalid) {
		t.Errorf("VersionAt before the first snapshot: %v; want ErrInvalid", err)
	}
	now := at(snaps[2].TimestampMs + 1000)
	retain := now.Sub(at(snaps[1].TimestampMs))
	if _, err := p.Vacuum(ctx, ordersID, catalogadapter.VacuumOptions{Retain: retain, AllowShortRetention: true, Now: func() time.Time { return now }}); err != nil {
		t.Fatal(err)
	}
	_, err := p.VersionAt(ctx, ordersID, at(snaps[0].TimestampMs))
	var gone *catalogadapter.VersionUnavailableError
	if !errors.As(err, &gone) || gone.Oldest != snaps[1].SnapshotID {
		t.Errorf("VersionAt of an expired snapshot's time: %v; want a VersionUnavailableError naming %d", err, snaps[1].SnapshotID)
	}
	if got, err := p.VersionAt(ctx, ordersID, at(snaps[1].TimestampMs)); err != nil || got != snaps[1].SnapshotID {
		t.Errorf("VersionAt of the oldest kept snapshot's time: %d %v", got, err)
	}
}
