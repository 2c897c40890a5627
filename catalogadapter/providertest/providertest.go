// Package providertest is the conformance suite of catalogadapter.Provider:
// the promises every backend makes to the epoch sink, checked the same way
// against each. A backend's tests call Run with a function that opens the
// backend on fresh storage and creates a table there:
//
//	func TestConformance(t *testing.T) {
//		providertest.Run(t, func(t *testing.T, def catalogadapter.TableDef) (catalogadapter.Provider, catalogadapter.TableIdent) {
//			p := New(...)                       // on t.TempDir()
//			id := ...                           // a table name of the backend
//			if err := p.CreateTable(ctx, id, def); err != nil { t.Fatal(err) }
//			return p, id
//		}, providertest.Options{...})
//	}
//
// Where backends really differ (the version a new table starts at, how to
// list the files under a table), Options names the difference; the suite
// never skips a check silently.
package providertest

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	_ "github.com/duckdb/duckdb-go/v2" // the DuckDB that stages and scans

	"github.com/lakesql/lakesql/catalogadapter"
)

// NewTable opens the backend on storage of its own (a t.TempDir, say) and
// creates there an empty table of def, returning the provider and the
// table's identifier. Each call is a fresh world: no other table, no
// other writer.
type NewTable func(t *testing.T, def catalogadapter.TableDef) (catalogadapter.Provider, catalogadapter.TableIdent)

// Options name how a backend differs where the contract leaves room.
type Options struct {
	// CreatedVersion is TableSpec.Version of a table just created: 0 for
	// Delta (creating the table is its version 0), -1 for Iceberg (no
	// snapshot yet).
	CreatedVersion int64
	// StoredFiles lists the data files under the table's storage, whether
	// a commit references them or not: how the suite sees that Discard
	// deletes what it should, and only that. Required.
	StoredFiles func(t *testing.T, id catalogadapter.TableIdent) []string
	// Missing names a table that does not exist, beside id on the same
	// provider. Required.
	Missing func(id catalogadapter.TableIdent) catalogadapter.TableIdent
	// ReadIDs reads the committed rows' ids, in any order, for a provider
	// that is no catalogadapter.Scanner; with a Scanner the suite reads
	// through it, with DuckDB, and ignores ReadIDs.
	ReadIDs func(t *testing.T, id catalogadapter.TableIdent) []int64
	// Invalid are identifiers this backend refuses with ErrInvalid, beyond
	// the empty one and one with a NUL byte, which every backend refuses.
	Invalid []catalogadapter.TableIdent
}

// Run runs the conformance checks, each as a subtest on a table of its own.
func Run(t *testing.T, newTable NewTable, opts Options) {
	if opts.StoredFiles == nil || opts.Missing == nil {
		t.Fatal("providertest: Options.StoredFiles and Options.Missing are required")
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			p, id := newTable(t, catalogadapter.TableDef{Schema: Schema()})
			c.run(t, &suite{p: p, id: id, opts: opts, db: OpenDuckDB(t)})
		})
	}
	runCompactChecks(t, newTable, opts)
}

// Schema is the table every check creates: an id and a name.
func Schema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
}

// suite is what a check works with: the provider, its table, and a DuckDB
// to stage from and scan with.
type suite struct {
	p    catalogadapter.Provider
	id   catalogadapter.TableIdent
	opts Options
	db   *sql.DB
}

// OpenDuckDB opens an in-memory DuckDB in UTC, closed when t ends: what
// the suite reads tables back with, and backends' tests may too.
func OpenDuckDB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// Scans of timestamps depend on the session's zone; the suite's schema
	// has none, but a backend may still ask.
	if _, err := db.Exec("SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}
	return db
}

// stage stages the rows with ids from..to-1.
func (s *suite) stage(t *testing.T, from, to int64) catalogadapter.Receipt {
	t.Helper()
	r, err := s.p.StageSQL(context.Background(), s.id, s.db, rowsSource(from, to))
	if err != nil {
		t.Fatalf("StageSQL: %v", err)
	}
	return r
}

func rowsSource(from, to int64) catalogadapter.Source {
	return catalogadapter.Source{Query: fmt.Sprintf(
		"SELECT range::BIGINT AS id, 'n' || range::VARCHAR AS name FROM range(%d, %d)", from, to)}
}

// commit commits receipts, failing the test on an error.
func (s *suite) commit(t *testing.T, receipts []catalogadapter.Receipt, opts catalogadapter.CommitOptions) catalogadapter.CommitOutcome {
	t.Helper()
	out, err := s.p.Commit(context.Background(), s.id, receipts, opts)
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	return out
}

// version is the table's current version.
func (s *suite) version(t *testing.T) int64 {
	t.Helper()
	spec, err := s.p.TableSpec(context.Background(), s.id)
	if err != nil {
		t.Fatalf("TableSpec: %v", err)
	}
	return spec.Version
}

// ids reads the committed rows' ids, sorted, through the Scanner, with
// DuckDB, or else through Options.ReadIDs.
func (s *suite) ids(t *testing.T) []int64 {
	t.Helper()
	ctx := context.Background()
	sc, ok := s.p.(catalogadapter.Scanner)
	if !ok {
		if s.opts.ReadIDs == nil {
			t.Fatalf("%T is no catalogadapter.Scanner: set Options.ReadIDs", s.p)
		}
		out := slices.Clone(s.opts.ReadIDs(t, s.id))
		slices.Sort(out)
		return out
	}
	version, files, err := sc.Files(ctx, s.id)
	if err != nil {
		t.Fatalf("Files: %v", err)
	}
	if len(files) == 0 {
		return nil
	}
	q, err := sc.ScanSQL(ctx, s.id, s.db, version, nil)
	if err != nil {
		t.Fatalf("ScanSQL: %v", err)
	}
	rs, err := s.db.QueryContext(ctx, "SELECT id FROM ("+q+") ORDER BY id")
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer rs.Close()
	var out []int64
	for rs.Next() {
		var id int64
		if err := rs.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// wantIDs fails unless the committed ids are from..to-1 of each range.
func (s *suite) wantIDs(t *testing.T, ranges ...[2]int64) {
	t.Helper()
	var want []int64
	for _, r := range ranges {
		for id := r[0]; id < r[1]; id++ {
			want = append(want, id)
		}
	}
	slices.Sort(want)
	if got := s.ids(t); !slices.Equal(got, want) {
		t.Fatalf("committed ids %v, want %v", got, want)
	}
}

// files lists the data files the current version holds, by the paths
// CommitOptions.Removes takes.
func (s *suite) files(t *testing.T) []string {
	t.Helper()
	sc, ok := s.p.(catalogadapter.Scanner)
	if !ok {
		// Only a Scanner names the files Removes takes: without one the
		// sink never removes.
		t.Skipf("%T is no catalogadapter.Scanner: nothing names the files to remove", s.p)
	}
	_, files, err := sc.Files(context.Background(), s.id)
	if err != nil {
		t.Fatalf("Files: %v", err)
	}
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	slices.Sort(out)
	return out
}

// stored is StoredFiles, sorted.
func (s *suite) stored(t *testing.T) []string {
	t.Helper()
	out := slices.Clone(s.opts.StoredFiles(t, s.id))
	slices.Sort(out)
	return out
}
