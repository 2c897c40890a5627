package wire

import (
	"encoding/binary"
	"net"
	"sync"
	"time"

	"github.com/dolthub/vitess/go/mysql"
)

// limitListener enforces --max-connections the way MySQL does: a
// connection beyond the limit is sent error 1040 ("Too many connections")
// in place of the handshake, and closed. Clients and connection pools
// recognise 1040 and back off; vitess's own limit closes such a
// connection without a word, which a client sees as a lost connection
// (2013) and may retry at once.
type limitListener struct {
	net.Listener
	max uint64

	mu   sync.Mutex
	open uint64
}

func newLimitListener(l net.Listener, max uint64) *limitListener {
	return &limitListener{Listener: l, max: max}
}

// Accept returns the next connection within the limit; connections beyond
// it are refused as they come.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.take() {
			return &limitedConn{Conn: c, l: l}, nil
		}
		go refuseConnection(c)
	}
}

func (l *limitListener) take() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open >= l.max {
		return false
	}
	l.open++
	return true
}

func (l *limitListener) release() {
	l.mu.Lock()
	l.open--
	l.mu.Unlock()
}

// limitedConn gives its slot back when it is closed (once, however often
// it is closed).
type limitedConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.l.release)
	return err
}

// refuseConnection sends the MySQL error packet a server sends instead of
// its handshake when it has too many connections, and closes c.
func refuseConnection(c net.Conn) {
	defer c.Close()
	msg := "Too many connections"
	payload := make([]byte, 0, 9+len(msg))
	payload = append(payload, 0xff) // ERR
	payload = binary.LittleEndian.AppendUint16(payload, mysql.ERConCount)
	payload = append(payload, '#')
	payload = append(payload, "08004"...) // ER_CON_COUNT_ERROR's SQLSTATE
	payload = append(payload, msg...)
	packet := []byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), 0} // sequence 0
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, _ = c.Write(append(packet, payload...))
}
