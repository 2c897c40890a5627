package catalogadapter

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is the wait before retry number attempt (from 0) of a commit that
// lost a race: exponential from base, capped at max, with jitter in
// [d/2, d] so racing writers spread out.
func Backoff(base, max time.Duration, attempt int) time.Duration {
	d := base
	for i := 0; i < attempt && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
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
