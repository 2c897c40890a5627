package sqlsink

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter/apacheiceberg"
	"github.com/lakesql/lakesql/catalogadapter/providertest"
	"github.com/lakesql/lakesql/internal/icebergtest"
)

// v3Config is an upsert sink on the orders table of l, which it creates
// at Iceberg format version 3.
func v3Config(t *testing.T, l icebergtest.Lake) Config {
	cfg := sinkConfig(t, lakeProvider(t, l), "orders")
	cfg.Mode, cfg.Key = ModeUpsert, []string{"id"}
	cfg.TableProperties = map[string]string{"format-version": "3"}
	return cfg
}

// liveDeleteFiles lists the delete files the current snapshot's manifests
// hold live.
func liveDeleteFiles(t *testing.T, tbl *table.Table) (dvs, others int) {
	t.Helper()
	fsys, err := tbl.FS(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := tbl.CurrentSnapshot().Manifests(fsys)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range manifests {
		entries, err := m.FetchEntries(fsys, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			switch {
			case table.IsDeletionVector(e.DataFile()):
				dvs++
			case e.DataFile().ContentType() != 0: // not data
				others++
			}
		}
	}
	return dvs, others
}

// TestSinkUpsertDeletionVectors: on a format version 3 table, upserts and
// changelog deletes land as deletion vectors (no equality deletes, no file
// rewritten); a later delete in a file that has a DV replaces it, so each
// data file has at most one; both readers agree.
func TestSinkUpsertDeletionVectors(t *testing.T) {
	l := icebergtest.Local(t)
	cfg := v3Config(t, l)
	s := openSink(t, cfg)
	epoch(t, s, 1, batch(t, row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 2, Region: "eu"}, row{ID: 3, Amount: 3, Region: "us"}))
	if v := l.Table(t, ordersID).Metadata().Version(); v != 3 {
		t.Fatalf("the sink created a version %d table, want 3", v)
	}
	files := l.StoredFiles(t, ordersID)
	epoch(t, s, 2, batch(t,
		row{Op: "U", ID: 2, Amount: 20, Region: "eu"},
		row{Op: "D", ID: 3},
		row{Op: "I", ID: 4, Amount: 4, Region: "us"}))
	check := func(want []string) {
		t.Helper()
		if got := l.Rows(t, ordersID); !cmp.Equal(got, want) {
			t.Fatalf("iceberg-go reads %v", cmp.Diff(want, got))
		}
		if got := duckRows(t, cfg.Provider.(*apacheiceberg.Provider)); !cmp.Equal(got, want) {
			t.Fatalf("ScanSQL reads %v", cmp.Diff(want, got))
		}
	}
	check(rowStrings(row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 20, Region: "eu"}, row{ID: 4, Amount: 4, Region: "us"}))
	tbl := l.Table(t, ordersID)
	if dvs, others := liveDeleteFiles(t, tbl); dvs != 1 || others != 0 {
		t.Fatalf("%d deletion vectors and %d other delete files after epoch 2, want 1 and 0", dvs, others)
	}
	if p := tbl.CurrentSnapshot().Summary.Properties; p["deleted-data-files"] != "" {
		t.Fatalf("epoch 2 rewrote files: %v", p)
	}
	now := l.StoredFiles(t, ordersID)
	for _, f := range files {
		if !slices.Contains(now, f) {
			t.Fatalf("file %s of epoch 1 was rewritten", f)
		}
	}
	// Key 1 is in epoch 1's file, which has a DV: the new DV replaces it.
	epoch(t, s, 3, batch(t, row{Op: "D", ID: 1}, row{Op: "U", ID: 3, Amount: 33, Region: "eu"}))
	check(rowStrings(row{ID: 2, Amount: 20, Region: "eu"}, row{ID: 3, Amount: 33, Region: "eu"}, row{ID: 4, Amount: 4, Region: "us"}))
	if dvs, _ := liveDeleteFiles(t, l.Table(t, ordersID)); dvs != 1 {
		t.Fatalf("%d live deletion vectors after epoch 3, want 1 (the replaced one removed)", dvs)
	}
	// Keys 2 (epoch 1's file) and 4 (epoch 2's): one DV each.
	epoch(t, s, 4, batch(t, row{Op: "D", ID: 2}, row{Op: "D", ID: 4}))
	check(rowStrings(row{ID: 3, Amount: 33, Region: "eu"}))
	if dvs, _ := liveDeleteFiles(t, l.Table(t, ordersID)); dvs != 2 {
		t.Fatalf("%d live deletion vectors after epoch 4, want 2", dvs)
	}
}

// TestSinkDeletionVectorModel: random upserts and deletes on a v3 table,
// with an occasional OPTIMIZE folding the DVs into new files, read back
// after every epoch against an in-memory model.
func TestSinkDeletionVectorModel(t *testing.T) {
	l := icebergtest.Local(t)
	cfg := v3Config(t, l)
	s := openSink(t, cfg)
	db := providertest.OpenDuckDB(t)
	rng := rand.New(rand.NewPCG(19, 3))
	model := map[int64]row{}
	for e := int64(1); e <= 24; e++ {
		var rows []row
		for i := 0; i < 1+rng.IntN(12); i++ {
			id := int64(rng.IntN(40))
			if rng.IntN(4) == 0 {
				rows = append(rows, row{Op: "D", ID: id})
				delete(model, id)
				continue
			}
			r := row{Op: "U", ID: id, Amount: float64(e*100 + int64(i)), Region: []string{"eu", "us"}[rng.IntN(2)]}
			rows = append(rows, r)
			r.Op = ""
			model[id] = r
		}
		epoch(t, s, e, batch(t, rows...))
		if e%8 == 0 {
			if _, err := s.Optimize(context.Background(), db, CompactOptions{MinFiles: 2}); err != nil {
				t.Fatalf("epoch %d: optimize: %v", e, err)
			}
			if dvs, others := liveDeleteFiles(t, l.Table(t, ordersID)); dvs != 0 || others != 0 {
				t.Fatalf("epoch %d: OPTIMIZE left %d deletion vectors and %d delete files", e, dvs, others)
			}
		}
		var want []row
		for _, r := range model {
			want = append(want, r)
		}
		w := rowStrings(want...)
		if got := l.Rows(t, ordersID); !cmp.Equal(got, w) {
			t.Fatalf("epoch %d: iceberg-go reads %v", e, cmp.Diff(w, got))
		}
		if got := duckRows(t, cfg.Provider.(*apacheiceberg.Provider)); !cmp.Equal(got, w) {
			t.Fatalf("epoch %d: ScanSQL reads %v", e, cmp.Diff(w, got))
		}
	}
}

// TestDeletionVectorConcurrentWriters: writer A stages an upsert (a DV on
// the first file for key 1; key 5 is new) and, before it commits, writer B
// commits a row with key 5 and nothing else: no DV of A's changed, but A's
// merge did not see that row. A's commit conflicts, A redoes its merge on
// the new table (deleting B's 5 too), and each key is there once.
func TestDeletionVectorConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	l := icebergtest.Local(t)
	cfgA := v3Config(t, l)
	cfgA.WriterID = "a"
	a := openSink(t, cfgA)
	epoch(t, a, 1, batch(t, row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 2, Region: "eu"}))

	precommit(t, a, 2, batch(t, row{Op: "U", ID: 1, Amount: 10, Region: "us"}, row{Op: "U", ID: 5, Amount: 50, Region: "us"}))
	cfgB := v3Config(t, l)
	cfgB.WriterID = "b"
	b := openSink(t, cfgB)
	epoch(t, b, 1, batch(t, row{Op: "U", ID: 5, Amount: 5, Region: "eu"}))

	if _, err := a.CommitEpoch(ctx, 2); err != nil {
		t.Fatal(err)
	}
	want := rowStrings(row{ID: 1, Amount: 10, Region: "us"}, row{ID: 2, Amount: 2, Region: "eu"}, row{ID: 5, Amount: 50, Region: "us"})
	if got := l.Rows(t, ordersID); !cmp.Equal(got, want) {
		t.Fatalf("iceberg-go reads %v", cmp.Diff(want, got))
	}
	if got := duckRows(t, cfgA.Provider.(*apacheiceberg.Provider)); !cmp.Equal(got, want) {
		t.Fatalf("ScanSQL reads %v", cmp.Diff(want, got))
	}
	if m := a.Metrics(); m.Conflicts != 1 {
		t.Errorf("A redid %d merges, want 1", m.Conflicts)
	}
	// The first file's (key 1) and B's file's (its 5).
	if dvs, _ := liveDeleteFiles(t, l.Table(t, ordersID)); dvs != 2 {
		t.Errorf("%d live deletion vectors, want 2", dvs)
	}
}

// puffinFiles lists the Puffin files under the warehouse of l.
func puffinFiles(t *testing.T, l icebergtest.Lake) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(l.Dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".puffin") {
			out = append(out, p)
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// TestVacuumDeletionVectors: a DV replaced by a later one stays while old
// snapshots name it; VACUUM that expires them deletes its Puffin file and
// keeps the live one, and the rows read the same.
func TestVacuumDeletionVectors(t *testing.T) {
	ctx := context.Background()
	l := icebergtest.Local(t)
	cfg := v3Config(t, l)
	s := openSink(t, cfg)
	epoch(t, s, 1, batch(t, row{ID: 1, Amount: 1, Region: "eu"}, row{ID: 2, Amount: 2, Region: "eu"}, row{ID: 3, Amount: 3, Region: "eu"}))
	epoch(t, s, 2, batch(t, row{Op: "D", ID: 1}))
	first := puffinFiles(t, l)
	epoch(t, s, 3, batch(t, row{Op: "D", ID: 2}))
	if n := len(puffinFiles(t, l)); len(first) != 1 || n != 2 {
		t.Fatalf("%d Puffin files after the first delete, %d after the second; want 1 and 2", len(first), n)
	}
	out, err := s.Vacuum(ctx, VacuumOptions{Retain: 0, AllowShortRetention: true, MinSnapshots: 1})
	if err != nil {
		t.Fatal(err)
	}
	left := puffinFiles(t, l)
	if len(left) != 1 || left[0] == first[0] {
		t.Fatalf("after VACUUM (%+v): Puffin files %v, want only the live one (not %s)", out, left, first[0])
	}
	want := rowStrings(row{ID: 3, Amount: 3, Region: "eu"})
	if got := l.Rows(t, ordersID); !cmp.Equal(got, want) {
		t.Fatalf("iceberg-go reads %v", cmp.Diff(want, got))
	}
	if got := duckRows(t, cfg.Provider.(*apacheiceberg.Provider)); !cmp.Equal(got, want) {
		t.Fatalf("ScanSQL reads %v", cmp.Diff(want, got))
	}
}

// TestV3CopyOnWriteRefused: a v3 table whose owner asked for copy-on-write
// merges gets no DVs, and iceberg-go v0.7.0 cannot replace its files
// (first_row_id): the upsert is refused by name, and nothing changes.
func TestV3CopyOnWriteRefused(t *testing.T) {
	ctx := context.Background()
	l := icebergtest.Local(t)
	cfg := v3Config(t, l)
	cfg.TableProperties["write.merge.mode"] = "copy-on-write"
	s := openSink(t, cfg)
	epoch(t, s, 1, batch(t, row{ID: 1, Amount: 1, Region: "eu"}))
	precommit(t, s, 2, batch(t, row{Op: "U", ID: 1, Amount: 10, Region: "eu"}))
	_, err := s.CommitEpoch(ctx, 2)
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "first_row_id") {
		t.Fatalf("copy-on-write upsert on v3: %v, want ErrUnsupported naming first_row_id", err)
	}
	want := rowStrings(row{ID: 1, Amount: 1, Region: "eu"})
	if got := l.Rows(t, ordersID); !cmp.Equal(got, want) {
		t.Fatalf("iceberg-go reads %v", cmp.Diff(want, got))
	}
}
