package wire

import "sync"

// hostErrors counts each client address's connection errors in a row, as
// MySQL's host cache does for max_connect_errors: a failed login and a
// login that does not end within connect_timeout each count one; a
// successful login resets its address to zero. An address with
// max_connect_errors errors is blocked (1129) until FLUSH HOSTS. Unlike
// MySQL, a client that goes away before logging in (a TCP health check,
// with or without a reset) or sends a malformed handshake does not count:
// it guessed no password and held its slot only briefly, and counting it
// would block a load balancer's address.
type hostErrors struct {
	mu     sync.Mutex
	counts map[string]uint64
}

// maxTrackedHosts bounds the addresses tracked, so a flood from many
// addresses cannot grow the table without end: when it is full, the
// addresses not blocked are forgotten first.
const maxTrackedHosts = 1 << 16

func newHostErrors() *hostErrors { return &hostErrors{counts: map[string]uint64{}} }

// failed counts one connection error of host.
func (h *hostErrors) failed(host string, max uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.counts[host]; !ok && len(h.counts) >= maxTrackedHosts {
		for k, n := range h.counts {
			if n < max {
				delete(h.counts, k)
			}
		}
		if len(h.counts) >= maxTrackedHosts {
			return
		}
	}
	h.counts[host]++
}

// succeeded resets host's count: it logged in.
func (h *hostErrors) succeeded(host string) {
	h.mu.Lock()
	delete(h.counts, host)
	h.mu.Unlock()
}

// blocked reports whether host has max errors or more.
func (h *hostErrors) blocked(host string, max uint64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.counts[host] >= max
}

// flush forgets every count (FLUSH HOSTS).
func (h *hostErrors) flush() {
	h.mu.Lock()
	h.counts = map[string]uint64{}
	h.mu.Unlock()
}
