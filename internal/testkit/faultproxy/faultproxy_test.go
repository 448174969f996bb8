package faultproxy

import (
	"encoding/binary"
	"net"
	"testing"
)

// TestRecordedSettles: what a client sent before Recorded is in it, though
// the proxy may not have read it yet when Recorded is called (a bundled
// flow's last datagram, sent just before its session ended, was once
// missing), and the proxy's own mark is neither recorded nor forwarded.
func TestRecordedSettles(t *testing.T) {
	sink, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	p := Relay(t, "udp", sink.LocalAddr().(*net.UDPAddr).AddrPort(), Options{Record: true})
	c, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(p.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 100 // a burst the default receive buffer holds
	for round := range 5 {
		for i := range n {
			if _, err := c.Write(binary.BigEndian.AppendUint32(nil, uint32(round*n+i))); err != nil {
				t.Fatal(err)
			}
		}
		got := p.Sent()
		if len(got) != (round+1)*n {
			t.Fatalf("round %d: %d datagrams recorded, want the %d sent", round, len(got), (round+1)*n)
		}
		for i, b := range got {
			if len(b) != 4 || binary.BigEndian.Uint32(b) != uint32(i) {
				t.Fatalf("datagram %d recorded as % x, want its number %d", i, b, i)
			}
		}
	}
	p.Close()
	if got := p.Sent(); len(got) != 5*n {
		t.Errorf("after Close: %d datagrams, want %d", len(got), 5*n)
	}
}
