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
//
// Under the race detector, which slows every suite several times over,
// four: at eight, cases that judge a pool's fill or a stall by the
// suite's timeout (udp-lobby/10/5, tcp-lobby/R/2) failed in CI.
func TestMain(m *testing.M) {
	n := 8
	if raceOn {
		n = 4
	}
	waiting.Parallel(n)
	os.Exit(m.Run())
}
