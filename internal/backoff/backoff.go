// Package backoff computes the waits between retries: exponential in the
// attempt number, capped, and jittered so that callers that failed together
// do not retry together. Two jitters are kept because their callers differ:
// Full for storage calls, Equal for commits that lost a race.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Ceiling is min(base·2^attempt, max) for attempt from 0, compared before
// shifting: the shift itself can overflow (an hour shifted 22 times does)
// into a bound that is not positive.
func Ceiling(base, max time.Duration, attempt int) time.Duration {
	d := max
	if base <= max>>attempt {
		d = base << attempt
	}
	return d
}

// Full is the wait before try number attempt+1: a uniform draw in
// [1ns, Ceiling] (full jitter). Full jitter spreads writers that failed
// together, so they do not retry together. base must be positive and max
// at least base.
func Full(base, max time.Duration, attempt int) time.Duration {
	return time.Duration(rand.Int64N(int64(Ceiling(base, max, attempt))) + 1)
}

// Equal is the wait before retry number attempt (from 0) of a commit that
// lost a race: exponential from base, capped at max, with jitter in
// [d/2, d] so racing writers spread out.
func Equal(base, max time.Duration, attempt int) time.Duration {
	d := Ceiling(base, max, attempt)
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + rand.N(d-half+1)
}

// Sleep waits d, or until ctx ends (then it returns ctx's error).
func Sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
