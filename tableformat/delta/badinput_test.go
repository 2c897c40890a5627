package delta

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// biTable builds a log-only table: version 0 from Create, then commits
// 1..n each adding f<k>.parquet (the data files are never written).
func biTable(t testing.TB, n int64, conf map[string]string) (*LocalStorage, *Table) {
	t.Helper()
	ctx := context.Background()
	store, table := ctNewTable(t, conf)
	for k := int64(1); k <= n; k++ {
		snap, err := table.Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		res, err := snap.Commit(ctx, []Action{{Txn: &Txn{AppID: "app", Version: k}}, {Add: ctAdd(fmt.Sprintf("f%d.parquet", k))}}, CommitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.CheckpointErr != nil {
			t.Fatal(res.CheckpointErr)
		}
	}
	return store, table
}

// biFiles is f1..fn.
func biFiles(n int) []string {
	var out []string
	for k := 1; k <= n; k++ {
		out = append(out, fmt.Sprintf("f%d.parquet", k))
	}
	return out
}

// biWantErr checks err is non-nil, matches sentinel (when given) and names
// every fragment.
func biWantErr(t *testing.T, what string, err error, sentinel error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	if sentinel != nil && !errors.Is(err, sentinel) {
		t.Errorf("%s: error does not match %v: %v", what, sentinel, err)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("%s: error does not name %q: %v", what, f, err)
		}
	}
}

// biOpens checks the table opens at version with files.
func biOpens(t *testing.T, what string, table *Table, version, checkpoint int64, files []string) *Snapshot {
	t.Helper()
	snap, err := table.At(context.Background(), version)
	if err != nil {
		t.Fatalf("%s: At(%d): %v", what, version, err)
	}
	if snap.Version != version || snap.CheckpointVersion != checkpoint {
		t.Fatalf("%s: version %d checkpoint %d, want %d and %d", what, snap.Version, snap.CheckpointVersion, version, checkpoint)
	}
	if diff := cmp.Diff(files, ctPaths(snap)); diff != "" {
		t.Fatalf("%s: files (-want +got):\n%s", what, diff)
	}
	return snap
}

// TestBadInputTruncatedCommit: a commit cut in the middle of a line is a
// corrupt log naming the commit and the line; the versions before it read.
func TestBadInputTruncatedCommit(t *testing.T) {
	ctx := context.Background()
	for _, v := range []int64{2, 4} {
		t.Run(fmt.Sprintf("commit %d", v), func(t *testing.T) {
			store, table := biTable(t, 4, nil)
			path := store.LocalPath(commitKey(v))
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// Cut in the middle of line 2 (the txn line).
			lines := strings.SplitAfter(string(data), "\n")
			cut := len(lines[0]) + len(lines[1])/2
			if err := os.WriteFile(path, data[:cut], 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = table.Latest(ctx)
			biWantErr(t, "Latest", err, ErrCorruptLog, fmt.Sprintf("commit %d", v), "line 2")
			_, err = table.At(ctx, v)
			biWantErr(t, "At", err, ErrCorruptLog, fmt.Sprintf("commit %d", v))
			biOpens(t, "before the bad commit", table, v-1, -1, biFiles(int(v-1)))
		})
	}
}

// TestBadInputGarbageCommit: random bytes as a commit.
func TestBadInputGarbageCommit(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(1))
	store, table := biTable(t, 4, nil)
	for i := 0; i < 20; i++ {
		garbage := make([]byte, 1+rng.Intn(300))
		rng.Read(garbage)
		if i == 0 {
			garbage = []byte("\x00\x01\x02PK\x03\x04 binary")
		}
		if err := os.WriteFile(store.LocalPath(commitKey(3)), garbage, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := table.Latest(ctx)
		biWantErr(t, fmt.Sprintf("garbage %q", garbage), err, ErrCorruptLog, "commit 3", "line ")
	}
	biOpens(t, "before the garbage", table, 2, -1, biFiles(2))
}

// TestBadInputMissingVersion: a gap in the versions is a corrupt log naming
// the missing version; versions before the gap still read.
func TestBadInputMissingVersion(t *testing.T) {
	ctx := context.Background()
	store, table := biTable(t, 4, nil)
	if err := os.Remove(store.LocalPath(commitKey(2))); err != nil {
		t.Fatal(err)
	}
	_, err := table.Latest(ctx)
	biWantErr(t, "Latest", err, ErrCorruptLog, "version 2")
	_, err = table.At(ctx, 3)
	biWantErr(t, "At(3)", err, ErrCorruptLog, "version 2")
	biOpens(t, "At(1)", table, 1, -1, biFiles(1))

	store, table = biTable(t, 4, nil)
	if err := os.Remove(store.LocalPath(commitKey(0))); err != nil {
		t.Fatal(err)
	}
	_, err = table.Latest(ctx)
	biWantErr(t, "without version 0", err, ErrCorruptLog, "version 0")
}

// TestBadInputCheckpointMissingFile: _last_checkpoint names a checkpoint
// whose file is gone. The log is still complete, so the table opens by
// listing (from an older checkpoint, or from version 0).
func TestBadInputCheckpointMissingFile(t *testing.T) {
	ctx := context.Background()
	store, table := biTable(t, 5, map[string]string{"delta.checkpointInterval": "2"})
	if lc := ctLastCheckpoint(t, store); lc.Version != 4 {
		t.Fatalf("_last_checkpoint names %d, want 4", lc.Version)
	}
	if err := os.Remove(store.LocalPath(checkpointKey(4))); err != nil {
		t.Fatal(err)
	}
	biOpens(t, "checkpoint 4 deleted", table, 5, 2, biFiles(5))
	if err := os.Remove(store.LocalPath(checkpointKey(2))); err != nil {
		t.Fatal(err)
	}
	biOpens(t, "checkpoints 2 and 4 deleted", table, 5, -1, biFiles(5))
	snap, err := table.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := snap.TxnVersion("app"); !ok || v != 5 {
		t.Fatalf("txn app = %d, %v", v, ok)
	}
	// With the commits also gone there is nothing to replay from.
	for v := int64(0); v < 4; v++ {
		if err := os.Remove(store.LocalPath(commitKey(v))); err != nil {
			t.Fatal(err)
		}
	}
	_, err = table.Latest(ctx)
	biWantErr(t, "commits and checkpoints deleted", err, ErrCorruptLog, "version 0")
}

// TestBadInputCorruptCheckpointFile: a checkpoint file that is not Parquet
// (truncated, or garbage) is an error naming the checkpoint, not a panic
// and not a silently smaller table.
func TestBadInputCorruptCheckpointFile(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{"truncated", "garbage", "empty"} {
		t.Run(mode, func(t *testing.T) {
			store, table := biTable(t, 5, map[string]string{"delta.checkpointInterval": "4"})
			path := store.LocalPath(checkpointKey(4))
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			switch mode {
			case "truncated":
				data = data[:len(data)/2]
			case "garbage":
				data = []byte(strings.Repeat("garbage!", 100))
			case "empty":
				data = nil
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			snap, err := table.Latest(ctx)
			if err == nil {
				// Falling back to the complete JSON log is acceptable, a
				// wrong file list is not.
				if diff := cmp.Diff(biFiles(5), ctPaths(snap)); diff != "" || snap.CheckpointVersion == 4 {
					t.Fatalf("opened from a corrupt checkpoint (checkpoint %d), files (-want +got):\n%s", snap.CheckpointVersion, diff)
				}
				return
			}
			biWantErr(t, "Latest", err, ErrCorruptLog, "checkpoint 4", "00000000000000000004.checkpoint.parquet")
		})
	}
}

// biSplitCheckpoint rewrites the classic checkpoint of version as a
// two-part one (protocol and metadata in part 1, the rest in part 2) and
// points _last_checkpoint at it.
func biSplitCheckpoint(t *testing.T, store *LocalStorage, table *Table, version int64) {
	t.Helper()
	snap, err := table.At(context.Background(), version)
	if err != nil {
		t.Fatal(err)
	}
	actions := snap.checkpointActions(time.Now())
	for i, part := range [][]Action{actions[:2], actions[2:]} {
		data, err := WriteCheckpointParquet(part)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("%s/%020d.checkpoint.%010d.%010d.parquet", logDir, version, i+1, 2)
		if err := os.WriteFile(store.LocalPath(name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(store.LocalPath(checkpointKey(version))); err != nil {
		t.Fatal(err)
	}
	lc := fmt.Sprintf(`{"version":%d,"size":%d,"parts":2}`, version, len(actions))
	if err := os.WriteFile(store.LocalPath(lastCheckpointKey), []byte(lc), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBadInputMultiPartCheckpointMissingPart: a multi-part checkpoint with
// a part missing is incomplete and must be skipped; _last_checkpoint
// naming it must not stop the reader from replaying the complete log.
func TestBadInputMultiPartCheckpointMissingPart(t *testing.T) {
	store, table := biTable(t, 5, map[string]string{"delta.checkpointInterval": "4"})
	biSplitCheckpoint(t, store, table, 4)
	biOpens(t, "both parts", table, 5, 4, biFiles(5))
	part2 := fmt.Sprintf("%s/%020d.checkpoint.%010d.%010d.parquet", logDir, 4, 2, 2)
	if err := os.Remove(store.LocalPath(part2)); err != nil {
		t.Fatal(err)
	}
	t.Run("hint names the incomplete checkpoint", func(t *testing.T) {
		biOpens(t, "part 2 of 2 missing", table, 5, -1, biFiles(5))
	})
	t.Run("no hint", func(t *testing.T) {
		if err := os.Remove(store.LocalPath(lastCheckpointKey)); err != nil {
			t.Fatal(err)
		}
		biOpens(t, "part 2 of 2 missing", table, 5, -1, biFiles(5))
	})
}

// biWriteCommit writes a log entry by hand.
func biWriteCommit(t *testing.T, store Storage, version int64, actions []Action) {
	t.Helper()
	data, err := EncodeActions(actions)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutIfAbsent(context.Background(), commitKey(version), data); err != nil {
		t.Fatal(err)
	}
}

// TestBadInputV2CheckpointMissingSidecar: a V2 JSON checkpoint whose add
// actions live in a sidecar. With the sidecar the table reads from the
// checkpoint alone; without it, the error wraps ErrCorruptLog and names the
// sidecar.
func TestBadInputV2CheckpointMissingSidecar(t *testing.T) {
	ctx := context.Background()
	store, err := NewLocalStorage(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proto := Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
		ReaderFeatures: []string{"v2Checkpoint"}, WriterFeatures: []string{"v2Checkpoint"}}
	schema, err := atSchema().JSON()
	if err != nil {
		t.Fatal(err)
	}
	md := Metadata{ID: "v2-table", Format: Format{Provider: "parquet"}, SchemaString: schema,
		PartitionColumns: []string{}, Configuration: map[string]string{}}
	biWriteCommit(t, store, 0, []Action{{Protocol: &proto}, {MetaData: &md}})
	var adds []Action
	for k := int64(1); k <= 3; k++ {
		a := Action{Add: ctAdd(fmt.Sprintf("f%d.parquet", k))}
		adds = append(adds, a)
		biWriteCommit(t, store, k, []Action{{Txn: &Txn{AppID: "app", Version: k}}, a})
	}
	sidecarName := "00000000000000000003.checkpoint.0000000001.0000000001.9167a758-dd93-4e52-8636-7cf5776eb10f.parquet"
	sidecarData, err := WriteCheckpointParquet(adds)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(store.LocalPath(logDir+"/_sidecars"), 0o755); err != nil {
		t.Fatal(err)
	}
	sidecarPath := store.LocalPath(logDir + "/_sidecars/" + sidecarName)
	if err := os.WriteFile(sidecarPath, sidecarData, 0o644); err != nil {
		t.Fatal(err)
	}
	cp, err := EncodeActions([]Action{
		{CheckpointMetadata: &CheckpointMetadata{Version: 3}},
		{Protocol: &proto},
		{MetaData: &md},
		{Txn: &Txn{AppID: "app", Version: 3}},
		{Sidecar: &Sidecar{Path: sidecarName, SizeInBytes: int64(len(sidecarData)), ModificationTime: 1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cpName := logDir + "/00000000000000000003.checkpoint.0e42c15b-17cc-4918-990d-2ff76e918e4d.json"
	if err := os.WriteFile(store.LocalPath(cpName), cp, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(store.LocalPath(lastCheckpointKey), []byte(`{"version":3,"size":5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	table := NewTable(store)
	biOpens(t, "with the sidecar", table, 3, 3, biFiles(3))
	// The checkpoint alone suffices.
	for v := int64(0); v <= 3; v++ {
		if err := os.Remove(store.LocalPath(commitKey(v))); err != nil {
			t.Fatal(err)
		}
	}
	snap := biOpens(t, "checkpoint only", table, 3, 3, biFiles(3))
	if v, ok := snap.TxnVersion("app"); !ok || v != 3 {
		t.Fatalf("txn app = %d, %v", v, ok)
	}
	if err := os.Remove(sidecarPath); err != nil {
		t.Fatal(err)
	}
	for _, withHint := range []bool{true, false} {
		if !withHint {
			if err := os.Remove(store.LocalPath(lastCheckpointKey)); err != nil {
				t.Fatal(err)
			}
		}
		_, err = table.Latest(ctx)
		biWantErr(t, fmt.Sprintf("sidecar missing (hint %v)", withHint), err, ErrCorruptLog, sidecarName)
	}
}

// TestBadInputEmptyLog: no _delta_log, an empty one, or one holding no log
// entries is ErrNotATable.
func TestBadInputEmptyLog(t *testing.T) {
	ctx := context.Background()
	cases := map[string]func(dir string) error{
		"no folder":    func(dir string) error { return nil },
		"empty folder": func(dir string) error { return os.Mkdir(filepath.Join(dir, logDir), 0o755) },
		"only other files": func(dir string) error {
			if err := os.MkdirAll(filepath.Join(dir, logDir, "_sidecars"), 0o755); err != nil {
				return err
			}
			for _, name := range []string{"_last_checkpoint", "00000000000000000000.crc", ".00000000000000000000.json.tmp-1", "README"} {
				if err := os.WriteFile(filepath.Join(dir, logDir, name), []byte("{}"), 0o644); err != nil {
					return err
				}
			}
			return nil
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := setup(dir); err != nil {
				t.Fatal(err)
			}
			store, err := NewLocalStorage(dir)
			if err != nil {
				t.Fatal(err)
			}
			_, err = NewTable(store).Latest(ctx)
			biWantErr(t, "Latest", err, ErrNotATable, logDir)
			_, err = NewTable(store).At(ctx, 0)
			biWantErr(t, "At(0)", err, ErrNotATable)
		})
	}
}

// TestBadInputTimeTravel: versions past the latest and negative versions
// are errors naming them, with or without a checkpoint.
func TestBadInputTimeTravel(t *testing.T) {
	ctx := context.Background()
	for _, conf := range []map[string]string{nil, {"delta.checkpointInterval": "2"}} {
		_, table := biTable(t, 4, conf)
		for _, v := range []int64{5, 99} {
			_, err := table.At(ctx, v)
			biWantErr(t, fmt.Sprintf("At(%d)", v), err, nil, fmt.Sprint(v), "latest version is 4")
			if errors.Is(err, ErrNotATable) {
				t.Errorf("At(%d): not ErrNotATable: %v", v, err)
			}
		}
		for _, v := range []int64{-1, -100} {
			_, err := table.At(ctx, v)
			biWantErr(t, fmt.Sprintf("At(%d)", v), err, nil, fmt.Sprint(v), "negative")
		}
		biOpens(t, "At(0)", table, 0, -1, []string{})
		cp := int64(-1)
		if conf != nil {
			cp = 4
		}
		biOpens(t, "At(4)", table, 4, cp, biFiles(4))
	}
}

// TestBadInputScanDeletedDataFile: a data file named by the log but gone
// from storage makes the scan fail, naming the file; it never yields the
// other files' rows as if nothing happened.
func TestBadInputScanDeletedDataFile(t *testing.T) {
	ctx := context.Background()
	db := openDuckDB(t)
	store, table := ctNewTable(t, nil)
	for k := 0; k < 2; k++ {
		snap, err := table.Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		adds, err := snap.WriteFiles(ctx, db, fmt.Sprintf("SELECT i + %d AS id, 'v' || i AS v FROM range(10) t(i)", k*100), WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var actions []Action
		for _, a := range adds {
			actions = append(actions, Action{Add: a})
		}
		if _, err := snap.Commit(ctx, actions, CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := table.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Files()) != 2 {
		t.Fatalf("%d files, want 2", len(snap.Files()))
	}
	compareRows(t, db, snap, "SELECT i::BIGINT + k * 100 AS id, 'v' || i AS v FROM range(10) t(i), range(2) u(k)")
	gone := snap.Files()[0].Path
	if err := os.Remove(store.LocalPath(gone)); err != nil {
		t.Fatal(err)
	}
	snap, err = NewTable(store).Latest(ctx)
	if err != nil {
		t.Fatalf("the log is intact, it must open: %v", err)
	}
	query, err := snap.ScanSQL(ctx, db)
	if err == nil {
		var n int64
		err = db.QueryRowContext(ctx, "SELECT count(*) FROM ("+query+")").Scan(&n)
		if err == nil {
			t.Fatalf("scan of a table with a deleted data file returned %d rows", n)
		}
	}
	biWantErr(t, "scan", err, nil, strings.TrimSuffix(filepath.Base(gone), ".parquet"))
}
