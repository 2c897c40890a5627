package wire

// SQL's file functions and statements (SELECT ... INTO OUTFILE/DUMPFILE,
// LOAD_FILE, LOAD DATA INFILE) over the wire: confined to DATA/files by
// resolved path, so that neither a name sharing the folder's prefix, nor
// "..", nor a symlink reaches outside, and never into a table's log.

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// fileFixture is a server whose DATA/files holds a subfolder, symlinks
// out of the folder and within it, and a folder outside DATA/files with
// a secret in it.
type fileFixture struct {
	ts      *testServer
	db      *sql.DB
	data    string // the server's data directory
	files   string // DATA/files
	outside string // a folder outside DATA/files
}

const fileSecret = "outside-secret-7d1f"

func newFileFixture(t *testing.T) *fileFixture {
	t.Helper()
	f := &fileFixture{data: t.TempDir(), outside: t.TempDir()}
	f.files = filepath.Join(f.data, SecureFilesDir)
	for _, d := range []string{"sub", "tbl/_delta_log", "ice/metadata"} {
		if err := os.MkdirAll(filepath.Join(f.files, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(f.outside, "secret.txt")
	if err := os.WriteFile(secret, []byte(fileSecret), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(f.files, f.outside)
	if err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"out":        f.outside,                        // absolute, out of the folder
		"outrel":     rel,                              // relative, out of the folder
		"secret.txt": secret,                           // a file outside
		"secretrel":  filepath.Join(rel, "secret.txt"), // the same, relative
		"in":         "sub",                            // within the folder
		"log":        "tbl/_delta_log",                 // a table's log, by another name
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(f.files, name)); err != nil {
			t.Fatal(err)
		}
	}
	f.ts = startServer(t, f.data, testPassword)
	f.db = f.ts.db(testPassword)
	return f
}

// outsideNames lists what the outside folder holds, and DATA's own
// entries next to DATA/files, to catch a file written beside the folder.
func (f *fileFixture) written(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, dir := range []string{f.outside, f.data} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if n := e.Name(); strings.HasPrefix(n, "files") && n != SecureFilesDir || dir == f.outside && n != "secret.txt" {
				out = append(out, filepath.Join(dir, n))
			}
		}
	}
	return out
}

// quote writes name as a string literal: a file name is one in MySQL's
// grammar, never a placeholder.
func quote(name string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(name) + "'"
}

func wantCode(t *testing.T, what string, err error, code uint16) {
	t.Helper()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != code {
		t.Errorf("%s: %v, want error %d", what, err, code)
	}
}

func TestIntoOutfileConfined(t *testing.T) {
	f := newFileFixture(t)
	refused := []string{
		f.data + "/files_evil.txt",                            // shares the folder's prefix
		f.files + "/../filesY.txt",                            // .. out of the folder
		f.files + "/sub/../../filesZ.txt",                     // .. through a subfolder
		f.files + "/out/a.txt",                                // an absolute symlink out
		f.files + "/outrel/b.txt",                             // a relative symlink out
		"files/outrel/c.txt",                                  // the same, relative to DATA
		"files_rel.txt",                                       // relative to DATA, not in files
		"/tmp/../" + f.outside + "/d.txt",                     // anywhere else
		f.files + "/tbl/_delta_log/00000000000000000000.json", // a table's log
		f.files + "/log/00000000000000000001.json",            // the same through a symlink
		f.files + "/ice/metadata/v2.metadata.json",            // an Iceberg table's metadata
		"files/sub/..",                                        // a folder
	}
	for _, name := range refused {
		for _, kind := range []string{"OUTFILE", "DUMPFILE"} {
			_, err := f.db.Exec("SELECT 'x' INTO " + kind + " " + quote(name))
			wantCode(t, kind+" "+name, err, 1290)
		}
	}
	if got := f.written(t); len(got) > 0 {
		t.Errorf("files written outside DATA/files: %v", got)
	}
	for _, d := range []string{"tbl/_delta_log", "ice/metadata"} {
		if entries, _ := os.ReadDir(filepath.Join(f.files, d)); len(entries) > 0 {
			t.Errorf("%s written to: %v", d, entries)
		}
	}

	// Absolute and relative to DATA, in a subfolder, through a symlink
	// that stays in the folder.
	written := map[string]string{
		f.files + "/a.txt":       "a.txt",
		"files/b.txt":            "b.txt",
		f.files + "/sub/c.txt":   "sub/c.txt",
		"files/in/d.txt":         "sub/d.txt",
		"./files//sub/./e.txt":   "sub/e.txt",
		f.files + "/in/../g.txt": "g.txt",
	}
	for name, at := range written {
		if _, err := f.db.Exec("SELECT 1, 'two', NULL INTO OUTFILE " + quote(name)); err != nil {
			t.Errorf("OUTFILE %s: %v", name, err)
			continue
		}
		b, err := os.ReadFile(filepath.Join(f.files, at))
		if err != nil || string(b) != "1\ttwo\t\\N\n" {
			t.Errorf("OUTFILE %s wrote %q (%v) at %s", name, b, err, at)
		}
		// MySQL never overwrites: 1086.
		_, err = f.db.Exec("SELECT 1 INTO DUMPFILE " + quote(name))
		wantCode(t, "DUMPFILE over "+name, err, 1086)
	}
	// MySQL's escaping: the escape character before itself, the line
	// terminator, and the enclosing character in an enclosed field, the
	// field terminator in one that is not.
	outfiles := map[string]string{
		"SELECT 'a,b\nc', 1 INTO OUTFILE 'files/opt.txt' FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"'": "\"a,b\\\nc\",1\n",
		"SELECT 'a\\tb', 'c\\\\d', NULL INTO OUTFILE 'files/esc.txt'":                                          "a\\\tb\tc\\\\d\t\\N\n",
		"SELECT 'x\"y', 2 INTO OUTFILE 'files/enc.txt' FIELDS OPTIONALLY ENCLOSED BY '\"'":                     "\"x\\\"y\"\t2\n",
		"SELECT 1, NULL INTO OUTFILE 'files/sep.txt' FIELDS TERMINATED BY ',' ESCAPED BY ''":                   "1,NULL\n",
	}
	for q, want := range outfiles {
		if _, err := f.db.Exec(q); err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		file := q[strings.Index(q, "'files/")+1:]
		file = file[:strings.Index(file, "'")]
		if b, _ := os.ReadFile(filepath.Join(f.data, file)); string(b) != want {
			t.Errorf("%s wrote %q, want %q", q, b, want)
		}
	}
	if _, err := f.db.Exec("SELECT '{\"add\":{}}' INTO DUMPFILE 'files/sub/dump.json'"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.files, "sub/dump.json")); string(b) != `{"add":{}}` {
		t.Errorf("DUMPFILE wrote %q", b)
	}
	_, err := f.db.Exec("SELECT 1 INTO OUTFILE 'files/nosuch/x.txt'")
	wantCode(t, "OUTFILE into a missing folder", err, 1)
	_, err = f.db.Exec("SELECT * FROM (SELECT 1 UNION ALL SELECT 2) AS t INTO DUMPFILE 'files/two.txt'")
	wantCode(t, "DUMPFILE of two rows", err, 1172)
	if _, err := os.Lstat(filepath.Join(f.files, "two.txt")); err == nil {
		t.Error("a refused DUMPFILE left its file")
	}
}

func TestLoadFileConfined(t *testing.T) {
	f := newFileFixture(t)
	if err := os.WriteFile(filepath.Join(f.files, "sub", "in.txt"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.data, "files_evil.txt"), []byte(fileSecret), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		f.files + "/secret.txt", "files/secretrel", f.files + "/out/secret.txt", "files/outrel/secret.txt",
		f.data + "/files_evil.txt", f.files + "/../files_evil.txt", f.outside + "/secret.txt", "files/missing.txt",
		"files/sub", "/etc/hostname",
	} {
		var got sql.NullString
		if err := f.db.QueryRow("SELECT LOAD_FILE(?)", name).Scan(&got); err != nil || got.Valid {
			t.Errorf("LOAD_FILE(%s) = %q, %v; want NULL", name, got.String, err)
		}
	}
	for _, name := range []string{f.files + "/sub/in.txt", "files/in/in.txt", "files/sub/../in/in.txt"} {
		var got sql.NullString
		if err := f.db.QueryRow("SELECT LOAD_FILE(?)", name).Scan(&got); err != nil || got.String != "inside" {
			t.Errorf("LOAD_FILE(%s) = %q, %v; want inside", name, got.String, err)
		}
	}
}

func TestLoadDataConfined(t *testing.T) {
	f := newFileFixture(t)
	mustExec(t, f.db, "CREATE SINK ld INTO DELTA 'ld' (id BIGINT NOT NULL, v VARCHAR(10), PRIMARY KEY (id))")
	if err := os.WriteFile(filepath.Join(f.files, "sub", "rows.tsv"), []byte("1\ta\n2\tb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.outside, "rows.tsv"), []byte("9\tz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.data, "files_rows.tsv"), []byte("8\ty\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		f.data + "/files_rows.tsv", f.files + "/../files_rows.tsv", f.files + "/out/rows.tsv",
		"files/outrel/rows.tsv", f.outside + "/rows.tsv",
	} {
		_, err := f.db.Exec("LOAD DATA INFILE " + quote(name) + " INTO TABLE ld")
		wantCode(t, "LOAD DATA "+name, err, 1290)
	}
	_, err := f.db.Exec("LOAD DATA INFILE 'files/missing.tsv' INTO TABLE ld")
	wantCode(t, "LOAD DATA of a missing file", err, 29)
	_, err = f.db.Exec("LOAD DATA INFILE 'files/sub' INTO TABLE ld")
	wantCode(t, "LOAD DATA of a folder", err, 29)
	// LOCAL is the client's file, and off unless local_infile is set.
	_, err = f.db.Exec("LOAD DATA LOCAL INFILE '" + f.outside + "/rows.tsv' INTO TABLE ld")
	if err == nil {
		t.Error("LOAD DATA LOCAL with local_infile off succeeded")
	}
	if _, err := f.db.Exec("LOAD DATA INFILE 'files/in/rows.tsv' INTO TABLE ld"); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, f.db, "ld"); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("ld holds %v, want [1 2]", got)
	}
}

// A sink's location under DATA/files (one an older lakesql let a sink
// take, here reached by making DATA/files the sinks' folder) takes no
// file, even where no folder is named _delta_log.
func TestIntoOutfileNotIntoSink(t *testing.T) {
	data := t.TempDir()
	ts := startServer(t, data, testPassword)
	db := ts.db(testPassword)
	mustExec(t, db, "CREATE SINK s INTO DELTA 'lake/s' (id BIGINT NOT NULL, PRIMARY KEY (id))")
	mustExec(t, db, "INSERT INTO s VALUES (1)")
	ts.stop()
	if err := os.Remove(filepath.Join(data, SecureFilesDir)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("lake", filepath.Join(data, SecureFilesDir)); err != nil {
		t.Fatal(err)
	}
	ts = startServer(t, data, testPassword)
	db = ts.db(testPassword)
	for _, name := range []string{"files/s/x.parquet", filepath.Join(data, "lake", "s", "y.json")} {
		_, err := db.Exec("SELECT 1 INTO DUMPFILE " + quote(name))
		wantCode(t, "DUMPFILE "+name, err, 1290)
		if err == nil || !strings.Contains(err.Error(), "location of sink s") {
			t.Errorf("DUMPFILE %s: %v, want it refused as sink s's", name, err)
		}
	}
	if _, err := db.Exec("SELECT 1 INTO DUMPFILE 'files/beside.txt'"); err != nil {
		t.Errorf("DUMPFILE beside the sink: %v", err)
	}
}

// The chain of the issue: a sink under DATA/files, then a forged log entry
// written into its _delta_log. Either CREATE SINK refuses the location
// (1210), or the forged entry is refused (1290) and the sink reads as it was.
func TestDeltaLogChainRefused(t *testing.T) {
	data := t.TempDir()
	ts := startServer(t, data, testPassword)
	db := ts.db(testPassword)
	_, err := db.Exec("CREATE SINK ff INTO DELTA 'files/ff' (id BIGINT NOT NULL, PRIMARY KEY (id))")
	if mysqlCode(err) == 1210 {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "INSERT INTO ff VALUES (1)")
	log := filepath.Join(data, SecureFilesDir, "ff", "_delta_log")
	before, _ := os.ReadDir(log)
	forged := `{"add":{"path":"file:///etc/passwd","size":1,"modificationTime":0,"dataChange":true,"partitionValues":{}}}`
	for _, name := range []string{"files/ff/_delta_log/00000000000000000002.json", log + "/00000000000000000003.json"} {
		_, err = db.Exec("SELECT " + quote(forged) + " INTO DUMPFILE " + quote(name))
		wantCode(t, "DUMPFILE "+name, err, 1290)
	}
	if after, _ := os.ReadDir(log); len(after) != len(before) {
		t.Errorf("the log grew from %d to %d entries", len(before), len(after))
	}
	if n := count(t, db, "SELECT count(*) FROM ff"); n != 1 {
		t.Errorf("ff holds %d rows, want 1", n)
	}
}
