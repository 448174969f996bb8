package udp

import (
	"net/netip"
	"testing"

	"github.com/lobbybench/lobbybench/wire/udplobby"
)

// TestAmplificationBound: a source that sends LOBBY_LIST_ROOMS again and
// again (a spoofed address: the victim never answers) gets back at most
// AmplificationFactor times the bytes it sent plus the allowance's bucket,
// though each 12-byte request would draw a list of every room; a loopback
// source is exempt, and CREATE and JOIN are always answered. The clock is
// the one handleLobby is given: no time passes, nothing refills.
func TestAmplificationBound(t *testing.T) {
	const rooms, requests = 40, 200
	cfg := testConfig()
	cfg.MaxRoomsPerIP = 0
	s := start(t, cfg)
	now := s.now()
	p := s.cfg.Profile
	creator := netip.MustParseAddrPort("198.51.100.9:4000")
	for i := range rooms {
		out := s.handleLobby(udplobby.AppendCreateRoom(nil, p, uint16(i+1)), creator, now, nil)
		var m udplobby.Message
		if err := (udplobby.Decoder{Profile: p, Dir: udplobby.ServerToClient, Channel: udplobby.ChannelLobby}).Decode(out, &m); err != nil || m.Type != udplobby.LobbyRoomCreated {
			t.Fatalf("create %d: reply %x (%v), want LOBBY_ROOM_CREATED", i, out, err)
		}
	}
	listLen := len(s.handleLobby(udplobby.AppendListRooms(nil, p, 1), netip.MustParseAddrPort("127.0.0.1:9"), now, nil))
	for _, tt := range []struct {
		name    string
		from    string
		bounded bool
	}{
		{"spoofed source", "192.0.2.7:5000", true},
		{"loopback source", "127.0.0.5:5000", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			from := netip.MustParseAddrPort(tt.from)
			before := s.Stats().Drops[DropAmplification]
			var in, back int
			for i := range requests {
				req := udplobby.AppendListRooms(nil, p, uint16(i+1))
				in += len(req)
				back += len(s.handleLobby(req, from, now, nil))
			}
			held := s.Stats().Drops[DropAmplification] - before
			limit := AmplificationFactor*in + cfg.ampBurst()
			switch {
			case !tt.bounded && (back != requests*listLen || held != 0):
				t.Errorf("%d bytes back (%d held back), want every list: %d × %d", back, held, requests, listLen)
			case tt.bounded && (back > limit || held == 0):
				t.Errorf("%d bytes sent, %d back (%.1f×), %d lists held back; want at most %d (%d× + the %d-byte bucket)",
					in, back, float64(back)/float64(in), held, limit, AmplificationFactor, cfg.ampBurst())
			case tt.bounded && back < cfg.ampBurst()-listLen:
				t.Errorf("%d bytes back: the bucket (%d) was not spent", back, cfg.ampBurst())
			}
		})
	}
	// CREATE and JOIN from the spent source are still answered: each
	// request's credit covers its 18-byte reply.
	spent := netip.MustParseAddrPort("192.0.2.7:5000")
	if out := s.handleLobby(udplobby.AppendJoinRoom(nil, p, 900, 1), spent, now, nil); len(out) == 0 {
		t.Error("JOIN from the spent source not answered")
	}
}
