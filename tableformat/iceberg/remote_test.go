package iceberg

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/utils"
)

// TestCachePath: copies of remote files are named by bucket and key as
// they are; a URI whose key would be cleaned into another (dot segments,
// doubled slashes) or would leave the cache gets a hashed name, so that
// two URIs never share a copy.
func TestCachePath(t *testing.T) {
	dir := t.TempDir()
	plain := CachePath(dir, "s3://lake/wh/db.db/t/data/a%2Fb?.parquet")
	if want := filepath.Join(dir, "files", "s3", "lake", "wh", "db.db", "t", "data", "a%2Fb?.parquet"); plain != want {
		t.Errorf("plain key: %s, want %s", plain, want)
	}
	seen := map[string]string{}
	for _, uri := range []string{
		"s3://lake/t/data/x.parquet",
		"s3://lake/t/data/../data/x.parquet",
		"s3://lake/t/data//x.parquet",
		"s3://lake/t/./data/x.parquet",
		"s3://lake/../../../etc/passwd",
		"s3://lake/t/data/x.parquet/",
		"s3a://lake/t/data/x.parquet",
		"s3://other/t/data/x.parquet",
		"no-scheme",
	} {
		p := CachePath(dir, uri)
		if other, dup := seen[p]; dup {
			t.Errorf("%s and %s share the cache path %s", uri, other, p)
		}
		seen[p] = uri
		if rel, err := filepath.Rel(filepath.Join(dir, "files"), p); err != nil || !filepath.IsLocal(rel) {
			t.Errorf("%s: cache path %s is outside the cache", uri, p)
		}
		if hashed := strings.Contains(p, string(filepath.Separator)+"hashed"+string(filepath.Separator)); hashed != (strings.Contains(uri, "/.") || strings.Contains(uri, "//x") || strings.HasSuffix(uri, "/") || uri == "no-scheme") {
			t.Errorf("%s: cache path %s", uri, p)
		}
	}
	if got := CachePath("", "s3://b/k"); !strings.HasPrefix(got, DefaultCacheDir()) {
		t.Errorf("default cache: %s", got)
	}
}

// TestSharedAWSConfig: a catalog that reaches S3 hands one AWS
// configuration to the FileIOs of its tables (through the context), with
// the region of its properties; a local one adds nothing.
func TestSharedAWSConfig(t *testing.T) {
	ctx := context.Background()
	s3cat, err := OpenCatalog(ctx, CatalogConfig{DataDir: t.TempDir(), Properties: map[string]string{
		"warehouse": "s3://bucket/wh", "s3.region": "eu-west-3", "s3.access-key-id": "AKID", "s3.secret-access-key": "SECRET",
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s3cat.Close()
	cfg := utils.GetAwsConfig(s3cat.WithIO(ctx))
	if cfg == nil || cfg.Region != "eu-west-3" || cfg.HTTPClient == nil {
		t.Fatalf("shared AWS config %+v", cfg)
	}
	if again := utils.GetAwsConfig(s3cat.WithIO(ctx)); again != cfg {
		t.Fatal("a second call built another configuration")
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil || creds.AccessKeyID != "AKID" || creds.SecretAccessKey != "SECRET" {
		t.Fatalf("credentials %v %v", creds.AccessKeyID, err)
	}
	local := openTestCatalog(t, t.TempDir())
	if utils.GetAwsConfig(local.WithIO(ctx)) != nil {
		t.Fatal("a local catalog added an AWS configuration")
	}
}

// TestCacheLimit: a catalog's CacheMaxBytes bounds the copies in its cache
// folder (dir/files), shared by every user of the folder; the first setting
// stays.
func TestCacheLimit(t *testing.T) {
	dir := t.TempDir()
	cat, err := OpenCatalog(context.Background(), CatalogConfig{DataDir: dir, CacheMaxBytes: 123 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	l := cacheLimit(cat.CacheDir())
	if l.MaxBytes != 123<<20 || l.Dir != filepath.Join(cat.CacheDir(), "files") {
		t.Errorf("limit %d on %s, want %d on %s", l.MaxBytes, l.Dir, 123<<20, filepath.Join(cat.CacheDir(), "files"))
	}
	SetCacheLimit(cat.CacheDir(), 1)
	if cacheLimit(cat.CacheDir()) != l || l.MaxBytes != 123<<20 {
		t.Errorf("a second setting replaced the limit in use")
	}
	if other := cacheLimit(t.TempDir()); other.MaxBytes != 0 {
		t.Errorf("a folder without a setting has limit %d, want the default (0)", other.MaxBytes)
	}
}
