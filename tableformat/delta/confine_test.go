package delta

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cfTable is a local table holding one data file of ten rows (version 1),
// and a copy of that file in a folder outside it.
func cfTable(t *testing.T) (store *LocalStorage, dataFile, outside string) {
	t.Helper()
	ctx := context.Background()
	db := openDuckDB(t)
	store, table := ctNewTable(t, nil)
	snap, err := table.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	adds, err := snap.WriteFiles(ctx, db, "SELECT i AS id, 'outside' AS v FROM range(10) t(i)", WriteOptions{})
	if err != nil || len(adds) != 1 {
		t.Fatalf("write: %v (%d files)", err, len(adds))
	}
	if _, err := snap.Commit(ctx, []Action{{Add: adds[0]}}, CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	outside = t.TempDir()
	data, err := os.ReadFile(store.LocalPath(adds[0].Path))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "x.parquet"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return store, adds[0].Path, outside
}

// cfForge writes the next log entry by hand, one JSON action a line, and
// returns its version.
func cfForge(t *testing.T, store *LocalStorage, lines ...string) int64 {
	t.Helper()
	ents, err := os.ReadDir(store.LocalPath(logDir))
	if err != nil {
		t.Fatal(err)
	}
	v := int64(0)
	for _, e := range ents {
		if f := parseLogFile(e.Name()); f.kind == kindCommit && f.version >= v {
			v = f.version + 1
		}
	}
	if err := os.WriteFile(store.LocalPath(commitKey(v)), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return v
}

func cfAdd(path string) string {
	return fmt.Sprintf(`{"add":{"path":%q,"partitionValues":{},"size":100,"modificationTime":0,"dataChange":true}}`, path)
}

func cfRemove(path string) string {
	return fmt.Sprintf(`{"remove":{"path":%q,"dataChange":true}}`, path)
}

// cfRead opens the latest snapshot and scans it, returning the row count.
func cfRead(t *testing.T, table *Table) (int64, error) {
	t.Helper()
	ctx := context.Background()
	snap, err := table.Latest(ctx)
	if err != nil {
		return 0, err
	}
	db := openDuckDB(t)
	query, err := snap.ScanSQL(ctx, db)
	if err != nil {
		return 0, err
	}
	var n int64
	err = db.QueryRowContext(ctx, "SELECT count(*) FROM ("+query+")").Scan(&n)
	return n, err
}

// cfWantOutside checks err is an *OutsidePathError for the path at version.
func cfWantOutside(t *testing.T, err error, path string, version int64) {
	t.Helper()
	var out *OutsidePathError
	if !errors.As(err, &out) || !errors.Is(err, ErrPathOutsideTable) {
		t.Fatalf("got %v, want ErrPathOutsideTable", err)
	}
	if out.Path != path || out.Version != version {
		t.Errorf("error names %q at version %d, want %q at %d: %v", out.Path, out.Version, path, version, err)
	}
}

// TestConfineRefusesOutsideFiles forges log entries naming files outside
// the table: each makes opening or scanning fail with ErrPathOutsideTable,
// naming the path and the version, instead of reading the outside rows.
func TestConfineRefusesOutsideFiles(t *testing.T) {
	cases := []struct {
		name string
		// forge returns the path the error must name.
		forge func(t *testing.T, store *LocalStorage, dataFile, outside string) (string, int64)
	}{
		{"absolute file URI", func(t *testing.T, s *LocalStorage, _, out string) (string, int64) {
			p := "file://" + filepath.Join(out, "x.parquet")
			return p, cfForge(t, s, cfAdd(p))
		}},
		{"absolute path", func(t *testing.T, s *LocalStorage, _, out string) (string, int64) {
			p := filepath.Join(out, "x.parquet")
			return p, cfForge(t, s, cfAdd(p))
		}},
		{"relative path climbing out", func(t *testing.T, s *LocalStorage, _, out string) (string, int64) {
			rel, err := filepath.Rel(s.Root, filepath.Join(out, "x.parquet"))
			if err != nil {
				t.Fatal(err)
			}
			return rel, cfForge(t, s, cfAdd(rel))
		}},
		{"escaped climb", func(t *testing.T, s *LocalStorage, _, out string) (string, int64) {
			rel, _ := filepath.Rel(s.Root, filepath.Join(out, "x.parquet"))
			p := strings.ReplaceAll(rel, "..", "%2E%2E")
			return p, cfForge(t, s, cfAdd(p))
		}},
		{"climbing out and back in", func(t *testing.T, s *LocalStorage, data, _ string) (string, int64) {
			p := "../" + filepath.Base(s.Root) + "/" + data
			return p, cfForge(t, s, cfAdd(p))
		}},
		{"symlinked file", func(t *testing.T, s *LocalStorage, _, out string) (string, int64) {
			if err := os.Symlink(filepath.Join(out, "x.parquet"), s.LocalPath("link.parquet")); err != nil {
				t.Fatal(err)
			}
			return "link.parquet", cfForge(t, s, cfAdd("link.parquet"))
		}},
		{"symlinked folder", func(t *testing.T, s *LocalStorage, _, out string) (string, int64) {
			if err := os.Symlink(out, s.LocalPath("part=1")); err != nil {
				t.Fatal(err)
			}
			return "part=1/x.parquet", cfForge(t, s, cfAdd("part=1/x.parquet"))
		}},
		{"absolute deletion vector", func(t *testing.T, s *LocalStorage, data, out string) (string, int64) {
			p := "file://" + filepath.Join(out, "dv.bin")
			return p, cfForge(t, s, fmt.Sprintf(`{"add":{"path":%q,"partitionValues":{},"size":100,"modificationTime":0,"dataChange":true,`+
				`"deletionVector":{"storageType":"p","pathOrInlineDv":%q,"offset":1,"sizeInBytes":36,"cardinality":1}}}`, data, p))
		}},
		{"symlinked relative deletion vector", func(t *testing.T, s *LocalStorage, data, out string) (string, int64) {
			const rel = "^-aqEH.-t@S}K{vb[*k^"
			if err := os.Symlink(filepath.Join(out, "dv.bin"), s.LocalPath("deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin")); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(out, "dv.bin"), []byte{1}, 0o644); err != nil {
				t.Fatal(err)
			}
			return rel, cfForge(t, s, fmt.Sprintf(`{"add":{"path":%q,"partitionValues":{},"size":100,"modificationTime":0,"dataChange":true,`+
				`"deletionVector":{"storageType":"u","pathOrInlineDv":%q,"offset":1,"sizeInBytes":36,"cardinality":1}}}`, data, rel))
		}},
		{"forged remove outside", func(t *testing.T, s *LocalStorage, _, out string) (string, int64) {
			p := "file://" + filepath.Join(out, "x.parquet")
			return p, cfForge(t, s, cfRemove(p))
		}},
		{"remove by another host's URI", func(t *testing.T, s *LocalStorage, data, _ string) (string, int64) {
			p := "file://elsewhere" + s.LocalPath(data)
			return p, cfForge(t, s, cfRemove(p))
		}},
		{"change data file outside", func(t *testing.T, s *LocalStorage, _, out string) (string, int64) {
			p := filepath.Join(out, "x.parquet")
			return p, cfForge(t, s, fmt.Sprintf(`{"cdc":{"path":%q,"partitionValues":{},"size":100,"dataChange":false}}`, p))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store, data, outside := cfTable(t)
			path, version := c.forge(t, store, data, outside)
			n, err := cfRead(t, NewTable(store))
			if err == nil {
				t.Fatalf("read %d rows, want ErrPathOutsideTable", n)
			}
			cfWantOutside(t, err, path, version)
		})
	}
}

// TestConfineUpdateRefuses: a forged entry after a snapshot the caller
// kept fails Update the same way.
func TestConfineUpdateRefuses(t *testing.T) {
	ctx := context.Background()
	store, _, outside := cfTable(t)
	table := NewTable(store)
	prev, err := table.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(outside, "x.parquet")
	v := cfForge(t, store, cfAdd(p))
	_, err = table.Update(ctx, prev)
	cfWantOutside(t, err, p, v)
}

// TestConfineAllowed: files inside the table in any spelling, files in an
// allowed root, and an outside file the log itself added and removed (as
// the canonicalized-paths golden tables do) all read.
func TestConfineAllowed(t *testing.T) {
	store, data, outside := cfTable(t)
	own := store.LocalPath(data)
	if err := os.Symlink(own, store.LocalPath("alias.parquet")); err != nil {
		t.Fatal(err)
	}
	cfForge(t, store,
		cfRemove(data), cfAdd("file://"+own), // the same file by its URI
		cfAdd("./sub/../alias.parquet"), // a symlink that stays inside
		cfAdd("file://"+filepath.Join(outside, "gone.parquet")))
	cfForge(t, store, cfRemove(filepath.Join(outside, "gone.parquet")))
	if n, err := cfRead(t, NewTable(store)); err != nil || n != 20 {
		t.Fatalf("inside spellings: %d rows, %v; want 20", n, err)
	}

	cfForge(t, store, cfAdd(filepath.Join(outside, "x.parquet")))
	if _, err := cfRead(t, NewTable(store)); !errors.Is(err, ErrPathOutsideTable) {
		t.Fatalf("without allowed roots: %v, want ErrPathOutsideTable", err)
	}
	// An allowed root reached through a symlink allows what lies under it.
	link := filepath.Join(t.TempDir(), "root")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{outside, link} {
		if n, err := cfRead(t, OpenTable(store, TableOptions{AllowedRoots: []string{root}})); err != nil || n != 30 {
			t.Errorf("allowed root %s: %d rows, %v; want 30", root, n, err)
		}
	}
	// A sibling whose name starts like the root is not under it.
	if _, err := cfRead(t, OpenTable(store, TableOptions{AllowedRoots: []string{outside[:len(outside)-1]}})); !errors.Is(err, ErrPathOutsideTable) {
		t.Errorf("root %s (a prefix of the folder's name): %v, want ErrPathOutsideTable", outside[:len(outside)-1], err)
	}
}

// TestConfineObjectStoragePaths: on object storage, URLs under the table's
// location are its own keys, URLs under an allowed object root are
// allowed, and anything else (a sibling prefix, a climb with "..", a local
// file) is refused. Components are compared, never string prefixes.
func TestConfineObjectStoragePaths(t *testing.T) {
	r := newPathRules("s3://lake/t", []string{"s3://lake/shared", "/data"})
	for _, c := range []struct {
		path    string
		allowed bool
		key     string
	}{
		{"part-1.parquet", true, "part-1.parquet"},
		{"a%20b/part-1.parquet", true, "a b/part-1.parquet"},
		{"s3://lake/t/part-1.parquet", true, "part-1.parquet"},
		{"s3://lake/shared/x.parquet", true, ""},
		{"s3://lake/tt/x.parquet", false, ""},
		{"s3://lake/t/../other/x.parquet", false, ""},
		{"s3://other/t/x.parquet", false, ""},
		{"gs://lake/t/x.parquet", false, ""},
		{"file:///data/x.parquet", true, ""},
		{"file:///etc/passwd", false, ""},
		{"/data2/x.parquet", false, ""},
	} {
		pl, err := r.place("data file", c.path, 3)
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		if got := r.allowed(pl); got != c.allowed || pl.key != c.key {
			t.Errorf("%s: allowed %v key %q, want %v %q", c.path, got, pl.key, c.allowed, c.key)
		}
	}
	if _, err := r.place("data file", "../x.parquet", 3); !errors.Is(err, ErrPathOutsideTable) {
		t.Errorf("../x.parquet: %v, want ErrPathOutsideTable", err)
	}
}
