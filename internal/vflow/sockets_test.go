//go:build linux

package vflow

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/netrange"
)

// socketOf is the steered socket the program gives flow fl of a range with
// n sockets: (address + port) mod n.
func socketOf(fl netip.AddrPort, n int) int {
	a := fl.Addr().As4()
	return int((binary.BigEndian.Uint32(a[:]) + uint32(fl.Port())) % uint32(n))
}

// TestSocketsShareFlows: with three steered sockets, every flow's replies
// come to the one its address and port name, flows given out in order take
// the sockets in turn, and a flow's second reply comes where its first did.
func TestSocketsShareFlows(t *testing.T) {
	needPrivileges(t)
	const n = 3
	cfg := Config{Addrs: netip.MustParsePrefix("127.209.0.0/24"), Ports: netrange.PortRange{First: 26000, Last: 26099}, Sockets: n}
	f := openFlows(t, cfg)
	rs, err := f.Receivers(8)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != n {
		t.Fatalf("%d receivers, want %d", len(rs), n)
	}
	server := echoServer(t)
	flows := flowAddrs(cfg, 30, 2) // 15 addresses, two ports each
	want := make([]int, n)
	for _, fl := range flows {
		want[socketOf(fl, n)]++
	}
	for k := range n {
		if want[k] != len(flows)/n {
			t.Fatalf("socket %d takes %d of %d flows, want a third: the flows do not take the sockets in turn", k, want[k], len(flows))
		}
	}
	s := newSender(t, 64)
	for round := range 2 {
		ds := make([]Datagram, len(flows))
		for i, fl := range flows {
			ds[i] = Datagram{Src: fl, Dst: server, Payload: []byte(fl.String())}
		}
		if sent, err := s.Send(ds); err != nil || sent != len(ds) {
			t.Fatalf("round %d: sent %d of %d: %v", round, sent, len(ds), err)
		}
		f.SetDeadline(time.Now().Add(10 * time.Second))
		for k, r := range rs {
			ms := make([]Message, 8)
			for got := 0; got < want[k]; {
				for j := range ms {
					ms[j] = Message{Buf: make([]byte, 512)}
				}
				m, err := r.Receive(ms)
				if err != nil {
					t.Fatalf("round %d: socket %d after %d of its %d replies: %v", round, k, got, want[k], err)
				}
				for _, msg := range ms[:m] {
					if socketOf(msg.Flow, n) != k || string(msg.Buf[:msg.N]) != msg.Flow.String() {
						t.Errorf("round %d: socket %d got %q for flow %s, whose socket is %d", round, k, msg.Buf[:msg.N], msg.Flow, socketOf(msg.Flow, n))
					}
				}
				got += m
			}
		}
	}
}
