//go:build !linux

package wire

import "syscall"

// peerGone is Linux's only (POLLRDHUP): elsewhere a client that goes away
// is noticed when rows are sent to it.
func peerGone(syscall.RawConn) bool { return false }
