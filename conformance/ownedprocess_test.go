//go:build linux

package conformance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	ownedproc "github.com/lobbybench/lobbybench/internal/owned"
	"github.com/lobbybench/lobbybench/internal/testkit/quietport"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/result"
)

// The test binary, run again with ownedLobbyEnv set to an address, is a
// UDP lobby (the test lobby) there that aborts by SIGABRT on the first
// LOBBY_JOIN_ROOM, after printing why, unless the file ownedOnceEnv names
// exists (it creates it as it dies): a real process for an owned target,
// that dies once.
const (
	ownedLobbyEnv = "CONFORMANCE_TEST_OWNED_LOBBY"
	ownedOnceEnv  = "CONFORMANCE_TEST_OWNED_ONCE"
)

func TestOwnedLobbyProcess(t *testing.T) {
	addr := os.Getenv(ownedLobbyEnv)
	if addr == "" {
		t.Skip("the owned lobby's process: run by TestOwnedProcessUDP")
	}
	f := faults{listen: addr}
	once := os.Getenv(ownedOnceEnv)
	if _, err := os.Stat(once); err != nil {
		f.die, f.dieOn = "abort", udpwire.LobbyJoinRoom
	}
	f.onDie = func() {
		os.WriteFile(once, nil, 0o644)
		fmt.Fprintln(os.Stderr, "lobby.c:212: handle_join: Assertion `room->players < MAX_PLAYERS' failed.")
		// Die by the signal itself, the Go runtime's dump and no core file
		// left out.
		if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
			syscall.Dup3(int(null.Fd()), 2, 0)
		}
		syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
		debug.SetTraceback("crash")
		syscall.Kill(os.Getpid(), syscall.SIGABRT)
		time.Sleep(10 * time.Second)
	}
	l := startTestLobby(t, f, 12)
	fmt.Println("test lobby listening on", l.addr())
	time.Sleep(2 * time.Minute) // bounded: the owner stops it long before
}

// TestOwnedProcessUDP: a UDP lobby process lobbybench owns (through the
// hooks conform --target-cmd sets) that aborts on the first
// LOBBY_JOIN_ROOM is reported with its exit and last output, restarted,
// and the suite goes on: the later cases run and pass (one case at a
// time: the case that killed it is the only one in flight).
func TestOwnedProcessUDP(t *testing.T) {
	t.Parallel()
	// A quiet port (below the ephemeral range, in this process's own
	// slice of it): picked here at random, it was once taken by another
	// test's instance pool before the lobby's process bound it.
	addr := fmt.Sprintf("127.0.0.1:%d", quietport.Pick(t, "udp4", 1))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Target: addr, Protocol: protoUDP, Timeout: time.Second,
		Patterns: []string{"udp-lobby/4", "udp-lobby/8/1", "udp-lobby/12"}, Parallel: 1}
	ready, err := cfg.ReachCheck()
	if err != nil {
		t.Fatal(err)
	}
	p, err := ownedproc.Start(context.Background(), ownedproc.Spec{
		Command: fmt.Sprintf("'%s' -test.run='^TestOwnedLobbyProcess$'", exe), Env: []string{ownedLobbyEnv + "=" + addr, ownedOnceEnv + "=" + filepath.Join(t.TempDir(), "died")},
		Addr: addr, Ready: ready, ReadyTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop() })
	cfg.TargetExit = func() (string, []string, bool) {
		select {
		case <-p.Exited():
			return p.ExitStatus(), p.Tail(), true
		default:
			return "", nil, false
		}
	}
	cfg.RestartTarget = p.Restart
	rep := runSuite(t, cfg)
	if len(rep.Outages) != 1 {
		t.Fatalf("outages %+v", rep.Outages)
	}
	o := rep.Outages[0]
	assertion := "lobby.c:212: handle_join: Assertion `room->players < MAX_PLAYERS' failed."
	if o.Kind != result.DownExited || o.Exit != "killed by SIGABRT" || !o.Back || !slices.Contains(o.Output, assertion) || len(o.During) != 1 {
		t.Fatalf("outage %+v", o)
	}
	for _, k := range rep.Cases {
		switch {
		case k.ID == o.During[0]:
			if k.Verdict != result.VerdictFail || !strings.Contains(k.Actual, "(exited: killed by SIGABRT") || !strings.Contains(k.Actual, "its last output: ") ||
				!strings.Contains(k.Actual, assertion) {
				t.Errorf("%s: %s %q", k.ID, k.Verdict, k.Actual)
			}
		case k.Verdict != result.VerdictPass:
			t.Errorf("%s after the restart: %s %q", k.ID, k.Verdict, k.Actual)
		}
	}
	if snap := p.Snapshot(); snap.Starts != 2 || len(snap.Exits) != 1 || snap.Exits[0] != "killed by SIGABRT" {
		t.Errorf("process %+v", snap)
	}
	if t.Failed() {
		logReport(t, rep)
	}
}
