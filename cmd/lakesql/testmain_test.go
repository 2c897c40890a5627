package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/lakesql/lakesql/internal/s3test"
)

// TestMain serves three roles besides running the tests: the test binary
// re-executed with scenarioChildEnv set is a scenario client process (see
// runScenarioChild), a versitygw server is shared by the tests that keep
// Delta tables on S3 (lake), and the lakesql binary the tests build is
// built once and removed at the end.
func TestMain(m *testing.M) {
	if kind := os.Getenv(scenarioChildEnv); kind != "" {
		os.Exit(runScenarioChild(kind, os.Getenv(scenarioDSNEnv)))
	}
	code := s3test.RunMain(m, &lake)
	if lakesqlBuild.dir != "" {
		os.RemoveAll(lakesqlBuild.dir)
	}
	os.Exit(code)
}

// lake is the versitygw server the tests share; each test keeps to a key
// prefix of its own, unique per run (lakePrefix).
var lake *s3test.Server

// lakesqlBuild is the lakesql binary built for this test run: linking
// DuckDB takes a while, so the tests that start `lakesql serve` share one.
var lakesqlBuild struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// sharedLakesql builds the lakesql binary on first use and returns its path.
func sharedLakesql(t *testing.T) string {
	t.Helper()
	b := &lakesqlBuild
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "lakesql-bin-"); b.err != nil {
			return
		}
		b.bin = filepath.Join(b.dir, "lakesql")
		build := exec.Command("go", "build", "-tags", "duckdb_arrow", "-o", b.bin, ".")
		if out, err := build.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}
