package conformance

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/target"
)

// TestSendRefusesRedirect: a case's socket sends only where Env.Follow
// allows, whatever the case asks: to a loopback address beside a loopback
// target (the same machine), never to another host (nothing written,
// nothing logged).
func TestSendRefusesRedirect(t *testing.T) {
	peer, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	tgt := netip.MustParseAddrPort("127.0.0.2:9") // the target; the peer stands for an instance beside it
	pool, err := NewSourcePool([]netip.Addr{netip.MustParseAddr("127.0.0.1")}, DefaultSourceRate, DefaultSourceBurst)
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{Target: tgt.String(), Addr: tgt, Protocol: protoUDP, Timeout: time.Second, Sources: pool}
	ct := NewT(context.Background(), env, &Case{ID: "x/1/1"})
	s, err := ct.OpenUDP()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	victim := netip.MustParseAddrPort("192.0.2.1:7778")
	var re *target.RedirectError
	if err := s.Send(victim, []byte("hello"), "to another host"); !errors.As(err, &re) || re.Dst != victim {
		t.Fatalf("Send to %v = %v, want a RedirectError naming it", victim, err)
	}
	if got, _ := ct.wire.snapshot(); len(got) != 0 {
		t.Fatalf("the refused send was logged: %+v", got)
	}
	beside := peer.LocalAddr().(*net.UDPAddr).AddrPort()
	if err := s.Send(beside, []byte("hello"), "beside the target"); err != nil {
		t.Fatalf("Send to %v (loopback, as the target) = %v", beside, err)
	}
	peer.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 16)
	if n, _, err := peer.ReadFromUDPAddrPort(buf); err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("the loopback peer read %q, %v", buf[:n], err)
	}
}
