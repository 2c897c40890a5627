package deltalake

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/clocktest"
	"github.com/lakesql/lakesql/internal/s3test"
	"github.com/lakesql/lakesql/tableformat/delta"
	"github.com/lakesql/lakesql/tableformat/objectstore"
)

// lake is the versitygw server the tests of this package share.
var lake *s3test.Server

func TestMain(m *testing.M) { os.Exit(s3test.RunMain(m, &lake)) }

// s3Provider returns a provider whose object storage is the shared server.
func s3Provider(t testing.TB, clock *clocktest.Clock) *Provider {
	t.Helper()
	so, err := objectstore.FromProperties(lake.Options())
	if err != nil {
		t.Fatal(err)
	}
	so.CacheDir = t.TempDir()
	opts := testOptions(clock)
	opts.ObjectStorage = so
	p := New(openDB(t), opts)
	t.Cleanup(func() { p.Close() })
	return p
}

// s3Table names a fresh table location on the shared server.
func s3Table(t testing.TB) catalogadapter.TableIdent {
	return catalogadapter.TableIdent{Name: lake.URL(fmt.Sprintf("%s-%d/orders", t.Name(), time.Now().UnixNano()))}
}

// TestObjectStorageRoundTrip: create, stage, commit, replay and read back
// a table on versitygw, and find the files and log entries where the
// protocol puts them.
func TestObjectStorageRoundTrip(t *testing.T) {
	ctx := context.Background()
	clock := clocktest.New(t0)
	p := s3Provider(t, clock)
	id := s3Table(t)
	if err := p.CreateTable(ctx, id, catalogadapter.TableDef{Schema: ordersSchema()}); err != nil {
		t.Fatal(err)
	}
	if err := p.CreateTable(ctx, id, catalogadapter.TableDef{Schema: ordersSchema()}); err == nil {
		t.Fatal("second create succeeded")
	}
	rows := idRows(1, 50)
	receipt := writeRows(t, p, id, rows)
	if got := scanRows(t, p, p.db, id, -1, nil); len(got) != 0 {
		t.Fatalf("staged rows visible before commit: %d", len(got))
	}
	out, err := p.Commit(ctx, id, []catalogadapter.Receipt{receipt}, catalogadapter.CommitOptions{WriterID: "w", Epoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	if out.Version != 1 || out.Skipped {
		t.Fatalf("outcome %+v", out)
	}
	again, err := p.Commit(ctx, id, []catalogadapter.Receipt{writeRows(t, p, id, rows)}, catalogadapter.CommitOptions{WriterID: "w", Epoch: 1})
	if err != nil || !again.Skipped {
		t.Fatalf("replay: %+v, %v", again, err)
	}
	// A second provider (another process, say) with an empty cache reads
	// the same rows from the bucket.
	other := s3Provider(t, clock)
	if d := cmp.Diff(rows, scanRows(t, other, other.db, id, -1, nil)); d != "" {
		t.Errorf("rows read back (-want +got):\n%s", d)
	}
	store, err := other.objectStore(id.Name)
	if err != nil {
		t.Fatal(err)
	}
	log, err := store.List(ctx, "_delta_log/", "")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range log {
		keys = append(keys, o.Key)
	}
	want := []string{"_delta_log/00000000000000000000.json", "_delta_log/00000000000000000001.json"}
	if d := cmp.Diff(want, keys); d != "" {
		t.Errorf("log objects (-want +got):\n%s", d)
	}
	snap, err := delta.NewTable(store).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range snap.Files() {
		if _, err := store.Stat(ctx, f.Path); err != nil {
			t.Errorf("data file %s: %v", f.Path, err)
		}
	}
	if degraded, why := p.Health(id); degraded {
		t.Errorf("healthy store reported degraded: %s", why)
	}
}
