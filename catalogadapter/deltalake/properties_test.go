package deltalake

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/clocktest"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// appendSQL stages and commits the rows of query.
func appendSQL(t *testing.T, p *Provider, id catalogadapter.TableIdent, db querier, query string) int64 {
	t.Helper()
	ctx := context.Background()
	r, err := p.StageSQL(ctx, id, db, catalogadapter.Source{Query: query})
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Commit(ctx, id, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{Epoch: -1})
	if err != nil {
		t.Fatal(err)
	}
	return out.Version
}

type querier = catalogadapter.Querier

const ordersRows = `SELECT i::BIGINT AS id, i * 1.5 AS amount, 'n' || i AS name, TIMESTAMPTZ '2024-01-01 00:00:00+00' AS ts FROM range(%d, %d) t(i)`

// TestSetColumnMappingName turns column mapping on for a partitioned
// table with data, as Spark does: one version with the protocol upgraded
// to reader 2 / writer 5, every column given an id and its own name as
// physical name (the existing files stay valid), maxColumnId set, and
// other properties set beside it. Rows read the same; appends and a
// copy-on-write delete after it write mapped files; a checkpoint holds it.
func TestSetColumnMappingName(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{PartitionSpec: catalogadapter.PartitionSpec{Fields: []catalogadapter.PartitionField{{Name: "name"}}}})
	appendSQL(t, p, id, db, sprintf(ordersRows, 0, 5))
	before := scanAll(t, p, db, id, -1)
	spec, err := p.SetProperties(ctx, id, map[string]string{delta.ColumnMappingModeKey: "name", "owner": "team-a"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Properties[delta.ColumnMappingMaxIDKey] != "4" || spec.Properties["owner"] != "team-a" || spec.Version != 2 {
		t.Errorf("spec %+v", spec)
	}
	_, snap, _ := p.latest(ctx, id)
	if pr := snap.Protocol; pr.MinReaderVersion != 2 || pr.MinWriterVersion != 5 {
		t.Errorf("protocol %+v, want 2/5", pr)
	}
	schema, _ := snap.Schema()
	for i, f := range schema.Fields {
		if physicalName(f, true) != f.Name || fieldID(f, -1) != i+1 {
			t.Errorf("field %s: physical name %q id %d", f.Name, physicalName(f, true), fieldID(f, -1))
		}
	}
	if d := cmp.Diff(before, scanAll(t, p, db, id, -1)); d != "" {
		t.Fatalf("rows changed by the upgrade (-before +after):\n%s", d)
	}
	// Setting what the table has writes nothing.
	if again, err := p.SetProperties(ctx, id, map[string]string{delta.ColumnMappingModeKey: "name"}, nil); err != nil || again.Version != 2 {
		t.Errorf("no-op: version %d, %v", again.Version, err)
	}
	from := appendSQL(t, p, id, db, sprintf(ordersRows, 5, 8))
	_, files, err := p.Files(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Commit(ctx, id, nil, catalogadapter.CommitOptions{Removes: []string{files[0].Path}, Epoch: -1}); err != nil {
		t.Fatal(err)
	}
	store, err := delta.NewLocalStorage(id.Name)
	if err != nil {
		t.Fatal(err)
	}
	_, last, _ := p.latest(ctx, id)
	if err := delta.NewTable(store).Checkpoint(ctx, last.Version); err != nil {
		t.Fatal(err)
	}
	p.snaps.drop(id.Name, last) // read the table through its checkpoint
	got := scanAll(t, p, db, id, -1)
	if len(got) != 8-int(files[0].Rows) {
		t.Errorf("%d rows after 8 appended and %d deleted", len(got), files[0].Rows)
	}
	checkMappedLog(t, p, db, id, id.Name, snap, from)
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// TestSetPropertiesRefusals: each refused property names its rule, and
// nothing is written.
func TestSetPropertiesRefusals(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	plain := newTable(t, p, catalogadapter.TableDef{})
	mapped := newTable(t, p, catalogadapter.TableDef{Properties: map[string]string{delta.ColumnMappingModeKey: "id"}})
	for _, c := range []struct {
		name  string
		id    catalogadapter.TableIdent
		set   map[string]string
		unset []string
		err   error
		what  string
	}{
		{"id mode on an existing table", plain, map[string]string{delta.ColumnMappingModeKey: "id"}, nil, catalogadapter.ErrSchemaChange, "id cannot be turned on for an existing table"},
		{"mapping turned off", mapped, map[string]string{delta.ColumnMappingModeKey: "none"}, nil, catalogadapter.ErrSchemaChange, "from id to none"},
		{"mapping unset", mapped, nil, []string{delta.ColumnMappingModeKey}, catalogadapter.ErrSchemaChange, "from id to none"},
		{"id to name", mapped, map[string]string{delta.ColumnMappingModeKey: "name"}, nil, catalogadapter.ErrSchemaChange, "from id to name"},
		{"bad mode", plain, map[string]string{delta.ColumnMappingModeKey: "physical"}, nil, catalogadapter.ErrInvalid, "none, name or id"},
		{"max id by hand", mapped, map[string]string{delta.ColumnMappingMaxIDKey: "100"}, nil, catalogadapter.ErrInvalid, "maxColumnId is not set by hand"},
		{"feature by property", plain, map[string]string{"delta.feature.rowTracking": "supported"}, nil, catalogadapter.ErrUnsupported, "delta.feature.rowTracking"},
		{"constraint by property", plain, map[string]string{"delta.constraints.pos": "id > 0"}, nil, catalogadapter.ErrInvalid, "ADD CONSTRAINT"},
		{"bad interval", plain, map[string]string{"delta.checkpointInterval": "0"}, nil, catalogadapter.ErrInvalid, "positive integer"},
		{"set and unset", plain, map[string]string{"a": "1"}, []string{"a"}, catalogadapter.ErrInvalid, "both set and unset"},
	} {
		before, _ := p.TableSpec(ctx, c.id)
		_, err := p.SetProperties(ctx, c.id, c.set, c.unset)
		if !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.what) {
			t.Errorf("%s: got %v, want %v naming %q", c.name, err, c.err, c.what)
		}
		if after, _ := p.TableSpec(ctx, c.id); after.Version != before.Version {
			t.Errorf("%s: a refused change wrote version %d", c.name, after.Version)
		}
	}
}

// TestCreateColumnMapping: a table created with id mode writes files with
// field ids under fresh physical names, and unsetting another property
// beside it leaves the mapping alone; delta.appendOnly on it lists nothing
// more at writer 5, which implies it.
func TestCreateColumnMapping(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := New(db, testOptions(clocktest.New(t0)))
	id := newTable(t, p, catalogadapter.TableDef{Properties: map[string]string{delta.ColumnMappingModeKey: "id", "owner": "x"}})
	_, old, _ := p.latest(ctx, id)
	schema, _ := old.Schema()
	for _, f := range schema.Fields {
		if !strings.HasPrefix(physicalName(f, true), "col-") {
			t.Errorf("field %s: physical name %q", f.Name, physicalName(f, true))
		}
	}
	from := appendSQL(t, p, id, db, sprintf(ordersRows, 0, 4))
	spec, err := p.SetProperties(ctx, id, map[string]string{"delta.appendOnly": "true"}, []string{"owner"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := spec.Properties["owner"]; ok || spec.Properties[delta.ColumnMappingModeKey] != "id" {
		t.Errorf("properties %v", spec.Properties)
	}
	got := scanAll(t, p, db, id, -1)
	want := textRows(t, db, "SELECT CAST(COLUMNS(*) AS VARCHAR) FROM ("+sprintf(ordersRows, 0, 4)+")")
	sort.Strings(want)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	_, now, _ := p.latest(ctx, id)
	checkMappedLog(t, p, db, id, id.Name, now, from)

}
