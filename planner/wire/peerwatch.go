package wire

// A client that goes away while its statement runs cancels the statement,
// as KILL QUERY does. vitess hands the handler a context that nothing
// cancels, and go-mysql-server watches the socket only while it sends
// rows (and only on a bare TCP connection); a statement being analysed,
// sleeping or counting a cross join ran on for nobody. While a statement
// runs, the client sends nothing (MySQL's protocol is one command at a
// time), so the socket is polled for the peer's hang-up.

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/dolthub/vitess/go/mysql"
)

// peerPoll is how often a running statement's socket is looked at.
const peerPoll = 100 * time.Millisecond

// errPeerGone is the cause of a statement cancelled for its client.
var errPeerGone = errors.New("the client closed the connection")

// watchPeer returns a context for c's statement that is cancelled when
// the client hangs up, and the function that ends the watch.
func watchPeer(ctx context.Context, c *mysql.Conn) (context.Context, func()) {
	tcp := tcpConn(c.Conn)
	if tcp == nil {
		return ctx, func() {}
	}
	raw, err := tcp.SyscallConn()
	if err != nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(peerPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if peerGone(raw) {
				cancel(errPeerGone)
				return
			}
		}
	}()
	return ctx, func() {
		close(done)
		cancel(nil)
	}
}

// tcpConn is the TCP connection under vitess's, or nil.
func tcpConn(nc net.Conn) *net.TCPConn {
	tc, _ := under[*net.TCPConn](nc)
	return tc
}
