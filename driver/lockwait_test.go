package driver

import (
	"strings"
	"testing"
	"time"
)

// TestLockWaitTimeoutOption: the DSN's lock_wait_timeout reaches the
// engine's configuration, and a value that is not one positive duration is
// refused, naming the option.
func TestLockWaitTimeoutOption(t *testing.T) {
	dir := t.TempDir()
	cfg, err := ParseDSN(dir + "?lock_wait_timeout=7s")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LockWaitTimeout != 7*time.Second {
		t.Errorf("LockWaitTimeout = %v, want 7s", cfg.LockWaitTimeout)
	}
	for _, bad := range []string{"0s", "-1s", "ten", "1s&lock_wait_timeout=2s"} {
		if _, err := ParseDSN(dir + "?lock_wait_timeout=" + bad); err == nil || !strings.Contains(err.Error(), "lock_wait_timeout") {
			t.Errorf("lock_wait_timeout=%s: %v, want a refusal naming the option", bad, err)
		}
	}
}
