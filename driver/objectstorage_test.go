package driver

// The DSN options for Delta sinks on object storage: table_root,
// storage.* and s3:// allowed roots.

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-cmp/cmp"

	"github.com/lakesql/lakesql/internal/s3test"
)

const secret = "do-not-show-me"

func TestParseDSNObjectStorage(t *testing.T) {
	dir := t.TempDir()
	v := url.Values{
		"allowed_roots":             {dir + ",s3://Bucket//a/b/", "gs://other/c"},
		"table_root":                {"s3://bucket/lake/"},
		"storage.endpoint":          {"http://127.0.0.1:7070"},
		"storage.secret_access_key": {"a+b/c=" + secret},
		"storage.access_key_id":     {"id"},
	}
	cfg, err := ParseDSN(dir + "?" + v.Encode())
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		DataDir: dir,
		// Object storage locations are kept as locations (canonical), not
		// made into file paths.
		AllowedRoots: []string{dir, "s3://Bucket/a/b", "gs://other/c"},
		TableRoot:    "s3://bucket/lake",
		Storage: map[string]string{
			"storage.endpoint":          "http://127.0.0.1:7070",
			"storage.secret_access_key": "a+b/c=" + secret,
			"storage.access_key_id":     "id",
		},
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	// A local table root is made absolute.
	if cfg, err := ParseDSN(dir + "?table_root=rel/tables"); err != nil || !filepath.IsAbs(cfg.TableRoot) {
		t.Errorf("local table_root: %+v, %v", cfg, err)
	}

	for _, tc := range []struct{ query, want string }{
		{"bogus=1", "known: allowed_roots, table_root, storage.access_key_id, storage.cache_max_bytes, storage.endpoint"},
		{"storage.colour=blue", `unknown storage option "storage.colour"`},
		{"storage.endpoint=ftp://x", "storage.endpoint"},
		{"storage.max_attempts=0", "storage.max_attempts"},
		{"storage.secret_access_key=a&storage.secret_access_key=b", "storage.secret_access_key given 2 times"},
		{"table_root=", "table_root takes one location"},
		{"table_root=s3://bucket/a/../b", `".." segments`},
		{"table_root=s3://user:" + secret + "@bucket/a", "no credentials"},
		{"allowed_roots=s3://", "no bucket"},
		{"storage.secret_access_key=%zz" + secret, "not a valid URL query"},
	} {
		_, err := ParseDSN(dir + "?" + tc.query)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.query, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error shows the secret: %v", tc.query, err)
		}
	}
}

// TestSharedEngineObjectStorage: the engine of a data directory is shared
// only with DSNs that agree on table_root and the storage options too; the
// refusal names what differs, never a secret.
func TestSharedEngineObjectStorage(t *testing.T) {
	dir := t.TempDir()
	base := url.Values{
		"table_root":                {"s3://bucket/lake"},
		"storage.endpoint":          {"http://127.0.0.1:1"},
		"storage.access_key_id":     {"id"},
		"storage.secret_access_key": {secret},
	}
	a := openDB(t, dir+"?"+base.Encode())
	if err := a.Ping(); err != nil {
		t.Fatal(err)
	}
	// The same options, written otherwise: shared.
	same := url.Values{"table_root": {"s3://bucket//lake/"}, "storage.endpoint": base["storage.endpoint"],
		"storage.access_key_id": {"id"}, "storage.secret_access_key": {secret}}
	if err := openDB(t, dir+"?"+same.Encode()).Ping(); err != nil {
		t.Errorf("the same options: %v", err)
	}
	for _, tc := range []struct {
		change func(url.Values)
		want   string
	}{
		{func(v url.Values) { v.Set("table_root", "s3://bucket/other") }, "table_root"},
		{func(v url.Values) { v.Del("table_root") }, "table_root"},
		{func(v url.Values) { v.Set("storage.secret_access_key", secret+"2") }, "storage.secret_access_key"},
		{func(v url.Values) { v.Set("storage.region", "eu-west-1") }, "storage.region"},
		{func(v url.Values) { v.Del("storage.endpoint") }, "storage.endpoint"},
	} {
		v := url.Values{}
		for k, vs := range base {
			v[k] = vs
		}
		tc.change(v)
		err := openDB(t, dir+"?"+v.Encode()).Ping()
		if err == nil || !strings.Contains(err.Error(), "already open") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a refusal naming %s", v.Encode(), err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("the refusal shows the secret: %v", err)
		}
	}
}

// TestObjectStorageDSN: with table_root on S3 and the storage options in
// the DSN, a relative Delta location lands in the bucket.
func TestObjectStorageDSN(t *testing.T) {
	lake := s3test.Start(t)
	ctx := context.Background()
	v := url.Values{"table_root": {lake.URL("root")}}
	for k, val := range lake.Options() {
		v.Set(k, val)
	}
	db, err := sql.Open("lakesql", t.TempDir()+"?"+v.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustExec(t, db, createOrders)
	mustExec(t, db, "INSERT INTO orders VALUES (1, 1.5, 'eu')")
	if got := query(t, db, "SELECT id, amount, region FROM orders"); !cmp.Equal(got, [][]any{{int64(1), 1.5, "eu"}}) {
		t.Errorf("rows = %v", got)
	}
	got := query(t, db, "SHOW SINKS")
	if len(got) != 1 || got[0][2] != lake.URL("root/lake/orders") {
		t.Errorf("SHOW SINKS = %v, want the sink at %s", got, lake.URL("root/lake/orders"))
	}
	if _, err := lake.S3Client().HeadObject(ctx, &s3.HeadObjectInput{
		Bucket: aws.String(lake.Bucket), Key: aws.String("root/lake/orders/_delta_log/00000000000000000001.json"),
	}); err != nil {
		t.Errorf("the INSERT's commit is not in the bucket: %v", err)
	}
	// The default allowed roots are the data directory and the table root:
	// another prefix of the bucket is refused.
	if _, err := db.Exec("CREATE SINK x INTO DELTA '" + lake.URL("elsewhere/x") + "' (id INT)"); err == nil ||
		!strings.Contains(err.Error(), "outside the allowed roots") {
		t.Errorf("a location outside the table root: %v", err)
	}
}
