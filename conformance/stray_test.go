package conformance

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestRecvStray: while a case waits on the target's port, a datagram from
// another port of the same host is the target's (a second socket) only
// when it could be the protocol's (Group.Plausible); one that is not is
// stray, ignored and named in the silence, not taken for a reply. The
// awaited port's datagrams are always the target's, to be judged.
func TestRecvStray(t *testing.T) {
	lobbyish := func(b []byte) bool { return bytes.HasPrefix(b, []byte("LOBBY")) }
	for _, tc := range []struct {
		name      string
		plausible func([]byte) bool
		fromPeer  bool   // sent from the awaited port, not the other one
		data      string // what is sent
		wantRecv  bool   // the datagram is returned
	}{
		{"junk from another port is stray", lobbyish, false, "\x8a\x01junk", false},
		{"the protocol's from another port is the target's", lobbyish, false, "LOBBY reply", true},
		{"junk from the awaited port is the target's", lobbyish, true, "\x8a\x01junk", true},
		{"no Plausible: every datagram is the target's", nil, false, "\x8a\x01junk", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := &Env{Timeout: time.Second, plausible: tc.plausible}
			ct := NewT(context.Background(), env, &Case{ID: "x/1/1", Level: Must})
			peer := listenLoopback(t)
			other := listenLoopback(t)
			s, err := ct.OpenUDPOn(netip.MustParseAddr("127.0.0.1"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			to := s.Conn().LocalAddr().(*net.UDPAddr).AddrPort()
			from := peer.LocalAddr().(*net.UDPAddr).AddrPort()
			sender := other
			if tc.fromPeer {
				sender = peer
			}
			if _, err := sender.WriteToUDPAddrPort([]byte(tc.data), to); err != nil {
				t.Fatal(err)
			}
			b, err := s.Recv(from, 200*time.Millisecond)
			if tc.wantRecv {
				if err != nil || string(b) != tc.data {
					t.Fatalf("Recv = %q, %v; want %q", b, err, tc.data)
				}
				return
			}
			if !errors.Is(err, ErrSilence) {
				t.Fatalf("Recv = %q, %v; want silence", b, err)
			}
			if d := SilenceDetail(err); !strings.Contains(d, "not the protocol's") {
				t.Errorf("silence detail %q does not name the stray datagram", d)
			}
		})
	}
}

// TestProtocolsPlausible: every UDP protocol tells its datagrams from
// another program's (Group.Plausible), so a stray datagram on a case's
// port is never judged as the target's. That a faulty reply of the
// protocol from another port is still judged is the fault rows' work
// (udp-lobby/3/4's server answering through a second socket).
func TestProtocolsPlausible(t *testing.T) {
	junk := []byte{0x8a, 0x01, 0x6a, 0x75, 0x6e, 0x6b, 0x21, 0x21}
	for _, name := range []string{protoUDP, protoLeviathan} {
		g, ok := lookupGroup(name)
		if !ok {
			t.Fatalf("%s is not registered", name)
		}
		if g.Plausible == nil {
			t.Errorf("%s: no Plausible: another program's datagram would be judged as the target's", name)
			continue
		}
		if g.Plausible(junk) {
			t.Errorf("%s: Plausible(% x) = true, want false", name, junk)
		}
	}
}
