package levserver

import (
	"net/netip"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/leviathan/levconn"
	lv "github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
)

// FuzzHandle feeds arbitrary datagrams to the endpoint's handler, from a
// new address and from an authenticated connection: no panic, and the
// connection table and player count stay within their bounds.
func FuzzHandle(f *testing.F) {
	c, _ := levconn.New(levconn.Config{}, time.Now())
	c.SendRequest(time.Now(), levconn.Critical, lv.ReqConnect, lv.Connect{CheckValue: 42}.Append(nil))
	f.Add(append([]byte(nil), c.Poll(time.Now())...))
	f.Add(append(lv.AppendRequestHeader(lv.AppendNormalHeader(nil, 1001, 0, nil, 1), 1, lv.ReqJoinServer), 0xff, 0xff, 0xff, 0xff))
	f.Add([]byte{0x4c, 0x61, 1, 0, 0, 3, 0xe9})
	f.Add(lv.AppendRequestHeader(lv.AppendNormalHeader(nil, 1002, 1001, []byte{1}, 1), 2, lv.ReqServerstatus))
	s := start(f, func(c *Config) { c.MaxConns = 4; c.MaxPlayers = 2 })
	known := netip.MustParseAddrPort("127.0.0.1:1")
	// Authenticate "known" through the handler itself.
	cc, _ := levconn.New(levconn.Config{}, time.Now())
	now := time.Now()
	cc.SendRequest(now, levconn.Critical, lv.ReqConnect, lv.Connect{CheckValue: 42}.Append(nil))
	cc.SendRequest(now, levconn.Critical, lv.ReqSecurity, lv.SecurityRequest{SecureType: 1}.Append(nil))
	cc.SendRequest(now, levconn.Critical, lv.ReqAuthenticate, lv.AuthenticateRequest{}.Append(nil))
	s.mu.Lock()
	for b := cc.Poll(now); b != nil; b = cc.Poll(now) {
		s.handle(now, known, netip.Addr{}, b)
	}
	s.mu.Unlock()
	f.Fuzz(func(t *testing.T, b []byte) {
		s.mu.Lock()
		defer s.mu.Unlock()
		now := time.Now()
		s.handle(now, netip.MustParseAddrPort("127.0.0.1:2"), netip.Addr{}, b)
		if p := s.peers[known]; p != nil {
			s.handle(now, known, netip.Addr{}, b)
		}
		if len(s.peers) > 4 || s.players > 2 || s.players < 0 {
			t.Fatalf("bounds: %d peers %d players", len(s.peers), s.players)
		}
	})
}
