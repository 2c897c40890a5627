package deltalake

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/clocktest"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// evolveFixture is a table (id BIGINT, n INT, name STRING) and two
// providers on it, as two processes would have.
type evolveFixture struct {
	t      *testing.T
	db     *sql.DB
	p, p2  *Provider
	id     catalogadapter.TableIdent
	ctx    context.Context
	tbPath string
}

func newEvolveFixture(t *testing.T) *evolveFixture {
	t.Helper()
	clock := clocktest.New(t0)
	db := openDB(t)
	f := &evolveFixture{t: t, db: db, p: New(db, testOptions(clock)), p2: New(db, testOptions(clock)), ctx: context.Background()}
	f.tbPath = filepath.Join(t.TempDir(), "evolve")
	f.id = catalogadapter.TableIdent{Name: f.tbPath}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	if err := f.p.CreateTable(f.ctx, f.id, catalogadapter.TableDef{Schema: schema}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *evolveFixture) stage(p *Provider, query string, evolve ...catalogadapter.SchemaChange) catalogadapter.Receipt {
	f.t.Helper()
	r, err := p.StageSQL(f.ctx, f.id, f.db, catalogadapter.Source{Query: query, Evolve: evolve})
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func (f *evolveFixture) commit(p *Provider, rs []catalogadapter.Receipt, opts catalogadapter.CommitOptions) (catalogadapter.CommitOutcome, error) {
	opts.Epoch = -1
	return p.Commit(f.ctx, f.id, rs, opts)
}

func (f *evolveFixture) mustCommit(p *Provider, rs ...catalogadapter.Receipt) int64 {
	f.t.Helper()
	out, err := f.commit(p, rs, catalogadapter.CommitOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return out.Version
}

// rows reads the latest version's columns, rendered as text, by id.
func (f *evolveFixture) rows(cols string) [][]string {
	f.t.Helper()
	q, err := f.p.ScanSQL(f.ctx, f.id, f.db, -1, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	rs, err := f.db.QueryContext(f.ctx, "SELECT "+cols+" FROM ("+q+") ORDER BY id")
	if err != nil {
		f.t.Fatalf("%v\n%s", err, q)
	}
	defer rs.Close()
	ct, _ := rs.Columns()
	var out [][]string
	for rs.Next() {
		vals := make([]sql.NullString, len(ct))
		ptrs := make([]any, len(ct))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			f.t.Fatal(err)
		}
		r := make([]string, len(vals))
		for i, v := range vals {
			r[i] = "NULL"
			if v.Valid {
				r[i] = v.String
			}
		}
		out = append(out, r)
	}
	return out
}

func (f *evolveFixture) alter(p *Provider, changes ...catalogadapter.SchemaChange) (catalogadapter.TableSpec, error) {
	return p.AlterSchema(f.ctx, f.id, changes)
}

func (f *evolveFixture) version() int64 {
	f.t.Helper()
	spec, err := f.p.TableSpec(f.ctx, f.id)
	if err != nil {
		f.t.Fatal(err)
	}
	return spec.Version
}

func addNote() catalogadapter.SchemaChange {
	return catalogadapter.SchemaChange{Kind: catalogadapter.AddColumn, Column: "note", Type: arrow.BinaryTypes.String, Comment: "free text"}
}

func widenN() catalogadapter.SchemaChange {
	return catalogadapter.SchemaChange{Kind: catalogadapter.WidenColumn, Column: "n", Type: arrow.PrimitiveTypes.Int64}
}

func TestAlterSchemaOldFilesReadUnderTheNewSchema(t *testing.T) {
	f := newEvolveFixture(t)
	f.mustCommit(f.p, f.stage(f.p, "SELECT 1::BIGINT AS id, 7::INTEGER AS n, 'a' AS name"))
	spec, err := f.alter(f.p, addNote(), widenN())
	if err != nil {
		t.Fatal(err)
	}
	if spec.Version != 2 {
		t.Fatalf("one version for both changes: got %d", spec.Version)
	}
	if got := spec.Schema.Field(1).Type; !arrow.TypeEqual(got, arrow.PrimitiveTypes.Int64) {
		t.Fatalf("n is %s", got)
	}
	if fs := spec.SchemaSpec.Fields[3]; fs.Name != "note" || fs.Doc != "free text" || !fs.Nullable {
		t.Fatalf("note: %+v", fs)
	}
	f.mustCommit(f.p, f.stage(f.p, "SELECT 2::BIGINT AS id, 5000000000::BIGINT AS n, 'b' AS name, 'hello' AS note"))
	want := [][]string{{"1", "7", "a", "NULL"}, {"2", "5000000000", "b", "hello"}}
	if diff := cmp.Diff(want, f.rows("id, n, name, note")); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	// Both providers see it; the log holds Spark's operation name.
	actions, err := delta.OpenTable(mustLocal(t, f.tbPath), delta.TableOptions{}).ReadCommit(f.ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if op := actions[0].CommitInfo["operation"]; op != "ALTER TABLE" {
		t.Fatalf("operation %v", op)
	}
}

func mustLocal(t *testing.T, path string) delta.Storage {
	t.Helper()
	s, err := delta.NewLocalStorage(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAlterSchemaRefusalsWriteNothing(t *testing.T) {
	f := newEvolveFixture(t)
	before := f.version()
	cases := []struct {
		change catalogadapter.SchemaChange
		want   string
	}{
		{catalogadapter.SchemaChange{Kind: catalogadapter.WidenColumn, Column: "id", Type: arrow.PrimitiveTypes.Int32}, "narrowing"},
		{catalogadapter.SchemaChange{Kind: catalogadapter.WidenColumn, Column: "name", Type: arrow.PrimitiveTypes.Int64}, "no other change"},
		{catalogadapter.SchemaChange{Kind: catalogadapter.AddColumn, Column: "NAME", Type: arrow.PrimitiveTypes.Int64}, "already exists"},
		{catalogadapter.SchemaChange{Kind: catalogadapter.RenameColumn, Column: "n", NewName: "m"}, "ALTER SINK name SET (column_mapping = 'name') first"},
		{catalogadapter.SchemaChange{Kind: catalogadapter.DropColumn, Column: "n"}, "ALTER SINK name SET (column_mapping = 'name') first"},
		{catalogadapter.SchemaChange{Kind: catalogadapter.DropColumn, Column: "zz"}, "does not exist"},
	}
	for _, c := range cases {
		_, err := f.alter(f.p, c.change)
		if !errors.Is(err, catalogadapter.ErrSchemaChange) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: want ErrSchemaChange with %q, got %v", c.change.Kind, c.change.Column, c.want, err)
		}
		if strings.Count(err.Error(), "schema change not allowed") != 1 {
			t.Errorf("the sentinel once: %v", err)
		}
	}
	if v := f.version(); v != before {
		t.Fatalf("a refused change wrote version %d", v)
	}
}

// An ALTER that loses the race to a data commit retries on the new
// version; one that loses to the same change fails re-validation.
func TestAlterSchemaLosesRace(t *testing.T) {
	f := newEvolveFixture(t)
	f.p.beforeCommit = func(attempt int) {
		if attempt == 0 {
			f.mustCommit(f.p2, f.stage(f.p2, "SELECT 1::BIGINT AS id, 1::INTEGER AS n, 'x' AS name"))
		}
	}
	spec, err := f.alter(f.p, addNote())
	if err != nil {
		t.Fatal(err)
	}
	if spec.Version != 2 {
		t.Fatalf("the ALTER lands after the data commit: version %d", spec.Version)
	}
	if diff := cmp.Diff([][]string{{"1", "NULL"}}, f.rows("id, note")); diff != "" {
		t.Fatal(diff)
	}
	f.p.beforeCommit = func(attempt int) {
		if attempt == 0 {
			if _, err := f.alter(f.p2, widenN()); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, err = f.alter(f.p, widenN())
	if !errors.Is(err, catalogadapter.ErrSchemaChange) || !strings.Contains(err.Error(), "already long") {
		t.Fatalf("the retry must re-validate on the winner's schema: %v", err)
	}
}

// A data commit staged before a concurrent schema change re-validates:
// files that read right under the new schema land, others conflict.
func TestDataCommitAfterConcurrentSchemaChange(t *testing.T) {
	f := newEvolveFixture(t)
	r := f.stage(f.p, "SELECT 1::BIGINT AS id, 7::INTEGER AS n, 'a' AS name")
	if _, err := f.alter(f.p2, addNote(), widenN()); err != nil {
		t.Fatal(err)
	}
	f.mustCommit(f.p, r)
	if diff := cmp.Diff([][]string{{"1", "7", "NULL"}}, f.rows("id, n, note")); diff != "" {
		t.Fatal(diff)
	}

	// Another engine turns n into a string: integer files do not fit.
	r = f.stage(f.p, "SELECT 2::BIGINT AS id, 8::BIGINT AS n, 'b' AS name")
	tbl := delta.OpenTable(mustLocal(t, f.tbPath), delta.TableOptions{})
	snap, err := tbl.Latest(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	md := snap.Metadata
	md.SchemaString = strings.Replace(md.SchemaString, `"name":"n","type":"long"`, `"name":"n","type":"string"`, 1)
	if _, err := snap.Commit(f.ctx, []delta.Action{{MetaData: &md}}, delta.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	before := f.version()
	_, err = f.commit(f.p, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{})
	if !errors.Is(err, catalogadapter.ErrConflict) || !strings.Contains(err.Error(), `column "n" is long in the files, string in the table`) {
		t.Fatalf("want a conflict naming n, got %v", err)
	}
	if f.version() != before {
		t.Fatal("nothing may land under the wrong schema")
	}
}

// A merge that read the table before a metaData change conflicts (it is
// redone on the new schema).
func TestMergeConflictsWithSchemaChange(t *testing.T) {
	f := newEvolveFixture(t)
	read := f.mustCommit(f.p, f.stage(f.p, "SELECT 1::BIGINT AS id, 7::INTEGER AS n, 'a' AS name"))
	r := f.stage(f.p, "SELECT 1::BIGINT AS id, 8::INTEGER AS n, 'b' AS name")
	if _, err := f.alter(f.p2, addNote()); err != nil {
		t.Fatal(err)
	}
	_, err := f.commit(f.p, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{
		Requires: []catalogadapter.Requirement{catalogadapter.NoNewDataSince(read)}})
	if !errors.Is(err, catalogadapter.ErrConflict) || !strings.Contains(err.Error(), "changed the table's metadata") {
		t.Fatalf("want ErrConflict, got %v", err)
	}
}

// Automatic evolution: the new column and the rows that bring it are one
// version (metaData + add).
func TestAutoEvolutionInTheDataCommit(t *testing.T) {
	f := newEvolveFixture(t)
	f.mustCommit(f.p, f.stage(f.p, "SELECT 1::BIGINT AS id, 7::INTEGER AS n, 'a' AS name"))
	changes := []catalogadapter.SchemaChange{addNote(), widenN()}
	r := f.stage(f.p, "SELECT 2::BIGINT AS id, 9000000000::BIGINT AS n, 'b' AS name, 'new' AS note", changes...)
	out, err := f.commit(f.p, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{SchemaChanges: changes})
	if err != nil {
		t.Fatal(err)
	}
	actions, err := delta.OpenTable(mustLocal(t, f.tbPath), delta.TableOptions{}).ReadCommit(f.ctx, out.Version)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, a := range actions {
		switch {
		case a.Protocol != nil:
			kinds = append(kinds, "protocol")
		case a.MetaData != nil:
			kinds = append(kinds, "metaData")
		case a.Add != nil:
			kinds = append(kinds, "add")
		}
	}
	if diff := cmp.Diff([]string{"protocol", "metaData", "add"}, kinds); diff != "" {
		t.Fatalf("one version with the schema change and the data (-want +got):\n%s", diff)
	}
	want := [][]string{{"1", "7", "NULL"}, {"2", "9000000000", "new"}}
	if diff := cmp.Diff(want, f.rows("id, n, note")); diff != "" {
		t.Fatal(diff)
	}
	// Without the changes the stager refuses the unknown column, as before.
	if _, err := f.p.StageSQL(f.ctx, f.id, f.db, catalogadapter.Source{Query: "SELECT 3::BIGINT AS id, 1 AS other"}); !errors.Is(err, catalogadapter.ErrInvalid) {
		t.Fatalf("want the unknown column refused: %v", err)
	}
}

// Two writers evolve alike: the second's change is already there, and
// its files, which fit, land without a second metaData action.
func TestAutoEvolutionRacingTheSameChange(t *testing.T) {
	f := newEvolveFixture(t)
	r := f.stage(f.p, "SELECT 1::BIGINT AS id, 1::INTEGER AS n, 'a' AS name, 'mine' AS note", addNote())
	if _, err := f.alter(f.p2, addNote()); err != nil {
		t.Fatal(err)
	}
	out, err := f.commit(f.p, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{SchemaChanges: []catalogadapter.SchemaChange{addNote()}})
	if err != nil {
		t.Fatal(err)
	}
	actions, _ := delta.OpenTable(mustLocal(t, f.tbPath), delta.TableOptions{}).ReadCommit(f.ctx, out.Version)
	for _, a := range actions {
		if a.MetaData != nil {
			t.Fatal("the change was made already: no metaData again")
		}
	}
	if diff := cmp.Diff([][]string{{"1", "mine"}}, f.rows("id, note")); diff != "" {
		t.Fatal(diff)
	}
	// A winner that added the column with another type: the files conflict.
	r = f.stage(f.p, "SELECT 2::BIGINT AS id, 42::BIGINT AS extra", catalogadapter.SchemaChange{Kind: catalogadapter.AddColumn, Column: "extra", Type: arrow.PrimitiveTypes.Int64})
	if _, err := f.alter(f.p2, catalogadapter.SchemaChange{Kind: catalogadapter.AddColumn, Column: "extra", Type: arrow.BinaryTypes.String}); err != nil {
		t.Fatal(err)
	}
	_, err = f.commit(f.p, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{SchemaChanges: []catalogadapter.SchemaChange{
		{Kind: catalogadapter.AddColumn, Column: "extra", Type: arrow.PrimitiveTypes.Int64}}})
	if !errors.Is(err, catalogadapter.ErrConflict) {
		t.Fatalf("want ErrConflict, got %v", err)
	}
}
