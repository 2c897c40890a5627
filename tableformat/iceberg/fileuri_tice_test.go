package iceberg

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	ice "github.com/apache/iceberg-go"
)

// TestPartitionFoldersAsSpelled: the data and delete files of partitions
// whose values a path escapes are on disk at the path their file URI
// spells, escapes included, where Java's file IO and pyarrow (Spark,
// pyiceberg) open them; lakesql reads them back too.
func TestPartitionFoldersAsSpelled(t *testing.T) {
	cat := openTestCatalog(t, t.TempDir())
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "region", Type: arrow.BinaryTypes.String},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	tbl := createTable(t, cat, "esc", sc, []PartitionField{{Column: "region", Transform: ice.IdentityTransform{}}}, nil)
	tbl = appendJSON(t, tbl, sc, `[{"region": "a/b", "id": 1, "v": 1}, {"region": "ü %", "id": 2, "v": 2}, {"region": "x=y?#", "id": 3, "v": 3}]`, nil)
	_, ids, err := EqualityColumns(t.Context(), tbl, []string{"id", "region"})
	if err != nil {
		t.Fatal(err)
	}
	keySc := arrow.NewSchema([]arrow.Field{{Name: "region", Type: arrow.BinaryTypes.String}, {Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	dels, err := WriteEqualityDeletes(t.Context(), tbl, ids, one(records(t, keySc, `[{"region": "ü %", "id": 2}]`)))
	if err != nil {
		t.Fatal(err)
	}
	tbl, err = Commit(t.Context(), tbl, Change{Deletes: dels})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	escaped := 0
	for _, task := range tasks {
		for _, f := range append([]ice.DataFile{task.File}, task.EqualityDeleteFiles...) {
			uri := f.FilePath()
			if strings.Contains(uri, "%") {
				escaped++
			}
			// What Hadoop's Path and pyarrow open: the URI's path as spelled.
			if _, err := os.Stat(strings.TrimPrefix(uri, "file://")); err != nil {
				t.Errorf("%s is not at the path it spells: %v", uri, err)
			}
		}
	}
	if escaped == 0 {
		t.Fatal("no file URI holds an escape: the test tests nothing")
	}
	checkBoth(t, tbl, []string{"a/b|1|1", "x=y?#|3|3"})
}

// TestLocalPathDecodedFallback: a file URI's path is taken as spelled,
// unless only its decoded form exists (files older lakesql wrote, folders
// a location escaped); a new file goes where the spelling says.
func TestLocalPathDecodedFallback(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "a b")
	for _, p := range []string{"p=ü/old.parquet", "p=%C3%BC/new.parquet", "q=x/y/f.parquet"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(base, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(base, p), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	uri := "file://" + filepath.ToSlash(dir) + "/a%20b/"
	for _, c := range []struct{ uri, want string }{
		{uri + "p=%C3%BC/new.parquet", "a b/p=%C3%BC/new.parquet"}, // spelled, in a decoded folder
		{uri + "p=%C3%BC/old.parquet", "a b/p=ü/old.parquet"},      // only decoded exists
		{uri + "q=x%2Fy/f.parquet", "a b/q=x/y/f.parquet"},         // decoded %2F: two folders
		{uri + "r=%3D/n=%2F/f.parquet", "a b/r=%3D/n=%2F/f.parquet"},
		{"file:" + filepath.ToSlash(dir) + "/plain", "plain"}, // Java's file:/ spelling
	} {
		got, err := localPath(c.uri)
		if err != nil {
			t.Fatalf("%s: %v", c.uri, err)
		}
		if want := filepath.Join(dir, c.want); got != want {
			t.Errorf("%s: %s, want %s", c.uri, got, want)
		}
	}
	for _, bad := range []string{"s3://b/k", "file:relative", "file:///x/100%zz"} {
		if got, err := localPath(bad); err == nil {
			t.Errorf("%s: %s, want an error", bad, got)
		}
	}
}

// TestEmptyStringPartitionRefused: a commit of files whose string partition
// value is an empty string is refused (ErrUnsupported) and changes nothing; iceberg-go
// would write the manifest's lower bound as null, which readers take for
// "only nulls" and skip.
func TestEmptyStringPartitionRefused(t *testing.T) {
	cat := openTestCatalog(t, t.TempDir())
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	tbl := createTable(t, cat, "empty", sc, []PartitionField{{Column: "region", Transform: ice.TruncateTransform{Width: 2}}}, nil)
	tbl = appendJSON(t, tbl, sc, `[{"region": "eu", "id": 1}, {"region": null, "id": 2}]`, nil)
	files, err := WriteFiles(t.Context(), tbl, sc, one(records(t, sc, `[{"region": "", "id": 3}, {"region": "us", "id": 4}]`)), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Commit(t.Context(), tbl, Change{Adds: files}); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "empty string as a partition value") {
		t.Fatalf("commit of a '' partition: %v, want ErrUnsupported naming it", err)
	}
	checkBoth(t, tbl, []string{"eu|1", "NULL|2"})
}
