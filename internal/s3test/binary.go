package s3test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// BinaryEnv names the environment variable that overrides where the
// versitygw binary is, for machines that build or install it elsewhere.
const BinaryEnv = "LAKESQL_VERSITYGW"

// Binary returns the path of the versitygw binary the tests run: $LAKESQL_VERSITYGW
// if set, else bin/versitygw under the repository root. The binary is built
// by `make bin/versitygw` (which `make unit` depends on) rather than by the
// tests themselves, so that a test run never compiles a large server behind
// the test timeout's back.
func Binary() (string, error) {
	if p := os.Getenv(BinaryEnv); p != "" {
		if err := checkExecutable(p); err != nil {
			return "", fmt.Errorf("versitygw from $%s: %w", BinaryEnv, err)
		}
		return p, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", fmt.Errorf("find versitygw: %w (set $%s to the binary)", err, BinaryEnv)
	}
	p := filepath.Join(root, "bin", "versitygw")
	if err := checkExecutable(p); err != nil {
		return "", fmt.Errorf("find versitygw: %w; build it with `make bin/versitygw` in %s (or set $%s)", err, root, BinaryEnv)
	}
	return p, nil
}

// repoRoot walks up from the working directory (a package directory under
// `go test`) to the directory holding go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

func checkExecutable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return nil
}
