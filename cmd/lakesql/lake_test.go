package main

// Helpers for the tests that keep Delta tables on S3: the shared versitygw
// (lake, started by TestMain), seen through its own S3 client rather than
// through lakesql.

import (
	"context"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakesql/lakesql/internal/storageloc"
)

// lakePrefix is a key prefix of the test's own, unique per run: the server
// outlives the runs of -count=N.
func lakePrefix(t *testing.T) string {
	return fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())
}

// lakeStorageFlags are the --storage flags that reach the shared server;
// without credentials, lakesql takes them from the environment (lake.Env).
func lakeStorageFlags(credentials bool) []string {
	var flags []string
	for k, v := range lake.Options() {
		if !credentials && (k == storageloc.KeyAccessKeyID || k == storageloc.KeySecretAccessKey) {
			continue
		}
		flags = append(flags, "--storage", k+"="+v)
	}
	return flags
}

// lakeKeys lists the keys under loc (s3://bucket/prefix) in the shared
// server.
func lakeKeys(t testing.TB, loc string) []string {
	t.Helper()
	l, err := storageloc.ParseLocation(loc)
	if err != nil {
		t.Fatal(err)
	}
	if l.Bucket != lake.Bucket {
		t.Fatalf("%s is not in the test bucket %s", loc, lake.Bucket)
	}
	var keys []string
	p := s3.NewListObjectsV2Paginator(lake.S3Client(), &s3.ListObjectsV2Input{
		Bucket: aws.String(l.Bucket), Prefix: aws.String(l.Prefix + "/"),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("list %s: %v", loc, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys
}

// lakeVersions counts the commit files in the Delta log of the table at
// loc in the shared server, as deltatest.Versions does on a local disk.
func lakeVersions(t testing.TB, loc string) int {
	t.Helper()
	log := strings.TrimSuffix(loc, "/") + "/_delta_log"
	n := 0
	for _, k := range lakeKeys(t, log) {
		if base := path.Base(k); strings.HasSuffix(base, ".json") && !strings.HasPrefix(base, ".") {
			n++
		}
	}
	return n
}
