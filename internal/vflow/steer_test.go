//go:build linux

package vflow

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf/link"

	"github.com/lobbybench/lobbybench/internal/netrange"
)

func TestConfigCheck(t *testing.T) {
	ports := netrange.PortRange{First: 2000, Last: 2999}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // "" accepted, else a part of the error
	}{
		{"defaults", Config{}, ""},
		{"a /24", Config{Addrs: netip.MustParsePrefix("127.213.1.0/24"), Ports: ports}, ""},
		{"one address", Config{Addrs: netip.MustParsePrefix("127.213.1.7/32"), Ports: ports}, ""},
		{"IPv6", Config{Addrs: netip.MustParsePrefix("fd00::/64")}, "not IPv4"},
		{"host bits", Config{Addrs: netip.MustParsePrefix("127.213.1.5/24")}, "did you mean 127.213.1.0/24"},
		{"not loopback", Config{Addrs: netip.MustParsePrefix("10.1.0.0/16")}, "inside 127.0.0.0/8"},
		{"all of loopback", Config{Addrs: netip.MustParsePrefix("127.0.0.0/8")}, "inside 127.0.0.0/8"},
		{"holds 127.0.0.1", Config{Addrs: netip.MustParsePrefix("127.0.0.0/16")}, "holds 127.0.0.1"},
		{"ports reversed", Config{Ports: netrange.PortRange{First: 3000, Last: 2000}}, "port range 3000-2000"},
		{"port 0", Config{Ports: netrange.PortRange{First: 0, Last: 20}}, "port range 0-20"},
		{"negative buffer", Config{ReadBuffer: -1}, "receive buffer -1"},
		{"too many sockets", Config{Sockets: MaxSockets + 1}, "65 steered sockets"},
		{"more sockets than ports", Config{Ports: netrange.PortRange{First: 2000, Last: 2001}, Sockets: 3}, "3 steered sockets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.withDefaults().check()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// TestDefaultSocketsFitTheRange: the default count of steered sockets
// follows the runtime's processors but never passes the range's ports
// (each binds one): a range of one port gets one socket on any machine.
func TestDefaultSocketsFitTheRange(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	for _, tc := range []struct {
		ports netrange.PortRange
		want  int
	}{
		{netrange.PortRange{First: 2000, Last: 2999}, 4},
		{netrange.PortRange{First: 2000, Last: 2001}, 2},
		{netrange.PortRange{First: 2000, Last: 2000}, 1},
	} {
		cfg := Config{Ports: tc.ports}.withDefaults()
		if cfg.Sockets != tc.want {
			t.Errorf("ports %s on 8 processors: %d sockets, want %d", tc.ports, cfg.Sockets, tc.want)
		}
		if err := cfg.check(); err != nil {
			t.Errorf("ports %s: %v", tc.ports, err)
		}
	}
}

// TestTwoUsersDisjoint: two ranges attached at once in one namespace; each
// gets its own flows' replies and none of the other's.
func TestTwoUsersDisjoint(t *testing.T) {
	needPrivileges(t)
	ports := netrange.PortRange{First: 21000, Last: 21099}
	a := openFlows(t, Config{Addrs: netip.MustParsePrefix("127.203.0.0/24"), Ports: ports})
	b := openFlows(t, Config{Addrs: netip.MustParsePrefix("127.204.0.0/24"), Ports: ports})
	server := echoServer(t)
	fa, fb := flowAddrs(a.Config(), 100, 10), flowAddrs(b.Config(), 100, 10)
	s := newSender(t, 16)
	var ds []Datagram
	for _, fl := range append(append([]netip.AddrPort{}, fa...), fb...) {
		ds = append(ds, Datagram{Src: fl, Dst: server, Payload: []byte(fl.String())})
	}
	if n, err := s.Send(ds); err != nil || n != len(ds) {
		t.Fatalf("sent %d of %d: %v", n, len(ds), err)
	}
	checkEcho(t, receiveAll(t, a, len(fa)), fa, server)
	checkEcho(t, receiveAll(t, b, len(fb)), fb, server)
}

// dialRange returns a plain UDP socket of 127.0.0.1 connected to to: a
// datagram to an address no socket takes draws ICMP port unreachable, which
// such a socket reports as ECONNREFUSED.
func dialRange(t *testing.T, to netip.AddrPort) *net.UDPConn {
	t.Helper()
	c, err := net.DialUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, net.UDPAddrFromAddrPort(to))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// ping sends "ping" on c and waits up to wait for an answer: the reply, or
// the error (ECONNREFUSED: nothing took the datagram).
func ping(c *net.UDPConn, wait time.Duration) (string, error) {
	if _, err := c.Write([]byte("ping")); err != nil {
		return "", err
	}
	c.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	return string(buf[:n]), err
}

// TestOutsideRangeNotSteered: a port outside the range and an address
// outside it draw port unreachable as before; the program takes only its
// own range.
func TestOutsideRangeNotSteered(t *testing.T) {
	needPrivileges(t)
	cfg := Config{Addrs: netip.MustParsePrefix("127.205.0.0/24"), Ports: netrange.PortRange{First: 22000, Last: 22099}}
	f := openFlows(t, cfg)
	for _, to := range []string{"127.205.0.5:22100", "127.205.1.5:22005", "127.205.0.5:21999"} {
		c := dialRange(t, netip.MustParseAddrPort(to))
		if _, err := ping(c, 10*time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("datagram to %s outside %s %s: %v, want port unreachable (ECONNREFUSED)", to, cfg.Addrs, cfg.Ports, err)
		}
	}
	// and one inside reaches the steered socket
	c := dialRange(t, netip.MustParseAddrPort("127.205.0.5:22005"))
	c.Write([]byte("in"))
	got := receiveAll(t, f, 1)
	m, ok := got[netip.MustParseAddrPort("127.205.0.5:22005")]
	if !ok || string(m.Buf[:m.N]) != "in" || m.From != c.LocalAddr().(*net.UDPAddr).AddrPort() {
		t.Errorf("steered socket got %v, want \"in\" for 127.205.0.5:22005 from %s", got, c.LocalAddr())
	}
}

// TestReplyFromOtherPort: a reply from a port of the server other than the
// one written to shows as From, for the client to judge.
func TestReplyFromOtherPort(t *testing.T) {
	needPrivileges(t)
	cfg := Config{Addrs: netip.MustParsePrefix("127.206.0.0/24"), Ports: netrange.PortRange{First: 23000, Last: 23099}}
	f := openFlows(t, cfg)
	in, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	s := newSender(t, 1)
	flow := netip.MustParseAddrPort("127.206.0.9:23009")
	if _, err := s.Send([]Datagram{{Src: flow, Dst: in.LocalAddr().(*net.UDPAddr).AddrPort(), Payload: []byte("hi")}}); err != nil {
		t.Fatal(err)
	}
	in.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 16)
	n, from, err := in.ReadFromUDPAddrPort(buf)
	if err != nil || from != flow || string(buf[:n]) != "hi" {
		t.Fatalf("server read %q from %s (%v), want \"hi\" from %s", buf[:n], from, err, flow)
	}
	out.WriteToUDPAddrPort([]byte("moved"), from)
	m, ok := receiveAll(t, f, 1)[flow]
	if want := out.LocalAddr().(*net.UDPAddr).AddrPort(); !ok || m.From != want || string(m.Buf[:m.N]) != "moved" {
		t.Errorf("flow %s got %+v, want \"moved\" from %s", flow, m, want)
	}
}

// TestCloseThenReopen: Close detaches (a datagram to the range draws port
// unreachable again) and the same range opens again.
func TestCloseThenReopen(t *testing.T) {
	needPrivileges(t)
	cfg := Config{Addrs: netip.MustParsePrefix("127.207.0.0/24"), Ports: netrange.PortRange{First: 24000, Last: 24099}}
	server := echoServer(t)
	flows := flowAddrs(cfg, 20, 5)
	for round := range 2 {
		f, err := Open(cfg)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		checkEcho(t, echoRound(t, f, flows, server), flows, server)
		if err := f.Close(); err != nil {
			t.Fatalf("round %d: Close: %v", round, err)
		}
		c := dialRange(t, flows[0])
		if _, err := ping(c, 10*time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("round %d: after Close a datagram to %s: %v, want port unreachable", round, flows[0], err)
		}
	}
}

const childEnv = "VFLOW_TEST_CHILD"

var childRange = Config{Addrs: netip.MustParsePrefix("127.208.0.0/24"), Ports: netrange.PortRange{First: 25000, Last: 25099}, Sockets: 1}

// TestChildHolder is the child of TestSIGKILLDetaches: it attaches
// childRange, says "ready" and echoes every datagram from its flow until
// killed, or 60 s.
func TestChildHolder(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("the child process of TestSIGKILLDetaches")
	}
	f, err := Open(childRange)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSender(8)
	if err != nil {
		t.Fatal(err)
	}
	r := oneReceiver(t, f, 8)
	info, err := f.link.(*link.NetNsLink).Info()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("ready %d\n", info.ID)
	end := time.Now().Add(60 * time.Second)
	f.SetDeadline(end)
	ms := []Message{{Buf: make([]byte, 512)}}
	for time.Now().Before(end) {
		if _, err := r.Receive(ms); err != nil {
			return
		}
		s.Send([]Datagram{{Src: ms[0].Flow, Dst: ms[0].From, Payload: ms[0].Buf[:ms[0].N]}})
	}
}

// TestSIGKILLDetaches: a process that attached and is SIGKILLed leaves no
// steering behind: a datagram to its range draws port unreachable, and a
// new Open of the range works.
func TestSIGKILLDetaches(t *testing.T) {
	needPrivileges(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildHolder$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	var linkID uint64
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "ready "); ok {
				ready <- id
				break
			}
		}
		close(ready)
	}()
	select {
	case r, ok := <-ready:
		if !ok {
			t.Fatal("child ended before attaching")
		}
		if linkID, err = strconv.ParseUint(r, 10, 32); err != nil {
			t.Fatalf("child's link id %q: %v", r, err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("child not ready in 60 s")
	}
	flow := netip.MustParseAddrPort("127.208.0.9:25009")
	c := dialRange(t, flow)
	if got, err := ping(c, 10*time.Second); err != nil || got != "ping" {
		t.Fatalf("while the child holds %s: %q, %v; want its echo", flow, got, err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	// the kernel may release the link just after the process is reaped:
	// ask a bounded number of times
	var last error
	for range 50 {
		if _, last = ping(c, 200*time.Millisecond); errors.Is(last, syscall.ECONNREFUSED) {
			break
		}
	}
	if !errors.Is(last, syscall.ECONNREFUSED) {
		t.Fatalf("after SIGKILL a datagram to %s: %v, want port unreachable (the steering outlived its process)", flow, last)
	}
	f := openFlows(t, childRange)
	server := echoServer(t)
	checkEcho(t, echoRound(t, f, []netip.AddrPort{flow}, server), []netip.AddrPort{flow}, server)
	f.Close()
	// the socket died with the child, so a pinned link would steer nothing
	// either: only the link's absence proves the attachment went too
	var lerr error
	for range 50 {
		var l link.Link
		if l, lerr = link.NewFromID(link.ID(linkID)); lerr != nil {
			break
		}
		l.Close()
		time.Sleep(100 * time.Millisecond)
	}
	switch {
	case lerr == nil:
		t.Errorf("after SIGKILL the child's link %d is still there: the attachment outlived its process", linkID)
	case errors.Is(lerr, os.ErrPermission):
		t.Skipf("looking a link up by id needs CAP_SYS_ADMIN, so whether the child's link %d is gone is unchecked (%v); the rest passed", linkID, lerr)
	case !errors.Is(lerr, os.ErrNotExist):
		t.Errorf("after SIGKILL looking up the child's link %d: %v, want not exist", linkID, lerr)
	}
}
