package engine

import (
	"os"
	"testing"

	"github.com/lobbybench/lobbybench/internal/testkit/waiting"
)

// TestMain lets four of this package's parallel tests run at once: every
// one of them waits (waitsInParallel).
func TestMain(m *testing.M) {
	waiting.Parallel(4)
	os.Exit(m.Run())
}

// waitsInParallel marks t, a test or subtest that spends seconds waiting
// on a run against loopback servers of its own (the embedded server, a
// refserver part, an owned process), as parallel, so that such waits
// overlap: at most -parallel of them (4 by default, TestMain) run at once,
// and none beside the package's other tests, which run first. Only a test
// that holds to this may call it: its runs are light (tens to a few
// hundred requests a second), its servers and ports its own, it changes
// no process-wide state (t.Setenv, signals, limits), and what it asserts
// does not hang on an idle machine: error rates and counts against
// generous timeouts and lengths, never latency or CPU figures
// (TestExampleScenarios drops the examples' latency limits, see
// ciThresholds).
func waitsInParallel(t *testing.T) {
	t.Helper()
	t.Parallel()
}
