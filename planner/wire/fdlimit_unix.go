//go:build unix

package wire

import (
	"fmt"
	"syscall"
)

// openFileLimit is the process's open-file limit (RLIMIT_NOFILE's soft
// limit, which Go raises to the hard one at start).
func openFileLimit() (uint64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, false
	}
	return uint64(r.Cur), true
}

// setOpenFileLimit sets the process's open-file limit to n (the soft
// limit; the hard one too when n is above it, which needs privilege).
func setOpenFileLimit(n uint64) error {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return fmt.Errorf("lakesql: --open-files-limit: %w", err)
	}
	r.Cur = n
	if r.Max < n {
		r.Max = n
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return fmt.Errorf("lakesql: --open-files-limit %d: %w", n, err)
	}
	return nil
}
