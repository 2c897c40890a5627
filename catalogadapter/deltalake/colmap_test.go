package deltalake

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/clocktest"
	"github.com/lakesql/lakesql/internal/sqlquote"
	"github.com/lakesql/lakesql/tableformat/delta"
)

// colmapTables are the shared column-mapped tables: the archive, and the
// table's folder inside what it unpacks to.
var colmapTables = []struct{ archive, table string }{
	{"golden/table-with-columnmapping-mode-name", "table-with-columnmapping-mode-name/delta"},
	{"golden/table-with-columnmapping-mode-id", "table-with-columnmapping-mode-id/delta"},
	{"golden/data-skipping-basic-stats-all-types-columnmapping-name", "data-skipping-basic-stats-all-types-columnmapping-name/delta"},
	{"golden/data-skipping-basic-stats-all-types-columnmapping-id", "data-skipping-basic-stats-all-types-columnmapping-id/delta"},
	{"golden/dv-with-columnmapping", "dv-with-columnmapping/delta"},
	{"kernel/cdf-column-mapping-name-mode", "cdf-column-mapping-name-mode"},
	{"kernel/cdf-column-mapping-id-mode", "cdf-column-mapping-id-mode"},
	{"kernel/cdf-column-mapping-name-mode-3-7", "cdf-column-mapping-name-mode-3-7"},
}

// TestColumnMappingTablesWrite attaches each of Spark's column-mapped
// tables, appends its own rows again, deletes the rows of one file but its
// first (the copy-on-write rewrite of a delete or upsert), compacts, and
// reads it back: the rows are those before (which the golden reader test
// checks against expected/) with the writes applied. The log then keeps
// the protocol's rules (CheckColumnMapping: ids unique and under
// maxColumnId, every field named), the protocol is unchanged, and every
// file we wrote names its columns by physical name with the ids as field
// ids. A table with the change data feed on refuses the delete by name.
func TestColumnMappingTablesWrite(t *testing.T) {
	for _, tc := range colmapTables {
		t.Run(filepath.Base(tc.archive), func(t *testing.T) {
			ctx := context.Background()
			db := openDB(t)
			p := New(db, testOptions(clocktest.New(t0)))
			dir := t.TempDir()
			archive := filepath.Join(sharedDelta(t), tc.archive+".tar.zst")
			if _, err := os.Stat(archive); err != nil {
				t.Skipf("SKIPPING: shared Delta test table %s not found: %v", archive, err)
			}
			if out, err := exec.Command("tar", "--zstd", "-xf", archive, "-C", dir).CombinedOutput(); err != nil {
				t.Fatalf("untar: %v: %s", err, out)
			}
			table := filepath.Join(dir, tc.table)
			id := catalogadapter.TableIdent{Name: table}
			_, old, err := p.latest(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			before := scanAll(t, p, db, id, -1)
			if len(before) == 0 {
				t.Fatal("no rows to start from")
			}
			want := append(append([]string{}, before...), before...)

			// Append: the table's rows once more.
			q, err := p.ScanSQL(ctx, id, db, -1, nil)
			if err != nil {
				t.Fatal(err)
			}
			r, err := p.StageSQL(ctx, id, db, catalogadapter.Source{Query: q})
			if err != nil {
				t.Fatal(err)
			}
			out, err := p.Commit(ctx, id, []catalogadapter.Receipt{r}, catalogadapter.CommitOptions{WriterID: "w", Epoch: 1})
			if err != nil {
				t.Fatal(err)
			}
			first := out.Version

			// Delete: one file's rows but its first, rewritten.
			_, files, err := p.Files(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			// Prefer a file of two rows or more, so that a row is kept.
			var victim catalogadapter.DataFile
			for _, f := range files {
				if f.Rows > victim.Rows {
					victim = f
				}
			}
			if victim.Path == "" {
				t.Fatal("no file with rows")
			}
			fq, err := p.ScanSQL(ctx, id, db, -1, []string{victim.Path})
			if err != nil {
				t.Fatal(err)
			}
			gone := textRows(t, db, fq)
			kept := fmt.Sprintf("SELECT * FROM (%s) LIMIT %d", fq, min(victim.Rows-1, 1))
			keptRows := textRows(t, db, kept)
			var rs []catalogadapter.Receipt
			if len(keptRows) > 0 {
				r, err = p.StageSQL(ctx, id, db, catalogadapter.Source{Query: kept})
				if err != nil {
					t.Fatal(err)
				}
				rs = append(rs, r)
			}
			_, err = p.Commit(ctx, id, rs, catalogadapter.CommitOptions{Removes: []string{victim.Path}, Epoch: -1})
			switch {
			case old.Metadata.ChangeDataFeed():
				if !errors.Is(err, catalogadapter.ErrUnsupported) || !strings.Contains(err.Error(), "changeDataFeed") {
					t.Fatalf("delete on a table with the change data feed: %v", err)
				}
				p.Discard(ctx, id, rs)
			case err != nil:
				t.Fatal(err)
			default:
				want = removeRows(t, want, gone)
				want = append(want, keptRows...)
			}
			if _, err := p.Compact(ctx, id, db, catalogadapter.CompactOptions{}); err != nil && !errors.Is(err, catalogadapter.ErrUnsupported) {
				t.Fatal(err)
			}
			sort.Strings(want)
			got := scanAll(t, p, db, id, -1)
			sort.Strings(got)
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("rows (-want +got):\n%s", d)
			}
			checkMappedLog(t, p, db, id, table, old, first)
		})
	}
}

// textRows returns the rows of query, each as column=value| pairs,
// sorted.
func textRows(t testing.TB, db *sql.DB, query string) []string {
	t.Helper()
	rs, err := db.Query("SELECT CAST(COLUMNS(*) AS VARCHAR) FROM (" + query + ")")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	var out []string
	for rs.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for i, v := range vals {
			fmt.Fprintf(&b, "%s=%v|", cols[i], v)
		}
		out = append(out, b.String())
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// removeRows removes one occurrence of each of gone from rows.
func removeRows(t *testing.T, rows, gone []string) []string {
	t.Helper()
	out := append([]string{}, rows...)
	for _, g := range gone {
		i := indexOf(out, g)
		if i < 0 {
			t.Fatalf("deleted row %s was not in the table", g)
		}
		out = append(out[:i], out[i+1:]...)
	}
	return out
}

func indexOf(rows []string, s string) int {
	for i, r := range rows {
		if r == s {
			return i
		}
	}
	return -1
}

// checkMappedLog checks the table's latest snapshot against the column
// mapping rules, its protocol against old's, and every file added from
// version from on: its Parquet columns are the physical names of the data
// columns, with their ids as field ids, and its partition values are keyed
// by physical name.
func checkMappedLog(t *testing.T, p *Provider, db *sql.DB, id catalogadapter.TableIdent, table string, old *delta.Snapshot, from int64) {
	t.Helper()
	_, snap, err := p.latest(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	schema, _ := snap.Schema()
	if err := delta.CheckColumnMapping(snap.Protocol, schema, snap.Metadata.Configuration); err != nil {
		t.Errorf("log breaks the column mapping rules: %v", err)
	}
	if d := cmp.Diff(old.Protocol, snap.Protocol); d != "" {
		t.Errorf("protocol changed (-before +after):\n%s", d)
	}
	parts := map[string]bool{}
	for _, c := range snap.Metadata.PartitionColumns {
		parts[c] = true
	}
	want := map[string]string{}
	pkeys := map[string]bool{}
	for _, f := range schema.Fields {
		if parts[f.Name] {
			pkeys[physicalName(f, true)] = true
			continue
		}
		idv := f.Metadata[delta.ColumnIDKey]
		want[physicalName(f, true)] = fmt.Sprint(idv)
	}
	var checked int
	for v := from; v <= snap.Version; v++ {
		for _, a := range logEntry(t, table, v) {
			if a.Add == nil {
				continue
			}
			checked++
			for k := range a.Add.PartitionValues {
				if !pkeys[k] {
					t.Errorf("file %s: partition value key %q is no partition column's physical name", a.Add.Path, k)
				}
			}
			rel, _ := url.PathUnescape(a.Add.Path)
			path := filepath.Join(table, rel)
			got := map[string]string{}
			top := topLevelColumns(t, db, path)
			for name, idv := range top {
				got[name] = idv
			}
			// id mode needs the ids; name mode gets them too, as Spark writes them.
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("file %s: columns and field ids (-schema +file):\n%s", a.Add.Path, d)
			}
		}
	}
	if checked == 0 {
		t.Error("no file of ours to check")
	}
}

// topLevelColumns returns the top-level columns of a Parquet file with
// their field ids ("<nil>" for none).
func topLevelColumns(t *testing.T, db *sql.DB, path string) map[string]string {
	t.Helper()
	rs, err := db.Query(fmt.Sprintf(`SELECT name, field_id, num_children FROM parquet_schema(%s)`, sqlquote.String(path)))
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	type node struct {
		name     string
		id       sql.NullInt64
		children sql.NullInt64
	}
	var nodes []node
	for rs.Next() {
		var n node
		if err := rs.Scan(&n.name, &n.id, &n.children); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	// The rows are the schema tree depth first: skip each child's subtree.
	out := map[string]string{}
	var skip func(i int) int
	skip = func(i int) int {
		n := int(nodes[i].children.Int64)
		i++
		for range n {
			i = skip(i)
		}
		return i
	}
	for i := 1; i < len(nodes); {
		n := nodes[i]
		if n.id.Valid {
			out[n.name] = fmt.Sprint(n.id.Int64)
		} else {
			out[n.name] = "<nil>"
		}
		i = skip(i)
	}
	return out
}
