package iceberg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"gocloud.dev/blob"

	"github.com/lakesql/lakesql/internal/s3test"
)

// s3Catalog opens the default SQLite catalog of a fresh data directory
// with its warehouse on srv, under a prefix of this test's own, as a user
// configures it: the catalog's s3.* properties.
func s3Catalog(t *testing.T, srv *s3test.Server) (*Catalog, map[string]string, string) {
	t.Helper()
	prefix := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name()) + fmt.Sprintf("-%d", time.Now().UnixNano())
	props := map[string]string{
		"warehouse":            srv.URL(prefix),
		"s3.endpoint":          srv.Endpoint,
		"s3.region":            srv.Region,
		"s3.access-key-id":     srv.AccessKey,
		"s3.secret-access-key": srv.SecretKey,
	}
	dir := t.TempDir()
	cat, err := OpenCatalog(t.Context(), CatalogConfig{DataDir: dir, Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	return cat, props, dir
}

// objects lists the keys under the table's location (s3://BUCKET/KEY...)
// whose names end with suffix, straight from the server.
func objects(t *testing.T, b *blob.Bucket, location, suffix string) []string {
	t.Helper()
	_, key, ok := strings.Cut(strings.TrimPrefix(location, "s3://"), "/")
	if !ok {
		t.Fatalf("location %s is not s3://bucket/key", location)
	}
	var out []string
	it := b.List(&blob.ListOptions{Prefix: strings.TrimRight(key, "/") + "/"})
	for {
		o, err := it.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(o.Key, suffix) {
			out = append(out, o.Key)
		}
	}
	slices.Sort(out)
	return out
}

// filesUnder lists the regular files under dir (none if it is missing).
func filesUnder(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// checkBothCached is checkBoth with a cache folder for the DuckDB scan.
func checkBothCached(t *testing.T, tbl *table.Table, cacheDir string, want []string) {
	t.Helper()
	slices.Sort(want)
	if got := icebergRows(t, tbl); !slices.Equal(got, want) {
		t.Fatalf("iceberg-go scan: %q, want %q", got, want)
	}
	q, _, err := ScanSQL(t.Context(), tbl, ScanOptions{SnapshotID: -1, CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(q, "s3://") && !strings.Contains(q, "VALUES") {
		t.Fatalf("the DuckDB scan reads object storage itself:\n%s", q)
	}
	if got := duckRows(t, q); !slices.Equal(got, want) {
		t.Fatalf("DuckDB scan: %q, want %q\n%s", got, want, q)
	}
}

// TestS3Warehouse: the default SQLite catalog with its warehouse on a real
// S3 server (versitygw). DuckDB's files are staged locally and uploaded to
// the table's s3:// data folder; iceberg-go's own writer (data and
// equality deletes) writes there directly; both readers see the same rows,
// DuckDB through downloaded copies, also from an empty cache; a NOT NULL
// violation uploads nothing; position deletes written by iceberg-go apply
// to cached copies; no secret is shown or stored in the table's metadata.
func TestS3Warehouse(t *testing.T) {
	ctx := t.Context()
	srv := s3test.Start(t)
	b := srv.OpenBucket(t)
	cat, props, dir := s3Catalog(t, srv)
	cacheDir := cat.CacheDir()
	if want := filepath.Join(dir, "cache", "iceberg"); cacheDir != want {
		t.Fatalf("cache in %s, want %s", cacheDir, want)
	}
	if shown := cat.Properties(); shown["s3.secret-access-key"] != Redacted || shown["s3.access-key-id"] != Redacted || shown["s3.endpoint"] != srv.Endpoint {
		t.Fatalf("catalog shows %v", shown)
	}

	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	tbl := createTable(t, cat, "s3t", sc, nil, nil)
	if !strings.HasPrefix(tbl.Location(), props["warehouse"]+"/") {
		t.Fatalf("table at %s, want under %s", tbl.Location(), props["warehouse"])
	}

	// DuckDB's COPY: staged locally, uploaded, cached.
	conn := duckConn(t)
	sel, err := DuckDBSelect(tbl.Schema(), []string{"id", "s"})
	if err != nil {
		t.Fatal(err)
	}
	files, err := CopyQuery(ctx, tbl, conn, "SELECT "+sel+" FROM (VALUES (1, 'a'), (2, 'b'), (3, NULL)) AS v(id, s)", CopyOptions{CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Count() != 3 || !strings.HasPrefix(files[0].FilePath(), tbl.Location()+"/data/lakesql-") {
		t.Fatalf("files %v", files)
	}
	uploaded := objects(t, b, tbl.Location(), ".parquet")
	if len(uploaded) != 1 || !strings.HasSuffix(files[0].FilePath(), "/"+uploaded[0]) {
		t.Fatalf("objects %v, want the one file %s", uploaded, files[0].FilePath())
	}
	attrs, err := b.Attributes(ctx, uploaded[0])
	if err != nil || attrs.Size != files[0].FileSizeBytes() {
		t.Fatalf("uploaded object: %+v %v; the data file says %d bytes", attrs, err, files[0].FileSizeBytes())
	}
	if left := filesUnder(filepath.Join(cacheDir, "staging")); len(left) != 0 {
		t.Fatalf("staging left %v", left)
	}
	if _, err := os.Stat(CachePath(cacheDir, files[0].FilePath())); err != nil {
		t.Fatalf("the uploaded file is not in the cache: %v", err)
	}
	tbl, err = Commit(ctx, tbl, Change{Adds: files, Summary: EpochSummary("w", 1, "c1")})
	if err != nil {
		t.Fatal(err)
	}
	checkBothCached(t, tbl, cacheDir, []string{"1|a", "2|b", "3|NULL"})

	// A NOT NULL violation is refused before anything is uploaded.
	_, err = CopyQuery(ctx, tbl, conn, "SELECT "+sel+" FROM (VALUES (NULL::BIGINT, 'x')) AS v(id, s)", CopyOptions{CacheDir: cacheDir})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("NULL id: %v, want ErrInvalid", err)
	}
	if got := objects(t, b, tbl.Location(), ".parquet"); !slices.Equal(got, uploaded) {
		t.Fatalf("refused write left objects: %v", got)
	}
	if left := filesUnder(filepath.Join(cacheDir, "staging")); len(left) != 0 {
		t.Fatalf("refused write left staged files %v", left)
	}

	// An upsert as a row delta, both written by iceberg-go straight to S3.
	_, ids, err := EqualityColumns(ctx, tbl, []string{"id"})
	if err != nil {
		t.Fatal(err)
	}
	keySc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	dels, err := WriteEqualityDeletes(ctx, tbl, ids, one(records(t, keySc, `[{"id": 2}, {"id": 3}]`)))
	if err != nil {
		t.Fatal(err)
	}
	adds, err := WriteFiles(ctx, tbl, sc, one(records(t, sc, `[{"id": 2, "s": "B"}]`)), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(slices.Clone(dels), adds...) {
		if !strings.HasPrefix(f.FilePath(), tbl.Location()+"/") {
			t.Fatalf("iceberg-go wrote %s outside the table", f.FilePath())
		}
	}
	tbl, err = Commit(ctx, tbl, Change{Adds: adds, Deletes: dels, Summary: EpochSummary("w", 2, "c2")})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(objects(t, b, tbl.Location(), ".parquet")); n != 3 {
		t.Fatalf("%d Parquet objects, want 3 (COPY's, the delete, the row)", n)
	}
	want := []string{"1|a", "2|B"}
	checkBothCached(t, tbl, cacheDir, want)

	// A fresh catalog handle and an empty cache: everything is downloaded.
	cat2, err := OpenCatalog(ctx, CatalogConfig{DataDir: dir, CacheDir: t.TempDir(), Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	defer cat2.Close()
	fresh, err := cat2.LoadTable(ctx, table.Identifier{"db", "s3t"})
	if err != nil {
		t.Fatal(err)
	}
	if rec, ok, err := LastEpoch(fresh.Metadata(), "w"); !ok || err != nil || rec.Epoch != 2 {
		t.Fatalf("last epoch %+v %v %v", rec, ok, err)
	}
	if n := len(filesUnder(cat2.CacheDir())); n != 0 {
		t.Fatalf("new cache holds %d files", n)
	}
	checkBothCached(t, fresh, cat2.CacheDir(), want)
	if n := len(filesUnder(cat2.CacheDir())); n != 3 {
		t.Fatalf("the scan cached %d files, want the 2 data files and the delete", n)
	}

	// Position deletes, written by iceberg-go's merge-on-read delete,
	// name the data files by their s3:// paths.
	pt := createTable(t, cat, "s3p", sc, nil, map[string]string{"write.delete.mode": "merge-on-read"})
	pt = appendJSON(t, pt, sc, `[{"id": 1}, {"id": 2}, {"id": 3}, {"id": 4}]`, nil)
	pt = appendJSON(t, pt, sc, `[{"id": 5}, {"id": 6}]`, nil)
	pt, err = pt.Delete(ctx, ice.NewOr(ice.EqualTo(ice.Reference("id"), int64(2)), ice.EqualTo(ice.Reference("id"), int64(6))), nil)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := pt.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	withPos := 0
	for _, task := range tasks {
		if len(task.DeleteFiles) > 0 {
			withPos++
		}
	}
	if withPos != 2 {
		t.Fatalf("%d of %d data files have position deletes, want 2", withPos, len(tasks))
	}
	checkBothCached(t, pt, cacheDir, []string{"1|NULL", "3|NULL", "4|NULL", "5|NULL"})

	// No secret in any metadata object of the tables.
	for _, loc := range []string{tbl.Location(), pt.Location()} {
		for _, k := range objects(t, b, loc, "") {
			if strings.HasSuffix(k, ".parquet") {
				continue
			}
			data, err := b.ReadAll(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), srv.SecretKey) {
				t.Fatalf("metadata object %s holds the secret access key", k)
			}
		}
	}
}

// TestS3UploadFailure: with the server down, DuckDB's files are written
// but cannot be uploaded: the copy fails, leaves no staged file, and no
// object appears once the server is back.
func TestS3UploadFailure(t *testing.T) {
	ctx := t.Context()
	srv := s3test.Start(t)
	cat, _, _ := s3Catalog(t, srv)
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	tbl := createTable(t, cat, "down", sc, nil, nil)
	conn := duckConn(t)

	srv.Kill()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err := CopyQuery(cctx, tbl, conn, "SELECT CAST(i AS BIGINT) AS id FROM range(10) AS r(i)", CopyOptions{CacheDir: cat.CacheDir()})
	if err == nil {
		t.Fatal("copy with the server down succeeded")
	}
	if strings.Contains(err.Error(), srv.SecretKey) {
		t.Fatalf("error shows the secret: %v", err)
	}
	t.Logf("copy with the server down: %v", err)
	if left := filesUnder(filepath.Join(cat.CacheDir(), "staging")); len(left) != 0 {
		t.Fatalf("failed upload left staged files %v", left)
	}
	srv.Restart(t)
	if got := objects(t, srv.OpenBucket(t), tbl.Location(), ".parquet"); len(got) != 0 {
		t.Fatalf("failed upload left objects %v", got)
	}
}
