// Package alone runs a test again in a process of its own, for figures
// that read the whole process: its heap, its goroutines.
package alone

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// env names the test a child process runs alone.
const env = "LOBBYBENCH_TEST_ALONE"

// Run reports whether the caller is the child that measures: in the
// parent it runs t's test again in a child process of the test binary,
// alone (-test.run for its name only), relays the child's output and
// fails t when the child failed, and returns false. The tests before it
// in the same process leave work behind (a server winding down, a
// session's last timeout, pooled buffers), and a heap figure would count
// it as the measured sessions'.
func Run(t *testing.T) bool {
	t.Helper()
	if os.Getenv(env) == t.Name() {
		return true
	}
	if strings.Contains(t.Name(), "/") {
		t.Fatalf("alone.Run takes a top-level test, not %s", t.Name())
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v", "-test.timeout="+timeout(t).String())
	cmd.Env = append(os.Environ(), env+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil {
		t.Fatalf("the test run alone did not start: %v", err)
	}
	t.Logf("the test run alone in process %d:\n%s", cmd.ProcessState.Pid(), out)
	if err != nil {
		t.Fatalf("the test run alone failed: %v", err)
	}
	return false
}

// timeout is what the child may take: what is left of the parent's own
// -test.timeout, else ten minutes.
func timeout(t *testing.T) time.Duration {
	if d, ok := t.Deadline(); ok {
		return max(time.Until(d)-5*time.Second, time.Second)
	}
	return 10 * time.Minute
}
