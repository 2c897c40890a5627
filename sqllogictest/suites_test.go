package sqllogictest

// The project's own suites: every .slt file under suites/, run on the
// embedded engine, against an in-process lakesql serve, and against one
// whose Delta tables live on S3 (versitygw). Each file runs on its own: a
// fresh data directory embedded, a fresh server (with its own data
// directory) over the wire, whose restart hook restarts that server on the
// same data directory, so `restart` tests recovery in every mode.
//
// In the server-s3 mode the server's table root is a folder of the file's
// own in the bucket, so relative Delta locations land there, and so does
// __TEST_DIR__; the runner has the label lakesql-s3. A record that only
// holds on a local disk is marked `skipif lakesql-s3`, with a comment
// saying why, and where it can, followed by an `onlyif lakesql-s3`
// counterpart.
//
// A record a suite skips with `skipif lakesql` is a known bug or a runner
// limitation; its comment (# BUG: ...) says which. Skipped records are
// counted and logged, never failed.

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakesql/lakesql/internal/s3test"
)

// lake is the versitygw server the server-s3 mode shares; each file keeps
// to a prefix of its own, unique per run.
var lake *s3test.Server

func TestMain(m *testing.M) { os.Exit(s3test.RunMain(m, &lake)) }

// shortLockWait is the capability lock_wait.slt requires: the test
// shortens the lock wait timeout (50 s by default) to lockWait, so that a statement
// that waits for another transaction's sink fails with 1205 soon. Only the
// outcome (1205) is checked, never the time.
const shortLockWait = "short-lock-wait"

// lockWait is the lock wait timeout of the suites' engines and servers.
const lockWait = time.Second

// suitesDir holds the suites; lakesql test sqllogictest/suites runs the
// same files.
const suitesDir = "suites"

// suiteFiles lists the suites; a missing or empty folder fails the test,
// so a mistyped path never passes silently.
func suiteFiles(t *testing.T) []string {
	t.Helper()
	files, err := Expand([]string{suitesDir})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestSuites(t *testing.T) {
	files := suiteFiles(t)
	caps := []string{shortLockWait}
	modes := []struct {
		name string
		run  func(t *testing.T, file string, out *bytes.Buffer) Summary
	}{
		{"embedded", func(t *testing.T, file string, out *bytes.Buffer) Summary {
			return New(Options{TempDir: t.TempDir(), Out: out, Capabilities: caps, LockWaitTimeout: lockWait}).
				RunFile(context.Background(), file)
		}},
		{"server", func(t *testing.T, file string, out *bytes.Buffer) Summary {
			ts := startServerWith(t, serverOptions{lockWait: lockWait})
			return New(Options{DSN: ts.dsn(), TempDir: ts.tempRoot, Out: out, Restart: ts.restart, Capabilities: caps}).
				RunFile(context.Background(), file)
		}},
		{"server-s3", func(t *testing.T, file string, out *bytes.Buffer) Summary {
			prefix := fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())
			ts := startServerWith(t, serverOptions{
				tableRoot: lake.URL(prefix + "/tables"),
				storage:   lake.Options(),
				roots:     []string{lake.URL(prefix)},
				lockWait:  lockWait,
			})
			sum := New(Options{DSN: ts.dsn(), TempDir: ts.tempRoot, Out: out, Restart: ts.restart, Capabilities: caps,
				Labels: []string{LabelObjectStorage}, TestDirRoot: lake.URL(prefix)}).
				RunFile(context.Background(), file)
			checkOnObjectStorage(t, prefix, ts.dataDir, ts.tempRoot)
			return sum
		}},
	}
	var (
		mu     sync.Mutex
		totals = map[string]*Summary{}
	)
	for _, m := range modes {
		totals[m.name] = &Summary{}
		t.Run(m.name, func(t *testing.T) {
			for _, file := range files {
				name, err := filepath.Rel(suitesDir, file)
				if err != nil {
					t.Fatal(err)
				}
				t.Run(name, func(t *testing.T) {
					// Files are independent (their own data directory or
					// server), so they may run side by side.
					t.Parallel()
					var out bytes.Buffer
					sum := m.run(t, file, &out)
					t.Logf("%s %s: %s", m.name, file, sum)
					mu.Lock()
					totals[m.name].add(sum)
					mu.Unlock()
					switch {
					case sum.Failed > 0:
						t.Errorf("%s: %s\n%s", file, sum, out.String())
					case sum.Passed == 0:
						// A file that only skips tests nothing.
						t.Errorf("%s: no record passed (%s)", file, sum)
					}
				})
			}
		})
	}
	for _, m := range modes {
		t.Logf("%s: %s", m.name, totals[m.name])
	}
}

// checkOnObjectStorage makes sure a server-s3 run wrote its Delta tables to
// the bucket: commits under the file's prefix, and no Delta log in the
// server's local folders (its data directory, the local temp root).
func checkOnObjectStorage(t *testing.T, prefix string, localDirs ...string) {
	t.Helper()
	ctx := context.Background()
	logs := 0
	p := s3.NewListObjectsV2Paginator(lake.S3Client(), &s3.ListObjectsV2Input{
		Bucket: aws.String(lake.Bucket), Prefix: aws.String(prefix + "/"),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Errorf("list the bucket under %s: %v", prefix, err)
			return
		}
		for _, o := range page.Contents {
			if strings.Contains(aws.ToString(o.Key), "/_delta_log/") {
				logs++
			}
		}
	}
	if logs == 0 {
		t.Errorf("no Delta log object under s3://%s/%s/: the file's tables did not land in the bucket", lake.Bucket, prefix)
	}
	for _, dir := range localDirs {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() && d.Name() == "_delta_log" {
				t.Errorf("a Delta table on the local disk in the server-s3 mode: %s", filepath.Dir(path))
				return filepath.SkipDir
			}
			return nil
		})
	}
}
