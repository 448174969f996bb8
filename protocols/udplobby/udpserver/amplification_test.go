package udpserver

import (
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
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
		out := s.handleLobby(udpwire.AppendCreateRoom(nil, p, uint16(i+1)), creator, now, nil)
		var m udpwire.Message
		if err := (udpwire.Decoder{Profile: p, Dir: udpwire.ServerToClient, Channel: udpwire.ChannelLobby}).Decode(out, &m); err != nil || m.Type != udpwire.LobbyRoomCreated {
			t.Fatalf("create %d: reply %x (%v), want LOBBY_ROOM_CREATED", i, out, err)
		}
	}
	listLen := len(s.handleLobby(udpwire.AppendListRooms(nil, p, 1), netip.MustParseAddrPort("127.0.0.1:9"), now, nil))
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
				req := udpwire.AppendListRooms(nil, p, uint16(i+1))
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
	if out := s.handleLobby(udpwire.AppendJoinRoom(nil, p, 900, 1), spent, now, nil); len(out) == 0 {
		t.Error("JOIN from the spent source not answered")
	}
}

// sent is what a server handed to each destination IP, by sinkSends.
type sent struct {
	mu    sync.Mutex
	bytes map[netip.Addr]int
	types map[netip.Addr][]udpwire.MsgType
}

// sinkSends makes s hand every datagram to a sent table instead of its
// sockets, so sources that are not loopback addresses can be played without
// sending anything off the machine. Call it before any traffic.
func sinkSends(s *Server) *sent {
	st := &sent{bytes: map[netip.Addr]int{}, types: map[netip.Addr][]udpwire.MsgType{}}
	s.sink = func(b []byte, ep netip.AddrPort) {
		st.mu.Lock()
		defer st.mu.Unlock()
		ip := ep.Addr().Unmap()
		st.bytes[ip] += len(b)
		st.types[ip] = append(st.types[ip], udpwire.MsgType(b[s.typeOff]))
	}
	return st
}

func (st *sent) to(ip netip.Addr) (int, []udpwire.MsgType) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.bytes[ip], slices.Clone(st.types[ip])
}

// TestInstanceAmplificationBound: the game instances spend from the same
// per-IP budget as the lobby. A spoofed source that fills room after room
// with JOIN_REQUEST and READY from its ports (each endpoint then draws
// JOIN_ACCEPT, ALL_READY, three ticks, GAME_START and GAME_END) gets back
// at most AmplificationFactor times what it sent plus the bucket, the rest
// counted as amplification drops; a loopback source is not bounded; and a
// legitimate client on a source that is not loopback still gets its whole
// game, lobby reply included, out of the smallest bucket (an allowance of
// 1 byte a second, so the bucket is one list of MaxInstances rooms). The
// clock is fixed and the timers are played by hand: nothing refills.
func TestInstanceAmplificationBound(t *testing.T) {
	const rooms = 6
	cfg := testConfig()
	cfg.MaxInstances = 8
	cfg.MaxRoomsPerIP = 0
	cfg.AmplifyAllowance = 1
	cfg.CountdownInterval = time.Hour // the test plays the timers
	cfg.GameLength = time.Hour
	p := cfg.Profile
	instanceMsg := func(typ udpwire.MsgType) []byte {
		b, err := udpwire.Append(nil, p, &udpwire.Message{Header: udpwire.Header{Type: typ, Seq: 1}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// play fills a new room with one endpoint per port of ip, each sending
	// JOIN_REQUEST then READY, and runs its countdown and game to GAME_END;
	// it returns the bytes ip sent.
	play := func(t *testing.T, s *Server, now int64, ip netip.Addr, ports int) (in int) {
		t.Helper()
		room, reason := s.newInstance(netip.Addr{}, 0, now)
		if room == nil {
			t.Fatalf("no instance: %s", reason)
		}
		var m udpwire.Message
		for _, typ := range []udpwire.MsgType{udpwire.ClientJoinRequest, udpwire.ClientReady} {
			for port := range ports {
				pkt := instanceMsg(typ)
				in += len(pkt)
				out, _ := room.receive(pkt, netip.AddrPortFrom(ip, uint16(5000+port)), netip.Addr{}, now, &m, nil)
				if len(out) > 0 {
					s.send(room.conn, out, netip.AddrPortFrom(ip, uint16(5000+port)), netip.Addr{})
				}
			}
		}
		for range countdownFrom + 1 { // TICK 2, TICK 1, GAME_START, GAME_END
			s.mu.Lock()
			room.advance(room.gen, now)
			s.mu.Unlock()
		}
		return in
	}

	for _, tt := range []struct {
		name    string
		ip      string
		bounded bool
	}{
		{"spoofed source", "192.0.2.7", true},
		{"loopback source", "127.0.0.5", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t, cfg)
			got := sinkSends(s)
			now := s.now()
			ip := netip.MustParseAddr(tt.ip)
			var in int
			for range rooms {
				in += play(t, s, now, ip, cfg.MaxPlayers)
			}
			back, _ := got.to(ip)
			held := s.Stats().Drops[DropAmplification]
			limit := AmplificationFactor*in + cfg.ampBurst()
			switch {
			case tt.bounded && (back > limit || held == 0):
				t.Errorf("%d bytes sent to instances, %d back (%.1f×), %d datagrams held back; want at most %d (%d× + the %d-byte bucket)",
					in, back, float64(back)/float64(in), held, limit, AmplificationFactor, cfg.ampBurst())
			case !tt.bounded && (back <= limit || held != 0):
				t.Errorf("%d bytes back (%d held back), want everything: more than %d, none held", back, held, limit)
			}
		})
	}

	t.Run("legitimate client", func(t *testing.T) {
		s := start(t, cfg)
		got := sinkSends(s)
		now := s.now()
		from := netip.MustParseAddrPort("198.51.100.20:4000")
		if out := s.handleLobby(udpwire.AppendCreateRoom(nil, p, 1), from, now, nil); len(out) == 0 {
			t.Fatal("CREATE not answered")
		} else {
			s.send(s.conn, out, from, netip.Addr{})
		}
		play(t, s, now, from.Addr(), 1)
		want := []udpwire.MsgType{udpwire.LobbyRoomCreated, udpwire.ServerJoinAccept, udpwire.ServerAllReady,
			udpwire.ServerCountdownTick, udpwire.ServerCountdownTick, udpwire.ServerCountdownTick,
			udpwire.ServerGameStart, udpwire.ServerGameEnd}
		if _, types := got.to(from.Addr()); !slices.Equal(types, want) {
			t.Errorf("delivered %v, want %v", types, want)
		}
		if held := s.Stats().Drops[DropAmplification]; held != 0 {
			t.Errorf("%d datagrams held back", held)
		}
	})
}
