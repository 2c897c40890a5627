package objectstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gocloud.dev/gcerrors"

	"github.com/lakesql/lakesql/internal/backoff"
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
		// Full jitter spreads writers that failed together, so they do
		// not retry together.
		wait := backoff.Full(p.BaseDelay, p.MaxDelay, attempt)
		if attempt+1 >= p.MaxAttempts || time.Now().Add(wait).After(deadline) {
			return fmt.Errorf("%s: gave up after %d attempts: %w", op, attempt+1, err)
		}
		if werr := backoff.Sleep(ctx, wait); werr != nil {
			return fmt.Errorf("%s: %w (last error: %v)", op, werr, err)
		}
	}
}
