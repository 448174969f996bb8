//go:build linux

package owned

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/crash"
	"github.com/lobbybench/lobbybench/internal/testkit/quietport"
)

// The fake servers: the test binary runs itself with OWNED_HELPER set, as
// TestHelperProcess, and becomes the server the mode names.
const helperEnv = "OWNED_HELPER"

func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		return
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(helperMain(mode, args))
}

func helperMain(mode string, args []string) int {
	addr := ""
	if len(args) > 0 {
		addr = args[0]
	}
	switch mode {
	case "exit3":
		fmt.Fprintln(os.Stderr, "fatal: no config file")
		return 3
	case "inuse":
		fmt.Fprintf(os.Stderr, "listen udp %s: bind: address already in use\n", addr)
		return 1
	case "slow":
		// Longer than the 300 ms udpReady waits for an answer, so a Start
		// that returned before the server listened fails the test's check
		// (a datagram to the closed port is refused at once).
		time.Sleep(500 * time.Millisecond)
	case "noterm":
		ignoreTerm()
	case "spin":
		go func() {
			for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
			}
		}()
	}
	conn, err := net.ListenPacket("udp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	wd, _ := os.Getwd()
	fmt.Println("listening on", conn.LocalAddr(), "in", wd)
	buf := make([]byte, 512)
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			return 1
		}
		if string(buf[:n]) == "abort" {
			fmt.Fprintln(os.Stderr, "got abort, aborting")
			crash.Abort()
		}
		conn.WriteTo(buf[:n], from)
	}
	return 0
}

// helperCmd is the --target-cmd line that runs a fake server.
func helperCmd(t *testing.T, mode, addr string) (string, []string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("'%s' -test.run='^TestHelperProcess$' -- %s", exe, addr), []string{helperEnv + "=" + mode}
}

// freeUDP returns a loopback UDP address nothing listens on, picked with
// quietport: a port taken from the kernel and let go was once bound by
// another package's echo server before the helper, and "exits at once"
// saw that server answer.
func freeUDP(t *testing.T) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", quietport.Pick(t, "udp", 1))
}

// udpReady is a reachability check: a datagram to addr must come back.
func udpReady(addr string) func(context.Context) error {
	return func(ctx context.Context) error {
		c, err := net.Dial("udp", addr)
		if err != nil {
			return err
		}
		defer c.Close()
		d := time.Now().Add(300 * time.Millisecond)
		if dl, ok := ctx.Deadline(); ok && dl.Before(d) {
			d = dl
		}
		c.SetDeadline(d)
		if _, err := c.Write([]byte("ping")); err != nil {
			return err
		}
		buf := make([]byte, 16)
		n, err := c.Read(buf)
		if err != nil {
			return err
		}
		if string(buf[:n]) != "ping" {
			return fmt.Errorf("reply %q", buf[:n])
		}
		return nil
	}
}

func send(t *testing.T, addr, msg string) {
	t.Helper()
	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
}

// ignoredGrace is the grace given a helper that ignores SIGTERM (mode
// noterm, which ignores it before it listens, so before Start returns):
// it is waited out in full whatever its length, and no clean end has to
// fit in it.
const ignoredGrace = 250 * time.Millisecond

func spec(t *testing.T, mode, addr string) Spec {
	cmd, env := helperCmd(t, mode, addr)
	return Spec{Command: cmd, Env: env, Addr: addr, Ready: udpReady(addr), ReadyTimeout: 20 * time.Second, Grace: 5 * time.Second}
}

// waitFor fails the test unless ch closes within a generous bound.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not happen within 30s", what)
	}
}

func mustStart(t *testing.T, s Spec) *Process {
	t.Helper()
	p, err := Start(context.Background(), s)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { p.Stop() })
	return p
}

func TestStartFails(t *testing.T) {
	tests := []struct {
		name  string
		spec  func(t *testing.T) Spec
		kind  error
		want  []string // fragments of the message
		setup func(t *testing.T, addr string)
	}{
		{"command not found", func(t *testing.T) Spec {
			a := freeUDP(t)
			return Spec{Command: "no-such-lobby-server --udp " + a, Addr: a, Ready: udpReady(a)}
		}, ErrNotFound, []string{"command not found: no-such-lobby-server", "status 127"}, nil},
		{"exits at once", func(t *testing.T) Spec { return spec(t, "exit3", freeUDP(t)) },
			ErrExited, []string{"exited with status 3", "before it answered", "fatal: no config file"}, nil},
		{"says address already in use", func(t *testing.T) Spec { return spec(t, "inuse", freeUDP(t)) },
			ErrPortInUse, []string{"port already in use: the --target-cmd server could not bind", "exited with status 1", "bind: address already in use"}, nil},
		{"never ready", func(t *testing.T) Spec {
			a := freeUDP(t)
			s := spec(t, "udp", a)
			s.Ready = func(ctx context.Context) error { return errors.New("no reply to LIST_ROOMS") }
			s.ReadyTimeout = 300 * time.Millisecond
			return s
		}, ErrNeverReady, []string{"never became ready", "within 300ms", "checks; the last said: no reply to LIST_ROOMS", "lobbybench stopped it"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Start(context.Background(), tt.spec(t))
			if err == nil {
				p.Stop()
				t.Fatal("Start succeeded")
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("error %v is not %v", err, tt.kind)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestPortAlreadyInUse(t *testing.T) {
	a := freeUDP(t)
	other := mustStart(t, spec(t, "udp", a))
	p, err := Start(context.Background(), spec(t, "udp", a))
	if err == nil {
		p.Stop()
		t.Fatal("second Start succeeded")
	}
	if !errors.Is(err, ErrPortInUse) || !strings.Contains(err.Error(), "port already in use: something already answers at "+a+" before --target-cmd started") {
		t.Errorf("got %v", err)
	}
	if other.ExitStatus() != "" {
		t.Errorf("the first server was disturbed: %s", other.ExitStatus())
	}
}

func TestSlowStartIsReady(t *testing.T) {
	a := freeUDP(t)
	p := mustStart(t, spec(t, "slow", a))
	if err := udpReady(a)(context.Background()); err != nil {
		t.Fatalf("not answering after Start returned: %v", err)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
}

func TestStop(t *testing.T) {
	tests := []struct {
		name       string
		mode       string
		stopped    bool // SIGSTOPped first: Stop must still end it cleanly
		wantErr    error
		wantStatus string
	}{
		{"clean", "udp", false, nil, "killed by SIGTERM"},
		{"clean while stopped", "udp", true, nil, "killed by SIGTERM"},
		{"ignores SIGTERM", "noterm", false, ErrKilled, "killed by SIGKILL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := spec(t, tt.mode, freeUDP(t))
			s.Grace = time.Second
			if tt.mode == "noterm" {
				s.Grace = ignoredGrace
			}
			if tt.stopped {
				s.Grace = 20 * time.Second // generous: the clean end must not be the SIGKILL
			}
			p := mustStart(t, s)
			if tt.stopped {
				if err := p.Signal(syscall.SIGSTOP); err != nil {
					t.Fatal(err)
				}
			}
			err := p.Stop()
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Errorf("Stop = %v, want %v", err, tt.wantErr)
			}
			if got := p.ExitStatus(); got != tt.wantStatus {
				t.Errorf("ExitStatus = %q, want %q", got, tt.wantStatus)
			}
			if again := p.Stop(); !errors.Is(again, tt.wantErr) || (again == nil) != (err == nil) {
				t.Errorf("second Stop = %v, want the first's %v", again, err)
			}
			if snap := p.Snapshot(); len(snap.Exits) != 1 || snap.Exits[0] != tt.wantStatus {
				t.Errorf("Exits = %q", snap.Exits)
			}
		})
	}
}

func TestAbortWords(t *testing.T) {
	a := freeUDP(t)
	s := spec(t, "udp", a)
	s.TailLines = 5000 // the Go runtime's crash dump follows the line
	p := mustStart(t, s)
	send(t, a, "abort")
	waitFor(t, p.Exited(), "the abort")
	if got := p.ExitStatus(); got != "killed by SIGABRT" {
		t.Errorf("ExitStatus = %q", got)
	}
	tail := strings.Join(p.Tail(), "\n")
	if !strings.Contains(tail, "got abort, aborting") || !strings.Contains(tail, "listening on") {
		t.Errorf("Tail lacks the server's lines:\n%s", tail)
	}
	if err := p.Signal(syscall.SIGTERM); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Signal after exit = %v", err)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("Stop after exit = %v", err)
	}
}

func TestRestart(t *testing.T) {
	a := freeUDP(t)
	p := mustStart(t, spec(t, "udp", a))
	old := p.PID()
	if err := p.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p.Exited(), "the SIGKILL")
	if err := p.Restart(context.Background()); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if p.PID() == old {
		t.Errorf("same PID %d after restart", old)
	}
	if p.ExitStatus() != "" {
		t.Errorf("new process reports %q", p.ExitStatus())
	}
	if err := udpReady(a)(context.Background()); err != nil {
		t.Errorf("not answering after Restart: %v", err)
	}
	snap := p.Snapshot()
	if snap.Starts != 2 || len(snap.PIDs) != 2 || snap.PIDs[0] != old || snap.PIDs[1] != p.PID() {
		t.Errorf("Starts %d PIDs %v", snap.Starts, snap.PIDs)
	}
	if len(snap.Exits) != 1 || snap.Exits[0] != "killed by SIGKILL" {
		t.Errorf("Exits %q", snap.Exits)
	}
}

func TestStopCont(t *testing.T) {
	a := freeUDP(t)
	p := mustStart(t, spec(t, "udp", a))
	ready := udpReady(a)
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// kill(2) returns before the signal takes effect: wait (bounded) until
	// the kernel shows the process stopped, then probe it.
	for i := 0; ; i++ {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.PID()))
		if err != nil {
			t.Fatal(err)
		}
		if j := bytes.LastIndexByte(b, ')'); j >= 0 && j+2 < len(b) && (b[j+2] == 'T' || b[j+2] == 't') {
			break
		}
		if i == 1000 {
			t.Fatalf("the process is not stopped after SIGSTOP: %s", b)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := ready(context.Background()); err == nil {
		t.Error("a stopped server answered")
	}
	if err := p.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	var err error
	for range 50 { // the datagram sent while stopped may come first
		if err = ready(context.Background()); err == nil {
			break
		}
	}
	if err != nil {
		t.Errorf("no answer after SIGCONT: %v", err)
	}
}

func TestTelemetry(t *testing.T) {
	s := spec(t, "spin", freeUDP(t))
	s.SampleEvery = 20 * time.Millisecond
	p := mustStart(t, s)
	var snap = p.Snapshot()
	for i := 0; i < 1500 && (len(snap.Samples) == 0 || snap.CPUNS == 0); i++ {
		time.Sleep(20 * time.Millisecond)
		snap = p.Snapshot()
	}
	if len(snap.Samples) == 0 || snap.CPUNS <= 0 {
		t.Fatalf("no CPU seen: %+v", snap)
	}
	last := snap.Samples[len(snap.Samples)-1]
	if last.UserNS+last.SystemNS <= 0 || last.RSSBytes <= 0 || last.Threads < 1 || last.OpenFDs < 3 {
		t.Errorf("implausible sample %+v", last)
	}
	if snap.PeakRSSBytes < last.RSSBytes || snap.PeakRSSBytes > 1<<34 {
		t.Errorf("peak RSS %d, last %d", snap.PeakRSSBytes, last.RSSBytes)
	}
	if snap.Command != s.Command || snap.Starts != 1 || len(snap.PIDs) != 1 || snap.PIDs[0] != p.PID() {
		t.Errorf("snapshot %+v", snap)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if got := p.Snapshot().CPUNS; got < snap.CPUNS {
		t.Errorf("CPU went down after the exit: %v < %v", got, snap.CPUNS)
	}
}

func TestSampleSelf(t *testing.T) {
	s, err := SampleSelf(10*time.Millisecond, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	snap := s.Snapshot()
	for i := 0; i < 1500 && len(snap.Samples) == 0; i++ {
		time.Sleep(10 * time.Millisecond)
		snap = s.Snapshot()
	}
	snap = s.Stop()
	if len(snap.Samples) == 0 {
		t.Fatal("no samples")
	}
	x := snap.Samples[0]
	if snap.Command != EmbeddedCommand || snap.PIDs[0] != os.Getpid() || x.RSSBytes <= 0 || x.Threads < 1 || x.OpenFDs < 3 {
		t.Errorf("snapshot %+v", snap)
	}
	s.Stop() // idempotent
}

func TestWaitWords(t *testing.T) {
	tests := []struct {
		ws   syscall.WaitStatus
		want string
		code int
	}{
		{2 << 8, "exited with status 2", 2},
		{0, "exited with status 0", 0},
		{syscall.WaitStatus(syscall.SIGABRT), "killed by SIGABRT", -1},
		{syscall.WaitStatus(syscall.SIGKILL), "killed by SIGKILL", -1},
		{syscall.WaitStatus(syscall.SIGSEGV) | 0x80, "killed by SIGSEGV (core dumped)", -1},
	}
	for _, tt := range tests {
		if got, code := waitWords(tt.ws); got != tt.want || code != tt.code {
			t.Errorf("waitWords(%#x) = %q, %d; want %q, %d", uint32(tt.ws), got, code, tt.want, tt.code)
		}
	}
}

func TestApply(t *testing.T) {
	tests := []struct {
		name      string
		mode      string
		fault     Fault
		wantExits []string
		newPID    bool
	}{
		{"SIGKILL and restart", "udp", Fault{Kill: "SIGKILL", RestartAfter: 10 * time.Millisecond}, []string{"killed by SIGKILL"}, true},
		{"SIGTERM and restart", "udp", Fault{Kill: "SIGTERM"}, []string{"killed by SIGTERM"}, true},
		{"SIGTERM ignored escalates", "noterm", Fault{Kill: "SIGTERM"}, []string{"killed by SIGKILL"}, true},
		{"stop then continue", "udp", Fault{Stop: 200 * time.Millisecond}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := freeUDP(t)
			s := spec(t, tt.mode, a)
			s.Grace = 500 * time.Millisecond
			p := mustStart(t, s)
			old := p.PID()
			if err := Apply(context.Background(), p, tt.fault); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if (p.PID() != old) != tt.newPID {
				t.Errorf("PID %d → %d", old, p.PID())
			}
			var err error
			for range 50 {
				if err = udpReady(a)(context.Background()); err == nil {
					break
				}
			}
			if err != nil {
				t.Errorf("not answering after the fault: %v", err)
			}
			if snap := p.Snapshot(); strings.Join(snap.Exits, ",") != strings.Join(tt.wantExits, ",") {
				t.Errorf("Exits %q, want %q", snap.Exits, tt.wantExits)
			}
		})
	}
}

func TestApplyOnExited(t *testing.T) {
	a := freeUDP(t)
	p := mustStart(t, spec(t, "udp", a))
	send(t, a, "abort")
	waitFor(t, p.Exited(), "the abort")
	err := Apply(context.Background(), p, Fault{Stop: time.Second})
	if !errors.Is(err, ErrNotRunning) || !strings.Contains(err.Error(), "killed by SIGABRT") {
		t.Errorf("Apply = %v", err)
	}
}

func TestSpecErrors(t *testing.T) {
	tests := []struct {
		spec Spec
		want string
	}{
		{Spec{Command: "  ", Ready: udpReady("127.0.0.1:1")}, "--target-cmd: the command is empty"},
		{Spec{Command: "x"}, "Spec.Ready is nil"},
	}
	for _, tt := range tests {
		if _, err := Start(context.Background(), tt.spec); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Start(%+v) = %v, want %q", tt.spec, err, tt.want)
		}
	}
}

func TestTargetLog(t *testing.T) {
	var log lockedBuffer
	s := spec(t, "udp", freeUDP(t))
	s.Log = &log
	p := mustStart(t, s)
	p.Stop()
	if !strings.Contains(log.String(), "listening on") {
		t.Errorf("log got %q", log.String())
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
