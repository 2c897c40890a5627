// Package icebergtest holds the Iceberg lakes that tests of several layers
// write into (a SQLite catalog with its warehouse on the local disk or on
// S3, or a REST catalog), and reads of their tables the way another engine
// would: with iceberg-go's own scan, through a catalog handle of the
// test's own, which sees only what reached the catalog.
package icebergtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"gocloud.dev/blob"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/s3test"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// Lake is where a test's tables live: the default SQLite catalog of dir,
// with the warehouse on the local disk (no props) or where props say (an
// S3 warehouse on srv, with the catalog's s3.* properties).
type Lake struct {
	Name  string
	Dir   string
	Props map[string]string
	Srv   *s3test.Server
}

// Local is a lake with the warehouse on the local disk.
func Local(t testing.TB) Lake { return Lake{Name: "local", Dir: t.TempDir()} }

// S3 is a lake with the warehouse on srv under a prefix unique to the
// test run; the catalog stays on the local disk.
func S3(t testing.TB, srv *s3test.Server) Lake {
	prefix := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name()) + fmt.Sprintf("-%d", time.Now().UnixNano())
	return Lake{Name: "s3", Dir: t.TempDir(), Srv: srv, Props: map[string]string{
		"warehouse":            srv.URL(prefix),
		"s3.endpoint":          srv.Endpoint,
		"s3.region":            srv.Region,
		"s3.access-key-id":     srv.AccessKey,
		"s3.secret-access-key": srv.SecretKey,
	}}
}

// Catalog opens a catalog handle of its own on the lake.
func (l Lake) Catalog(t testing.TB) *icetable.Catalog {
	t.Helper()
	cat, err := icetable.OpenCatalog(context.Background(), icetable.CatalogConfig{DataDir: l.Dir, Properties: l.Props})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	return cat
}

// Table loads id through a fresh catalog handle.
func (l Lake) Table(t testing.TB, id catalogadapter.TableIdent) *table.Table {
	t.Helper()
	tbl, err := l.Catalog(t).LoadTable(context.Background(), Ident(id))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// Rows reads id with iceberg-go's own scan through a fresh handle, sorted.
func (l Lake) Rows(t testing.TB, id catalogadapter.TableIdent) []string {
	t.Helper()
	return Rows(t, l.Table(t, id))
}

// Snapshots lists id's main-branch snapshots, oldest first.
func (l Lake) Snapshots(t testing.TB, id catalogadapter.TableIdent) []table.Snapshot {
	t.Helper()
	return Snapshots(l.Table(t, id))
}

// Snapshots lists tbl's main-branch snapshots, oldest first.
func Snapshots(tbl *table.Table) []table.Snapshot {
	head := tbl.Metadata().SnapshotByName(table.MainBranch)
	if head == nil {
		return nil
	}
	anc := table.AncestorsOf(head.SnapshotID, tbl.Metadata().SnapshotByID)
	slices.Reverse(anc)
	return anc
}

// StoredFiles lists the Parquet files under id's location as the table
// spells their paths, committed or not: from the disk, or from the S3
// server's own listing.
func (l Lake) StoredFiles(t testing.TB, id catalogadapter.TableIdent) []string {
	t.Helper()
	loc := strings.TrimRight(l.Table(t, id).Location(), "/")
	var out []string
	if l.Srv == nil {
		root, err := icetable.LocalPath(loc)
		if err != nil {
			t.Fatal(err)
		}
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
				out = append(out, loc+strings.TrimPrefix(filepath.ToSlash(p), filepath.ToSlash(root)))
			}
			return nil
		})
		sort.Strings(out)
		return out
	}
	bucket, key, _ := strings.Cut(strings.TrimPrefix(loc, "s3://"), "/")
	if bucket != l.Srv.Bucket {
		t.Fatalf("table at %s, not in bucket %s", loc, l.Srv.Bucket)
	}
	it := l.Srv.OpenBucket(t).List(&blob.ListOptions{Prefix: key + "/"})
	for {
		o, err := it.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(o.Key, ".parquet") {
			out = append(out, "s3://"+bucket+"/"+o.Key)
		}
	}
	sort.Strings(out)
	return out
}

// LiveFiles lists the data and delete files id's current snapshot
// references, read from its manifests (every entry not deleted): delete
// files that apply to no data file count too.
func (l Lake) LiveFiles(t testing.TB, id catalogadapter.TableIdent) []string {
	t.Helper()
	tbl := l.Table(t, id)
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return nil
	}
	fsys, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range manifests {
		entries, err := m.FetchEntries(fsys, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Status() != ice.EntryStatusDELETED {
				out = append(out, e.DataFile().FilePath())
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// Environment that hands a lake to a child process.
const (
	lakeDirEnv   = "LAKESQL_ICELAKE_DIR"
	lakePropsEnv = "LAKESQL_ICELAKE_PROPS" // JSON; empty: the local warehouse
)

// Env hands the lake to a child process, which finds it with FromEnv.
func (l Lake) Env() []string {
	props := ""
	if l.Props != nil {
		b, _ := json.Marshal(l.Props)
		props = string(b)
	}
	return []string{lakeDirEnv + "=" + l.Dir, lakePropsEnv + "=" + props}
}

// FromEnv is the lake a parent handed over with Env.
func FromEnv() (Lake, error) {
	l := Lake{Name: "child", Dir: os.Getenv(lakeDirEnv)}
	if l.Dir == "" {
		return l, fmt.Errorf("no %s", lakeDirEnv)
	}
	if p := os.Getenv(lakePropsEnv); p != "" {
		if err := json.Unmarshal([]byte(p), &l.Props); err != nil {
			return l, fmt.Errorf("%s: %w", lakePropsEnv, err)
		}
	}
	return l, nil
}

// Ident is id as iceberg-go names it.
func Ident(id catalogadapter.TableIdent) table.Identifier {
	return append(slices.Clone(id.Namespace), id.Name)
}

// Rows reads tbl's columns id, amount and region (the tests' orders
// table) with iceberg-go's own scan, each row as "id|amount|region",
// sorted.
func Rows(t testing.TB, tbl *table.Table, opts ...table.ScanOption) []string {
	t.Helper()
	at, err := tbl.Scan(append(opts, table.WithSelectedFields("id", "amount", "region"))...).ToArrowTable(context.Background())
	if err != nil {
		t.Fatalf("scan %s: %v", tbl.Identifier(), err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 4096)
	defer tr.Release()
	out := []string{}
	for tr.Next() {
		rec := tr.RecordBatch()
		ids := rec.Column(0).(*array.Int64)
		amounts := rec.Column(1).(*array.Float64)
		regions := rec.Column(2).(*array.String)
		for i := 0; i < int(rec.NumRows()); i++ {
			out = append(out, fmt.Sprintf("%d|%g|%s", ids.Value(i), amounts.Value(i), regions.Value(i)))
		}
	}
	sort.Strings(out)
	return out
}

// RESTURIEnv names a running Iceberg REST catalog (http://host:port) whose
// warehouse is on this machine's disk, such as the Apache Iceberg REST test
// fixture the interop suite starts (`interop/run rest_catalog`). With it
// set, the lake tests run once more with the catalog behind REST.
const RESTURIEnv = "LAKESQL_ICEBERG_REST_URI"

// REST is a lake whose catalog is the REST server RESTURIEnv names; the
// test skips when it is unset. The server's tables outlive a test, so
// table id is dropped first and its folder removed (the fixture drops
// without purging, and gives a new table the same location).
func REST(t testing.TB, id catalogadapter.TableIdent) Lake {
	uri := os.Getenv(RESTURIEnv)
	if uri == "" {
		t.Skipf("%s is not set: no REST catalog to test against", RESTURIEnv)
	}
	l := Lake{Name: "rest", Dir: t.TempDir(), Props: map[string]string{"type": "rest", "uri": uri}}
	cat := l.Catalog(t)
	ident := Ident(id)
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable):
		return l
	case err != nil:
		t.Fatalf("load %v from the REST catalog: %v", ident, err)
	}
	if err := cat.Iceberg().DropTable(ctx, ident); err != nil {
		t.Fatalf("drop %v: %v", ident, err)
	}
	root, err := icetable.LocalPath(tbl.Location())
	if err != nil {
		t.Fatalf("the REST catalog's table is at %s, not on the local disk: %v", tbl.Location(), err)
	}
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	return l
}

// ArrowRows reads every column of an Arrow table: the column names, and
// each row as its values joined by '|' (NULL for a null), sorted.
func ArrowRows(at arrow.Table) (cols, rows []string) {
	for _, f := range at.Schema().Fields() {
		cols = append(cols, f.Name)
	}
	tr := array.NewTableReader(at, 4096)
	defer tr.Release()
	rows = []string{}
	for tr.Next() {
		rec := tr.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			parts := make([]string, rec.NumCols())
			for j, c := range rec.Columns() {
				if c.IsNull(i) {
					parts[j] = "NULL"
				} else {
					parts[j] = c.ValueStr(i)
				}
			}
			rows = append(rows, strings.Join(parts, "|"))
		}
	}
	sort.Strings(rows)
	return cols, rows
}

// Cell spells a value read back the same whichever reader produced it:
// NULL for nil, bytes as text, a float32 by the float64 it widens to.
func Cell(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return string(x)
	case float32:
		return fmt.Sprint(float64(x))
	}
	return fmt.Sprint(v)
}
