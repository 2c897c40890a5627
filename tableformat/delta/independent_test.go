package delta

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/internal/sqlquote"
)

// The independent check rebuilds a table's active files with DuckDB SQL
// alone, reading the log files directly (read_json_objects over the JSON
// commits, read_parquet / read_json_objects over checkpoints and their
// sidecars) and reconciling add and remove actions by path and deletion
// vector, last version winning. Only the choice of files to read is Go: a
// regular expression over the log folder's names.

var (
	indCommitName     = regexp.MustCompile(`^(\d{20})\.json$`)
	indCheckpointName = regexp.MustCompile(`^(\d{20})\.checkpoint(\.[^.]+|\.\d{10}\.\d{10})?\.(parquet|json)$`)
)

// indLog is what the log folder holds, by name.
type indLog struct {
	commits     map[int64]bool
	checkpoints map[int64][]string // version -> checkpoint file paths
	latest      int64
}

func indListLog(t *testing.T, root string) indLog {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, logDir))
	if err != nil {
		t.Fatal(err)
	}
	l := indLog{commits: map[int64]bool{}, checkpoints: map[int64][]string{}, latest: -1}
	for _, e := range entries {
		if m := indCommitName.FindStringSubmatch(e.Name()); m != nil {
			v, _ := strconv.ParseInt(m[1], 10, 64)
			l.commits[v] = true
			l.latest = max(l.latest, v)
		} else if m := indCheckpointName.FindStringSubmatch(e.Name()); m != nil {
			v, _ := strconv.ParseInt(m[1], 10, 64)
			l.checkpoints[v] = append(l.checkpoints[v], filepath.Join(root, logDir, e.Name()))
			l.latest = max(l.latest, v)
		}
	}
	return l
}

// newestCheckpoint is the newest checkpoint at or below v, or -1.
func (l indLog) newestCheckpoint(v int64) int64 {
	best := int64(-1)
	for cp := range l.checkpoints {
		if cp <= v && cp > best {
			best = cp
		}
	}
	return best
}

// contiguous tells whether the commits from..to are all there.
func (l indLog) contiguous(from, to int64) bool {
	for v := from; v <= to; v++ {
		if !l.commits[v] {
			return false
		}
	}
	return true
}

func indExec(t *testing.T, db *sql.DB, query string) {
	t.Helper()
	if _, err := db.Exec(query); err != nil {
		t.Fatalf("%v\n%s", err, query)
	}
}

// indLoad loads the table's log into the DuckDB tables ind_commits
// (version, j) and ind_checkpoints (cp, j): every action as a JSON object.
func indLoad(t *testing.T, db *sql.DB, root string, l indLog) {
	t.Helper()
	logGlob := sqlquote.String(filepath.Join(root, logDir, "*.json"))
	indExec(t, db, `CREATE OR REPLACE TEMP TABLE ind_commits AS
SELECT CAST(regexp_extract(filename, '(\d{20})\.json$', 1) AS BIGINT) AS version, json AS j
FROM read_json_objects(`+logGlob+`, format = 'newline_delimited', filename = true)
WHERE regexp_matches(filename, '(^|/)\d{20}\.json$')`)
	indExec(t, db, `CREATE OR REPLACE TEMP TABLE ind_checkpoints (cp BIGINT, j JSON)`)
	for cp, files := range l.checkpoints {
		var pq, js []string
		for _, f := range files {
			if strings.HasSuffix(f, ".json") {
				js = append(js, f)
			} else {
				pq = append(pq, f)
			}
		}
		if len(pq) > 0 {
			indExec(t, db, fmt.Sprintf(`INSERT INTO ind_checkpoints
SELECT %d, to_json(c) FROM read_parquet(%s, union_by_name = true) AS c`, cp, sqlList(pq)))
		}
		if len(js) > 0 {
			indExec(t, db, fmt.Sprintf(`INSERT INTO ind_checkpoints
SELECT %d, json FROM read_json_objects(%s, format = 'newline_delimited')`, cp, sqlList(js)))
		}
		// Sidecars named by the checkpoint hold more of its actions.
		rows, err := db.Query(fmt.Sprintf(`SELECT DISTINCT json_extract_string(j, '$.sidecar.path')
FROM ind_checkpoints WHERE cp = %d AND json_extract_string(j, '$.sidecar.path') IS NOT NULL`, cp))
		if err != nil {
			t.Fatal(err)
		}
		var sidecars []string
		for rows.Next() {
			var p string
			if err := rows.Scan(&p); err != nil {
				t.Fatal(err)
			}
			sidecars = append(sidecars, filepath.Join(root, logDir, "_sidecars", p))
		}
		rows.Close()
		if len(sidecars) > 0 {
			indExec(t, db, fmt.Sprintf(`INSERT INTO ind_checkpoints
SELECT %d, to_json(s) FROM read_parquet(%s, union_by_name = true) AS s`, cp, sqlList(sidecars)))
		}
	}
}

// indReplaySQL reconciles the checkpoint at $1 (none when -1) with the
// commits after it up to $2: per (path, deletion vector), the action of
// the highest version decides. Paths are compared URL-decoded.
const indReplaySQL = `
WITH src AS (
  SELECT cp AS version, j FROM ind_checkpoints WHERE cp = $1
  UNION ALL
  SELECT version, j FROM ind_commits WHERE version > $1 AND version <= $2
), acts AS (
  SELECT version, kind,
         url_decode(json_extract_string(a, '$.path')) AS path,
         coalesce(json_extract_string(a, '$.deletionVector.storageType'), '') ||
           coalesce(json_extract_string(a, '$.deletionVector.pathOrInlineDv'), '') ||
           coalesce('@' || json_extract_string(a, '$.deletionVector.offset'), '') AS dv,
         CAST(json_extract(a, '$.size') AS BIGINT) AS size
  FROM (
    SELECT version, 'add' AS kind, json_extract(j, '$.add') AS a FROM src
    UNION ALL
    SELECT version, 'remove' AS kind, json_extract(j, '$.remove') AS a FROM src
  )
  WHERE json_extract_string(a, '$.path') IS NOT NULL
), ranked AS (
  SELECT *,
         row_number() OVER (PARTITION BY path, dv ORDER BY version DESC) AS rn,
         count(*) OVER (PARTITION BY path, dv, version) AS same_version
  FROM acts
)
SELECT path || '#' || dv, kind, coalesce(size, -1), same_version FROM ranked WHERE rn = 1`

// indReplay runs indReplaySQL and returns the active files as key -> size.
func indReplay(t *testing.T, db *sql.DB, cp, upto int64) map[string]int64 {
	t.Helper()
	rows, err := db.Query(indReplaySQL, cp, upto)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var key, kind string
		var size, same int64
		if err := rows.Scan(&key, &kind, &size, &same); err != nil {
			t.Fatal(err)
		}
		if same > 1 {
			t.Fatalf("checkpoint %d to version %d: %s has %d actions in one version; last-wins is ambiguous", cp, upto, key, same)
		}
		if kind == "add" {
			out[key] = size
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// indOurs is the snapshot's active files as key -> size.
func indOurs(s *Snapshot) map[string]int64 {
	out := map[string]int64{}
	for _, f := range s.Files() {
		p, err := url.PathUnescape(f.Path)
		if err != nil {
			p = f.Path
		}
		out[p+"#"+f.DeletionVector.UniqueID()] = f.Size
	}
	return out
}

// indCheckTable compares every version of the table that can be rebuilt
// (from its newest checkpoint and the commits after it) with our snapshot
// at that version, and, where the JSON log is complete, with a replay of
// the JSON commits alone. It returns how many versions were compared and
// the size of the latest file set.
func indCheckTable(t *testing.T, db *sql.DB, root string) (versions, files int) {
	t.Helper()
	ctx := context.Background()
	l := indListLog(t, root)
	if l.latest < 0 {
		t.Fatalf("%s: no log", root)
	}
	indLoad(t, db, root, l)
	store, err := NewLocalStorage(root)
	if err != nil {
		t.Fatal(err)
	}
	table := NewTable(store)
	latest, err := table.Latest(ctx)
	if err != nil {
		t.Fatalf("Latest: %v", err)
	}
	if latest.Version != l.latest {
		t.Fatalf("latest version %d, the log's newest entry is %d", latest.Version, l.latest)
	}
	for v := int64(0); v <= l.latest; v++ {
		cp := l.newestCheckpoint(v)
		if !l.contiguous(cp+1, v) {
			continue // cleaned up: not reconstructible at v
		}
		snap, err := table.At(ctx, v)
		if err != nil {
			t.Fatalf("At(%d): %v", v, err)
		}
		if snap.CheckpointVersion != cp {
			t.Errorf("At(%d) started from checkpoint %d, the newest at or below is %d", v, snap.CheckpointVersion, cp)
		}
		want := indReplay(t, db, cp, v)
		if diff := cmp.Diff(want, indOurs(snap)); diff != "" {
			t.Fatalf("version %d (checkpoint %d): active files (-DuckDB +ours):\n%s", v, cp, diff)
		}
		if cp >= 0 && l.contiguous(0, v) {
			if diff := cmp.Diff(indReplay(t, db, -1, v), want); diff != "" {
				t.Fatalf("version %d: JSON-only replay vs checkpoint %d replay (-json +checkpoint):\n%s", v, cp, diff)
			}
		}
		versions++
		if v == l.latest {
			files = len(want)
		}
	}
	if versions == 0 {
		t.Fatalf("no version of %s could be checked", root)
	}
	return versions, files
}

// TestIndependentOwnTable writes a table with many commits, removes, a
// re-add and checkpoints every 4 versions, and checks every version.
func TestIndependentOwnTable(t *testing.T) {
	ctx := context.Background()
	db := openDuckDB(t)
	store, table := ctNewTable(t, map[string]string{"delta.checkpointInterval": "4"})
	var removed []*Add
	const commits = 18
	for k := 1; k <= commits; k++ {
		snap, err := table.Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		adds, err := snap.WriteFiles(ctx, db, fmt.Sprintf(
			"SELECT (i + %d * 1000)::BIGINT AS id, 'row ' || i AS v FROM range(%d) t(i)", k, 3+k%4), WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		actions := []Action{{Txn: &Txn{AppID: "own", Version: int64(k)}}}
		for _, a := range adds {
			actions = append(actions, Action{Add: a})
		}
		now := int64(1700000000000 + k)
		if k%3 == 0 {
			// Remove the oldest active file.
			old := snap.Files()[0]
			actions = append(actions, Action{Remove: &Remove{Path: old.Path, DeletionTimestamp: &now,
				DataChange: true, ExtendedFileMetadata: atBool(true), PartitionValues: old.PartitionValues, Size: &old.Size}})
			removed = append(removed, old)
		}
		if k == 10 || k == 17 {
			// Restore a file removed earlier: the same path comes back.
			back := *removed[0]
			removed = removed[1:]
			back.ModificationTime = now
			actions = append(actions, Action{Add: &back})
		}
		res, err := snap.Commit(ctx, actions, CommitOptions{})
		if err != nil {
			t.Fatalf("commit %d: %v", k, err)
		}
		if res.CheckpointErr != nil || res.Checkpointed != (k%4 == 0) {
			t.Fatalf("commit %d: checkpointed %v, %v", k, res.Checkpointed, res.CheckpointErr)
		}
	}
	versions, files := indCheckTable(t, db, store.Root)
	if versions != commits+1 {
		t.Errorf("checked %d versions, want %d", versions, commits+1)
	}
	// 18 files written, 6 removed, 2 of them restored.
	if files != commits-6+2 {
		t.Errorf("%d active files, want %d", files, commits-6+2)
	}

	// After log cleanup (commits and checkpoints before the newest
	// checkpoint deleted) only versions 16 to 18 can be checked, and they
	// must still agree.
	for v := int64(0); v < 16; v++ {
		if err := os.Remove(store.LocalPath(commitKey(v))); err != nil {
			t.Fatal(err)
		}
		if v%4 == 0 && v > 0 {
			if err := os.Remove(store.LocalPath(checkpointKey(v))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if versions, _ := indCheckTable(t, db, store.Root); versions != 3 {
		t.Errorf("after cleanup checked %d versions, want 3 (16, 17, 18)", versions)
	}
}

// TestIndependentSharedTables checks tables written by Spark, Databricks
// and delta-kernel: classic, multi-part and V2 checkpoints (JSON and
// Parquet, with sidecars), deletion vectors, restores, compacted logs.
func TestIndependentSharedTables(t *testing.T) {
	requireSharedTestData(t)
	db := openDuckDB(t)
	tmp := t.TempDir()
	kernelDirs := []string{
		"app-txn-checkpoint",
		"v1-multi-part-struct-stats-only",
		"v1-multi-part-partitioned-struct-stats-only",
		"v1-single-part-struct-stats-only",
		"with_checkpoint_no_last_checkpoint",
		"v2-classic-parquet-struct-stats-only",
		"v2-parquet-sidecars-struct-stats-only",
		"v2-json-sidecars-struct-stats-only",
		"table-with-dv-small",
	}
	kernelArchives := []string{
		"v2-checkpoints-json-with-sidecars",
		"v2-checkpoints-json-with-last-checkpoint",
		"v2-checkpoints-parquet-with-last-checkpoint",
		"v2-checkpoints-parquet-without-sidecars",
		"v2-classic-checkpoint-json",
		"v2-classic-checkpoint-parquet",
		"compacted-log-files-table",
	}
	golden := []string{
		"checkpoint",
		"125-iterator-bug",
		"basic-with-inserts-overwrite-restore",
		"corrupted-last-checkpoint-kernel",
		"dv-with-columnmapping",
		"only-checkpoint-files",
		"snapshot-data3",
		"v2-checkpoint-json",
		"delete-re-add-same-file-different-transactions",
		"log-replay-dv-key-cases",
	}
	type tableCase struct{ name, root string }
	var cases []tableCase
	for _, d := range kernelDirs {
		cases = append(cases, tableCase{"kernel/" + d, filepath.Join(sharedTestData, "kernel", d)})
	}
	for _, a := range kernelArchives {
		untarZst(t, filepath.Join(sharedTestData, "kernel", a+".tar.zst"), filepath.Join(tmp, "kernel"))
		cases = append(cases, tableCase{"kernel/" + a, filepath.Join(tmp, "kernel", a)})
	}
	for _, g := range golden {
		untarZst(t, filepath.Join(sharedTestData, "golden", g+".tar.zst"), filepath.Join(tmp, "golden"))
		for _, r := range tableRoots(g, filepath.Join(tmp, "golden", g, "delta"), "") {
			cases = append(cases, tableCase{"golden/" + r.name, r.root})
		}
	}
	var summary []string
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(c.root, logDir)); err != nil {
				t.Fatalf("missing table: %v", err)
			}
			versions, files := indCheckTable(t, db, c.root)
			summary = append(summary, fmt.Sprintf("%s: %d versions, %d files", c.name, versions, files))
		})
	}
	sort.Strings(summary)
	t.Logf("checked:\n%s", strings.Join(summary, "\n"))
}
