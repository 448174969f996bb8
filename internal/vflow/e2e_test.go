//go:build linux

package vflow

import (
	"bufio"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

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

// receiveAll receives until want datagrams came or 10 s passed with none;
// the caller judges what came.
func receiveAll(t *testing.T, f *Flows, want int) map[netip.AddrPort]Message {
	t.Helper()
	r, err := f.Receiver(32)
	if err != nil {
		t.Fatal(err)
	}
	ms := make([]Message, 32)
	got := map[netip.AddrPort]Message{}
	for i := 0; len(got) < want && i < 10*want; i++ {
		for j := range ms {
			ms[j] = Message{Buf: make([]byte, 2048)}
		}
		f.SetDeadline(time.Now().Add(10 * time.Second))
		n, err := r.Receive(ms)
		if err != nil {
			t.Errorf("after %d of %d replies: %v", len(got), want, err)
			break
		}
		for _, m := range ms[:n] {
			if _, dup := got[m.Flow]; dup {
				t.Errorf("second reply for flow %s", m.Flow)
			}
			got[m.Flow] = m
		}
	}
	return got
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

// snmp reads a counter of /proc/net/snmp ("Udp", "NoPorts").
func snmp(t *testing.T, proto, name string) int64 {
	t.Helper()
	f, err := os.Open("/proc/net/snmp")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != proto+":" {
			continue
		}
		if names == nil {
			names = fields
			continue
		}
		for i, n := range names {
			if n == name && i < len(fields) {
				v, err := strconv.ParseInt(fields[i], 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
		}
	}
	t.Fatalf("/proc/net/snmp has no %s %s", proto, name)
	return 0
}

// TestEchoThousandFlows: 1,000 flows, 100 addresses x 10 ports, each send
// one datagram to a plain echo server; every reply comes back to its flow
// and none draws an ICMP port unreachable.
func TestEchoThousandFlows(t *testing.T) {
	needPrivileges(t)
	cfg := Config{Addrs: netip.MustParsePrefix("127.200.0.0/16"), Ports: netrange.PortRange{First: 20000, Last: 20999}}
	f := openFlows(t, cfg)
	server := echoServer(t)
	flows := flowAddrs(cfg, 1000, 10)
	noPorts, unreach := snmp(t, "Udp", "NoPorts"), snmp(t, "Icmp", "OutDestUnreachs")
	got := echoRound(t, f, flows, server)
	checkEcho(t, got, flows, server)
	if d := snmp(t, "Udp", "NoPorts") - noPorts; d >= 10 {
		t.Errorf("Udp NoPorts grew by %d during the round: replies went to no socket", d)
	}
	if d := snmp(t, "Icmp", "OutDestUnreachs") - unreach; d >= 10 {
		t.Errorf("Icmp OutDestUnreachs grew by %d during the round", d)
	}
}
