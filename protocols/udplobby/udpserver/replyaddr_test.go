package udpserver

import (
	"net/netip"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// TestWildcardRepliesFromDestination: a server bound to 0.0.0.0, reached at
// 127.0.0.2 while the host's other address is 127.0.0.1, answers the lobby
// and the instance from 127.0.0.2, broadcasts included. Before, the kernel
// picked 127.0.0.1 as the source, which a connected client (a pod behind a
// Service, a NAT) drops: the server looked unreachable.
func TestWildcardRepliesFromDestination(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Addr = "0.0.0.0:0"
	cfg.CountdownInterval = time.Hour // ALL_READY is broadcast at once; no tick follows
	s := start(t, cfg)
	dst := netip.MustParseAddr("127.0.0.2")
	lob := dial(t, netip.AddrPortFrom(dst, s.Addr().Port()), cfg.Profile)
	id, port := lob.create()
	if want := netip.AddrPortFrom(dst, s.Addr().Port()); lob.from != want {
		t.Fatalf("lobby reply from %v, want %v", lob.from, want)
	}
	if lob.join(id) != port {
		t.Fatal("join failed")
	}
	inst := netip.AddrPortFrom(dst, port)
	a := dial(t, inst, cfg.Profile)
	b := dialFrom(t, "127.0.0.3", netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port), cfg.Profile)
	a.expect(udpwire.ServerJoinAccept, a.inst(udpwire.ClientJoinRequest, 0))
	if a.from != inst {
		t.Fatalf("instance reply from %v, want %v", a.from, inst)
	}
	b.expect(udpwire.ServerJoinAccept, b.inst(udpwire.ClientJoinRequest, 0))
	a.inst(udpwire.ClientReady, 0)
	b.inst(udpwire.ClientReady, 0)
	// b's READY triggers ALL_READY to both: each leaves from the address
	// its player wrote to, not the one the triggering datagram came in on.
	for _, c := range []*client{a, b} {
		if m := c.reply(); m.Type != udpwire.ServerAllReady {
			t.Fatalf("got %v, want ALL_READY", m.Type)
		}
		if c.from != c.to {
			t.Errorf("ALL_READY to a player that writes to %v came from %v", c.to, c.from)
		}
	}
}
