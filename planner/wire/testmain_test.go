package wire

import (
	"os"
	"testing"
)

// TestMain runs the tests, or, re-executed with fdChildEnv set, the
// server of TestAcceptSurvivesDescriptorExhaustion (fdExhaustionChild).
func TestMain(m *testing.M) {
	if os.Getenv(fdChildEnv) != "" {
		os.Exit(fdExhaustionChild())
	}
	os.Exit(m.Run())
}
