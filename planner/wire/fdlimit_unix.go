//go:build unix

package wire

import "syscall"

// openFileLimit is the process's open-file limit (RLIMIT_NOFILE's soft
// limit, which Go raises to the hard one at start).
func openFileLimit() (uint64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, false
	}
	return uint64(r.Cur), true
}
