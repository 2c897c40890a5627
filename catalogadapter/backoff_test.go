package catalogadapter

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	base, max := 10*time.Millisecond, 200*time.Millisecond
	for attempt, full := range []time.Duration{10, 20, 40, 80, 160, 200, 200} {
		full *= time.Millisecond
		for i := 0; i < 50; i++ {
			if d := Backoff(base, max, attempt); d < full/2 || d > full {
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
