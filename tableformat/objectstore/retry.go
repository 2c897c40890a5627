package objectstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"gocloud.dev/gcerrors"
)

// RetryPolicy bounds the retries of one storage call: exponential backoff
// with full jitter, at most MaxAttempts tries and MaxTime in all.
type RetryPolicy struct {
	MaxAttempts int           // default 5
	BaseDelay   time.Duration // default 50ms
	MaxDelay    time.Duration // default 2s
	MaxTime     time.Duration // default 30s
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 5
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 50 * time.Millisecond
	}
	if p.MaxDelay < p.BaseDelay {
		p.MaxDelay = max(2*time.Second, p.BaseDelay)
	}
	if p.MaxTime <= 0 {
		p.MaxTime = 30 * time.Second
	}
	return p
}

// delay is the wait before try number attempt+1: a uniform draw below
// BaseDelay·2^attempt, capped at MaxDelay. Full jitter spreads writers
// that failed together, so they do not retry together.
func (p RetryPolicy) delay(attempt int) time.Duration {
	// min(BaseDelay<<attempt, MaxDelay), compared before shifting: the
	// shift itself can overflow (an hour shifted 22 times does) into a
	// bound that is not positive, on which rand.Int64N panics.
	d := p.MaxDelay
	if p.BaseDelay <= p.MaxDelay>>attempt {
		d = p.BaseDelay << attempt
	}
	return time.Duration(rand.Int64N(int64(d)) + 1)
}

// retryable tells whether a failed call may succeed when tried again.
// Answers from the store (not found, precondition failed, denied, bad
// request) are final; transport failures and server errors are not.
func retryable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, ErrCircuitOpen) {
		return false
	}
	switch gcerrors.Code(err) {
	case gcerrors.NotFound, gcerrors.FailedPrecondition, gcerrors.PermissionDenied,
		gcerrors.InvalidArgument, gcerrors.AlreadyExists, gcerrors.Unimplemented, gcerrors.Canceled:
		return false
	}
	return true
}

// do runs call under the policy and the breaker. A call refused by an
// open breaker fails at once with ErrCircuitOpen.
func (p RetryPolicy) do(ctx context.Context, b *Breaker, op string, call func(context.Context) error) error {
	deadline := time.Now().Add(p.MaxTime)
	for attempt := 0; ; attempt++ {
		if err := b.allow(); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		err := call(ctx)
		b.record(err)
		if err == nil || !retryable(err) {
			return err
		}
		wait := p.delay(attempt)
		if attempt+1 >= p.MaxAttempts || time.Now().Add(wait).After(deadline) {
			return fmt.Errorf("%s: gave up after %d attempts: %w", op, attempt+1, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w (last error: %v)", op, ctx.Err(), err)
		case <-t.C:
		}
	}
}
