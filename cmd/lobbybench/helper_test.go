package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
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

// Loopback ports a test hands to a process that binds them a moment later
// (an owned server, a server's instance pool) are picked below Linux's
// ephemeral range (32768 and up): the sockets other tests open meanwhile
// on port 0, many of them while tests run in parallel, never take one.
// Within this process, no port is handed out twice, so two parallel tests
// never pick the same one either.
const (
	pickLow  = 20000
	pickHigh = 32768
)

var picked struct {
	sync.Mutex
	used map[int]bool
}

// freePorts returns the first of n consecutive loopback ports below the
// ephemeral range that are free for network ("udp" or "tcp") now, and
// that no other test of this process was given.
func freePorts(t *testing.T, network string, n int) int {
	t.Helper()
	picked.Lock()
	defer picked.Unlock()
	if picked.used == nil {
		picked.used = map[int]bool{}
	}
	for range 200 {
		base := pickLow + rand.IntN(pickHigh-pickLow-n)
		if bindable(network, base, n) {
			for p := base; p < base+n; p++ {
				picked.used[p] = true
			}
			return base
		}
	}
	t.Fatalf("no %d free %s ports in %d-%d", n, network, pickLow, pickHigh-1)
	return 0
}

// bindable reports whether ports base..base+n-1 are all free for network
// on 127.0.0.1 and given to no test yet; it binds each and lets it go.
func bindable(network string, base, n int) bool {
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	for p := base; p < base+n; p++ {
		if picked.used[p] {
			return false
		}
		a := fmt.Sprintf("127.0.0.1:%d", p)
		var c io.Closer
		var err error
		if network == "tcp" {
			c, err = net.Listen("tcp", a)
		} else {
			c, err = net.ListenPacket("udp", a)
		}
		if err != nil {
			return false
		}
		closers = append(closers, c)
	}
	return true
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
