package wire

import (
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/dolthub/vitess/go/mysql"
)

// admitListener decides, before vitess sends its handshake, whether a
// connection may log in, the way MySQL does:
//   - a client address blocked for too many connection errors
//     (max_connect_errors, see hostErrors) is sent error 1129 in place of
//     the handshake, and closed;
//   - a connection beyond max_connections is sent 1040 ("Too many
//     connections"), and closed. Clients and connection pools recognise
//     1040 and back off; vitess's own limit closes such a connection
//     without a word, which a client sees as a lost connection (2013) and
//     may retry at once. A connection counts from its accept, so sockets
//     that never log in count too;
//   - a connection that has not logged in after connect_timeout is
//     closed (its slot freed), and counts as a connection error of its
//     address (see hostErrors).
//
// The limits are read from the server's settings at each accept, so SET
// GLOBAL max_connections, connect_timeout and max_connect_errors apply
// to the connections that come after.
type admitListener struct {
	net.Listener
	limits func() admitLimits
	hosts  *hostErrors

	mu   sync.Mutex
	open uint64
}

// admitLimits are the settings admitListener applies to one connection.
type admitLimits struct {
	maxConnections   uint64
	connectTimeout   time.Duration
	maxConnectErrors uint64
}

func newAdmitListener(l net.Listener, hosts *hostErrors, limits func() admitLimits) *admitListener {
	return &admitListener{Listener: l, limits: limits, hosts: hosts}
}

// Accept returns the next connection that may log in; the others are
// refused as they come.
func (l *admitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lim := l.limits()
		host := remoteHost(c.RemoteAddr())
		// Refused here, in the accept loop, so a flood's refusals hold
		// one descriptor at a time: the packet fits the new socket's
		// empty send buffer, the write does not wait for the client.
		if l.hosts.blocked(host, lim.maxConnectErrors) {
			refuseConnection(c, mysql.ERHostIsBlocked, "HY000",
				fmt.Sprintf("Host '%s' is blocked because of many connection errors; unblock with 'mysqladmin flush-hosts'", host))
			continue
		}
		if !l.take(lim.maxConnections) {
			refuseConnection(c, mysql.ERConCount, "08004", "Too many connections")
			continue
		}
		ac := &admittedConn{Conn: c, l: l, host: host}
		ac.timer = time.AfterFunc(lim.connectTimeout, ac.loginTimedOut)
		return ac, nil
	}
}

func (l *admitListener) take(max uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open >= max {
		return false
	}
	l.open++
	return true
}

func (l *admitListener) release() {
	l.mu.Lock()
	l.open--
	l.mu.Unlock()
}

// remoteHost is the client's IP address as text ("" when unknown).
func remoteHost(a net.Addr) string {
	if a == nil {
		return ""
	}
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	h, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return h
}

// admittedConn gives its slot back when it is closed (once, however often
// it is closed), and is closed when its login does not end in time.
type admittedConn struct {
	net.Conn
	l     *admitListener
	host  string
	timer *time.Timer
	once  sync.Once
}

// loggedIn stops the login clock: the client is in.
func (c *admittedConn) loggedIn() { c.timer.Stop() }

// loginTimedOut closes a connection still logging in at connect_timeout
// (vitess's read of the client's packet then fails), and counts a
// connection error of its address.
func (c *admittedConn) loginTimedOut() {
	c.l.hosts.failed(c.host, c.l.limits().maxConnectErrors)
	_ = c.Close()
}

func (c *admittedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.timer.Stop()
		c.l.release()
	})
	return err
}

// refuseConnection sends the MySQL error packet a server sends instead of
// its handshake when it refuses a connection, and closes c.
func refuseConnection(c net.Conn, code uint16, state, msg string) {
	defer c.Close()
	payload := make([]byte, 0, 9+len(msg))
	payload = append(payload, 0xff) // ERR
	payload = binary.LittleEndian.AppendUint16(payload, code)
	payload = append(payload, '#')
	payload = append(payload, state...)
	payload = append(payload, msg...)
	packet := []byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), 0} // sequence 0
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = c.Write(append(packet, payload...))
}

// admitted finds the admittedConn under a connection vitess holds; nil
// when there is none.
func admitted(nc net.Conn) *admittedConn {
	ac, _ := under[*admittedConn](nc)
	return ac
}
