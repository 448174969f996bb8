package levserver

import (
	"net/netip"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// firstConnect is a new client's first datagram: a Critical Connect.
func firstConnect(t *testing.T) []byte {
	c, err := levconn.New(levconn.Config{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendRequest(time.Now(), levconn.Critical, lv.ReqConnect, lv.Connect{CheckValue: 42}.Append(nil)); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), c.Poll(time.Now())...)
}

// TestConnsPerIP: one address opening connections from many ports gets
// MaxConnsPerIP of them, the rest are dropped (counted); another address
// still connects; a closed connection gives its quota back.
func TestConnsPerIP(t *testing.T) {
	s := start(t, func(c *Config) { c.MaxConnsPerIP = 3 })
	connect := firstConnect(t)
	a := func(port uint16) netip.AddrPort {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), port)
	}
	now := time.Now()
	s.mu.Lock()
	for port := range uint16(6) {
		s.handle(now, a(40000+port), netip.Addr{}, connect)
	}
	s.handle(now, netip.MustParseAddrPort("127.0.0.2:40000"), netip.Addr{}, connect)
	s.mu.Unlock()
	st := s.Stats()
	if st.ConnsActive != 4 || st.Drops["conns-per-ip"] != 3 || st.ConnIPs != 2 {
		t.Fatalf("conns %d (want 4), conns-per-ip drops %d (want 3), source ips %d (want 2)",
			st.ConnsActive, st.Drops["conns-per-ip"], st.ConnIPs)
	}
	s.mu.Lock()
	s.dropPeer(s.peers[a(40000)], closeByPeer)
	s.handle(now, a(40010), netip.Addr{}, connect)
	_, admitted := s.peers[a(40010)]
	s.mu.Unlock()
	if !admitted {
		t.Fatal("quota not given back when a connection closed")
	}
	s.Close()
	if st := s.Stats(); st.ConnsActive != 0 || st.ConnIPs != 0 {
		t.Fatalf("after close: conns %d, source ips %d", st.ConnsActive, st.ConnIPs)
	}
}
