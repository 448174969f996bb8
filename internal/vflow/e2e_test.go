//go:build linux

package vflow

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lobbybench/lobbybench/internal/netrange"
	"github.com/lobbybench/lobbybench/internal/sockbuf"
)

// needPrivileges skips a test that needs what Available checks.
func needPrivileges(t *testing.T) {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("virtual flows unavailable here: %v", err)
	}
}

// echoServer is a plain Go UDP echo server on 127.0.0.1:0; it stops with
// the test.
func echoServer(t *testing.T) netip.AddrPort {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if err := sockbuf.Set(c, 8<<20); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			c.WriteToUDPAddrPort(buf[:n], from)
		}
	}()
	return c.LocalAddr().(*net.UDPAddr).AddrPort()
}

// newSender opens a Sender closed with the test.
func newSender(t testing.TB, batch int) *Sender {
	t.Helper()
	s, err := NewSender(batch)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openFlows(t testing.TB, cfg Config) *Flows {
	t.Helper()
	f, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// flowAddrs returns the first n flows of cfg's range laid out by a Table
// with perAddr ports on each address.
func flowAddrs(cfg Config, n, perAddr int) []netip.AddrPort {
	cfg.Ports.Last = cfg.Ports.First + uint16(perAddr) - 1
	cfg.Sockets = 1 // the table's layout is the range's, whatever its sockets
	tab, err := NewTable[struct{}](cfg, n)
	if err != nil {
		panic(err)
	}
	out := make([]netip.AddrPort, n)
	for i := range out {
		out[i] = tab.Flow(i)
	}
	return out
}

// echoRound sends one datagram from each flow to the echo server and
// receives the replies, keyed by the flow they came back to.
func echoRound(t *testing.T, f *Flows, flows []netip.AddrPort, server netip.AddrPort) map[netip.AddrPort]Message {
	t.Helper()
	s := newSender(t, 64)
	ds := make([]Datagram, len(flows))
	for i, fl := range flows {
		ds[i] = Datagram{Src: fl, Dst: server, Payload: []byte(fl.String())}
	}
	if n, err := s.Send(ds); err != nil || n != len(ds) {
		t.Fatalf("sent %d of %d: %v", n, len(ds), err)
	}
	return receiveAll(t, f, len(flows))
}

// receiveAll receives from every steered socket until want datagrams came
// or 10 s passed; the caller judges what came.
func receiveAll(t *testing.T, f *Flows, want int) map[netip.AddrPort]Message {
	t.Helper()
	rs, err := f.Receivers(32)
	if err != nil {
		t.Fatal(err)
	}
	f.SetDeadline(time.Now().Add(10 * time.Second))
	came := make(chan Message)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Go(func() {
			ms := make([]Message, 32)
			for {
				for j := range ms {
					ms[j] = Message{Buf: make([]byte, 2048)}
				}
				n, err := r.Receive(ms)
				if err != nil { // the deadline, or stop's
					return
				}
				for _, m := range ms[:n] {
					select {
					case came <- m:
					case <-stop:
						return
					}
				}
			}
		})
	}
	go func() { wg.Wait(); close(came) }()
	got := map[netip.AddrPort]Message{}
	for m := range came {
		if _, dup := got[m.Flow]; dup {
			t.Errorf("second reply for flow %s", m.Flow)
		}
		got[m.Flow] = m
		if len(got) == want {
			break
		}
	}
	close(stop)
	f.SetDeadline(time.Now()) // the readers still waiting return
	for range came {
	}
	if len(got) < want {
		t.Errorf("%d of %d replies came", len(got), want)
	}
	return got
}

// oneReceiver returns the Receiver of f's one steered socket.
func oneReceiver(t *testing.T, f *Flows, batch int) *Receiver {
	t.Helper()
	rs, err := f.Receivers(batch)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 {
		t.Fatalf("%d steered sockets, want 1", len(rs))
	}
	return rs[0]
}

// checkEcho asserts each flow got its own payload back from the server.
func checkEcho(t *testing.T, got map[netip.AddrPort]Message, flows []netip.AddrPort, server netip.AddrPort) {
	t.Helper()
	if len(got) != len(flows) {
		t.Errorf("%d replies for %d flows", len(got), len(flows))
	}
	for _, fl := range flows {
		m, ok := got[fl]
		switch {
		case !ok:
			t.Errorf("flow %s: no reply", fl)
		case string(m.Buf[:m.N]) != fl.String():
			t.Errorf("flow %s: reply %q, want its own payload", fl, m.Buf[:m.N])
		case m.From != server:
			t.Errorf("flow %s: reply from %s, want %s", fl, m.From, server)
		case m.Time.IsZero() || m.Err != nil:
			t.Errorf("flow %s: receive time %v, control messages error %v", fl, m.Time, m.Err)
		}
	}
}

// refusalServer is an echo server on 127.0.0.1:0 that counts the ICMP
// errors its replies draw (IP_RECVERR): a reply to a flow no socket takes
// draws a port unreachable, which comes back to it, and to no other
// socket, so the count is this test's whatever other tests send.
type refusalServer struct {
	addr netip.AddrPort
	rc   syscall.RawConn
}

func newRefusalServer(t *testing.T) *refusalServer {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := sockbuf.Set(c, 8<<20); err != nil {
		t.Fatal(err)
	}
	if err := setsockopts(c, [][3]int{{unix.IPPROTO_IP, unix.IP_RECVERR, 1}}); err != nil {
		t.Fatal(err)
	}
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			switch {
			case errors.Is(err, syscall.ECONNREFUSED):
				continue // an error queued: refusals counts it
			case err != nil:
				return
			}
			c.WriteToUDPAddrPort(buf[:n], from)
		}
	}()
	return &refusalServer{addr: c.LocalAddr().(*net.UDPAddr).AddrPort(), rc: rc}
}

// refusals takes the errors queued since the last call, counting them.
func (s *refusalServer) refusals(t *testing.T) int {
	t.Helper()
	n := 0
	if err := s.rc.Control(func(fd uintptr) {
		buf := make([]byte, 2048)
		for range 100000 {
			if _, _, _, _, err := unix.Recvmsg(int(fd), buf, nil, unix.MSG_ERRQUEUE|unix.MSG_DONTWAIT); err != nil {
				return
			}
			n++
		}
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestEchoThousandFlows: 1,000 flows, 100 addresses x 10 ports, each send
// one datagram to an echo server; every reply comes back to its flow and
// none draws an ICMP port unreachable. A datagram sent first from an
// address outside the range, whose reply no socket takes, proves that one
// would be seen.
func TestEchoThousandFlows(t *testing.T) {
	needPrivileges(t)
	cfg := Config{Addrs: netip.MustParsePrefix("127.200.0.0/16"), Ports: netrange.PortRange{First: 20000, Last: 20999}}
	f := openFlows(t, cfg)
	server := newRefusalServer(t)
	outside := netip.MustParseAddrPort("127.201.0.1:20000")
	if _, err := newSender(t, 1).Send([]Datagram{{Src: outside, Dst: server.addr, Payload: []byte("no socket")}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for n := 0; n == 0; n = server.refusals(t) {
		if time.Now().After(deadline) {
			t.Fatal("a reply to an address outside the range drew no ICMP error: the count sees nothing")
		}
		time.Sleep(time.Millisecond)
	}
	flows := flowAddrs(cfg, 1000, 10)
	got := echoRound(t, f, flows, server.addr)
	checkEcho(t, got, flows, server.addr)
	if n := server.refusals(t); n != 0 {
		t.Errorf("%d replies drew an ICMP port unreachable: they went to no socket", n)
	}
}
