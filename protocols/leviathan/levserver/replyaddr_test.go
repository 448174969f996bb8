package levserver

import (
	"net/netip"
	"testing"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
)

// TestWildcardRepliesFromDestination: an endpoint bound to 0.0.0.0 and
// reached at 127.0.0.2 answers from 127.0.0.2. levconn's client socket is
// connected to 127.0.0.2, so the kernel drops a reply from any other source
// (127.0.0.1 is the route's default) and the handshake never completes: the
// failure pods saw against a wildcard server on a multi-homed node.
func TestWildcardRepliesFromDestination(t *testing.T) {
	s := start(t, func(c *Config) { c.Addr = "0.0.0.0:0" })
	to := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.2"), s.Addr().Port())
	d, err := levconn.Dial(to, levconn.DriverOptions{Config: fast})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	c := &client{t, d}
	c.handshake()
	if allow, deny := c.joinServer(); deny != nil || allow == nil {
		t.Fatalf("JoinServer through 127.0.0.2: allow %+v deny %+v", allow, deny)
	}
}
