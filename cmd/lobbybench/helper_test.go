package main

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/crash"
	"github.com/lobbybench/lobbybench/internal/testkit/waiting"
)

// The test binary doubles as the lobbybench binary when asMainEnv is set,
// so tests can run real processes (a lowered open-files limit, --workers
// spawning shards of os.Executable) without building one.
const (
	asMainEnv = "LOBBYBENCH_TEST_AS_MAIN"
	nofileEnv = "LOBBYBENCH_TEST_NOFILE" // RLIMIT_NOFILE to set first
	// dieEnv names a shard ("1/2"): the worker running it writes a line to
	// stderr and kills itself, as a crashed worker would end.
	dieEnv = "LOBBYBENCH_TEST_DIE_SHARD"
	// abortEnv is a duration: `serve` kills itself with SIGABRT that long
	// after it starts, as a crashing server would end.
	abortEnv = "LOBBYBENCH_TEST_ABORT_AFTER"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(fakeServer(mode, os.Args[1:]))
	}
	if os.Getenv(asMainEnv) != "" {
		if n, err := strconv.ParseUint(os.Getenv(nofileEnv), 10, 64); err == nil {
			lim := syscall.Rlimit{Cur: n, Max: n}
			if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
				panic(err)
			}
			os.Unsetenv(nofileEnv)
		}
		if d := os.Getenv(dieEnv); d != "" && slices.Contains(os.Args, d) {
			os.Stderr.WriteString("worker exploding on purpose\n")
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		if d, err := time.ParseDuration(os.Getenv(abortEnv)); err == nil && len(os.Args) > 1 && os.Args[1] == "serve" {
			time.AfterFunc(d, func() {
				os.Stderr.WriteString("serve aborting on purpose\n")
				crash.Abort()
			})
		}
		main()
		return
	}
	if len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-") {
		// Run as lobbybench (a --workers worker, a --target-cmd server)
		// without asMainEnv: running the tests instead would start the
		// same processes again, without end.
		os.Stderr.WriteString("lobbybench test binary run with arguments but without " + asMainEnv + "\n")
		os.Exit(2)
	}
	// The --workers tests start this binary as their workers with the
	// environment the parent process has; setting it here rather than
	// with t.Setenv lets those tests run in parallel. Every child that
	// runs this binary with arguments then runs as lobbybench, which is
	// what each of them wants (the guard above stays for a binary started
	// by hand).
	os.Setenv(asMainEnv, "1")
	// This package's parallel tests mostly wait (on a load's length, a
	// timeout, a child process): six at once.
	waiting.Parallel(6)
	os.Exit(m.Run())
}

// lobbybenchCmd is the test binary run as lobbybench with args, env added.
func lobbybenchCmd(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(append(os.Environ(), asMainEnv+"=1"), env...)
	return cmd
}
