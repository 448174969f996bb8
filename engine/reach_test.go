package engine

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/deadport"
	"github.com/lobbybench/lobbybench/internal/testkit/faultproxy"
	"github.com/lobbybench/lobbybench/liveness"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levserver"
	"github.com/lobbybench/lobbybench/protocols/leviathan/levwire"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpclient"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
	"github.com/lobbybench/lobbybench/refserver"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/scenario"
	"github.com/lobbybench/lobbybench/simclient"
)

// profileLobby is a UDP lobby on 127.0.0.1 that answers LOBBY_LIST_ROOMS
// (JOIN_FAILED will do: the check judges no content) only in header
// profile p, and drops every other datagram, as a real server of one
// profile does. With otherPort it answers from a second socket, as
// servers in the wild do.
func profileLobby(t *testing.T, p udpwire.Profile, otherPort bool) netip.AddrPort {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	out := c
	if otherPort {
		if out, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { out.Close() })
	}
	go func() {
		buf := make([]byte, 2048)
		dec := udpwire.Decoder{Profile: p, Dir: udpwire.ClientToServer, Channel: udpwire.ChannelLobby}
		var m udpwire.Message
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if dec.Decode(buf[:n], &m) != nil || m.Type != udpwire.LobbyListRooms {
				continue
			}
			reply, _ := udpwire.AppendEmpty(nil, p, udpwire.LobbyJoinFailed, m.Seq)
			_, _ = out.WriteToUDPAddrPort(reply, from)
		}
	}()
	return c.LocalAddr().(*net.UDPAddr).AddrPort()
}

// TestReachProfilesAndProtocols: header_profile auto reaches a server of
// either header; an explicit profile the server does not speak fails with
// the profile to set; a Leviathan scenario aimed at a UDP lobby fails
// instead of running into timeouts, and reaches a Leviathan endpoint.
func TestReachProfilesAndProtocols(t *testing.T) {
	waitsInParallel(t)
	spec := profileLobby(t, udpwire.ProfileSpec, false)
	r17 := profileLobby(t, udpwire.ProfileRType17, false)
	specOther := profileLobby(t, udpwire.ProfileSpec, true)
	r17Other := profileLobby(t, udpwire.ProfileRType17, true)
	dead := deadPort(t)
	cfg, err := refserver.Loopback().Only(levwire.ProtocolName)
	if err != nil {
		t.Fatal(err)
	}
	// The Leviathan endpoint resends to probes that have gone; on an
	// address of its own, a later probe that took such a probe's port on
	// 127.0.0.1 ignores the resend (another host's datagram) instead of
	// taking it for its UDP lobby's answer from another port.
	levserver.ConfigOf(cfg).Addr = "127.0.0.9:0"
	srv, err := refserver.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() }) // after the parallel subtests
	for _, tc := range []struct {
		name    string
		proto   scenario.ProtocolName
		profile string
		addr    netip.AddrPort
		err     string // "" = reachable
		header  string // under auto, the header profile the reply was in (the plan's then)
	}{
		{"auto, rtype17 server", udpwire.ProtocolName, "auto", r17, "", "rtype17"},
		{"auto, spec server", udpwire.ProtocolName, "auto", spec, "", "spec"},
		{"spec, spec server", udpwire.ProtocolName, "spec", spec, "", ""},
		{"rtype17, rtype17 server", udpwire.ProtocolName, "rtype17", r17, "", ""},
		{"spec, rtype17 server", udpwire.ProtocolName, "spec", r17, "set header_profile: rtype17", ""},
		{"rtype17, spec server", udpwire.ProtocolName, "rtype17", spec, "set header_profile: spec", ""},
		{"leviathan at a UDP lobby", levwire.ProtocolName, "", spec, "answers the UDP lobby protocol", ""},
		{"leviathan at an rtype17 UDP lobby", levwire.ProtocolName, "", r17, "answers the UDP lobby protocol", ""},
		{"leviathan endpoint", levwire.ProtocolName, "", srv.Addr(levwire.ProtocolName), "", ""},
		// Replies from another port are replies.
		{"auto, spec server answering from another port", udpwire.ProtocolName, "auto", specOther, "", "spec"},
		{"spec, rtype17 server answering from another port", udpwire.ProtocolName, "spec", r17Other, "set header_profile: rtype17", ""},
		{"leviathan endpoint answering from another port", levwire.ProtocolName, "", otherPortProxy(t, srv.Addr(levwire.ProtocolName)), "answers a Leviathan Connect from another port", ""},
		// Nothing listens: ICMP port unreachable, told at once.
		{"udp-lobby, nothing listening", udpwire.ProtocolName, "auto", dead, "connection refused", ""},
		{"leviathan, nothing listening", levwire.ProtocolName, "", dead, "connection refused", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			waitsInParallel(t)
			p, _ := simclient.Describe(string(tc.proto))
			var opts scenario.Options
			if tc.profile != "" {
				opts = udpclient.Options{HeaderProfile: tc.profile}
			}
			settled, err := reach(context.Background(), p, opts, tc.addr, 2*time.Second)
			header := ""
			if settled != nil {
				header = settled.(udpclient.Options).HeaderProfile
			}
			if tc.err == "" {
				if err != nil || header != tc.header {
					t.Errorf("reach = %q, %v; want reachable, header %q", header, err, tc.header)
				}
				return
			}
			var ue *UnreachableError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("reach = %v, want unreachable with %q", err, tc.err)
			}
		})
	}
}

// deadPort is a UDP port on 127.0.0.1 whose datagrams draw ICMP port
// unreachable, held for the test (deadport.UDP).
func deadPort(t *testing.T) netip.AddrPort { return deadport.UDP(t) }

// otherPortProxy relays datagrams to target from a socket of its own, and
// target's replies back to the client from a third socket: target, seen
// through it, answers from another port than the one asked.
func otherPortProxy(t *testing.T, target netip.AddrPort) netip.AddrPort {
	t.Helper()
	var socks [3]*net.UDPConn // in, to the target, back out
	for i := range socks {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		socks[i] = c
	}
	in, up, back := socks[0], socks[1], socks[2]
	var client atomic.Pointer[netip.AddrPort]
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, from, err := in.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			client.Store(&from)
			_, _ = up.WriteToUDPAddrPort(buf[:n], target)
		}
	}()
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, _, err := up.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if c := client.Load(); c != nil {
				_, _ = back.WriteToUDPAddrPort(buf[:n], *c)
			}
		}
	}()
	return in.LocalAddr().(*net.UDPAddr).AddrPort()
}

// TestReachLeviathanSilence: a Leviathan scenario aimed at a UDP port
// where something drops every datagram fails the reachability check (exit 3), as
// nothing answers Connect.
func TestReachLeviathanSilence(t *testing.T) {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = Reach(context.Background(), levwire.ProtocolName, nil, c.LocalAddr().(*net.UDPAddr).AddrPort(), 300*time.Millisecond)
	var ue *UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "no reply to a Leviathan Connect") {
		t.Errorf("Reach = %v, want unreachable: no reply to a Leviathan Connect", err)
	}
}

// garbageServer is a UDP server on 127.0.0.1 that answers every datagram
// with faultproxy.Junk, which decodes as no protocol.
func garbageServer(t *testing.T) netip.AddrPort {
	t.Helper()
	p, err := faultproxy.UDP(deadPort(t), faultproxy.Garble, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	p.Trip()
	return p.Addr()
}

// TestReachRandomBytes: a UDP target that answers with bytes of no
// protocol is not alive, for the reachability check and so for the
// watchdog (which probes with it): the check fails naming what came (its
// size and first bytes, never "unreachable" alone), and the watchdog
// classifies it as garbled, not silent.
func TestReachRandomBytes(t *testing.T) {
	waitsInParallel(t)
	junk := garbageServer(t)
	for _, tc := range []struct {
		name    string
		proto   scenario.ProtocolName
		profile string
	}{
		{"udp-lobby, auto", udpwire.ProtocolName, "auto"},
		{"udp-lobby, spec", udpwire.ProtocolName, "spec"},
		{"udp-lobby, rtype17", udpwire.ProtocolName, "rtype17"},
		{"leviathan", levwire.ProtocolName, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			waitsInParallel(t)
			p, _ := simclient.Describe(string(tc.proto))
			var opts scenario.Options
			if tc.profile != "" {
				opts = udpclient.Options{HeaderProfile: tc.profile}
			}
			_, err := reach(context.Background(), p, opts, junk, 300*time.Millisecond)
			var ue *UnreachableError
			if !errors.As(err, &ue) {
				t.Fatalf("reach = %v, want it to fail", err)
			}
			for _, want := range []string{"answers, but not in its protocol", "16 bytes: de ad be ef 13 37"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("reach = %v, want it to say %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "no reply") {
				t.Errorf("reach = %v: says \"no reply\" where bytes came", err)
			}
			if k := liveness.Classify(err); k != result.DownGarbled {
				t.Errorf("Classify = %q, want %q", k, result.DownGarbled)
			}
		})
	}
}
