package udpserver

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

func TestCreateListJoin(t *testing.T) {
	for _, prof := range []udpwire.Profile{udpwire.ProfileSpec, udpwire.ProfileRType17} {
		t.Run(prof.String(), func(t *testing.T) {
			cfg := testConfig()
			cfg.Profile = prof
			s := start(t, cfg)
			c := dial(t, s.Addr(), prof)
			if rooms := c.list(); len(rooms) != 0 {
				t.Fatalf("fresh lobby lists %v", rooms)
			}
			id, port := c.create()
			if id != 1 || port == 0 {
				t.Fatalf("ROOM_CREATED id %d port %d, want id 1 and a port", id, port)
			}
			id2, port2 := c.create()
			if id2 != 2 || port2 == port {
				t.Fatalf("second room id %d port %d (first port %d)", id2, port2, port)
			}
			want := []udpwire.Room{
				{ID: 1, Players: 0, MaxPlayers: 4, Port: port, State: udpwire.Waiting},
				{ID: 2, Players: 0, MaxPlayers: 4, Port: port2, State: udpwire.Waiting},
			}
			if got := c.list(); !equalRooms(got, want) {
				t.Fatalf("list = %v, want %v", got, want)
			}
			if p := c.join(1); p != port {
				t.Fatalf("JOIN port %d, creation said %d", p, port)
			}
			// The held seat shows in the list.
			want[0].Players = 1
			if got := c.list(); !equalRooms(got, want) {
				t.Fatalf("after join list = %v, want %v", got, want)
			}
		})
	}
}

func equalRooms(a, b []udpwire.Room) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestJoinFailures(t *testing.T) {
	cfg := testConfig()
	cfg.MaxPlayers = 2
	cfg.GameLength = time.Millisecond
	s := start(t, cfg)
	c := dial(t, s.Addr(), cfg.Profile)
	id, port := c.create()

	if c.join(0) != 0 {
		t.Error("roomId 0 joined")
	}
	if c.join(99) != 0 {
		t.Error("missing room joined")
	}
	if first, second := c.join(id), c.join(id); first != port || second != port {
		t.Fatalf("first two joins of a 2-seat room gave ports %d, %d, want %d", first, second, port)
	}
	if c.join(id) != 0 {
		t.Error("third join of a 2-seat room succeeded")
	}

	// A room that is Playing then Finished is not joinable: fill a fresh
	// one through the instance and let the 1 ms game run.
	id2, port2 := c.create()
	p := dial(t, at(port2), cfg.Profile)
	p.expect(udpwire.ServerJoinAccept, p.inst(udpwire.ClientJoinRequest, 0))
	p.inst(udpwire.ClientReady, 0)
	for _, typ := range []udpwire.MsgType{udpwire.ServerAllReady, udpwire.ServerCountdownTick,
		udpwire.ServerCountdownTick, udpwire.ServerCountdownTick, udpwire.ServerGameStart} {
		if m := p.reply(); m.Type != typ {
			t.Fatalf("got %v, want %v", m.Type, typ)
		}
	}
	if c.join(id2) != 0 {
		t.Error("joined a room past GAME_START")
	}
	st := s.Stats()
	for reason, want := range map[string]uint64{FailRoomZero: 1, FailMissing: 1, FailFull: 1, FailState: 1} {
		if st.Failures[reason] != want {
			t.Errorf("Failures[%s] = %d, want %d (all: %v)", reason, st.Failures[reason], want, st.Failures)
		}
	}
}

func TestMaxInstances(t *testing.T) {
	cfg := testConfig()
	cfg.MaxInstances = 2
	s := start(t, cfg)
	c := dial(t, s.Addr(), cfg.Profile)
	c.create()
	c.create()
	seq := c.next()
	c.send(udpwire.AppendCreateRoom(nil, cfg.Profile, seq))
	c.expect(udpwire.LobbyJoinFailed, seq)
	if _, err := s.Allocate(2); err == nil {
		t.Error("Allocate beyond MaxInstances succeeded")
	}
	if st := s.Stats(); st.Instances != 2 || st.Failures[FailMaxInstances] != 1 {
		t.Errorf("instances %d, max-instances failures %d", st.Instances, st.Failures[FailMaxInstances])
	}
}

// TestMalformedDropped sends each kind of bad datagram and checks there is
// no reply at all, the server keeps serving, and the drop is counted under
// the wire package's rule id.
func TestMalformedDropped(t *testing.T) {
	p := udpwire.ProfileSpec
	good := udpwire.AppendListRooms(nil, p, 1)
	badCRC := bytes.Clone(good)
	badCRC[len(badCRC)-1] ^= 0xFF
	wrongDir := udpwire.AppendJoinFailed(nil, p, 1) // a reply sent to the lobby
	reqAsReply := udpwire.AppendRaw(nil, p, udpwire.Header{PacketType: udpwire.ServerToClient, Type: udpwire.LobbyListRooms}, nil)
	unknown := udpwire.AppendRaw(nil, p, udpwire.Header{PacketType: udpwire.ClientToServer, Type: 0x47}, nil)
	instMsg := udpwire.AppendRaw(nil, p, udpwire.Header{PacketType: udpwire.ClientToServer, Type: udpwire.ClientHello}, nil)
	shortJoin := udpwire.AppendRaw(nil, p, udpwire.Header{PacketType: udpwire.ClientToServer, Type: udpwire.LobbyJoinRoom, PayloadSize: 2, OriginalSize: 2}, []byte{0, 1})
	origSize := udpwire.AppendRaw(nil, p, udpwire.Header{PacketType: udpwire.ClientToServer, Type: udpwire.LobbyListRooms, OriginalSize: 3}, nil)
	lenLie := udpwire.AppendRaw(nil, p, udpwire.Header{PacketType: udpwire.ClientToServer, Type: udpwire.LobbyJoinRoom, PayloadSize: 9, OriginalSize: 9}, []byte{0, 0, 0, 1})
	badPT := udpwire.AppendRaw(nil, p, udpwire.Header{PacketType: 0x07, Type: udpwire.LobbyListRooms}, nil)
	cases := []struct {
		name string
		pkt  []byte
		rule udpwire.RuleID
	}{
		{"empty", nil, udpwire.RuleShort},
		{"truncated", good[:len(good)-1], udpwire.RuleShort},
		{"truncated-join", udpwire.AppendJoinRoom(nil, p, 1, 1)[:14], udpwire.RuleLength},
		{"trailing-byte", append(bytes.Clone(good), 0), udpwire.RuleLength},
		{"payload-size-lie", lenLie, udpwire.RuleLength},
		{"bad-crc", badCRC, udpwire.RuleCRC},
		{"original-size", origSize, udpwire.RuleOriginalSize},
		{"bad-packet-type", badPT, udpwire.RulePacketType},
		{"wrong-direction", wrongDir, udpwire.RuleDirection},
		{"request-as-reply", reqAsReply, udpwire.RuleDirection},
		{"unknown-type", unknown, udpwire.RuleTypeUnknown},
		{"instance-type", instMsg, udpwire.RuleTypeUnknown},
		{"join-payload-size", shortJoin, udpwire.RulePayloadSize},
	}
	s := start(t, testConfig())
	c := dial(t, s.Addr(), p)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := s.Stats().Drops[string(tc.rule)]
			c.send(tc.pkt)
			// The lobby answers in order: the first reply must be the LIST's.
			seq := c.next()
			c.send(udpwire.AppendListRooms(nil, p, seq))
			c.expect(udpwire.LobbyRoomList, seq)
			if got := s.Stats().Drops[string(tc.rule)]; got != before+1 {
				t.Errorf("Drops[%s] = %d, want %d (all: %v)", tc.rule, got, before+1, s.Stats().Drops)
			}
		})
	}
	if n := s.Stats().Requests["LOBBY_LIST_ROOMS"]; n != uint64(len(cases)) {
		t.Errorf("counted %d LIST requests, want %d: drops must not count as requests", n, len(cases))
	}
}

func TestDuplicateCreateReplayed(t *testing.T) {
	s := start(t, testConfig())
	c := dial(t, s.Addr(), udpwire.ProfileSpec)
	req := udpwire.AppendCreateRoom(nil, udpwire.ProfileSpec, 7)
	c.send(req)
	first, _ := c.recv(wait)
	c.send(req) // the client lost ROOM_CREATED and retries
	second, _ := c.recv(wait)
	if !bytes.Equal(first, second) {
		t.Fatalf("retry answered % x, first % x", second, first)
	}
	if rooms := c.list(); len(rooms) != 1 {
		t.Fatalf("a retried CREATE left %d rooms", len(rooms))
	}
	// Same for JOIN: one seat, not two.
	jr := udpwire.AppendJoinRoom(nil, udpwire.ProfileSpec, 100, 1)
	c.send(jr)
	c.recv(wait)
	c.send(jr)
	c.recv(wait)
	if rooms := c.list(); rooms[0].Players != 1 {
		t.Fatalf("a retried JOIN held %d seats", rooms[0].Players)
	}
	// A new sequence is a new request; another endpoint with the same
	// sequence is another client.
	c.send(udpwire.AppendCreateRoom(nil, udpwire.ProfileSpec, 101))
	c.recv(wait)
	d := dial(t, s.Addr(), udpwire.ProfileSpec)
	d.send(req)
	d.recv(wait)
	if st := s.Stats(); st.Replayed != 2 || st.Instances != 3 {
		t.Fatalf("replayed %d instances %d, want 2 and 3", st.Replayed, st.Instances)
	}
}

func TestRateLimitPerIP(t *testing.T) {
	t.Parallel()
	if l, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)}); err != nil {
		t.Skip("127.0.0.2 not usable:", err)
	} else {
		l.Close()
	}
	cfg := testConfig()
	cfg.RateLimit = 0.001 // no refill during the test
	cfg.RateBurst = 3
	s := start(t, cfg)
	a1 := dial(t, s.Addr(), cfg.Profile)
	a2 := dial(t, s.Addr(), cfg.Profile) // same IP, other port: same bucket
	b := dialFrom(t, "127.0.0.2", s.Addr(), cfg.Profile)
	for i := 0; i < 3; i++ {
		a1.list()
	}
	for i := 0; i < 5; i++ {
		a2.send(udpwire.AppendListRooms(nil, cfg.Profile, uint16(i)))
	}
	for i := 0; i < 3; i++ {
		b.list() // unaffected by 127.0.0.1's flood
	}
	a2.expectNone(100 * time.Millisecond)
	if st := s.Stats(); st.RateLimited != 5 || st.Drops[DropRateLimited] != 5 {
		t.Fatalf("rate-limited %d, want 5", st.RateLimited)
	}
}

func TestRateLimitPerEndpoint(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.RateLimit = 0.001
	cfg.RateBurst = 1
	cfg.RateKey = RateKeyIPPort
	s := start(t, cfg)
	a1 := dial(t, s.Addr(), cfg.Profile)
	a2 := dial(t, s.Addr(), cfg.Profile)
	a1.list()
	a2.list() // same IP, own bucket
	a1.send(udpwire.AppendListRooms(nil, cfg.Profile, 9))
	a1.expectNone(100 * time.Millisecond)
}

func TestSessionsBounded(t *testing.T) {
	cfg := testConfig()
	cfg.MaxSessions = 8
	s := start(t, cfg)
	for i := 0; i < 40; i++ {
		c := dial(t, s.Addr(), cfg.Profile)
		c.list()
		c.conn.Close()
	}
	if st := s.Stats(); st.Sessions > 8 || st.Sessions < 1 {
		t.Fatalf("sessions = %d with MaxSessions 8", st.Sessions)
	}
}

func TestSessionTableExpiry(t *testing.T) {
	tab := newSessionTable(4, 100)
	ep := at(1)
	tab.put(ep, session{lastSeen: 0, seq: 5}, 0)
	if _, ok := tab.get(ep, 100); !ok {
		t.Fatal("session gone before its ttl")
	}
	if _, ok := tab.get(ep, 101); ok {
		t.Fatal("expired session still returned")
	}
	for i := 0; i < 4; i++ {
		tab.put(at(uint16(10+i)), session{lastSeen: 200}, 200)
	}
	// ep expired: the sweep frees it, nothing live is evicted.
	if _, ok := tab.m[ep]; ok {
		t.Fatal("expired session kept when the table filled up")
	}
	if len(tab.m) != 4 {
		t.Fatalf("len %d, want 4", len(tab.m))
	}
	tab.put(at(99), session{lastSeen: 201}, 201) // full of live ones: evict one
	if len(tab.m) != 4 {
		t.Fatalf("len %d after eviction, want 4", len(tab.m))
	}
}

func TestConfigValidate(t *testing.T) {
	if c := DefaultConfig(); c.Validate() != nil {
		t.Fatalf("defaults invalid: %v", c.Validate())
	}
	c := DefaultConfig()
	c.Addr = "nope"
	c.MaxInstances = 0
	c.BasePort = 65500
	c.MaxPlayers = 0
	c.CountdownInterval = 0
	c.RateLimit = -1
	err := c.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, field := range []string{"Addr", "MaxInstances", "MaxPlayers", "CountdownInterval", "RateLimit"} {
		if !bytes.Contains([]byte(err.Error()), []byte(field)) {
			t.Errorf("error does not name %s: %v", field, err)
		}
	}
	c = DefaultConfig()
	c.BasePort = 65500
	if err := c.Validate(); err == nil {
		t.Error("pool past 65535 accepted")
	}
	if _, err := Listen(Config{}); err == nil {
		t.Error("Listen accepted a zero Config")
	}
}

func TestDropNamesFit(t *testing.T) {
	var c counters
	if len(dropNames) > len(c.drops) || len(failNames) > len(c.failures) {
		t.Fatal("counter arrays too small for the reasons")
	}
}
