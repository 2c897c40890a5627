package wire

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// patientListener keeps accepting through errors. vitess ends its accept
// loop on any error from Accept, and with it the server: running out of
// file descriptors (EMFILE, ENFILE) under a flood of connections stopped
// lakesql serve. Here an error other than the listener being closed
// waits (5 ms, doubling up to a second, as net/http does) and tries
// again; the connections waiting in the kernel's backlog are accepted
// once descriptors are free again. One line goes to log per minute at
// most, naming the error.
type patientListener struct {
	net.Listener
	log io.Writer

	closeOnce sync.Once
	closed    chan struct{}

	mu     sync.Mutex
	logged time.Time // when the last line was written
	quiet  int       // errors since that line
}

// acceptLogEvery is how often patientListener writes its line at most.
const acceptLogEvery = time.Minute

func newPatientListener(l net.Listener, log io.Writer) *patientListener {
	return &patientListener{Listener: l, log: log, closed: make(chan struct{})}
}

func (l *patientListener) Accept() (net.Conn, error) {
	var wait time.Duration
	for {
		c, err := l.Listener.Accept()
		if err == nil {
			return c, nil
		}
		select {
		case <-l.closed:
			return nil, err
		default:
		}
		if errors.Is(err, net.ErrClosed) {
			return nil, err
		}
		if wait == 0 {
			wait = 5 * time.Millisecond
		} else if wait *= 2; wait > time.Second {
			wait = time.Second
		}
		l.report(err)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-l.closed:
			t.Stop()
			return nil, err
		}
	}
}

// report writes the error's line, at most once per acceptLogEvery.
func (l *patientListener) report(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if !l.logged.IsZero() && now.Sub(l.logged) < acceptLogEvery {
		l.quiet++
		return
	}
	more := ""
	if l.quiet > 0 {
		more = fmt.Sprintf(" (%d more since the last report)", l.quiet)
	}
	fmt.Fprintf(l.log, "lakesql serve: cannot accept connections: %v%s; retrying every %v at most "+
		"(raise the open-file limit, ulimit -n, or lower --max-connections)\n", err, more, time.Second)
	l.logged, l.quiet = now, 0
}

func (l *patientListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}
