// Package stalltest holds network servers that stall, for the tests of
// timeouts and of what must not wait on a stalled peer: one that accepts
// and never answers, and one that answers an HTTP request with a body
// that never ends. Each listens on a free loopback port until Close.
package stalltest

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Silent accepts connections, reads what they send and never answers.
type Silent struct {
	l         net.Listener
	requested chan struct{}
	mu        sync.Mutex
	conns     []net.Conn
	once      sync.Once
}

// NewSilent starts a Silent server.
func NewSilent() (*Silent, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Silent{l: l, requested: make(chan struct{}, 16)}
	go s.serve()
	return s, nil
}

func (s *Silent) serve() {
	for {
		conn, err := s.l.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, conn)
		s.mu.Unlock()
		go func() {
			buf := make([]byte, 4096)
			if _, err := conn.Read(buf); err == nil {
				select {
				case s.requested <- struct{}{}:
				default:
				}
			}
			for {
				if _, err := conn.Read(buf); err != nil {
					return
				}
			}
		}()
	}
}

// Addr is the server's host:port.
func (s *Silent) Addr() string { return s.l.Addr().String() }

// URI is the server as an http:// URI.
func (s *Silent) URI() string { return "http://" + s.Addr() }

// Requested gets a value when a connection's first bytes arrive: the
// client is now waiting for an answer.
func (s *Silent) Requested() <-chan struct{} { return s.requested }

// Close hangs up: it closes the listener and every connection it
// accepted, which ends what waits on them. It may be called again.
func (s *Silent) Close() {
	s.once.Do(func() {
		s.l.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, c := range s.conns {
			c.Close()
		}
		s.conns = nil
	})
}

// Trickle answers every HTTP request with a 200 whose JSON body never
// ends: a byte of white space every 20 ms, until Close.
type Trickle struct {
	l    net.Listener
	stop chan struct{}
	once sync.Once
}

// NewTrickle starts a Trickle server.
func NewTrickle() (*Trickle, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	t := &Trickle{l: l, stop: make(chan struct{})}
	go t.serve()
	return t, nil
}

func (t *Trickle) serve() {
	for {
		conn, err := t.l.Accept()
		if err != nil {
			return
		}
		go t.trickle(conn)
	}
}

func (t *Trickle) trickle(conn net.Conn) {
	defer conn.Close()
	if _, err := http.ReadRequest(bufio.NewReader(conn)); err != nil {
		return
	}
	if _, err := fmt.Fprint(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n"); err != nil {
		return
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
		}
	}
}

// URI is the server as an http:// URI.
func (t *Trickle) URI() string { return "http://" + t.l.Addr().String() }

// Close stops the server and its bodies. It may be called again.
func (t *Trickle) Close() {
	t.once.Do(func() {
		close(t.stop)
		t.l.Close()
	})
}
