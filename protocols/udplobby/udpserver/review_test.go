package udpserver

import (
	"bytes"
	"net/netip"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/memfig"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// advance fires the instance's pending countdown or game timer now, as if
// its interval had passed: the test drives time, so nothing races a clock.
func advance(t *testing.T, s *Server, roomID uint32) {
	t.Helper()
	s.mu.Lock()
	in := s.rooms[roomID]
	gen := in.gen
	s.mu.Unlock()
	in.onTimer(gen)
}

// TestReadyResendsState: server-initiated messages are sent once, so a
// player who lost one and sends CLIENT_READY again gets the last state
// message again, byte for byte (same sequence). In Waiting a repeated READY
// gets nothing (nothing to resend), and a non-player's READY is dropped.
func TestReadyResendsState(t *testing.T) {
	cfg := testConfig()
	cfg.CountdownInterval = time.Hour // advance() plays the timer
	cfg.GameLength = time.Hour
	s := start(t, cfg)
	lob := dial(t, s.Addr(), cfg.Profile)
	id, port := lob.create()
	a := dial(t, at(port), cfg.Profile)
	b := dial(t, at(port), cfg.Profile)
	a.expect(udpwire.ServerJoinAccept, a.inst(udpwire.ClientJoinRequest, 0))
	b.expect(udpwire.ServerJoinAccept, b.inst(udpwire.ClientJoinRequest, 0))
	a.inst(udpwire.ClientReady, 0)
	a.inst(udpwire.ClientReady, 0) // duplicate while Waiting: nothing to resend
	a.expectNone(50 * time.Millisecond)

	b.inst(udpwire.ClientReady, 0)
	var tick3 []byte
	for _, c := range []*client{a, b} {
		if raw, _ := c.recv(wait); len(raw) == 0 || raw[1] != byte(udpwire.ServerAllReady) {
			t.Fatalf("want ALL_READY, got % x", raw)
		}
		tick3, _ = c.recv(wait)
	}
	// b lost TICK 3 and asks again: the very same datagram.
	b.inst(udpwire.ClientReady, 0)
	if got, _ := b.recv(wait); !bytes.Equal(got, tick3) {
		t.Fatalf("resent % x, want TICK 3 % x", got, tick3)
	}
	a.expectNone(50 * time.Millisecond) // only the asker gets it

	advance(t, s, id) // TICK 2
	advance(t, s, id) // TICK 1
	advance(t, s, id) // GAME_START
	var start []byte
	for _, c := range []*client{a, b} {
		for range 2 {
			c.reply()
		}
		start, _ = c.recv(wait)
	}
	if m := decodeOK(t, start); m.Type != udpwire.ServerGameStart {
		t.Fatalf("got %v, want GAME_START", m.Type)
	}
	a.inst(udpwire.ClientReady, 0)
	if got, _ := a.recv(wait); !bytes.Equal(got, start) {
		t.Fatalf("resent % x, want GAME_START % x", got, start)
	}
	// A stranger's READY changes and reveals nothing.
	x := dial(t, at(port), cfg.Profile)
	x.inst(udpwire.ClientReady, 0)
	x.expectNone(50 * time.Millisecond)

	advance(t, s, id) // GAME_END
	var end []byte
	for _, c := range []*client{a, b} {
		end, _ = c.recv(wait)
	}
	b.inst(udpwire.ClientReady, 0)
	if got, _ := b.recv(wait); !bytes.Equal(got, end) || decodeOK(t, got).Type != udpwire.ServerGameEnd {
		t.Fatalf("resent % x, want GAME_END % x", got, end)
	}
	if st := s.Stats(); st.StateResent != 3 || st.Drops[DropNotJoined] != 1 {
		t.Fatalf("StateResent %d, not-joined drops %d; want 3 and 1", st.StateResent, st.Drops[DropNotJoined])
	}
}

// TestLateJoinerReadyGetsCountdown: a player who joins during the countdown
// and sends READY learns where the countdown is.
func TestLateJoinerReadyGetsCountdown(t *testing.T) {
	cfg := testConfig()
	cfg.CountdownInterval = time.Hour
	s := start(t, cfg)
	lob := dial(t, s.Addr(), cfg.Profile)
	id, port := lob.create()
	a := dial(t, at(port), cfg.Profile)
	a.expect(udpwire.ServerJoinAccept, a.inst(udpwire.ClientJoinRequest, 0))
	a.inst(udpwire.ClientReady, 0)
	a.reply() // ALL_READY
	a.reply() // TICK 3
	advance(t, s, id)
	tick2, _ := a.recv(wait)
	late := dial(t, at(port), cfg.Profile)
	late.expect(udpwire.ServerJoinAccept, late.inst(udpwire.ClientJoinRequest, 0))
	late.inst(udpwire.ClientReady, 0)
	if got, _ := late.recv(wait); !bytes.Equal(got, tick2) {
		t.Fatalf("late joiner got % x, want TICK 2 % x", got, tick2)
	}
}

func decodeOK(t *testing.T, raw []byte) udpwire.Message {
	t.Helper()
	var m udpwire.Message
	if err := (udpwire.Decoder{Dir: udpwire.ServerToClient}).Decode(raw, &m); err != nil {
		t.Fatalf("% x: %v", raw, err)
	}
	return m
}

// TestJoinReusedSequenceOtherRoom: the session cache replays a retry (same
// sequence, type and room) but a JOIN of another room under the same
// sequence is a new request: it must not be answered with the first room's
// JOIN_SUCCESS.
func TestJoinReusedSequenceOtherRoom(t *testing.T) {
	s := start(t, testConfig())
	c := dial(t, s.Addr(), udpwire.ProfileSpec)
	id1, port1 := c.create()
	id2, port2 := c.create()
	c.send(udpwire.AppendJoinRoom(nil, c.p, 500, id1))
	if m := c.expect(udpwire.LobbyJoinSuccess, 500); m.RoomID != id1 || m.Port != port1 {
		t.Fatalf("join 1: %+v", m)
	}
	c.send(udpwire.AppendJoinRoom(nil, c.p, 500, id2))
	if m := c.expect(udpwire.LobbyJoinSuccess, 500); m.RoomID != id2 || m.Port != port2 {
		t.Fatalf("JOIN room %d under a reused sequence answered room %d port %d", id2, m.RoomID, m.Port)
	}
	if st := s.Stats(); st.Replayed != 0 || st.HeldSeats != 2 {
		t.Fatalf("replayed %d held %d, want 0 and 2", st.Replayed, st.HeldSeats)
	}
}

// TestDropPathAllocs pins that a malformed datagram costs no allocation,
// on the lobby and on an instance, whatever rule it breaks, and that LIST
// and JOIN do not allocate either.
func TestDropPathAllocs(t *testing.T) {
	s := start(t, testConfig())
	in, _ := s.newInstance(netip.Addr{}, 0, s.now())
	p := s.cfg.Profile
	good := udpwire.AppendListRooms(nil, p, 1)
	badCRC := bytes.Clone(good)
	badCRC[len(badCRC)-1] ^= 1
	bad := map[string][]byte{
		"short":     good[:3],
		"crc":       badCRC,
		"length":    append(bytes.Clone(good), 0),
		"direction": udpwire.AppendJoinFailed(nil, p, 1),
		"unknown":   udpwire.AppendRaw(nil, p, udpwire.Header{PacketType: udpwire.ClientToServer, Type: 0x99}, nil),
	}
	from := at(9)
	out := make([]byte, 0, 2048)
	var m udpwire.Message
	for name, pkt := range bad {
		if n := memfig.Allocs(200, func() { out = s.handleLobby(pkt, from, s.now(), out[:0]) }); n != 0 {
			t.Errorf("lobby drop %s: %v allocs", name, n)
		}
		if n := memfig.Allocs(200, func() { out, _ = in.receive(pkt, from, netip.Addr{}, s.now(), &m, out[:0]) }); n != 0 {
			t.Errorf("instance drop %s: %v allocs", name, n)
		}
	}
	for name, pkt := range map[string][]byte{"list": good, "join": udpwire.AppendJoinRoom(nil, p, 2, 77)} {
		if n := memfig.Allocs(200, func() { out = s.handleLobby(pkt, from, s.now(), out[:0]) }); n != 0 {
			t.Errorf("lobby %s: %v allocs", name, n)
		}
	}
	ping := udpwire.AppendPing(nil, p, 3, 4)
	local := netip.MustParseAddr("127.0.0.2") // a wildcard socket's arrival address, recorded per player
	if n := memfig.Allocs(200, func() { out, _ = in.receive(ping, from, local, s.now(), &m, out[:0]) }); n != 0 {
		t.Errorf("instance ping: %v allocs", n)
	}
	if d := s.Stats().Drops; d[string(udpwire.RuleCRC)] == 0 || d[string(udpwire.RuleInstTypeUnknown)] == 0 {
		t.Fatalf("drops not counted: %v", d)
	}
}

// TestListAllocsUnderChurn: LIST answers from a room list rebuilt in place
// when a JOIN changed a player count, so alternating JOIN and LIST (every
// LIST after a change) allocates nothing; Rooms() is a separate copy.
func TestListAllocsUnderChurn(t *testing.T) {
	cfg := testConfig()
	cfg.MaxPlayers = 1024
	cfg.MaxHoldsPerIP = 0 // 903 seats held from one address, on purpose
	s := start(t, cfg)
	for range 50 {
		s.newInstance(netip.Addr{}, 0, s.now())
	}
	p := cfg.Profile
	list := udpwire.AppendListRooms(nil, p, 1)
	out := make([]byte, 0, 2048)
	i := 0
	n := memfig.Allocs(300, func() {
		i++
		out = s.handleLobby(udpwire.AppendJoinRoom(out[:0], p, uint16(2*i), uint32(1+i%50)), at(uint16(i)), s.now(), out[:0])
		if decodeOK(t, out).Type != udpwire.LobbyJoinSuccess {
			t.Fatal("join failed")
		}
		out = s.handleLobby(list, at(1), s.now(), out[:0])
	})
	if n != 0 {
		t.Errorf("JOIN+LIST: %v allocs/op", n)
	}
	var m udpwire.Message
	if err := (udpwire.Decoder{Dir: udpwire.ServerToClient}).Decode(out, &m); err != nil {
		t.Fatal(err)
	}
	rooms := m.Rooms.AppendRooms(nil)
	if got := s.Rooms(); !equalRooms(got, rooms) || len(rooms) != 50 {
		t.Fatalf("LIST shows %d rooms, Rooms() %d, or they differ", len(rooms), len(got))
	}
	total := 0
	for _, r := range rooms {
		total += int(r.Players)
	}
	if total != i { // one join a run, the warm-ups' included
		t.Fatalf("list shows %d players, want %d", total, i)
	}
}
