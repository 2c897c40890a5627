package apacheiceberg

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"gocloud.dev/blob"

	"github.com/lakesql/lakesql/catalogadapter"
	"github.com/lakesql/lakesql/internal/s3test"
	icetable "github.com/lakesql/lakesql/tableformat/iceberg"
)

// lake is where a test's tables live: the default SQLite catalog of dir,
// with the warehouse on the local disk (no props) or where props say (an
// S3 warehouse on srv, with the catalog's s3.* properties).
type lake struct {
	name  string
	dir   string
	props map[string]string
	srv   *s3test.Server
}

func localLake(t testing.TB) lake { return lake{name: "local", dir: t.TempDir()} }

// s3Lake puts the warehouse on srv under a prefix unique to the test run.
func s3Lake(t testing.TB, srv *s3test.Server) lake {
	prefix := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name()) + fmt.Sprintf("-%d", time.Now().UnixNano())
	return lake{name: "s3", dir: t.TempDir(), srv: srv, props: map[string]string{
		"warehouse":            srv.URL(prefix),
		"s3.endpoint":          srv.Endpoint,
		"s3.region":            srv.Region,
		"s3.access-key-id":     srv.AccessKey,
		"s3.secret-access-key": srv.SecretKey,
	}}
}

func (l lake) catalog(t testing.TB) *icetable.Catalog {
	t.Helper()
	cat, err := icetable.OpenCatalog(context.Background(), icetable.CatalogConfig{DataDir: l.dir, Properties: l.props})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	return cat
}

// provider opens a catalog handle of its own and a provider on it with
// the production defaults (retries, backoff).
func (l lake) provider(t testing.TB) *Provider {
	return New(l.catalog(t), Options{})
}

// table loads id through a fresh catalog handle.
func (l lake) table(t testing.TB, id catalogadapter.TableIdent) *table.Table {
	t.Helper()
	cat := l.catalog(t)
	ident, err := identifier(id)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// rows reads id with iceberg-go's own scan through a fresh handle, sorted.
func (l lake) rows(t testing.TB, id catalogadapter.TableIdent) []string {
	t.Helper()
	return tableRows(t, l.table(t, id))
}

// snapshots lists id's main-branch snapshots, oldest first.
func (l lake) snapshots(t testing.TB, id catalogadapter.TableIdent) []table.Snapshot {
	t.Helper()
	tbl := l.table(t, id)
	head := tbl.Metadata().SnapshotByName(table.MainBranch)
	if head == nil {
		return nil
	}
	anc := table.AncestorsOf(head.SnapshotID, tbl.Metadata().SnapshotByID)
	slices.Reverse(anc)
	return anc
}

// storedFiles lists the Parquet files under id's location as the table
// spells their paths, committed or not: from the disk, or from the S3
// server's own listing.
func (l lake) storedFiles(t testing.TB, id catalogadapter.TableIdent) []string {
	t.Helper()
	loc := strings.TrimRight(l.table(t, id).Location(), "/")
	var out []string
	if l.srv == nil {
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
	if bucket != l.srv.Bucket {
		t.Fatalf("table at %s, not in bucket %s", loc, l.srv.Bucket)
	}
	it := l.srv.OpenBucket(t).List(&blob.ListOptions{Prefix: key + "/"})
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

// liveFiles lists the data and delete files id's current snapshot
// references, read from its manifests (every entry not deleted): delete
// files that apply to no data file count too.
func (l lake) liveFiles(t testing.TB, id catalogadapter.TableIdent) []string {
	t.Helper()
	tbl := l.table(t, id)
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

func (l lake) env() []string {
	props := ""
	if l.props != nil {
		b, _ := json.Marshal(l.props)
		props = string(b)
	}
	return []string{lakeDirEnv + "=" + l.dir, lakePropsEnv + "=" + props}
}

// lakeFromEnv is the lake a parent handed over with env.
func lakeFromEnv() (lake, error) {
	l := lake{name: "child", dir: os.Getenv(lakeDirEnv)}
	if l.dir == "" {
		return l, fmt.Errorf("no %s", lakeDirEnv)
	}
	if p := os.Getenv(lakePropsEnv); p != "" {
		if err := json.Unmarshal([]byte(p), &l.props); err != nil {
			return l, fmt.Errorf("%s: %w", lakePropsEnv, err)
		}
	}
	return l, nil
}
