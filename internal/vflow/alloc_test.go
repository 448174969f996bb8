//go:build linux

package vflow

import (
	"net/netip"
	"testing"
	"time"
	"unsafe"

	"github.com/lobbybench/lobbybench/internal/netrange"
	"github.com/lobbybench/lobbybench/internal/testkit/memfig"
)

var allocRange = Config{Addrs: netip.MustParsePrefix("127.211.0.0/24"), Ports: netrange.PortRange{First: 28000, Last: 28099}, Sockets: 1}

// batchOf returns 64 datagrams from 64 flows of allocRange to to.
func batchOf(to netip.AddrPort) []Datagram {
	flows := flowAddrs(allocRange, 64, 8)
	ds := make([]Datagram, len(flows))
	for i, fl := range flows {
		ds[i] = Datagram{Src: fl, Dst: to, Payload: []byte("payload of a flow")}
	}
	return ds
}

// TestSteadyStateAllocatesNothing: a Send of a batch, and a Receive of
// what it brings back, allocate nothing.
func TestSteadyStateAllocatesNothing(t *testing.T) {
	needPrivileges(t)
	f := openFlows(t, allocRange)
	s := newSender(t, 16) // smaller than the batch: Send loops
	r := oneReceiver(t, f, 64)
	// to a flow of the range itself: the datagrams come back to r
	ds := batchOf(netip.AddrPortFrom(allocRange.Addrs.Addr().Next(), allocRange.Ports.First+1))
	ms := make([]Message, 64)
	for i := range ms {
		ms[i].Buf = make([]byte, 512)
	}
	f.SetDeadline(time.Now().Add(time.Minute))
	var got int
	var rerr error
	sends := memfig.Allocs(20, func() {
		if _, err := s.Send(ds); err != nil {
			t.Fatal(err)
		}
	})
	recvs := memfig.Allocs(20, func() {
		var n int
		n, rerr = r.Receive(ms)
		got += n
	})
	if rerr != nil {
		t.Fatal(rerr)
	}
	if sends != 0 || recvs != 0 {
		t.Errorf("allocations per call: Send %v, Receive %v; want 0", sends, recvs)
	}
	if got == 0 || ms[0].Flow.Addr() != allocRange.Addrs.Addr().Next() || ms[0].Time.IsZero() {
		t.Errorf("received %d, first %+v: the loop measured no real receive", got, ms[0])
	}
}

// BenchmarkSend sends batches of 64 datagrams from 64 flows (run with
// -benchmem: 0 allocs/op).
func BenchmarkSend(b *testing.B) {
	if err := Available(); err != nil {
		b.Skip(err)
	}
	openFlows(b, allocRange)
	s := newSender(b, 64)
	// to a flow of the range: steered to f's socket, which drops what its
	// buffer cannot hold; no port unreachable
	ds := batchOf(netip.AddrPortFrom(allocRange.Addrs.Addr().Next(), allocRange.Ports.First+1))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Send(ds); err != nil {
			b.Fatal(err)
		}
	}
}

// TestConnReadAllocatesOnlyTheCopy: a datagram queued for a flow and read
// costs one allocation, its payload's copy; the queue's array is reused
// (taking the head off a queue of one made the next datagram allocate
// another).
func TestConnReadAllocatesOnlyTheCopy(t *testing.T) {
	c := newConn(nil, 0, netip.MustParseAddrPort("127.211.1.1:28000"))
	m := &Message{Buf: []byte("a pong"), N: 6, From: netip.MustParseAddrPort("127.0.0.1:7777")}
	b := make([]byte, 64)
	var n int
	var err error
	allocs := memfig.Allocs(100, func() {
		if !c.push(m) {
			t.Fatal("push refused")
		}
		n, _, _, _, err = c.ReadMsgUDPAddrPort(b, nil)
	})
	if err != nil || string(b[:n]) != "a pong" {
		t.Fatalf("read %q, %v", b[:n], err)
	}
	if allocs > 1 {
		t.Errorf("%v allocations per datagram pushed and read, want 1 (the copy)", allocs)
	}
}

// TestConnSize: a Conn, one per virtual client, stays in the allocator's
// 112-byte size class, and a queued datagram in 48 bytes. Addresses are
// words (word4) and the read deadline an 8-byte instant; with a
// netip.AddrPort and a time.Time a Conn took the 144-byte class, and a
// datagram queued alone the 80-byte one.
func TestConnSize(t *testing.T) {
	if n := unsafe.Sizeof(Conn{}); n > 112 {
		t.Errorf("a Conn is %d bytes, over the 112-byte size class", n)
	}
	if n := unsafe.Sizeof(packet{}); n > 48 {
		t.Errorf("a queued datagram is %d bytes, over the 48-byte size class", n)
	}
}

// TestWord4: an IPv4 address:port packs into a word and back, port 0
// and the IPv4-mapped form included; an IPv6 address packs to none.
func TestWord4(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want "": none
	}{
		{"127.211.1.1:28000", "127.211.1.1:28000"},
		{"0.0.0.0:0", "0.0.0.0:0"},
		{"255.255.255.255:65535", "255.255.255.255:65535"},
		{"[::ffff:10.0.0.1]:53", "10.0.0.1:53"},
		{"[::1]:53", ""},
	} {
		w := pack4(netip.MustParseAddrPort(tc.in))
		if tc.want == "" {
			if w != 0 || w.AddrPort().IsValid() {
				t.Errorf("%s packed to %#x, %v: want none", tc.in, uint64(w), w.AddrPort())
			}
			continue
		}
		if got := w.AddrPort(); w == 0 || got != netip.MustParseAddrPort(tc.want) {
			t.Errorf("%s packed to %#x, unpacked %v: want %s", tc.in, uint64(w), got, tc.want)
		}
	}
}
