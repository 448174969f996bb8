package udpserver

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// fuzzSources are the fake client endpoints of FuzzServer: four IPs, two
// ports each, so per-IP quotas and per-endpoint sessions both matter.
var fuzzSources = func() []netip.AddrPort {
	var out []netip.AddrPort
	for ip := byte(1); ip <= 4; ip++ {
		for _, port := range []uint16{40001, 40002} {
			out = append(out, netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, ip}), port))
		}
	}
	return out
}()

// fuzzConfig is small on purpose: every bound (instances, seats, sessions,
// per-IP quotas) is reachable within a few operations. Every interval is
// hours long so no real timer fires during an input: time only moves
// through the input's clock operations.
func fuzzConfig() Config {
	c := testConfig()
	c.MaxInstances = 4
	c.MaxPlayers = 3
	c.MaxRoomsPerIP = 2
	c.MaxHoldsPerIP = 3
	c.MaxSessions = 5
	c.CleanupInterval = time.Hour
	c.IdleTimeout = 2 * time.Hour
	c.SeatHold = time.Hour
	c.CountdownInterval = time.Hour
	c.GameLength = time.Hour
	return c
}

// FuzzServer drives the whole UDP server, lobby and instances, with a
// sequence of operations decoded from the input: datagrams (well-formed or
// raw bytes) from several sources to the lobby or to a room's instance,
// countdown/game timers firing, and the clock moving on with a janitor
// pass. The clock is the input's own, real timers never fire, so an input
// replays identically. After every operation the server's invariants are
// checked (checkServer): tables within their caps, no room lost or doubled,
// player and seat counts consistent with memberships and with the per-IP
// quota tables, and every reply well-formed.
func FuzzServer(f *testing.F) {
	// Two bytes an operation: op (low 3 bits) and source (high 5 bits), then
	// an argument; raw datagrams take argument-many bytes after it.
	const (
		list, create, join, inst, instRaw, lobbyRaw, timer, clock = 0, 1, 2, 3, 4, 5, 6, 7
		src1, src2                                                = 2 << 3, 4 << 3
	)
	hello, joinReq, ready, ping, disc := byte(0), byte(1), byte(2), byte(3), byte(4)
	f.Add([]byte{create, 0, list, 0})
	f.Add([]byte{create, 0, join, 0, src1 | join, 0, clock, 4, list, 0}) // holds expire
	f.Add([]byte{create, 0, join, 0, inst, joinReq, inst, ready, timer, 0, timer, 0, timer, 0, timer, 0, timer, 0, clock, 7, clock, 7})
	f.Add([]byte{create, 0, create, 0, create, 0, src1 | create, 0, src2 | create, 0, src2 | create, 0, clock, 4, clock, 4})
	f.Add([]byte{src1 | join, 0, src1 | inst, hello, src1 | inst, ping, src1 | inst, disc, lobbyRaw, 3, 1, 2, 3, instRaw, 2, 9, 9})
	f.Add([]byte{create, 0, join, 0, src1 | join, 0, src2 | join, 0, inst, joinReq, src1 | inst, joinReq, inst, ready, src1 | inst, ready, src1 | inst, disc, inst, disc})
	f.Fuzz(serverOps)
}

// serverOps is FuzzServer's body: it runs the operations ops encodes.
func serverOps(t *testing.T, ops []byte) {
	{
		s, err := Listen(fuzzConfig())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		p := s.cfg.Profile
		now := s.now()
		seq := uint16(0)
		seen := map[uint32]bool{} // every room id a ROOM_CREATED handed out
		var m udpwire.Message
		for n := 0; len(ops) >= 2 && n < 200; n++ {
			before := snapshotRooms(s)
			tidied := false
			from := fuzzSources[int(ops[0]>>3)%len(fuzzSources)]
			op, arg := ops[0]&7, ops[1]
			ops = ops[2:]
			raw := func() []byte { // arg bytes of the input as one datagram
				k := min(int(arg), len(ops))
				b := ops[:k]
				ops = ops[k:]
				return b
			}
			seq++
			switch op {
			case 0:
				lobby(t, s, udpwire.AppendListRooms(nil, p, seq), from, now, seen)
			case 1:
				lobby(t, s, udpwire.AppendCreateRoom(nil, p, seq), from, now, seen)
			case 2: // JOIN of an existing room, or of any small id
				id := uint32(arg % 6)
				if in := nthRoom(s, int(arg)); in != nil && arg < 128 {
					id = in.id
				}
				lobby(t, s, udpwire.AppendJoinRoom(nil, p, seq, id), from, now, seen)
			case 3, 4: // well-formed or raw datagram to a room's instance
				var pkt []byte
				in := nthRoom(s, int(arg/8))
				if op == 3 {
					types := []udpwire.MsgType{udpwire.ClientHello, udpwire.ClientJoinRequest,
						udpwire.ClientReady, udpwire.ClientPing, udpwire.ClientDisconnect}
					pkt, _ = udpwire.Append(nil, p, &udpwire.Message{
						Header: udpwire.Header{Type: types[int(arg%8)%len(types)], Seq: seq}, Value: uint32(seq)})
				} else {
					in = nthRoom(s, 0)
					pkt = raw()
				}
				if in == nil {
					continue
				}
				out, open := in.receive(pkt, from, netip.Addr{}, now, &m, nil)
				if !open {
					t.Fatalf("room %d listed but its instance is closed", in.id)
				}
				if len(out) > 0 {
					var rep udpwire.Message
					if err := (udpwire.Decoder{Profile: p, Dir: udpwire.ServerToClient, Channel: udpwire.ChannelInstance}).Decode(out, &rep); err != nil {
						t.Fatalf("bad instance reply % x to % x: %v", out, pkt, err)
					}
				}
			case 5: // raw lobby datagram
				lobby(t, s, raw(), from, now, seen)
			case 6: // a room's countdown or game timer fires
				if in := nthRoom(s, int(arg)); in != nil {
					s.mu.Lock()
					in.advance(in.gen, now)
					s.mu.Unlock()
				}
			case 7: // the clock moves on; the janitor runs
				now += int64(arg%8) * int64(15*time.Minute)
				s.tidy(now, true)
				tidied = true
			}
			checkServer(t, s, before, tidied, now, seen)
		}
	}
}

// lobby sends pkt to the lobby handler and checks the answer: none to a
// malformed datagram, a well-formed reply echoing the sequence otherwise, a
// ROOM_CREATED never handing out a room id twice (unless it is a retry
// answered from the session cache), a LIST equal to the rooms.
func lobby(t *testing.T, s *Server, pkt []byte, from netip.AddrPort, now int64, seen map[uint32]bool) {
	t.Helper()
	replayed := s.c.replayed.Load()
	out := s.handleLobby(pkt, from, now, nil)
	replay := s.c.replayed.Load() != replayed
	var req udpwire.Message
	if err := s.ldec.Decode(pkt, &req); err != nil {
		if len(out) != 0 {
			t.Fatalf("answered a malformed datagram (%v): % x", err, out)
		}
		return
	}
	var rep udpwire.Message
	if err := (udpwire.Decoder{Profile: s.cfg.Profile, Dir: udpwire.ServerToClient, Channel: udpwire.ChannelLobby}).Decode(out, &rep); err != nil {
		t.Fatalf("bad reply % x to % x: %v", out, pkt, err)
	}
	if rep.Seq != req.Seq {
		t.Fatalf("reply seq %d, request %d", rep.Seq, req.Seq)
	}
	if rep.Type == udpwire.LobbyRoomCreated && !replay {
		if seen[rep.RoomID] {
			t.Fatalf("room id %d handed out twice", rep.RoomID)
		}
		seen[rep.RoomID] = true
	}
	if rep.Type == udpwire.LobbyRoomList {
		rooms := rep.Rooms.AppendRooms(nil)
		want := s.Rooms()
		if !equalRooms(rooms, want) {
			t.Fatalf("LIST shows %v, server has %v", rooms, want)
		}
	}
}

// nthRoom returns the room at index k mod the number of rooms, by id, or
// nil when there is none.
func nthRoom(s *Server, k int) *instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.rooms) == 0 {
		return nil
	}
	ids := make([]uint32, 0, len(s.rooms))
	for id := range s.rooms {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return s.rooms[ids[k%len(ids)]]
}

// roomSnap is what checkServer needs of a room before an operation.
type roomSnap struct {
	in        *instance
	idleSince int64
	state     udpwire.RoomState
	empty     bool
}

func snapshotRooms(s *Server) map[uint32]roomSnap {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[uint32]roomSnap, len(s.rooms))
	for id, in := range s.rooms {
		out[id] = roomSnap{in: in, idleSince: in.idleSince, state: in.state, empty: in.empty()}
	}
	return out
}

// checkServer checks the server's invariants after one operation; before
// is the room table before it, tidied whether it was a janitor pass at now.
func checkServer(t *testing.T, s *Server, before map[uint32]roomSnap, tidied bool, now int64, seen map[uint32]bool) {
	t.Helper()
	if err := s.invariants(); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// No room lost: a room goes only in a janitor pass, and only one that
	// could be cleaned up (its holds expiring in the same pass cannot make
	// it removable: the emptiness starts the interval).
	for id, b := range before {
		if _, ok := s.rooms[id]; ok {
			continue
		}
		if !tidied {
			t.Fatalf("room %d vanished outside a janitor pass", id)
		}
		wasIdle := b.idleSince > 0 && now-b.idleSince >= int64(s.cfg.CleanupInterval)
		if !wasIdle || !(b.empty || b.state == udpwire.Finished) {
			t.Fatalf("room %d removed while in use (idle since %d, now %d, state %v, empty %v)",
				id, b.idleSince, now, b.state, b.empty)
		}
		if !b.in.closed {
			t.Fatalf("room %d removed but its instance is open", id)
		}
	}
	// Every lobby-created room was handed out once; no room appears that
	// was not created (the only creators here are lobby CREATEs).
	for id := range s.rooms {
		if _, ok := before[id]; !ok && !seen[id] {
			t.Fatalf("room %d appeared without a ROOM_CREATED", id)
		}
	}
}

// invariants checks what must hold between any two operations: the tables
// within their caps, every room consistent (seats, players, state), and
// the per-IP quota tables equal to what the rooms hold.
func (s *Server) invariants() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cfg
	if len(s.rooms) > c.MaxInstances || s.reserved != 0 {
		return fmt.Errorf("%d rooms (max %d), %d reserved", len(s.rooms), c.MaxInstances, s.reserved)
	}
	if len(s.sessions.m) > c.MaxSessions {
		return fmt.Errorf("%d sessions, max %d", len(s.sessions.m), c.MaxSessions)
	}
	owned := map[netip.Addr]int{}
	held := map[netip.Addr]int{}
	ports := map[uint16]uint32{}
	for id, in := range s.rooms {
		if in.id != id || id == 0 || id > s.nextID {
			return fmt.Errorf("room keyed %d has id %d (next %d)", id, in.id, s.nextID)
		}
		if in.closed {
			return fmt.Errorf("room %d is listed but closed", id)
		}
		if other, dup := ports[in.port]; dup {
			return fmt.Errorf("rooms %d and %d share port %d", other, id, in.port)
		}
		ports[in.port] = id
		if n := len(in.players) + len(in.holds); n > in.max {
			return fmt.Errorf("room %d: %d players + %d holds > %d seats", id, len(in.players), len(in.holds), in.max)
		}
		eps := map[netip.AddrPort]bool{}
		pids := map[uint32]bool{}
		for _, p := range in.players {
			if eps[p.ep] || pids[p.id] || p.id == 0 || p.id > in.nextPlayer {
				return fmt.Errorf("room %d: player %d at %v doubled or out of range", id, p.id, p.ep)
			}
			eps[p.ep], pids[p.id] = true, true
		}
		switch in.state {
		case udpwire.Waiting:
			if len(in.last) != 0 {
				return fmt.Errorf("room %d waiting with a state message kept", id)
			}
		case udpwire.Countdown:
			if len(in.players) == 0 {
				return fmt.Errorf("room %d counting down with no player", id)
			}
		}
		if in.empty() && in.idleSince == 0 {
			return fmt.Errorf("room %d empty but not marked idle", id)
		}
		count(owned, in.owner, 1)
		for _, h := range in.holds {
			count(held, h.ip, 1)
		}
	}
	if !maps.Equal(owned, s.owned) || !maps.Equal(held, s.held) {
		return fmt.Errorf("quota tables: owned %v (rooms say %v), held %v (rooms say %v)", s.owned, owned, s.held, held)
	}
	for ip, n := range s.owned {
		if c.MaxRoomsPerIP > 0 && n > c.MaxRoomsPerIP {
			return fmt.Errorf("%v owns %d rooms, cap %d", ip, n, c.MaxRoomsPerIP)
		}
	}
	for ip, n := range s.held {
		if c.MaxHoldsPerIP > 0 && n > c.MaxHoldsPerIP {
			return fmt.Errorf("%v holds %d seats, cap %d", ip, n, c.MaxHoldsPerIP)
		}
	}
	if s.slots != nil {
		used := 0
		for _, u := range s.slots {
			if u {
				used++
			}
		}
		if used < len(s.rooms) {
			return fmt.Errorf("%d pool slots in use for %d rooms", used, len(s.rooms))
		}
	}
	return nil
}
