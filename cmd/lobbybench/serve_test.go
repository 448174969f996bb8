package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/all"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/refserver"
)

// syncBuffer is a bytes.Buffer safe for a command writing while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var udpLine = regexp.MustCompile(`udp lobby on (\S+)`)

// waitAddr polls out for the "udp lobby on ADDR" line.
func waitAddr(t *testing.T, out func() string) netip.AddrPort {
	t.Helper()
	return netip.MustParseAddrPort(waitLine(t, out, udpLine, "address")[1])
}

// waitLine waits (at most 10 s) for out to match re, and returns the
// match; what names the line in the failure.
func waitLine(t *testing.T, out func() string, re *regexp.Regexp, what string) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(out()); m != nil {
			return m
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no %s line in %q", what, out())
	return nil
}

// listRooms sends LOBBY_LIST_ROOMS and returns the number of rooms listed.
func listRooms(t *testing.T, to netip.AddrPort, p udpwire.Profile) int {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.WriteToUDPAddrPort(udpwire.AppendListRooms(nil, p, 3), to); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 65536)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, _, err := c.ReadFromUDPAddrPort(buf)
	if err != nil {
		t.Fatal(err)
	}
	var m udpwire.Message
	if err := (udpwire.Decoder{Profile: p}).Decode(buf[:n], &m); err != nil || m.Type != udpwire.LobbyRoomList || m.Seq != 3 {
		t.Fatalf("reply %v seq %d err %v", m.Type, m.Seq, err)
	}
	return m.Rooms.Len()
}

// serveInProcess runs `lobbybench serve args…` in a goroutine; cancel stops
// it as SIGINT would, and its exit code arrives on code.
func serveInProcess(args ...string) (stdout, stderr *syncBuffer, code chan int, cancel context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr = &syncBuffer{}, &syncBuffer{}
	e := &env{stdin: strings.NewReader(""), stdout: stdout, stderr: stderr, getenv: func(string) string { return "" }}
	code = make(chan int, 1)
	go func() { code <- runMain(ctx, e, append([]string{"serve"}, args...)) }()
	return stdout, stderr, code, cancel
}

func TestServeInProcess(t *testing.T) {
	stdout, stderr, code, cancel := serveInProcess("--udp-addr", "127.0.0.1:0", "--tcp-addr", "127.0.0.1:0",
		"--base-port", "0", "--header", "rtype17", "--socket-buffer", "0", "--leviathan-addr", "127.0.0.1:0")
	defer cancel()
	addr := waitAddr(t, stderr.String)
	if n := listRooms(t, addr, udpwire.ProfileRType17); n != 0 {
		t.Fatalf("%d rooms on a fresh server", n)
	}
	if !strings.Contains(stderr.String(), "tcp lobby on 127.0.0.1:") {
		t.Errorf("no TCP address line: %q", stderr.String())
	}
	cancel() // what SIGINT does through main's signal.NotifyContext
	select {
	case c := <-code:
		if c != exitOK {
			t.Fatalf("exit %d, stderr %q", c, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
	for _, want := range []string{"udp-lobby.requests.LOBBY_LIST_ROOMS 1\n", "udp-lobby.replies.LOBBY_ROOM_LIST 1\n", "tcp-lobby.conns.accepted 0\n"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("counters lack %q:\n%s", want, stdout.String())
		}
	}
}

func TestServeBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--header", "xml"}, "header"},
		{[]string{"--rate-key", "mac"}, "rate-key"},
		{[]string{"--udp-addr", "nope"}, "--udp-addr"},
		{[]string{"--tcp-addr", "example.com:1"}, "--tcp-addr"},
		{[]string{"--udp-lobby-addr", "nope"}, "--udp-lobby-addr"}, // the names; the old ones above are aliases
		{[]string{"--tcp-lobby-addr", "example.com:1"}, "--tcp-lobby-addr"},
		// Every part off, whatever parts are linked: nothing to serve.
		{refserver.OffFlags(), "--no-udp-lobby"},
		{append([]string{"--no-udp"}, refserver.OffFlags(udpwire.ProtocolName)...), "nothing left to serve"}, // old and new names mix
		{[]string{"--base-port", "70000"}, "--base-port"},
		{[]string{"--base-port", "65500"}, "--base-port"},
		{[]string{"--max-instances", "0"}, "--max-instances"},
		{[]string{"--max-players", "0"}, "--max-players"},
		{[]string{"--countdown-interval", "0s"}, "--countdown-interval"},
		{[]string{"--game-length", "-1s"}, "--game-length"},
		{[]string{"--rate-limit", "-2"}, "--rate-limit"},
		{[]string{"--log-level", "loud"}, "--log-level"},
		{[]string{"--advertise-addr", "0.0.0.0"}, "--advertise-addr"},
		{append([]string{"--no-udp", "--no-tcp"}, refserver.OffFlags(udpwire.ProtocolName, tcpwire.ProtocolName)...), "--no-udp"},
		{[]string{"--leviathan-addr", "nope"}, "--leviathan-addr"},
		{[]string{"--leviathan-max-players", "0"}, "--leviathan-max-players"},
		{[]string{"--leviathan-rate-limit", "-1"}, "--leviathan-rate-limit"},
		{[]string{"--leviathan-ack-reading", "sideways", "--leviathan-addr", "127.0.0.1:0"}, "--leviathan-ack-reading"},
		{[]string{"--no-udp"}, "--no-udp"},
		{[]string{"--no-udp", "--instance-addr", "127.0.0.1"}, "--instance-addr"},
		{[]string{"--instance-addr", "127.0.0.1:9"}, "--instance-addr"},
		{[]string{"--max-rooms-per-ip", "-1"}, "--max-rooms-per-ip"},
		{[]string{"--max-holds-per-ip", "-1"}, "--max-holds-per-ip"},
		{[]string{"--max-conns-per-ip", "-1"}, "--max-conns-per-ip"},
		{[]string{"--tcp-max-rooms-per-ip", "-1"}, "--tcp-max-rooms-per-ip"},
		{[]string{"--leviathan-max-conns-per-ip", "-1"}, "--leviathan-max-conns-per-ip"},
		{[]string{"--stats-addr", "nope"}, "--stats-addr"},
		{[]string{"extra"}, "unexpected argument"},
	} {
		code, _, errs := runCLI(t, append([]string{"serve"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("serve %v: exit %d, stderr %q; want exit 2 and one line naming %s", tc.args, code, errs, tc.want)
		}
	}
}

func TestServeTCPOnly(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	code := make(chan int, 1)
	go func() {
		code <- runMain(ctx, e, []string{"serve", "--no-udp", "--no-leviathan", "--instance-addr", "127.0.0.1:9", "--tcp-addr", "127.0.0.1:0"})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "tcp lobby on") {
		if time.Now().After(deadline) {
			t.Fatalf("no TCP line: %q", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if c := <-code; c != exitOK || strings.Contains(stdout.String(), "udp.") || strings.Contains(stdout.String(), "leviathan.") {
		t.Fatalf("exit %d, stdout %q", c, stdout.String())
	}
}

// TestServeSignal runs the real binary, built with this test's protocols
// (all.Tags), and stops it with SIGTERM: exit 0 and the counters of every
// part printed, each part on by default.
func TestServeSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := t.TempDir() + "/lobbybench"
	if out, err := exec.Command("go", "build", "-tags", strings.Join(all.Tags, ","), "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "serve", "--udp-addr", "127.0.0.1:0", "--base-port", "0", "--tcp-addr", "127.0.0.1:0",
		"--leviathan-addr", "127.0.0.1:0")
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	addr := waitAddr(t, stderr.String)
	listRooms(t, addr, udpwire.ProfileSpec)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exited with %v; stderr %q", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve ignored SIGTERM")
	}
	if !strings.Contains(stdout.String(), "udp-lobby.requests.LOBBY_LIST_ROOMS 1") {
		t.Errorf("counters not printed: %q", stdout.String())
	}
	// Every part linked runs by default: its counters are printed.
	for _, p := range refserver.PartNames() {
		if !strings.HasPrefix(stdout.String(), p+".") && !strings.Contains(stdout.String(), "\n"+p+".") {
			t.Errorf("no counters of the part %s, on by default: %q", p, stdout.String())
		}
	}
}

var statsLine = regexp.MustCompile(`stats on (http://\S+)`)

// TestServeQuotaAndStats: --max-rooms-per-ip reaches the UDP lobby (a
// second CREATE from one address is refused) and --stats-addr serves the
// live counters, which count the refusal.
func TestServeQuotaAndStats(t *testing.T) {
	stdout, stderr, code, cancel := serveInProcess("--udp-addr", "127.0.0.1:0", "--no-tcp", "--no-leviathan",
		"--base-port", "0", "--socket-buffer", "0", "--max-rooms-per-ip", "1", "--stats-addr", "127.0.0.1:0")
	defer cancel()
	addr := waitAddr(t, stderr.String)
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 2048)
	for seq, want := range []udpwire.MsgType{udpwire.LobbyRoomCreated, udpwire.LobbyJoinFailed} {
		if _, err := c.WriteToUDPAddrPort(udpwire.AppendCreateRoom(nil, udpwire.ProfileSpec, uint16(seq+1)), addr); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, _, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			t.Fatal(err)
		}
		var m udpwire.Message
		if err := (udpwire.Decoder{}).Decode(buf[:n], &m); err != nil || m.Type != want {
			t.Fatalf("CREATE %d: got %v (%v), want %v", seq+1, m.Type, err, want)
		}
	}
	// The stats line follows the lobby's: on a loaded machine, maybe after
	// both creates were answered.
	m := waitLine(t, stderr.String, statsLine, "stats")
	resp, err := http.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var live struct {
		UDP struct {
			Failures map[string]uint64 `json:"failures"`
			Rooms    int               `json:"rooms"`
		} `json:"udp_lobby"`
		Goroutines int `json:"goroutines"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&live); err != nil {
		t.Fatal(err)
	}
	if live.UDP.Failures["rooms-per-ip"] != 1 || live.UDP.Rooms != 1 || live.Goroutines < 1 {
		t.Fatalf("stats %+v", live)
	}
	cancel()
	if c := <-code; c != exitOK {
		t.Fatalf("exit %d", c)
	}
	if !strings.Contains(stdout.String(), "udp-lobby.failures.rooms-per-ip 1\n") {
		t.Errorf("shutdown counters lack the refusal:\n%s", stdout.String())
	}
}
