package tcpserver

import (
	"errors"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// TestFullCycle drives four clients through create, join, ready, start,
// countdown and GAME_START, checking every frame each client receives, and
// that a client in another room hears nothing of it.
func TestFullCycle(t *testing.T) {
	pool := &fakePool{addr: gameAddr}
	s := startServer(t, testConfig(pool))

	other := dial(t, s)
	if ack := other.create("elsewhere", "bystander"); ack.RoomID == 0 {
		t.Fatal("bystander create failed")
	}
	other.expect(tcpwire.TypeRoomUpdate)

	host := dial(t, s)
	ack := host.create("MyRoom", "Player1")
	if ack.RoomID == 0 || ack.PlayerHash == 0 {
		t.Fatalf("CREATE_ROOM_ACK %+v: want non-zero room id and hash", ack)
	}
	up := host.expect(tcpwire.TypeRoomUpdate).(*tcpwire.RoomUpdate)
	if up.Count != 1 || up.Players[0].Hash != ack.PlayerHash || up.Players[0].Number != 1 ||
		up.Players[0].Name.String() != "Player1" || up.Players[0].Ready {
		t.Fatalf("ROOM_UPDATE after create: %+v", up)
	}

	cs := []*client{host}
	hashes := []uint64{ack.PlayerHash}
	for i := 1; i < 4; i++ {
		c := dial(t, s)
		name := "Player" + string(rune('1'+i))
		j := c.join(ack.RoomID, name)
		if j.Status != tcpwire.JoinSuccess || j.PlayerHash == 0 || int(j.Count) != i+1 {
			t.Fatalf("JOIN_ROOM_ACK %d: %+v", i, j)
		}
		if slices.Contains(hashes, j.PlayerHash) {
			t.Fatalf("hash %x not unique in room", j.PlayerHash)
		}
		for k, h := range hashes {
			if j.Players[k].Hash != h || j.Players[k].Number != uint8(k+1) {
				t.Fatalf("JOIN_ROOM_ACK players[%d] = %+v, want hash %x slot %d", k, j.Players[k], h, k+1)
			}
		}
		if me := j.Players[i]; me.Hash != j.PlayerHash || me.Name.String() != name || me.Number != uint8(i+1) {
			t.Fatalf("JOIN_ROOM_ACK own entry %+v", me)
		}
		c.expect(tcpwire.TypeRoomUpdate)
		for _, o := range cs { // PLAYER_JOIN only to members already in
			pj := o.expect(tcpwire.TypePlayerJoin).(*tcpwire.PlayerJoin)
			if pj.Player != j.Players[i] {
				t.Fatalf("PLAYER_JOIN %+v, want %+v", pj.Player, j.Players[i])
			}
			if ru := o.expect(tcpwire.TypeRoomUpdate).(*tcpwire.RoomUpdate); int(ru.Count) != i+1 {
				t.Fatalf("ROOM_UPDATE count %d, want %d", ru.Count, i+1)
			}
		}
		cs = append(cs, c)
		hashes = append(hashes, j.PlayerHash)
	}

	// Ready: PLAYER_READY and ROOM_UPDATE to every member including the sender.
	for i, c := range cs {
		c.send(&tcpwire.ReadyReq{})
		for _, o := range cs {
			pr := o.expect(tcpwire.TypePlayerReady).(*tcpwire.PlayerReady)
			if pr.PlayerHash != hashes[i] || !pr.Ready {
				t.Fatalf("PLAYER_READY %+v, want hash %x ready", pr, hashes[i])
			}
			ru := o.expect(tcpwire.TypeRoomUpdate).(*tcpwire.RoomUpdate)
			for k := range 4 {
				if ru.Players[k].Ready != (k <= i) {
					t.Fatalf("ROOM_UPDATE after ready %d: player %d ready=%v", i, k, ru.Players[k].Ready)
				}
			}
		}
	}

	host.send(&tcpwire.StartReq{})
	for _, c := range cs {
		for _, want := range []uint8{3, 2, 1} {
			if cd := c.expect(tcpwire.TypeCountdown).(*tcpwire.Countdown); cd.Seconds != want {
				t.Fatalf("COUNTDOWN %d, want %d", cd.Seconds, want)
			}
		}
		gs := c.expect(tcpwire.TypeGameStart).(*tcpwire.GameStart)
		if gs.ServerIP.String() != "127.0.0.1" || gs.UDPPort != 7778 || gs.PlayerCount != 4 {
			t.Fatalf("GAME_START ip %q port %d count %d", gs.ServerIP.String(), gs.UDPPort, gs.PlayerCount)
		}
		for k := range 4 {
			if gs.Players[k].Hash != hashes[k] || !gs.Players[k].Ready || gs.Spawn[k] != spawn[k] {
				t.Fatalf("GAME_START player %d: %+v spawn %v", k, gs.Players[k], gs.Spawn[k])
			}
		}
	}
	if got := pool.allocations(); !slices.Equal(got, []int{4}) {
		t.Fatalf("pool allocations %v, want [4]", got)
	}
	for _, c := range append(cs, other) {
		c.expectQuiet(50 * time.Millisecond)
	}

	// The room is listed as in game; the other room is not.
	other.send(&tcpwire.ListRoomsReq{})
	l := other.expect(tcpwire.TypeListRoomsAck).(*tcpwire.ListRoomsAck)
	if l.Count != 2 || l.Rooms[0].Name.String() != "elsewhere" || l.Rooms[0].InGame ||
		l.Rooms[1].ID != ack.RoomID || l.Rooms[1].Name.String() != "MyRoom" ||
		l.Rooms[1].PlayerCount != 4 || l.Rooms[1].MaxPlayers != 4 || !l.Rooms[1].InGame {
		t.Fatalf("LIST_ROOMS_ACK %+v", l.Rooms[:l.Count])
	}
	// Joining a started room fails.
	late := dial(t, s)
	if j := late.join(ack.RoomID, "late"); j.Status != tcpwire.JoinRoomInGame || j.PlayerHash != 0 || j.Count != 0 {
		t.Fatalf("join started room: %+v", j)
	}

	// Everyone leaves: the room is removed.
	for i := len(cs) - 1; i >= 0; i-- {
		cs[i].send(&tcpwire.Disconnect{})
		cs[i].expectEOF()
		for _, o := range cs[:i] {
			if pl := o.expect(tcpwire.TypePlayerLeft).(*tcpwire.PlayerLeft); pl.PlayerHash != hashes[i] {
				t.Fatalf("PLAYER_LEFT %x, want %x", pl.PlayerHash, hashes[i])
			}
			if ru := o.expect(tcpwire.TypeRoomUpdate).(*tcpwire.RoomUpdate); int(ru.Count) != i {
				t.Fatalf("ROOM_UPDATE count %d, want %d", ru.Count, i)
			}
		}
	}
	waitFor(t, "room removal", func() bool { return s.Stats().RoomsActive == 1 })
	st := s.Stats()
	if st.GamesStarted != 1 || st.Countdowns != 1 || st.RoomsCreated != 2 || st.RoomsRemoved != 1 ||
		st.FramesIn["READY_REQ"] != 4 || st.FramesIn["JOIN_ROOM_REQ"] != 4 || st.Errors["room-in-game"] != 1 {
		t.Fatalf("stats %+v", st)
	}
	if st.Closes["disconnect"] != 4 {
		t.Fatalf("closes %v", st.Closes)
	}
}

func TestReadyToggle(t *testing.T) {
	s := startServer(t, testConfig(nil))
	cs, hs, _ := newRoom(t, s, 2)
	for _, want := range []bool{true, false, true} {
		cs[1].send(&tcpwire.ReadyReq{})
		for _, c := range cs {
			pr := c.expect(tcpwire.TypePlayerReady).(*tcpwire.PlayerReady)
			if pr.PlayerHash != hs[1] || pr.Ready != want {
				t.Fatalf("PLAYER_READY %+v, want ready=%v", pr, want)
			}
			if ru := c.expect(tcpwire.TypeRoomUpdate).(*tcpwire.RoomUpdate); ru.Players[1].Ready != want || ru.Players[0].Ready {
				t.Fatalf("ROOM_UPDATE %+v", ru)
			}
		}
	}
}

func TestStartRefusals(t *testing.T) {
	s := startServer(t, testConfig(nil))
	lone := dial(t, s)
	lone.send(&tcpwire.StartReq{})
	lone.expectError(tcpwire.ErrCodeRoomNotFound)
	lone.send(&tcpwire.ReadyReq{})
	lone.expectError(tcpwire.ErrCodeRoomNotFound)

	cs, _, _ := newRoom(t, s, 3)
	cs[1].send(&tcpwire.StartReq{}) // non-host
	cs[1].expectError(tcpwire.ErrCodeNotHost)
	cs[0].send(&tcpwire.StartReq{}) // nobody ready
	cs[0].expectError(tcpwire.ErrCodeNotAllReady)
	for _, c := range cs[:2] { // all but one ready
		c.send(&tcpwire.ReadyReq{})
		for _, o := range cs {
			o.expectSeq(tcpwire.TypePlayerReady, tcpwire.TypeRoomUpdate)
		}
	}
	cs[0].send(&tcpwire.StartReq{})
	cs[0].expectError(tcpwire.ErrCodeNotAllReady)
	cs[2].send(&tcpwire.ReadyReq{})
	for _, o := range cs {
		o.expectSeq(tcpwire.TypePlayerReady, tcpwire.TypeRoomUpdate)
	}
	cs[2].send(&tcpwire.StartReq{}) // all ready, still not host
	cs[2].expectError(tcpwire.ErrCodeNotHost)
	for _, c := range cs {
		c.expectQuiet(30 * time.Millisecond) // refusals go to the sender only
	}
	cs[0].send(&tcpwire.StartReq{})
	for _, c := range cs {
		c.expectSeq(tcpwire.TypeCountdown, tcpwire.TypeCountdown, tcpwire.TypeCountdown, tcpwire.TypeGameStart)
	}
	st := s.Stats()
	if st.Errors["not-host"] != 2 || st.Errors["not-all-ready"] != 2 || st.Errors["not-in-room"] != 2 {
		t.Fatalf("errors %v", st.Errors)
	}
}

func TestJoinRefusals(t *testing.T) {
	cfg := testConfig(nil)
	cfg.CountdownInterval = time.Hour // the countdown stays at 3
	s := startServer(t, cfg)
	cs, _, id := newRoom(t, s, 4)
	c := dial(t, s)
	tests := []struct {
		name string
		id   uint32
		want tcpwire.JoinStatus
	}{
		{"missing room", id + 100, tcpwire.JoinRoomNotFound},
		{"room id 0 is never valid", 0, tcpwire.JoinRoomNotFound},
		{"full room", id, tcpwire.JoinRoomFull},
	}
	for _, tt := range tests {
		j := c.join(tt.id, "x")
		if j.Status != tt.want || j.PlayerHash != 0 || j.Count != 0 {
			t.Errorf("%s: %+v, want status %v, hash 0, no players", tt.name, j, tt.want)
		}
	}
	// A room counting down refuses joins too.
	cs3, _, id3 := newRoom(t, s, 1)
	readyAll(t, cs3)
	cs3[0].send(&tcpwire.StartReq{})
	cs3[0].expect(tcpwire.TypeCountdown)
	if j := c.join(id3, "x"); j.Status != tcpwire.JoinRoomInGame {
		t.Errorf("join during countdown: %v, want ROOM_IN_GAME", j.Status)
	}
	for _, m := range cs {
		m.expectQuiet(30 * time.Millisecond) // failed joins broadcast nothing
	}
	// Empty player names are refused with 0x05.
	c.send(&tcpwire.JoinRoomReq{RoomID: id3})
	c.expectError(tcpwire.ErrCodeInvalidName)
	c.send(&tcpwire.CreateRoomReq{RoomName: tcpwire.MakeName("r")})
	c.expectError(tcpwire.ErrCodeInvalidName)
}

func TestMaxRooms(t *testing.T) {
	s := startServer(t, testConfig(nil))
	var ids []uint32
	for i := range tcpwire.MaxRooms {
		c := dial(t, s)
		ack := c.create("r", "p")
		if ack.RoomID == 0 || slices.Contains(ids, ack.RoomID) {
			t.Fatalf("room %d: id %d", i, ack.RoomID)
		}
		ids = append(ids, ack.RoomID)
	}
	c := dial(t, s)
	if ack := c.create("r17", "p"); ack.RoomID != 0 || ack.PlayerHash != 0 {
		t.Fatalf("17th room: %+v, want RoomID 0", ack)
	}
	c.expectQuiet(30 * time.Millisecond)
	c.send(&tcpwire.ListRoomsReq{})
	l := c.expect(tcpwire.TypeListRoomsAck).(*tcpwire.ListRoomsAck)
	if l.Count != tcpwire.MaxRooms {
		t.Fatalf("listed %d rooms", l.Count)
	}
	for i := range l.Rooms {
		if l.Rooms[i].ID != ids[i] || l.Rooms[i].PlayerCount != 1 {
			t.Fatalf("room %d: %+v", i, l.Rooms[i])
		}
	}
	if s.Stats().Errors["rooms-exhausted"] != 1 {
		t.Fatalf("errors %v", s.Stats().Errors)
	}
}

// TestCreateRefusedKeepsRoom: with every room taken, a member of a shared
// room asking for a new one gets RoomID 0 and stays where it was (nobody is
// told it left); the last member of a room may re-create, since leaving
// frees its room.
func TestCreateRefusedKeepsRoom(t *testing.T) {
	s := startServer(t, testConfig(nil))
	cs, _, id := newRoom(t, s, 2)
	for range tcpwire.MaxRooms - 1 {
		if dial(t, s).create("r", "p").RoomID == 0 {
			t.Fatal("create failed below the limit")
		}
	}
	if ack := cs[1].create("mine", "p2"); ack.RoomID != 0 {
		t.Fatalf("17th room created: %+v", ack)
	}
	cs[0].expectQuiet(30 * time.Millisecond) // no PLAYER_LEFT: cs[1] is still here
	cs[1].send(&tcpwire.ListRoomsReq{})
	l := cs[1].expect(tcpwire.TypeListRoomsAck).(*tcpwire.ListRoomsAck)
	if l.Rooms[0].ID != id || l.Rooms[0].PlayerCount != 2 {
		t.Fatalf("first room %+v, want id %d with 2 players", l.Rooms[0], id)
	}
	// Alone in a room, re-creating is allowed at the limit.
	solo := dial(t, s)
	cs[0].send(&tcpwire.Disconnect{})
	cs[1].expectSeq(tcpwire.TypePlayerLeft, tcpwire.TypeRoomUpdate)
	ack := cs[1].create("again", "p2")
	if ack.RoomID == 0 {
		t.Fatal("the last member of a room could not re-create at the limit")
	}
	cs[1].expect(tcpwire.TypeRoomUpdate)
	if ack := solo.create("x", "p"); ack.RoomID != 0 {
		t.Fatalf("17th room created: %+v", ack)
	}
}

// TestHostLeaves: the next player in join order becomes host, whether the
// host says DISCONNECT or just drops the socket.
func TestHostLeaves(t *testing.T) {
	for _, how := range []string{"disconnect", "close"} {
		t.Run(how, func(t *testing.T) {
			s := startServer(t, testConfig(nil))
			cs, hs, id := newRoom(t, s, 3)
			if how == "disconnect" {
				cs[0].send(&tcpwire.Disconnect{})
				cs[0].expectEOF()
			} else {
				cs[0].nc.Close()
			}
			for _, c := range cs[1:] {
				if pl := c.expect(tcpwire.TypePlayerLeft).(*tcpwire.PlayerLeft); pl.PlayerHash != hs[0] {
					t.Fatalf("PLAYER_LEFT %x, want %x", pl.PlayerHash, hs[0])
				}
				ru := c.expect(tcpwire.TypeRoomUpdate).(*tcpwire.RoomUpdate)
				if ru.Count != 2 || ru.Players[0].Hash != hs[1] || ru.Players[1].Hash != hs[2] {
					t.Fatalf("ROOM_UPDATE %+v", ru)
				}
			}
			// The new host may start; the old second player no longer gets 0x03.
			cs[2].send(&tcpwire.StartReq{})
			cs[2].expectError(tcpwire.ErrCodeNotHost)
			readyAll(t, cs[1:])
			cs[1].send(&tcpwire.StartReq{})
			for _, c := range cs[1:] {
				c.expectSeq(tcpwire.TypeCountdown, tcpwire.TypeCountdown, tcpwire.TypeCountdown, tcpwire.TypeGameStart)
			}
			// A newcomer takes the freed slot 1.
			cs2, _, id2 := newRoom(t, s, 2)
			cs2[0].send(&tcpwire.Disconnect{})
			cs2[1].expectSeq(tcpwire.TypePlayerLeft, tcpwire.TypeRoomUpdate)
			n := dial(t, s)
			if j := n.join(id2, "new"); j.Status != tcpwire.JoinSuccess || j.Players[1].Number != 1 || j.Players[0].Number != 2 {
				t.Fatalf("join after leave: %+v", j)
			}
			_ = id
		})
	}
}

// TestLastLeaverRemovesRoom checks the room disappears from the list.
func TestLastLeaverRemovesRoom(t *testing.T) {
	s := startServer(t, testConfig(nil))
	cs, _, id := newRoom(t, s, 2)
	cs[0].nc.Close()
	cs[1].expectSeq(tcpwire.TypePlayerLeft, tcpwire.TypeRoomUpdate)
	cs[1].send(&tcpwire.Disconnect{})
	cs[1].expectEOF()
	c := dial(t, s)
	waitFor(t, "room removal", func() bool { return s.Stats().RoomsActive == 0 })
	if j := c.join(id, "x"); j.Status != tcpwire.JoinRoomNotFound {
		t.Fatalf("join removed room: %v", j.Status)
	}
	c.send(&tcpwire.ListRoomsReq{})
	if l := c.expect(tcpwire.TypeListRoomsAck).(*tcpwire.ListRoomsAck); l.Count != 0 {
		t.Fatalf("listed %d rooms", l.Count)
	}
}

// TestCountdownCancelOnLeave: a leaver during the ticks cancels; the room
// is joinable again and a new START counts down afresh.
func TestCountdownCancelOnLeave(t *testing.T) {
	pool := &fakePool{addr: gameAddr}
	cfg := testConfig(pool)
	cfg.CountdownInterval = time.Hour // stays at 3 until cancelled
	s := startServer(t, cfg)
	cs, hs, id := newRoom(t, s, 3)
	readyAll(t, cs)
	cs[0].send(&tcpwire.StartReq{})
	for _, c := range cs {
		if cd := c.expect(tcpwire.TypeCountdown).(*tcpwire.Countdown); cd.Seconds != 3 {
			t.Fatalf("COUNTDOWN %d", cd.Seconds)
		}
	}
	cs[0].send(&tcpwire.StartReq{}) // a second START during the countdown is ignored
	cs[0].send(&tcpwire.ListRoomsReq{})
	cs[0].expect(tcpwire.TypeListRoomsAck) // the START was handled
	cs[2].nc.Close()
	for _, c := range cs[:2] {
		if pl := c.expect(tcpwire.TypePlayerLeft).(*tcpwire.PlayerLeft); pl.PlayerHash != hs[2] {
			t.Fatalf("PLAYER_LEFT %x", pl.PlayerHash)
		}
		c.expect(tcpwire.TypeRoomUpdate)
	}
	st := s.Stats()
	if st.Cancelled != 1 || st.Errors["ignored"] != 1 {
		t.Fatalf("cancelled %d, errors %v", st.Cancelled, st.Errors)
	}
	n := dial(t, s) // joinable again
	if j := n.join(id, "n"); j.Status != tcpwire.JoinSuccess {
		t.Fatalf("join after cancel: %v", j.Status)
	}
	if len(pool.allocations()) != 0 {
		t.Fatal("pool called for a cancelled countdown")
	}
}

// TestCountdownCancelOnUnready: START needs everyone ready until GAME_START.
func TestCountdownCancelOnUnready(t *testing.T) {
	cfg := testConfig(nil)
	cfg.CountdownInterval = time.Hour
	s := startServer(t, cfg)
	cs, _, _ := newRoom(t, s, 2)
	readyAll(t, cs)
	cs[0].send(&tcpwire.StartReq{})
	for _, c := range cs {
		c.expect(tcpwire.TypeCountdown)
	}
	cs[1].send(&tcpwire.ReadyReq{})
	for _, c := range cs {
		c.expectSeq(tcpwire.TypePlayerReady, tcpwire.TypeRoomUpdate)
	}
	if st := s.Stats(); st.Cancelled != 1 {
		t.Fatalf("cancelled %d", st.Cancelled)
	}
	cs[0].send(&tcpwire.StartReq{})
	cs[0].expectError(tcpwire.ErrCodeNotAllReady)
}

// TestCountdownCancelDuringAllocation: a leaver while the pool allocates
// gets the instance released and no GAME_START sent.
func TestCountdownCancelDuringAllocation(t *testing.T) {
	gate := make(chan struct{})
	pool := &fakePool{addr: gameAddr, called: make(chan int, 1), gate: gate, relCh: make(chan netip.AddrPort, 1)}
	s := startServer(t, testConfig(pool))
	cs, _, _ := newRoom(t, s, 2)
	readyAll(t, cs)
	cs[0].send(&tcpwire.StartReq{})
	for _, c := range cs {
		c.expectSeq(tcpwire.TypeCountdown, tcpwire.TypeCountdown, tcpwire.TypeCountdown)
	}
	if n := <-pool.called; n != 2 {
		t.Fatalf("Allocate(%d), want 2", n)
	}
	cs[1].nc.Close()
	cs[0].expectSeq(tcpwire.TypePlayerLeft, tcpwire.TypeRoomUpdate)
	close(gate)
	if a := <-pool.relCh; a != gameAddr {
		t.Fatalf("released %v", a)
	}
	cs[0].expectQuiet(50 * time.Millisecond)
	// START again: a fresh countdown and GAME_START for one player.
	pool.mu.Lock()
	pool.called, pool.gate = nil, nil
	pool.mu.Unlock()
	cs[0].send(&tcpwire.StartReq{})
	cs[0].expectSeq(tcpwire.TypeCountdown, tcpwire.TypeCountdown, tcpwire.TypeCountdown)
	if gs := cs[0].expect(tcpwire.TypeGameStart).(*tcpwire.GameStart); gs.PlayerCount != 1 {
		t.Fatalf("GAME_START count %d", gs.PlayerCount)
	}
}

func TestPoolFailure(t *testing.T) {
	pool := &fakePool{err: errors.New("instance limit reached")}
	s := startServer(t, testConfig(pool))
	cs, _, _ := newRoom(t, s, 2)
	readyAll(t, cs)
	cs[0].send(&tcpwire.StartReq{})
	for _, c := range cs {
		c.expectSeq(tcpwire.TypeCountdown, tcpwire.TypeCountdown, tcpwire.TypeCountdown)
		if e := c.expectError(tcpwire.ErrCodeServerError); e.Text != "no game instance available: instance limit reached" {
			t.Fatalf("text %q", e.Text)
		}
	}
	// Back to waiting with ready states kept: START again reaches the pool again.
	pool.mu.Lock()
	pool.err, pool.addr = nil, gameAddr
	pool.mu.Unlock()
	cs[0].send(&tcpwire.StartReq{})
	for _, c := range cs {
		c.expectSeq(tcpwire.TypeCountdown, tcpwire.TypeCountdown, tcpwire.TypeCountdown, tcpwire.TypeGameStart)
	}
	if st := s.Stats(); st.Errors["pool-error"] != 1 || st.GamesStarted != 1 || st.Cancelled != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestGameAddress(t *testing.T) {
	tests := []struct {
		name   string
		addr   string
		wantIP string // "" = pool error expected
	}{
		{"ipv4", "10.1.2.3:9000", "10.1.2.3"},
		{"unspecified v4 becomes the client's local address", "0.0.0.0:9000", "127.0.0.1"},
		{"unspecified v6 likewise", "[::]:9000", "127.0.0.1"},
		{"v4-mapped is unmapped", "[::ffff:10.0.0.1]:9000", "10.0.0.1"},
		{"short v6 fits", "[::1]:9000", "::1"},
		{"long v6 does not fit char[16]", "[2001:db8::1234:5678]:9000", ""},
		{"port 0 is invalid", "10.0.0.1:0", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, testConfig(&fakePool{addr: netip.MustParseAddrPort(tt.addr)}))
			cs, _, _ := newRoom(t, s, 1)
			readyAll(t, cs)
			cs[0].send(&tcpwire.StartReq{})
			cs[0].expectSeq(tcpwire.TypeCountdown, tcpwire.TypeCountdown, tcpwire.TypeCountdown)
			if tt.wantIP == "" {
				cs[0].expectError(tcpwire.ErrCodeServerError)
				return
			}
			gs := cs[0].expect(tcpwire.TypeGameStart).(*tcpwire.GameStart)
			if gs.ServerIP.String() != tt.wantIP || gs.UDPPort != 9000 {
				t.Fatalf("GAME_START %q:%d, want %s:9000", gs.ServerIP.String(), gs.UDPPort, tt.wantIP)
			}
		})
	}
}

func TestConnectAndNames(t *testing.T) {
	s := startServer(t, testConfig(nil))
	c := dial(t, s)
	c.send(&tcpwire.ConnectReq{PlayerName: tcpwire.MakeName("alice")})
	ca := c.expect(tcpwire.TypeConnectAck).(*tcpwire.ConnectAck)
	if !ca.Success || ca.PlayerHash == 0 {
		t.Fatalf("CONNECT_ACK %+v", ca)
	}
	if ack := c.create("r", "alice"); ack.PlayerHash != ca.PlayerHash {
		t.Fatalf("room hash %x, want the CONNECT hash %x", ack.PlayerHash, ca.PlayerHash)
	}
	c.expect(tcpwire.TypeRoomUpdate)

	e := dial(t, s)
	e.send(&tcpwire.ConnectReq{})
	if ca := e.expect(tcpwire.TypeConnectAck).(*tcpwire.ConnectAck); ca.Success || ca.PlayerHash != 0 {
		t.Fatalf("empty name CONNECT_ACK %+v", ca)
	}

	// An unterminated 32-byte name with junk is echoed truncated to 31
	// bytes and NUL-terminated (the strict client decoder checks it).
	var long tcpwire.Name
	for i := range long {
		long[i] = 'x'
	}
	j := dial(t, s)
	j.send(&tcpwire.CreateRoomReq{RoomName: long, PlayerName: long})
	j.expect(tcpwire.TypeCreateRoomAck)
	ru := j.expect(tcpwire.TypeRoomUpdate).(*tcpwire.RoomUpdate)
	if got := ru.Players[0].Name.String(); len(got) != 31 {
		t.Fatalf("name %q (%d bytes), want 31 x", got, len(got))
	}
	// Junk after the NUL is zeroed before being echoed.
	dirty := tcpwire.MakeName("bob")
	dirty[10] = 'z'
	d := dial(t, s)
	d.send(&tcpwire.CreateRoomReq{RoomName: dirty, PlayerName: dirty})
	d.expect(tcpwire.TypeCreateRoomAck)
	if ru := d.expect(tcpwire.TypeRoomUpdate).(*tcpwire.RoomUpdate); ru.Players[0].Name != tcpwire.MakeName("bob") {
		t.Fatalf("name bytes %q", ru.Players[0].Name[:])
	}
}

// TestSwitchRooms: CREATE or JOIN from inside a room leaves it first.
func TestSwitchRooms(t *testing.T) {
	s := startServer(t, testConfig(nil))
	cs, hs, id := newRoom(t, s, 2)
	if j := cs[1].join(id, "again"); j.Status != tcpwire.JoinSuccess || j.PlayerHash != hs[1] || j.Count != 2 {
		t.Fatalf("re-join own room: %+v", j)
	}
	cs[0].expectQuiet(30 * time.Millisecond)
	ack := cs[1].create("mine", "p2")
	if ack.RoomID == 0 || ack.RoomID == id {
		t.Fatalf("create: %+v", ack)
	}
	cs[1].expect(tcpwire.TypeRoomUpdate)
	cs[0].expectSeq(tcpwire.TypePlayerLeft, tcpwire.TypeRoomUpdate)
}
