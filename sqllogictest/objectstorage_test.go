package sqllogictest

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestRunLabels: skipif and onlyif match the runner's labels; a label
// changes which records run, never what counts as passed.
func TestRunLabels(t *testing.T) {
	for _, tc := range []struct {
		name            string
		labels          []string
		passed, skipped int
	}{
		// The CREATE, INSERT 2, the unlabelled INSERT and the skipif query.
		{"no labels", nil, 4, 3},
		{"another label", []string{"lakesql-s4"}, 4, 3},
		// The CREATE, INSERT 1, the unlabelled INSERT and both onlyif queries.
		{"lakesql-s3", []string{LabelObjectStorage}, 5, 2},
		{"more labels", []string{"x", LabelObjectStorage, "y"}, 5, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			sum := New(Options{TempDir: t.TempDir(), Out: &out, Labels: tc.labels}).
				RunFile(context.Background(), filepath.Join("testdata", "labels.slt"))
			counts(t, sum, out.String(), tc.passed, 0, tc.skipped)
		})
	}
}

// TestRunEmbeddedObjectStorage: with TableRoot and TestDirRoot on S3, an
// embedded run's relative locations and __TEST_DIR__ land in the bucket,
// each file in a folder of its own.
func TestRunEmbeddedObjectStorage(t *testing.T) {
	prefix := fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())
	root := lake.URL(prefix)
	r := New(Options{TempDir: t.TempDir(), TableRoot: root, TestDirRoot: root, Storage: lake.Options(),
		Labels: []string{LabelObjectStorage}})
	var out bytes.Buffer
	r.opts.Out = &out
	sum := r.Run(context.Background(), []string{
		filepath.Join("testdata", "testdir.slt"),
		filepath.Join("testdata", "labels.slt"),
		filepath.Join("testdata", "labels.slt"), // the same tables again: no clash
	})
	counts(t, sum, out.String(), 3+5+5, 0, 2+2)

	var tables, testDirs []string
	p := s3.NewListObjectsV2Paginator(lake.S3Client(), &s3.ListObjectsV2Input{
		Bucket: aws.String(lake.Bucket), Prefix: aws.String(prefix + "/"),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			k := strings.TrimPrefix(aws.ToString(o.Key), prefix+"/")
			own, rest, _ := strings.Cut(k, "/")
			switch {
			case strings.HasPrefix(rest, "tables/lake/t/_delta_log/00000000000000000000.json"):
				tables = append(tables, own)
			case strings.HasPrefix(rest, "tmp/lake/t/_delta_log/00000000000000000000.json"):
				testDirs = append(testDirs, own)
			}
		}
	}
	// labels.slt twice: two tables, in two folders; testdir.slt's sink
	// under its __TEST_DIR__.
	if len(tables) != 2 || tables[0] == tables[1] || len(testDirs) != 1 {
		t.Errorf("tables created in %v, test dir tables in %v; want 2 folders of tables and 1 of test dir", tables, testDirs)
	}
}
