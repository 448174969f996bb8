package conformance

import (
	"os"
	"testing"

	"github.com/lobbybench/lobbybench/internal/testkit/waiting"
)

// TestMain lets eight of this package's parallel tests run at once: each
// runs whole suites that mostly wait out case timeouts (a few seconds of
// CPU in all), and asserts verdicts only, which the suite keeps from a
// busy machine (a stall makes a wait longer or a case inconclusive, never
// a failure).
func TestMain(m *testing.M) {
	waiting.Parallel(8)
	os.Exit(m.Run())
}
