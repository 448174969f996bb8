package main

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"
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
		main()
		return
	}
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
