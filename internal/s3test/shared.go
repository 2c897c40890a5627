package s3test

import (
	"fmt"
	"os"
	"testing"
)

// RunMain starts one server for a whole test binary, runs its tests, and
// stops the server, sparing each test the start (and the bucket create).
// Use it from TestMain:
//
//	var lake *s3test.Server
//
//	func TestMain(m *testing.M) { os.Exit(s3test.RunMain(m, &lake)) }
//
// Tests sharing the server should keep to their own key prefix, unique per
// run too (t.Name() plus a timestamp: the server outlives the runs of
// -count=N, so a second run would find the first one's objects), and must
// not Kill or Restart it; a test that does either starts its own with Start. If the server cannot start,
// RunMain says why on stderr and returns 1 without running any test.
func RunMain(m *testing.M, srv **Server, opts ...Option) int {
	c := config{bucket: DefaultBucket}
	for _, o := range opts {
		o(&c)
	}
	if c.dir == "" {
		dir, err := os.MkdirTemp("", "s3test-")
		if err != nil {
			fmt.Fprintf(os.Stderr, "s3test: %v\n", err)
			return 1
		}
		defer os.RemoveAll(dir)
		c.dir = dir
	}
	s, err := start(c)
	if err != nil {
		fmt.Fprintf(os.Stderr, "s3test: %v\n", err)
		return 1
	}
	defer s.Kill()
	*srv = s
	return m.Run()
}
