//go:build !unix

package planner

import "os"

// tryLock does not lock where flock(2) is missing: the data directory is
// then not guarded against a second process (README, Limitations).
func tryLock(*os.File) (busy bool, err error) { return false, nil }
