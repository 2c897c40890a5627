package sqlsink

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/catalogadapter/deltalake"
	"github.com/lakesql/lakesql/catalogadapter/providertest"
)

// lake is one backend the engine tests run over: a table format with its
// provider, on the local disk. The engine's behaviour (epochs, replay,
// rollback, recovery) is the same on each; what a backend records of it
// (versions, snapshot summaries) differs, and the fields below say how.
type lake struct {
	name string
	// open returns a provider on the lake under root and the ident of its
	// table name: for Delta the directory root/name, for Iceberg db.name
	// in the SQLite catalog of root. Opening the same root again (a
	// restart, another process) finds the same tables.
	open func(t testing.TB, db *sql.DB, root, name string) (catalogadapter.Provider, catalogadapter.TableIdent)
	// commitVersion is the version the kth commit after the table's
	// creation made: k on Delta, whose versions count; the kth snapshot's
	// id on Iceberg.
	commitVersion func(t testing.TB, root string, id catalogadapter.TableIdent, k int64) int64
	// upsertRewrites: an upsert rewrites the files holding its keys, and
	// the rows kept from them count in the commit's Rows (Delta); Iceberg
	// stages a row delta, the epoch's rows only.
	upsertRewrites bool
	// crash holds the crash test's checks of what the table recorded;
	// maintCrash the maintenance crash test's.
	crash      crashChecks
	maintCrash maintCrashChecks
}

// lakes are the backends every engine test runs over.
var lakes = []lake{deltaLake, icebergLake}

var deltaLake = lake{
	name: "delta",
	open: func(t testing.TB, db *sql.DB, root, name string) (catalogadapter.Provider, catalogadapter.TableIdent) {
		return deltalake.New(db, deltalake.Options{}), catalogadapter.TableIdent{Name: filepath.Join(root, name)}
	},
	commitVersion:  func(_ testing.TB, _ string, _ catalogadapter.TableIdent, k int64) int64 { return k },
	upsertRewrites: true,
	crash:          deltaCrashChecks,
	maintCrash:     deltaMaintCrash,
}

var icebergLake = lake{
	name: "iceberg",
	open: func(t testing.TB, _ *sql.DB, root, name string) (catalogadapter.Provider, catalogadapter.TableIdent) {
		return openProvider(t, root), icebergTableIdent(name)
	},
	commitVersion: func(t testing.TB, root string, id catalogadapter.TableIdent, k int64) int64 {
		snaps := snapshots(t, root, id)
		if k < 1 || k > int64(len(snaps)) {
			return -1
		}
		return snaps[k-1].SnapshotID
	},
	crash:      icebergCrashChecks,
	maintCrash: icebergMaintCrash,
}

// lakeNamed is the lake a parent process names to its child.
func lakeNamed(name string) (lake, bool) {
	for _, l := range lakes {
		if l.name == name {
			return l, true
		}
	}
	return lake{}, false
}

// env is a lake with one table, orders, and a DuckDB to read back with.
type env struct {
	t    *testing.T
	lake lake
	root string // the lake's directory
	// dir is where the table's files are: the Delta table's directory,
	// or the Iceberg catalog's data directory.
	dir      string
	db       *sql.DB
	provider catalogadapter.Provider
	table    catalogadapter.TableIdent
}

// newEnv is an env on Delta, for the tests about Delta's log or the
// Delta provider's hooks.
func newEnv(t *testing.T) *env { return newLakeEnv(t, deltaLake) }

// newLakeEnv is an env on a fresh lake l.
func newLakeEnv(t *testing.T, l lake) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{t: t, lake: l, root: root, dir: root, db: providertest.OpenDuckDB(t)}
	e.provider, e.table = l.open(t, e.db, root, "orders")
	if l.name == deltaLake.name {
		e.dir = e.table.Name // a Delta table is its directory
	}
	return e
}

// version is the version of the table's kth commit.
func (e *env) version(k int64) int64 {
	e.t.Helper()
	return e.lake.commitVersion(e.t, e.root, e.table, k)
}

// delta is the env's provider for the Delta-only tests.
func (e *env) delta() *deltalake.Provider { return e.provider.(*deltalake.Provider) }

func (e *env) config(name string) Config {
	return Config{
		Name: name, Provider: e.provider, Table: e.table,
		Schema: orderSchema, TempDir: e.t.TempDir(), MemoryLimit: "256MB",
		// The engine tests count versions; auto-compaction, which makes
		// versions of its own, is tested on its own (autocompact_test.go).
		DisableAutoCompact: true,
	}
}

func (e *env) open(cfg Config) *Sink {
	e.t.Helper()
	return openSink(e.t, cfg)
}

func (e *env) epoch(s *Sink, n int64, batches ...arrow.RecordBatch) CommitResult {
	e.t.Helper()
	return epoch(e.t, s, n, batches...)
}

// openSink makes and opens a sink of cfg, closed when the test ends.
func openSink(t testing.TB, cfg Config) *Sink {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// epoch runs epoch n of batches through s and commits it.
func epoch(t testing.TB, s *Sink, n int64, batches ...arrow.RecordBatch) CommitResult {
	t.Helper()
	precommit(t, s, n, batches...)
	res, err := s.CommitEpoch(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// precommit runs epoch n up to its PreCommit: its files are staged,
// invisible, and the commit is the test's to make (or not).
func precommit(t testing.TB, s *Sink, n int64, batches ...arrow.RecordBatch) {
	t.Helper()
	ctx := context.Background()
	if err := s.BeginEpoch(ctx, n); err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if err := s.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PreCommit(ctx, n); err != nil {
		t.Fatal(err)
	}
}

// rows reads the table's committed rows, sorted.
func (e *env) rows() []row {
	e.t.Helper()
	return scanRows(e.t, e.provider, e.table, e.db, -1)
}

// scanRows reads table id's rows at version (-1: the latest) through p's
// ScanSQL on db, sorted by id and amount.
func scanRows(t testing.TB, p catalogadapter.Provider, id catalogadapter.TableIdent, db *sql.DB, version int64) []row {
	t.Helper()
	ctx := context.Background()
	q, err := p.(catalogadapter.Scanner).ScanSQL(ctx, id, db, version, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := db.QueryContext(ctx, "SELECT id, amount, region FROM ("+q+") ORDER BY id, amount")
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer rs.Close()
	var out []row
	for rs.Next() {
		var r row
		var region sql.NullString
		var amount sql.NullFloat64
		if err := rs.Scan(&r.ID, &amount, &region); err != nil {
			t.Fatal(err)
		}
		r.Amount, r.Region = amount.Float64, region.String
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// parquetFiles lists the data files on disk, committed or not.
func (e *env) parquetFiles() []string {
	return parquetFilesUnder(e.dir)
}

// parquetFilesUnder lists the Parquet files under dir outside a Delta
// log (checkpoints), sorted.
func parquetFilesUnder(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") && !strings.Contains(p, "_delta_log") {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}
