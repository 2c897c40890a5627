package objectstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"gocloud.dev/gcerrors"
)

// ErrCircuitOpen is returned without calling the store while the breaker is
// open: the store failed repeatedly and is given time to recover.
var ErrCircuitOpen = errors.New("storage circuit breaker open")

// BreakerPolicy tunes a Breaker.
type BreakerPolicy struct {
	// Failures in a row that open the breaker (default 5).
	Threshold int
	// Cooldown is how long it stays open before one probe call is let
	// through (default 1s); it doubles, up to MaxCooldown (default 30s),
	// each time a probe fails.
	Cooldown, MaxCooldown time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Breaker is a circuit breaker over the calls to one store. Closed, it
// counts failures in a row; at Threshold it opens and refuses calls; after
// the cooldown it lets one probe through (half-open): a success closes it,
// a failure opens it again for longer.
type Breaker struct {
	mu       sync.Mutex
	p        BreakerPolicy
	fails    int
	open     bool
	probing  bool
	until    time.Time
	cooldown time.Duration
	reason   string
	opened   int // times it opened, for tests and status
}

// NewBreaker returns a closed breaker.
func NewBreaker(p BreakerPolicy) *Breaker {
	if p.Threshold <= 0 {
		p.Threshold = 5
	}
	if p.Cooldown <= 0 {
		p.Cooldown = time.Second
	}
	if p.MaxCooldown < p.Cooldown {
		p.MaxCooldown = max(30*time.Second, p.Cooldown)
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	return &Breaker{p: p, cooldown: p.Cooldown}
}

// allow says whether a call may go to the store now.
func (b *Breaker) allow() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open {
		return nil
	}
	if b.probing || b.p.Now().Before(b.until) {
		return fmt.Errorf("%w after %d failures in a row (last: %s)", ErrCircuitOpen, b.fails, b.reason)
	}
	b.probing = true
	return nil
}

// record counts a call's outcome. Answers from the store that are not
// faults (not found, precondition failed) count as successes: the store
// is up.
func (b *Breaker) record(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil || !isFault(err) {
		b.fails, b.open, b.probing, b.reason = 0, false, false, ""
		b.cooldown = b.p.Cooldown
		return
	}
	b.fails++
	b.reason = err.Error()
	switch {
	case b.probing:
		b.probing = false
		b.cooldown = min(2*b.cooldown, b.p.MaxCooldown)
		b.until = b.p.Now().Add(b.cooldown)
	case !b.open && b.fails >= b.p.Threshold:
		b.open = true
		b.opened++
		b.until = b.p.Now().Add(b.cooldown)
	}
}

// isFault tells a failure of the store from an answer of it.
func isFault(err error) bool {
	switch gcerrors.Code(err) {
	case gcerrors.NotFound, gcerrors.FailedPrecondition, gcerrors.AlreadyExists:
		return false
	}
	return !errors.Is(err, ErrCircuitOpen) && !errors.Is(err, context.Canceled)
}

// Health is the breaker's state for status displays.
type Health struct {
	Degraded bool
	Reason   string // why it is degraded
}

// Health reports the breaker open (or half-open) as degraded, with the
// last failure as the reason. A closed breaker after some failures is
// still healthy: single failures are retried away.
func (b *Breaker) Health() Health {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open {
		return Health{}
	}
	return Health{Degraded: true, Reason: fmt.Sprintf("storage unreachable: %d failures in a row, last: %s", b.fails, b.reason)}
}
