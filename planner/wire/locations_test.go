package wire

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// locationsEnv is a server whose allowed root is base, with the data
// directory base/data, and a folder outside every root.
type locationsEnv struct {
	t       *testing.T
	base    string
	data    string
	outside string
	ts      *testServer
	db      *sql.DB
}

func startLocations(t *testing.T) *locationsEnv {
	t.Helper()
	top := t.TempDir()
	env := &locationsEnv{t: t, base: filepath.Join(top, "base"), outside: filepath.Join(top, "outside")}
	env.data = filepath.Join(env.base, "data")
	for _, d := range []string{env.data, env.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env.start()
	return env
}

func (env *locationsEnv) start() {
	t := env.t
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(context.Background(), Config{Listener: l, DataDir: env.data, AllowedRoots: []string{env.base}, RootPassword: testPassword})
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	env.ts = &testServer{t: t, srv: srv, dir: env.data, addr: srv.Addr().String(), done: make(chan error, 1)}
	go func() { env.ts.done <- srv.Serve() }()
	t.Cleanup(env.ts.stop)
	env.db = env.ts.db(testPassword)
}

// refused runs q and wants 1210 (HY000) with every one of msgs in the
// message.
func (env *locationsEnv) refused(q string, msgs ...string) {
	env.t.Helper()
	_, err := env.db.Exec(q)
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1210 || string(me.SQLState[:]) != "HY000" {
		env.t.Errorf("%s: got %v, want 1210 (HY000)", q, err)
		return
	}
	for _, m := range msgs {
		if !strings.Contains(me.Message, m) {
			env.t.Errorf("%s: message %q does not say %q", q, me.Message, m)
		}
	}
}

// outsideEmpty fails when anything appeared in the outside folder.
func (env *locationsEnv) outsideEmpty() {
	env.t.Helper()
	ents, err := os.ReadDir(env.outside)
	if err != nil {
		env.t.Fatal(err)
	}
	for _, e := range ents {
		env.t.Errorf("%s appeared outside the allowed roots", filepath.Join(env.outside, e.Name()))
	}
}

func (env *locationsEnv) symlink(target, name string) string {
	env.t.Helper()
	p := filepath.Join(env.data, name)
	if err := os.Symlink(target, p); err != nil {
		env.t.Fatal(err)
	}
	return p
}

func TestSinkLocationThroughSymlinkRefused(t *testing.T) {
	env := startLocations(t)
	env.symlink(env.outside, "out")
	env.refused("CREATE SINK s INTO DELTA 'out/t' (id INT)", "through a symlink", env.outside, "outside the allowed roots")
	env.refused("CREATE SINK s INTO DELTA '"+filepath.Join(env.data, "out")+"' (id INT)", "through a symlink")
	// A dangling symlink leads nowhere known: refused too.
	env.symlink(filepath.Join(env.outside, "later"), "dangling")
	env.refused("CREATE SINK s INTO DELTA 'dangling' (id INT)", "cannot be resolved")
	env.refused("CREATE SINK s INTO DELTA 'dangling/t' (id INT)", "cannot be resolved")
	env.outsideEmpty()
	// A symlink that stays within the roots is followed, and the sink
	// is stored at the resolved location.
	if err := os.MkdirAll(filepath.Join(env.base, "lake"), 0o755); err != nil {
		t.Fatal(err)
	}
	env.symlink(filepath.Join(env.base, "lake"), "lakelink")
	mustExec(t, env.db, "CREATE SINK s INTO DELTA 'lakelink/s' (id INT)")
	var name, format, loc, mode string
	if err := env.db.QueryRow("SHOW SINKS").Scan(&name, &format, &loc, &mode); err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(env.base, "lake", "s"); loc != want {
		t.Errorf("SHOW SINKS location %q, want the resolved %q", loc, want)
	}
}

func TestSinkLocationInDataDirAreasRefused(t *testing.T) {
	env := startLocations(t)
	for _, area := range []string{"state", "tmp", "files", "cache", "iceberg"} {
		env.refused("CREATE SINK s INTO DELTA '"+area+"/t' (id INT)", filepath.Join(env.data, area), "which lakesql keeps for")
	}
	env.refused("CREATE SINK s INTO DELTA 'files/../files/x' (id INT)", "inside "+filepath.Join(env.data, "files"))
	env.refused("CREATE SINK s INTO DELTA '.' (id INT)", "the data directory or holds it")
	env.refused("CREATE SINK s INTO DELTA 'sinks.json' (id INT)", "lakesql's own file")
	if err := os.WriteFile(filepath.Join(env.data, "plain"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	env.refused("CREATE SINK s INTO DELTA 'plain' (id INT)", "is a file, not a folder")
	// The base root holds the data directory: a table there would hold
	// the sinks' state.
	env.refused("CREATE SINK s INTO DELTA '"+env.base+"' (id INT)", "an allowed root itself")
	env.refused("CREATE SINK s INTO DELTA '"+filepath.Dir(env.base)+"' (id INT)", "outside the allowed roots")
	// An Iceberg sink may not put its catalog or warehouse there either.
	env.refused("CREATE SINK i INTO ICEBERG 'db.i' (id INT) WITH (catalog.warehouse = 'state/wh')", "inside "+filepath.Join(env.data, "state"))
	env.refused("CREATE SINK i INTO ICEBERG 'db.i' (id INT) WITH (catalog.uri = 'files/c.db')", "inside "+filepath.Join(env.data, "files"))
	env.refused("CREATE SINK i INTO ICEBERG 'db.i' (id INT) WITH (catalog.uri = 'sinks.json', catalog.sql.driver = 'sqlite')", "lakesql's own file")
	// Nor point SQLite at a file that is not a database.
	if err := os.WriteFile(filepath.Join(env.data, "notes.db"), []byte("not a database"), 0o644); err != nil {
		t.Fatal(err)
	}
	env.refused("CREATE SINK i INTO ICEBERG 'db.i' (id INT) WITH (catalog.uri = 'notes.db')", "is not a SQLite database")
}

func TestSinkLocationOverlappingAnotherSinkRefused(t *testing.T) {
	env := startLocations(t)
	mustExec(t, env.db, "CREATE SINK a INTO DELTA 'lake/a' (id INT)")
	env.refused("CREATE SINK b INTO DELTA 'lake/a/_delta_log' (id INT)", "_delta_log")
	env.refused("CREATE SINK b INTO DELTA 'lake/a/sub' (id INT)", "is inside the Delta table "+filepath.Join(env.data, "lake", "a"))
	env.refused("CREATE SINK b INTO DELTA 'lake' (id INT)", "holds the Delta table "+filepath.Join(env.data, "lake", "a"), "the sink a")
	// Component comparison: lake/ab is a neighbour of lake/a, not inside it.
	mustExec(t, env.db, "CREATE SINK ab INTO DELTA 'lake/ab' (id INT)")
	// A Delta table no sink names is found by its _delta_log.
	if err := os.MkdirAll(filepath.Join(env.data, "foreign", "_delta_log"), 0o755); err != nil {
		t.Fatal(err)
	}
	env.refused("CREATE SINK b INTO DELTA 'foreign/part' (id INT)", "is inside the Delta table "+filepath.Join(env.data, "foreign"))

	// Iceberg warehouses and catalog files against Delta tables, both ways.
	env.refused("CREATE SINK i INTO ICEBERG 'db.i' (id INT) WITH (catalog.warehouse = 'lake/a/wh')", "the Iceberg warehouse", "is inside the Delta table")
	env.refused("CREATE SINK i INTO ICEBERG 'db.i' (id INT) WITH (catalog.warehouse = 'lake')", "the Iceberg warehouse", "holds the Delta table")
	env.refused("CREATE SINK i INTO ICEBERG 'db.i' (id INT) WITH (catalog.uri = 'lake/a/c.db')", "the Iceberg catalog file", "is inside the Delta table")
	mustExec(t, env.db, "CREATE SINK i INTO ICEBERG 'db.i' (id INT) WITH (catalog.warehouse = 'ice/wh', catalog.uri = 'ice/c.db')")
	env.refused("CREATE SINK d INTO DELTA 'ice/wh/db.db/d' (id INT)", "is inside the Iceberg warehouse "+filepath.Join(env.data, "ice", "wh"), "the sink i")
	env.refused("CREATE SINK d INTO DELTA 'ice' (id INT)", "holds the Iceberg")
	// A second Iceberg sink may share the catalog and the warehouse.
	mustExec(t, env.db, "CREATE SINK i2 INTO ICEBERG 'db.i2' (id INT) WITH (catalog.warehouse = 'ice/wh', catalog.uri = 'ice/c.db')")
	mustExec(t, env.db, "INSERT INTO i2 VALUES (1)")
}

func TestSinkLocationSpellingsOfOneTable(t *testing.T) {
	env := startLocations(t)
	mustExec(t, env.db, "CREATE SINK a INTO DELTA 'lake/a' (id INT)")
	env.symlink(filepath.Join(env.data, "lake"), "samelake")
	env.refused("CREATE SINK b INTO DELTA 'samelake/a' (id INT)", "is already the sink a")
	env.refused("CREATE SINK b INTO DELTA '"+filepath.Join(env.data, "samelake", "a")+"/' (id INT)", "is already the sink a")
	env.refused("CREATE SINK b INTO DELTA '"+env.data+"//lake///a' (id INT)", "is already the sink a")
	// Attaching without columns goes the same way.
	env.refused("CREATE SINK b INTO DELTA 'samelake/./a'", "is already the sink a")
	// One Iceberg catalog file, spelled two ways, is one catalog.
	mustExec(t, env.db, "CREATE SINK i INTO ICEBERG 'db.i' (id INT) WITH (catalog.uri = 'ice/c.db', catalog.warehouse = 'ice/wh')")
	env.symlink(filepath.Join(env.data, "ice"), "icelink")
	env.refused("CREATE SINK i2 INTO ICEBERG 'db.i' WITH (catalog.uri = 'file:"+filepath.Join(env.data, "icelink", "c.db")+"?_txlock=immediate', catalog.warehouse = 'ice/wh')",
		"is already the sink i")
	// The default catalog spelled as a file is the default catalog.
	mustExec(t, env.db, "CREATE SINK d INTO ICEBERG 'db.d' (id INT)")
	env.refused("CREATE SINK d2 INTO ICEBERG 'db.d' WITH (catalog.uri = 'iceberg/catalog.db')", "is already the sink d")
}

func TestSinkLocationURLSpellingsRefused(t *testing.T) {
	env := startLocations(t)
	env.refused("CREATE SINK s INTO DELTA 'file:/x' (id INT)", "the schemes are")
	env.refused("CREATE SINK s INTO DELTA 'file:"+env.outside+"' (id INT)", "the schemes are")
	env.refused("CREATE SINK s INTO DELTA 'file://"+env.data+"/x' (id INT)", "the schemes are")
	env.refused("CREATE SINK s INTO DELTA 'file:x' (id INT)", "the schemes are")
	env.refused("CREATE SINK s INTO DELTA 'S3:/bucket/x' (id INT)", "the schemes are")
	env.refused("CREATE SINK s INTO DELTA 'http://host/x' (id INT)", "the schemes are")
	env.refused("CREATE SINK s INTO DELTA 'lake/a\nb' (id INT)", "control character")
	if ents, _ := os.ReadDir(env.data); len(ents) > 0 {
		for _, e := range ents {
			if strings.Contains(e.Name(), ":") {
				t.Errorf("a refused location created %s", filepath.Join(env.data, e.Name()))
			}
		}
	}
}

func TestCatalogFileSpellingsConfined(t *testing.T) {
	env := startLocations(t)
	env.symlink(env.outside, "out")
	out := env.outside
	rel, err := filepath.Rel(env.data, out)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ opts, want string }{
		{"catalog.uri = '" + out + "/cat.sqlite3', catalog.sql.driver = 'sqlite'", "outside the allowed roots"},
		{"catalog.uri = '" + out + "/cat.sqlite3?_pragma=journal_mode(WAL)', catalog.sql.driver = 'sqlite'", "outside the allowed roots"},
		{"catalog.uri = '" + out + "/cat.db'", "outside the allowed roots"},
		{"catalog.uri = 'sql://" + out + "/cat.db'", "outside the allowed roots"},
		{"catalog.uri = 'file:" + out + "/cat.sqlite3'", "outside the allowed roots"},
		{"catalog.uri = 'file://" + out + "/cat.sqlite3?mode=rwc'", "outside the allowed roots"},
		{"catalog.uri = 'file://localhost" + out + "/cat.sqlite3'", "outside the allowed roots"},
		{"catalog.uri = 'file:" + strings.ReplaceAll(out, "/", "%2F") + "%2Fcat.sqlite3'", "outside the allowed roots"},
		{"catalog.uri = 'file:" + out + "/cat.sqlite3#frag'", "outside the allowed roots"},
		{"catalog.uri = '" + rel + "/cat.sqlite3', catalog.sql.driver = 'sqlite'", "outside the allowed roots"},
		{"catalog.uri = 'file:" + rel + "/cat.sqlite3'", "outside the allowed roots"},
		{"catalog.uri = 'out/cat.sqlite3', catalog.sql.driver = 'sqlite'", "through a symlink"},
		{"catalog.uri = 'file:out/cat.db?_txlock=immediate'", "through a symlink"},
		{"catalog.uri = 'file://elsewhere/cat.db'", "only local files are opened"},
		{"catalog.uri = '" + out + "/cat.duckdb', catalog.sql.driver = 'duckdb'", "not a driver lakesql opens SQL catalogs with"},
		{"catalog.uri = '" + out + "', catalog.sql.driver = 'lakesql'", "not a driver lakesql opens SQL catalogs with"},
		{"catalog.uri = 'u:p@tcp(127.0.0.1:1)/cat?allowAllFiles=true'", "allowAllFiles"},
		{"catalog.uri = 'postgres://u@127.0.0.1:1/cat?sslrootcert=" + out + "/ca.pem'", "sslrootcert"},
		{"catalog.uri = 'host=127.0.0.1 passfile=''" + out + "/pgpass'' dbname=cat', catalog.sql.driver = 'postgres'", "passfile"},
		{"catalog.warehouse = 'out/wh'", "through a symlink"},
		{"catalog.warehouse = 'file://" + out + "/wh'", "outside the allowed roots"},
		{"catalog.type = 'hadoop', catalog.warehouse = '" + out + "/wh'", "outside the allowed roots"},
		{"catalog.`gcs.keypath` = '" + out + "/key.json'", "outside the allowed roots"},
	} {
		env.refused("CREATE SINK i INTO ICEBERG 'db.i' (id INT) WITH ("+c.opts+")", c.want)
	}
	env.outsideEmpty()
	// Within the roots every spelling works, and names one file.
	mustExec(t, env.db, "CREATE SINK i INTO ICEBERG 'db.i' (id INT) WITH (catalog.uri = 'cats/c.sqlite3', catalog.sql.driver = 'sqlite', catalog.warehouse = 'wh')")
	mustExec(t, env.db, "INSERT INTO i VALUES (1)")
	if _, err := os.Stat(filepath.Join(env.data, "cats", "c.sqlite3")); err != nil {
		t.Errorf("the catalog file is not where it was named: %v", err)
	}
}

// A sink stored before these checks, in a place they refuse now, still
// opens: its data stays reachable, to be copied out and dropped.
func TestStoredSinkInRefusedPlaceStillOpens(t *testing.T) {
	env := startLocations(t)
	mustExec(t, env.db, "CREATE SINK old INTO DELTA 'lake/old' (id BIGINT)")
	mustExec(t, env.db, "INSERT INTO old VALUES (1), (2)")
	env.ts.stop()
	// Move the table into DATA/files and rewrite the registry as an
	// older lakesql would have accepted it.
	moved := filepath.Join(env.data, "files", "old")
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(env.data, "lake", "old"), moved); err != nil {
		t.Fatal(err)
	}
	regPath := filepath.Join(env.data, "sinks.json")
	b, err := os.ReadFile(regPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	rec := doc["sinks"].([]any)[0].(map[string]any)
	rec["path"] = moved
	rec["statement"] = strings.Replace(rec["statement"].(string), "'lake/old'", "'files/old'", 1)
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(regPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env.start()
	mustExec(t, env.db, "INSERT INTO old VALUES (3)")
	if got := ids(t, env.db, "old"); len(got) != 3 {
		t.Errorf("the stored sink in DATA/files reads %v, want 3 rows", got)
	}
	// Its folder still counts as taken.
	env.refused("CREATE SINK b INTO DELTA 'files/old' (id BIGINT)", "already the sink old")
	env.refused("CREATE SINK b INTO DELTA 'files/old/x' (id BIGINT)")
}
