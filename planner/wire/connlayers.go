package wire

import (
	"crypto/tls"
	"net"

	"github.com/dolthub/vitess/go/netutil"
)

// under finds the connection of type T among the layers of the one vitess
// holds: vitess's timeouts, the command guard, the admitted connection,
// TLS, and the TCP connection at the bottom.
func under[T net.Conn](nc net.Conn) (T, bool) {
	for nc != nil {
		if x, ok := nc.(T); ok {
			return x, true
		}
		switch x := nc.(type) {
		case netutil.ConnWithTimeouts:
			nc = x.Conn
		case *admittedConn:
			nc = x.Conn
		case *commandGuard:
			nc = x.Conn
		case *tls.Conn:
			nc = x.NetConn()
		default:
			nc = nil
		}
	}
	var none T
	return none, false
}
