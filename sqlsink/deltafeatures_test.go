package sqlsink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/deltalake"
	"github.com/lakesql/lakesql/catalogadapter/providertest"
	"github.com/lakesql/lakesql/internal/deltatest"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// TestDeltaWriterFeaturesOwnTable: a table lakesql creates with in-commit
// timestamps, row tracking and V2 checkpoints takes appends, upserts and
// deletes, reads back right, and its log is what the protocol asks of
// each feature; history shows the in-commit timestamps; OPTIMIZE is
// refused by name.
func TestDeltaWriterFeaturesOwnTable(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	cfg := e.config("orders")
	cfg.Mode, cfg.Key = ModeUpsert, []string{"id"}
	cfg.CheckpointInterval = 2
	cfg.TableProperties = map[string]string{"delta.enableInCommitTimestamps": "true", "delta.enableRowTracking": "true",
		"delta.checkpointPolicy": "v2"}
	s := e.open(cfg)
	e.epoch(s, 1, batch(t, row{Op: "U", ID: 1, Amount: 1, Region: "eu"}, row{Op: "U", ID: 2, Amount: 2, Region: "us"},
		row{Op: "U", ID: 3, Amount: 3, Region: "eu"}))
	e.epoch(s, 2, batch(t, row{Op: "U", ID: 2, Amount: 20, Region: "us"}, row{Op: "U", ID: 4, Amount: 4, Region: "ap"}))
	e.epoch(s, 3, batch(t, row{Op: "D", ID: 1}))
	want := []row{{ID: 2, Amount: 20, Region: "us"}, {ID: 3, Amount: 3, Region: "eu"}, {ID: 4, Amount: 4, Region: "ap"}}
	if diff := cmp.Diff(want, e.rows()); diff != "" {
		t.Fatalf("rows (-want +got):\n%s", diff)
	}
	snap := deltatest.CheckFeatureLog(t, e.dir, 0)
	for _, f := range []string{"inCommitTimestamp", "rowTracking", "domainMetadata", "v2Checkpoint"} {
		if !snap.Protocol.HasWriterFeature(f) {
			t.Errorf("protocol %+v lost %s", snap.Protocol, f)
		}
	}
	if !slices.Contains(snap.Protocol.ReaderFeatures, "v2Checkpoint") {
		t.Errorf("protocol %+v: v2Checkpoint not among the reader features", snap.Protocol)
	}
	if classic, _ := filepath.Glob(filepath.Join(e.dir, "_delta_log", "*.checkpoint.parquet")); len(classic) != 0 {
		t.Errorf("classic checkpoints in a v2Checkpoint table: %v", classic)
	}
	if v2, _ := filepath.Glob(filepath.Join(e.dir, "_delta_log", "*.checkpoint.*-*.parquet")); len(v2) == 0 {
		t.Error("no UUID-named checkpoint after 3 commits at interval 2")
	}
	if hwm, err := snap.RowIDHighWaterMark(); err != nil || hwm < 4 {
		t.Errorf("high-water mark %d (%v) after 6 rows written", hwm, err)
	}
	hist, err := s.History(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	store, _ := delta.NewLocalStorage(e.dir)
	for _, h := range hist {
		vi, err := delta.NewTable(store).VersionInfo(ctx, h.Version)
		if err != nil {
			t.Fatal(err)
		}
		actions, _ := delta.NewTable(store).ReadCommit(ctx, h.Version)
		ict, _ := actions[0].CommitInfo["inCommitTimestamp"].(float64)
		if h.Timestamp.UnixMilli() != int64(ict) || !vi.Timestamp.Equal(h.Timestamp) {
			t.Errorf("history of version %d at %v, its inCommitTimestamp %d", h.Version, h.Timestamp, int64(ict))
		}
	}
	conn, err := e.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = s.Optimize(ctx, conn, CompactOptions{MinFiles: 2})
	if !errors.Is(err, catalogadapter.ErrUnsupported) || !strings.Contains(err.Error(), "row tracking enabled") {
		t.Fatalf("OPTIMIZE of a row-tracked table: %v", err)
	}
}

// featureGoldenTables are the shared tables written by Spark and the
// kernels with the writer features lakesql honours.
var featureGoldenTables = []struct{ archive, table string }{
	{"kernel/v2-checkpoints-parquet-with-last-checkpoint.tar.zst", "v2-checkpoints-parquet-with-last-checkpoint"},
	{"kernel/v2-checkpoints-json-with-sidecars.tar.zst", "v2-checkpoints-json-with-sidecars"},
	{"kernel/v2-classic-checkpoint-parquet.tar.zst", "v2-classic-checkpoint-parquet"},
	{"golden/v2-checkpoint-json.tar.zst", "v2-checkpoint-json/delta"},
	{"golden/basic-with-vacuum-protocol-check-feature.tar.zst", "basic-with-vacuum-protocol-check-feature/delta"},
	{"kernel/crc-full", ""}, // row tracking, clustering, domain metadata, deletion vectors: a folder
}

// featureGolden copies one of featureGoldenTables into a temp dir and
// returns the table's folder; it skips, loudly, without the shared data.
func featureGolden(t *testing.T, archive, table string) string {
	t.Helper()
	var src string
	for _, d := range []string{"../../shared/testdata/delta", "../../../shared/testdata/delta"} {
		if _, err := os.Stat(filepath.Join(d, archive)); err == nil {
			src = filepath.Join(d, archive)
		}
	}
	if src == "" {
		t.Skipf("SKIPPING: shared Delta test table %s not found in the repository's ../shared", archive)
	}
	dir := t.TempDir()
	if table == "" {
		dst := filepath.Join(dir, filepath.Base(src))
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	if out, err := exec.Command("tar", "--zstd", "-xf", src, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("unpack %s: %v\n%s", src, err, out)
	}
	return filepath.Join(dir, table)
}

// idBatch is a changelog batch of the single id column of type typ.
func idBatch(t *testing.T, typ arrow.DataType, op string, ids ...int64) arrow.RecordBatch {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{{Name: OpColumn, Type: arrow.BinaryTypes.String}, {Name: "id", Type: typ, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.StringBuilder).Append(op)
		switch f := b.Field(1).(type) {
		case *array.Int64Builder:
			f.Append(id)
		case *array.Int32Builder:
			f.Append(int32(id))
		default:
			t.Fatalf("id column of type %s", typ)
		}
	}
	rec := b.NewRecordBatch()
	t.Cleanup(rec.Release)
	return rec
}

// scanIDs reads the id column of table id at the latest version, sorted.
func scanIDs(t *testing.T, p catalogadapter.Provider, id catalogadapter.TableIdent, db *sql.DB) []int64 {
	t.Helper()
	ctx := context.Background()
	q, err := p.(catalogadapter.Scanner).ScanSQL(ctx, id, db, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := db.QueryContext(ctx, "SELECT id FROM ("+q+") WHERE id IS NOT NULL ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	out := []int64{}
	for rs.Next() {
		var v int64
		if err := rs.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// TestDeltaWriterFeaturesGoldenTables: each shared table with a writer
// feature we honour takes an upsert sink's appends, upserts and deletes,
// reads back right, keeps its protocol, configuration and domains, and
// its new log entries and checkpoint are what the protocol asks.
func TestDeltaWriterFeaturesGoldenTables(t *testing.T) {
	for _, g := range featureGoldenTables {
		t.Run(filepath.Base(g.archive), func(t *testing.T) {
			ctx := context.Background()
			dir := featureGolden(t, g.archive, g.table)
			db := providertest.OpenDuckDB(t)
			p := deltalake.New(db, deltalake.Options{})
			id := catalogadapter.TableIdent{Name: dir}
			store, err := delta.NewLocalStorage(dir)
			if err != nil {
				t.Fatal(err)
			}
			before, err := delta.NewTable(store).Latest(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ids := scanIDs(t, p, id, db)
			s := openSink(t, Config{Name: "g", Provider: p, Table: id, Mode: ModeUpsert, Key: []string{"id"},
				TempDir: t.TempDir(), MemoryLimit: "256MB", DisableAutoCompact: true})
			typ := s.Schema().Field(0).Type
			epoch(t, s, 1, idBatch(t, typ, "U", 1000, 1001))
			epoch(t, s, 2, idBatch(t, typ, "U", 1001, 1002))
			del := []int64{1000}
			if len(ids) > 0 {
				del = append(del, ids[0])
			}
			epoch(t, s, 3, idBatch(t, typ, "D", del...))
			want := []int64{}
			for _, v := range ids {
				if len(ids) == 0 || v != ids[0] {
					want = append(want, v)
				}
			}
			want = append(want, 1001, 1002)
			slices.Sort(want)
			if diff := cmp.Diff(want, scanIDs(t, p, id, db)); diff != "" {
				t.Fatalf("ids (-want +got):\n%s", diff)
			}
			after := deltatest.CheckFeatureLog(t, dir, before.Version+1)
			if diff := cmp.Diff(before.Protocol, after.Protocol); diff != "" {
				t.Errorf("protocol changed (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(before.Metadata.Configuration, after.Metadata.Configuration); diff != "" {
				t.Errorf("configuration changed (-before +after):\n%s", diff)
			}
			for _, d := range before.DomainMetadata() {
				if !slices.ContainsFunc(after.DomainMetadata(), func(x delta.DomainMetadata) bool { return x == d }) {
					t.Errorf("domain %s lost or changed", d.Domain)
				}
			}
			// A checkpoint of the new version, then a fresh reader from it.
			if err := delta.NewTable(store).Checkpoint(ctx, after.Version); err != nil {
				t.Fatal(err)
			}
			deltatest.CheckFeatureLog(t, dir, after.Version)
			reread, err := delta.NewTable(store).Latest(ctx)
			if err != nil || reread.CheckpointVersion != after.Version {
				t.Fatalf("read from the new checkpoint: %v, checkpoint %d", err, reread.CheckpointVersion)
			}
			if diff := cmp.Diff(after.DomainMetadata(), reread.DomainMetadata()); diff != "" {
				t.Errorf("domains through the checkpoint (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(want, scanIDs(t, deltalake.New(db, deltalake.Options{}), id, db)); diff != "" {
				t.Fatalf("ids from the checkpoint (-want +got):\n%s", diff)
			}
		})
	}
}

// TestVacuumChecksWriteProtocol (vacuumProtocolCheck): VACUUM of a table
// with the feature runs; with a writer feature we do not know added, it is
// refused before it deletes anything.
func TestVacuumChecksWriteProtocol(t *testing.T) {
	ctx := context.Background()
	dir := featureGolden(t, "golden/basic-with-vacuum-protocol-check-feature.tar.zst", "basic-with-vacuum-protocol-check-feature/delta")
	db := providertest.OpenDuckDB(t)
	p := deltalake.New(db, deltalake.Options{})
	id := catalogadapter.TableIdent{Name: dir}
	if _, err := p.Vacuum(ctx, id, catalogadapter.VacuumOptions{Retain: -1}); err != nil {
		t.Fatalf("VACUUM of a vacuumProtocolCheck table: %v", err)
	}
	store, err := delta.NewLocalStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := delta.NewTable(store).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	proto := snap.Protocol
	proto.WriterFeatures = append(slices.Clone(proto.WriterFeatures), "someFutureWriterFeature")
	entry, err := delta.EncodeActions([]delta.Action{{CommitInfo: map[string]any{"operation": "UPGRADE PROTOCOL"}}, {Protocol: &proto}})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutIfAbsent(ctx, fmt.Sprintf("_delta_log/%020d.json", snap.Version+1), entry); err != nil {
		t.Fatal(err)
	}
	// An orphan VACUUM would take at once, were it allowed to run.
	orphan := filepath.Join(dir, "orphan.parquet")
	if err := os.WriteFile(orphan, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = p.Vacuum(ctx, id, catalogadapter.VacuumOptions{Retain: 0, AllowShortRetention: true})
	if !errors.Is(err, catalogadapter.ErrUnsupported) || !strings.Contains(err.Error(), "someFutureWriterFeature") {
		t.Fatalf("VACUUM with an unknown writer feature: %v", err)
	}
	if _, err := os.Stat(orphan); err != nil {
		t.Fatalf("a refused VACUUM deleted a file: %v", err)
	}
}
