package wire

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakesql/lakesql/internal/deltatest"
)

// logpathsCanary is the text of the row in the file outside every root.
const logpathsCanary = "outside-row-7f3a"

// logpathsDataFile returns the one data file of a Delta table, by its path
// relative to the table.
func logpathsDataFile(t *testing.T, table string) string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(table, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "_delta_log" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			found = append(found, p)
		}
		return nil
	})
	if err != nil || len(found) != 1 {
		t.Fatalf("data files of %s: %v, %v", table, found, err)
	}
	return found[0]
}

// logpathsForge appends a log entry holding the actions to the table, as
// anyone who can write its folder could.
func logpathsForge(t *testing.T, table string, actions ...map[string]any) {
	t.Helper()
	var b strings.Builder
	for _, a := range actions {
		line, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	next := filepath.Join(table, "_delta_log", fmt.Sprintf("%020d.json", deltatest.Versions(t, table)))
	if err := os.WriteFile(next, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func logpathsAdd(path string, size int64) map[string]any {
	return map[string]any{"add": map[string]any{"path": path, "partitionValues": map[string]any{},
		"size": size, "modificationTime": 0, "dataChange": true}}
}

// A log that names a data file or deletion vector outside the table and
// the allowed roots (here the data directory) is refused with 1290, and
// the outside rows are never returned; files inside the roots, named in
// any spelling, still read.
func TestLogPathsConfined(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	ts := startServer(t, dir, testPassword)
	db := ts.db(testPassword)

	// A Parquet file holding the canary row, outside every root.
	mustExec(t, db, "CREATE SINK src INTO DELTA 'lake/src' (id BIGINT NOT NULL, name VARCHAR(32))")
	mustExec(t, db, "INSERT INTO src VALUES (666, '"+logpathsCanary+"')")
	data, err := os.ReadFile(logpathsDataFile(t, filepath.Join(dir, "lake", "src")))
	if err != nil {
		t.Fatal(err)
	}
	size := int64(len(data))
	outFile := filepath.Join(outside, "x.parquet")
	inRoot := filepath.Join(dir, "shared", "x.parquet") // in the data directory, outside the table
	for _, p := range []string{outFile, inRoot} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	n := 0
	newSink := func() string {
		n++
		name := fmt.Sprintf("d%d", n)
		mustExec(t, db, fmt.Sprintf("CREATE SINK %s INTO DELTA 'lake/%s' (id BIGINT NOT NULL, name VARCHAR(32))", name, name))
		mustExec(t, db, "INSERT INTO "+name+" VALUES (1, 'inside')")
		return name
	}
	tableOf := func(name string) string { return filepath.Join(dir, "lake", name) }
	rel, err := filepath.Rel(tableOf("d1"), outFile)
	if err != nil {
		t.Fatal(err)
	}

	refused := []struct {
		name  string
		forge func(table string)
	}{
		{"absolute file URI", func(table string) { logpathsForge(t, table, logpathsAdd("file://"+outFile, size)) }},
		{"absolute path", func(table string) { logpathsForge(t, table, logpathsAdd(outFile, size)) }},
		{"relative path climbing out", func(table string) { logpathsForge(t, table, logpathsAdd(filepath.ToSlash(rel), size)) }},
		{"climbing out and back in", func(table string) {
			logpathsForge(t, table, logpathsAdd("../"+filepath.Base(table)+"/"+filepath.Base(logpathsDataFile(t, table)), size))
		}},
		{"symlink in the table", func(table string) {
			if err := os.Symlink(outFile, filepath.Join(table, "link.parquet")); err != nil {
				t.Fatal(err)
			}
			logpathsForge(t, table, logpathsAdd("link.parquet", size))
		}},
		{"symlinked folder in the table", func(table string) {
			if err := os.Symlink(outside, filepath.Join(table, "sub")); err != nil {
				t.Fatal(err)
			}
			logpathsForge(t, table, logpathsAdd("sub/x.parquet", size))
		}},
		{"deletion vector outside", func(table string) {
			add := logpathsAdd(filepath.Base(logpathsDataFile(t, table)), size)
			add["add"].(map[string]any)["deletionVector"] = map[string]any{
				"storageType": "p", "pathOrInlineDv": "file://" + filepath.Join(outside, "dv.bin"),
				"offset": 1, "sizeInBytes": 36, "cardinality": 1}
			logpathsForge(t, table, add)
		}},
		{"remove outside", func(table string) {
			logpathsForge(t, table, map[string]any{"remove": map[string]any{"path": "file://" + outFile, "dataChange": true}})
		}},
		{"file URI of another host", func(table string) {
			logpathsForge(t, table, map[string]any{"remove": map[string]any{
				"path": "file://elsewhere" + filepath.Join(table, filepath.Base(logpathsDataFile(t, table))), "dataChange": true}})
		}},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			name := newSink()
			c.forge(tableOf(name))
			for _, q := range []string{"SELECT count(*) FROM " + name, "SELECT id, name FROM " + name} {
				rows, err := db.Query(q)
				if err == nil {
					got := logpathsRows(t, rows)
					if strings.Contains(got, logpathsCanary) {
						t.Fatalf("%s returned the outside row: %s", q, got)
					}
					t.Fatalf("%s = %s, want error 1290", q, got)
				}
				t.Logf("%s: %v", q, err)
				if code := mysqlCode(err); code != 1290 {
					t.Fatalf("%s: %v (code %d), want 1290", q, err, code)
				}
				if strings.Contains(err.Error(), logpathsCanary) {
					t.Fatalf("%s: the error shows the outside row: %v", q, err)
				}
			}
		})
	}

	// Inside the table or the data directory, any spelling reads.
	t.Run("allowed", func(t *testing.T) {
		name := newSink()
		table := tableOf(name)
		own := filepath.Join(table, "copied.parquet")
		if err := os.WriteFile(own, data, 0o644); err != nil {
			t.Fatal(err)
		}
		logpathsForge(t, table, logpathsAdd("file://"+own, size), logpathsAdd(inRoot, size))
		if got := count(t, db, "SELECT count(*) FROM "+name+" WHERE id = 666"); got != 2 {
			t.Errorf("the table's own file by absolute URI and a file in the data directory gave %d rows, want 2", got)
		}
		// A remove of a file outside that the log added itself is no forgery.
		logpathsForge(t, table, logpathsAdd("file://"+outFile, size))
		logpathsForge(t, table, map[string]any{"remove": map[string]any{"path": outFile, "dataChange": true}})
		if got := count(t, db, "SELECT count(*) FROM "+name); got != 3 {
			t.Errorf("after an outside file was added and removed: %d rows, want 3", got)
		}
	})
}

func logpathsRows(t *testing.T, rows *sql.Rows) string {
	t.Helper()
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Sprintf("%v (scan: %v)", out, err)
		}
		for _, v := range vals {
			out = append(out, v.String)
		}
	}
	if err := rows.Err(); err != nil {
		out = append(out, "error: "+err.Error())
	}
	return fmt.Sprint(out)
}
