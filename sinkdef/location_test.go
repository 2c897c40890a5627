package sinkdef

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCanonicalPath(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(dir, "real")
	if err := os.MkdirAll(filepath.Join(real, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"link":     real,
		"rel":      "real/sub",
		"dangling": filepath.Join(dir, "nowhere"),
		"loop":     filepath.Join(dir, "loop"),
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, want string }{
		{dir + "/real/sub", real + "/sub"},
		{dir + "/link/sub/new/deeper", real + "/sub/new/deeper"},
		{dir + "/rel", real + "/sub"},
		{dir + "/rel/../x", dir + "/x"}, // cleaned first, as the path is used
		{dir + "//link///sub/", real + "/sub"},
		{dir + "/missing/a/b", dir + "/missing/a/b"},
		{dir + "/link", real},
	} {
		got, err := canonicalPath(c.in)
		if err != nil || got != c.want {
			t.Errorf("canonicalPath(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{dir + "/dangling", dir + "/dangling/x", dir + "/loop/x", dir + "/file/x", "relative/x"} {
		if got, err := canonicalPath(in); err == nil {
			t.Errorf("canonicalPath(%q) = %q, want an error", in, got)
		}
	}
}

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		root, p string
		want    bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/b", "/a/b/c", true},
		{"/a/b", "/a/bc", false}, // components, not string prefixes
		{"/a/b", "/a", false},
		{"/", "/x", true},
		{"s3://bkt/lake", "s3://bkt/lake/t", true},
		{"s3://bkt/lake", "s3://bkt/lakehouse", false},
		{"s3://bkt/lake", "/bkt/lake/t", false},
		{"/bkt/lake", "s3://bkt/lake/t", false},
	} {
		if got := within(c.root, c.p); got != c.want {
			t.Errorf("within(%q, %q) = %v, want %v", c.root, c.p, got, c.want)
		}
	}
}

func TestSQLiteDSN(t *testing.T) {
	for _, c := range []struct{ dsn, file, query string }{
		{"/x/cat.sqlite3", "/x/cat.sqlite3", ""},
		{"/x/cat.db?_pragma=busy_timeout(1)", "/x/cat.db", "_pragma=busy_timeout(1)"},
		{"rel/cat.db", "rel/cat.db", ""},
		{"file:/x/c.db", "/x/c.db", ""},
		{"file:///x/c.db?mode=rwc", "/x/c.db", "mode=rwc"},
		{"file://localhost/x/c.db", "/x/c.db", ""},
		{"file:rel/c.db", "rel/c.db", ""},
		{"file:%2Fx%2Fc.db", "/x/c.db", ""},
		{"file:/x/c.db#frag", "/x/c.db", ""},
		{"file:/x/c.db?mode=ro#frag", "/x/c.db", "mode=ro"},
		{"file:/x/a%3fb.db", "/x/a?b.db", ""},
		{":memory:", "", ""},
		{"file::memory:?cache=shared", "", "cache=shared"},
		{"?x", "?x", ""},
	} {
		file, query, err := sqliteDSN(c.dsn)
		if err != nil || file != c.file || query != c.query {
			t.Errorf("sqliteDSN(%q) = %q, %q, %v; want %q, %q", c.dsn, file, query, err, c.file, c.query)
		}
	}
	if _, _, err := sqliteDSN("file://host/x.db"); err == nil {
		t.Error("a SQLite URI with a host was taken")
	}
	// What sqliteURI writes, sqliteDSN reads back.
	for _, p := range []string{"/x/plain.db", "/x/a?b#c%d.db"} {
		file, query, err := sqliteDSN(sqliteURI(p, "mode=rwc"))
		if err != nil || file != p || query != "mode=rwc" {
			t.Errorf("sqliteDSN(sqliteURI(%q)) = %q, %q, %v", p, file, query, err)
		}
	}
}

func TestSQLCatalogDriver(t *testing.T) {
	for _, c := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{}, ""},
		{map[string]string{"uri": "/x/c.sqlite3"}, ""},
		{map[string]string{"uri": "/x/c.sqlite3", "sql.driver": "sqlite"}, "sqlite"},
		{map[string]string{"uri": "sql:///x/c.db"}, "sqlite"},
		{map[string]string{"uri": "file:c"}, "sqlite"},
		{map[string]string{"uri": "u:p@tcp(h)/db"}, "mysql"},
		{map[string]string{"uri": "postgres://h/db"}, "postgres"},
		{map[string]string{"type": "rest", "uri": "/x/c.db"}, ""},
	} {
		if got, _ := sqlCatalogDriver(c.props); got != c.want {
			t.Errorf("sqlCatalogDriver(%v) = %q, want %q", c.props, got, c.want)
		}
	}
}

func TestPostgresParam(t *testing.T) {
	for _, c := range []struct{ dsn, key, want string }{
		{"postgres://u@h/db?sslkey=/k&sslmode=require", "sslkey", "/k"},
		{"host=h sslrootcert=/ca.pem dbname=x", "sslrootcert", "/ca.pem"},
		{"host=h passfile='/a b/\\'p' dbname=x", "passfile", "/a b/'p"},
		{"host=h passfile = /p", "passfile", "/p"},
	} {
		if got, ok := postgresParam(c.dsn, c.key); !ok || got != c.want {
			t.Errorf("postgresParam(%q, %q) = %q, %v; want %q", c.dsn, c.key, got, ok, c.want)
		}
	}
	if _, ok := postgresParam("host=h dbname=x", "sslkey"); ok {
		t.Error("found a setting that is not there")
	}
}
