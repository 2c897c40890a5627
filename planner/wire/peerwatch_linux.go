package wire

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// peerGone reports that the peer hung up (or the socket failed): POLLRDHUP
// says so even with bytes still unread before the end (a TLS close_notify).
func peerGone(raw syscall.RawConn) bool {
	gone := false
	_ = raw.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
		n, err := unix.Poll(fds, 0)
		gone = err == nil && n > 0 && fds[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0
	})
	return gone
}
