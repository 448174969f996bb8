package udpclient

import (
	"os"
	"testing"

	waitkit "github.com/lobbybench/lobbybench/internal/testkit/waiting"
)

// TestMain lets every parallel test of the package run at once: they
// wait on their servers, timeouts and pauses, use a few milliseconds of
// CPU, and assert bytes, counts and reasons, never timing:
// TestBundledScripted's plays (8 flows, each built-in and scripted, one
// session against servers and relays of their own), TestMisbehavingLobby
// and TestImpairedFlow. Two at a time, -parallel's default on 2 cores,
// left them waiting one after another. The tests that measure memory, or
// a rate against a limit, are not parallel: they run first, alone.
func TestMain(m *testing.M) {
	waitkit.Parallel(16)
	os.Exit(m.Run())
}
