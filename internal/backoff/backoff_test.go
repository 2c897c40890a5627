package backoff

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestEqual(t *testing.T) {
	base, max := 10*time.Millisecond, 200*time.Millisecond
	for attempt, full := range []time.Duration{10, 20, 40, 80, 160, 200, 200} {
		full *= time.Millisecond
		for i := 0; i < 50; i++ {
			if d := Equal(base, max, attempt); d < full/2 || d > full {
				t.Fatalf("attempt %d: %v, want within [%v, %v]", attempt, d, full/2, full)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep on a cancelled context: %v", err)
	}
}

// TestFullJitter: each delay is a draw in (0, min(Base·2^attempt,
// Max)], spread over that range (full jitter), and huge attempt numbers do
// not overflow the shift.
func TestFullJitter(t *testing.T) {
	base, max := 10*time.Millisecond, 300*time.Millisecond
	for _, attempt := range []int{0, 1, 2, 4, 5, 10, 29, 30, 31, 62, 63, 64, 1000} {
		ceiling := max
		if attempt < 30 {
			ceiling = min(base<<attempt, max)
		}
		const draws = 2000
		distinct := map[time.Duration]bool{}
		low := 0
		for range draws {
			d := Full(base, max, attempt)
			if d <= 0 || d > ceiling {
				t.Fatalf("Full(%d) = %v, want in (0, %v]", attempt, d, ceiling)
			}
			distinct[d] = true
			if d < ceiling/2 {
				low++
			}
		}
		// A fixed delay, or one drawn only near the ceiling, would make
		// writers that failed together retry together. (Each assertion
		// fails by chance with probability below 2^-1000.)
		if len(distinct) < 2 || low == 0 || low == draws {
			t.Errorf("Full(%d): %d distinct values, %d of %d below half the ceiling: not jittered", attempt, len(distinct), low, draws)
		}
	}
}

// TestFullLongBase: a long base delay must not overflow the
// exponential (Base<<attempt wraps around past 2^63ns, and a bound that is
// not positive makes rand.Int64N panic).
func TestFullLongBase(t *testing.T) {
	base, max := time.Hour, 3*time.Hour
	for attempt := range 40 {
		for range 50 {
			d := Full(base, max, attempt)
			if d <= 0 || d > max {
				t.Fatalf("Full(%d) = %v, want in (0, %v]", attempt, d, max)
			}
		}
	}
}
