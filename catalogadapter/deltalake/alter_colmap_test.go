package deltalake

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/clocktest"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// Spark's column-mapped table (kernel/cdf-column-mapping-name-mode-3-7):
// RENAME keeps the physical name, DROP leaves the data unread, and a
// column added again under the dropped name is a new column (NULL for
// the old rows); appends after it read right.
func TestAlterSchemaColumnMappedGolden(t *testing.T) {
	archive := filepath.Join(sharedDelta(t), "kernel", "cdf-column-mapping-name-mode-3-7.tar.zst")
	if _, err := os.Stat(archive); err != nil {
		t.Skipf("SKIPPING: %s not found: %v", archive, err)
	}
	dir := t.TempDir()
	if out, err := exec.Command("tar", "--zstd", "-xf", archive, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ctx := context.Background()
	db := openDB(t)
	f := &evolveFixture{t: t, db: db, p: New(db, testOptions(clocktest.New(t0))), ctx: ctx}
	f.tbPath = filepath.Join(dir, "cdf-column-mapping-name-mode-3-7")
	f.id = catalogadapter.TableIdent{Name: f.tbPath}
	before := f.rows("id, name, value")
	if len(before) == 0 {
		t.Fatal("the golden table has rows")
	}
	if _, err := f.alter(f.p,
		catalogadapter.SchemaChange{Kind: catalogadapter.RenameColumn, Column: "name", NewName: "label"},
		catalogadapter.SchemaChange{Kind: catalogadapter.DropColumn, Column: "value"},
		catalogadapter.SchemaChange{Kind: catalogadapter.AddColumn, Column: "value", Type: arrow.BinaryTypes.String}); err != nil {
		t.Fatal(err)
	}
	var want [][]string
	for _, r := range before {
		want = append(want, []string{r[0], r[1], "NULL"})
	}
	if diff := cmp.Diff(want, f.rows("id, label, value")); diff != "" {
		t.Fatalf("after RENAME, DROP and ADD (-want +got):\n%s", diff)
	}
	f.mustCommit(f.p, f.stage(f.p, "SELECT 100::BIGINT AS id, 'new' AS label, 'v' AS value"))
	want = append(want, []string{"100", "new", "v"})
	if diff := cmp.Diff(want, f.rows("id, label, value")); diff != "" {
		t.Fatalf("after an append (-want +got):\n%s", diff)
	}
	snap, err := delta.OpenTable(mustLocal(t, f.tbPath), delta.TableOptions{}).Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	schema, _ := snap.Schema()
	label := schema.Field("label")
	if label == nil || label.Metadata["delta.columnMapping.physicalName"] != "col-ed3e45cf-632b-4a07-bb22-d9f4693bbaa1" {
		t.Fatalf("the rename keeps the physical name: %+v", label)
	}
	value := schema.Field("value")
	if value.Metadata["delta.columnMapping.physicalName"] == "col-95e13b58-72f1-4d26-8390-49469180a8a2" {
		t.Fatal("the re-added column must not reuse the dropped one's physical name")
	}
	if got := snap.Metadata.Configuration["delta.columnMapping.maxColumnId"]; got != "4" {
		t.Fatalf("maxColumnId %q, want 4", got)
	}
}
