package udpserver

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/internal/testkit/quietport"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

func roomState(t *testing.T, c *client, id uint32) (udpwire.RoomState, uint16, bool) {
	t.Helper()
	for _, r := range c.list() {
		if r.ID == id {
			return r.State, r.Players, true
		}
	}
	return 0, 0, false
}

// TestGameFlow runs the whole flow: lobby create and join, instance
// handshake, ready, countdown, game start and end, and checks the lobby's
// list follows the instance.
func TestGameFlow(t *testing.T) {
	t.Parallel()
	for _, prof := range []udpwire.Profile{udpwire.ProfileSpec, udpwire.ProfileRType17} {
		t.Run(prof.String(), func(t *testing.T) {
			cfg := testConfig()
			cfg.Profile = prof
			cfg.CountdownInterval = 30 * time.Millisecond
			cfg.GameLength = 60 * time.Millisecond
			s := start(t, cfg)
			lob := dial(t, s.Addr(), prof)
			id, port := lob.create()
			if lob.join(id) != port {
				t.Fatal("join failed")
			}
			a := dial(t, at(port), prof) // the creator
			b := dial(t, at(port), prof) // the joiner (holds the seat)
			a.expect(udpwire.ServerHello, a.inst(udpwire.ClientHello, 0))
			if m := a.expect(udpwire.ServerPong, a.inst(udpwire.ClientPing, 0xDEADBEEF)); m.Value != 0xDEADBEEF {
				t.Fatalf("PONG echoed %#x", m.Value)
			}
			a.expect(udpwire.ServerJoinAccept, a.inst(udpwire.ClientJoinRequest, 0))
			b.expect(udpwire.ServerJoinAccept, b.inst(udpwire.ClientJoinRequest, 0))
			// A retried JOIN_REQUEST is accepted again without a second seat.
			b.expect(udpwire.ServerJoinAccept, b.inst(udpwire.ClientJoinRequest, 0))
			if st, n, _ := roomState(t, lob, id); st != udpwire.Waiting || n != 2 {
				t.Fatalf("room %v with %d players, want Waiting with 2", st, n)
			}
			a.inst(udpwire.ClientReady, 0)
			a.expectNone(3 * cfg.CountdownInterval) // b is not ready yet
			b.inst(udpwire.ClientReady, 0)
			for _, c := range []*client{a, b} {
				if m := c.reply(); m.Type != udpwire.ServerAllReady {
					t.Fatalf("got %v, want ALL_READY", m.Type)
				}
				if m := c.reply(); m.Type != udpwire.ServerCountdownTick || m.Value != 3 {
					t.Fatalf("got %v %d, want COUNTDOWN_TICK 3", m.Type, m.Value)
				}
			}
			if st, _, _ := roomState(t, lob, id); st != udpwire.Countdown {
				t.Fatalf("room %v during countdown", st)
			}
			for _, c := range []*client{a, b} {
				for _, v := range []uint32{2, 1} {
					if m := c.reply(); m.Type != udpwire.ServerCountdownTick || m.Value != v {
						t.Fatalf("got %v %d, want COUNTDOWN_TICK %d", m.Type, m.Value, v)
					}
				}
				if m := c.reply(); m.Type != udpwire.ServerGameStart {
					t.Fatalf("got %v, want GAME_START", m.Type)
				}
			}
			// Too late to join, in the lobby or the instance.
			late := dial(t, at(port), prof)
			late.expect(udpwire.ServerJoinDeny, late.inst(udpwire.ClientJoinRequest, 0))
			for _, c := range []*client{a, b} {
				m := c.reply()
				if m.Type != udpwire.ServerGameEnd || m.Value != 1 {
					t.Fatalf("got %v %d, want GAME_END winner 1", m.Type, m.Value)
				}
			}
			if st, _, _ := roomState(t, lob, id); st != udpwire.Finished {
				t.Fatalf("room %v after GAME_END", st)
			}
			if lob.join(id) != 0 {
				t.Fatal("joined a Finished room")
			}
			if g := s.Stats().GamesStarted; g != 1 {
				t.Fatalf("GamesStarted %d", g)
			}
		})
	}
}

func TestNotJoinedAndDisconnect(t *testing.T) {
	cfg := testConfig()
	s := start(t, cfg)
	lob := dial(t, s.Addr(), cfg.Profile)
	id, port := lob.create()
	a := dial(t, at(port), cfg.Profile)
	b := dial(t, at(port), cfg.Profile)
	stranger := dial(t, at(port), cfg.Profile)
	stranger.inst(udpwire.ClientReady, 0)
	stranger.inst(udpwire.ClientDisconnect, 0)
	stranger.expectNone(50 * time.Millisecond)
	if d := s.Stats().Drops[DropNotJoined]; d != 2 {
		t.Fatalf("not-joined drops %d, want 2", d)
	}
	a.expect(udpwire.ServerJoinAccept, a.inst(udpwire.ClientJoinRequest, 0))
	b.expect(udpwire.ServerJoinAccept, b.inst(udpwire.ClientJoinRequest, 0))
	b.inst(udpwire.ClientReady, 0) // b ready, a not: no countdown
	a.inst(udpwire.ClientDisconnect, 3)
	// b is told a (player 1) left, then being the only one and ready, the
	// countdown starts.
	if m := b.reply(); m.Type != udpwire.ServerPlayerDisconnected || m.Value != 1 {
		t.Fatalf("got %v %d, want PLAYER_DISCONNECTED 1", m.Type, m.Value)
	}
	if m := b.reply(); m.Type != udpwire.ServerAllReady {
		t.Fatalf("got %v, want ALL_READY", m.Type)
	}
	if _, n, _ := roomState(t, lob, id); n != 1 {
		t.Fatalf("%d players listed after a DISCONNECT, want 1", n)
	}
	// An instance socket rejects lobby messages and malformed datagrams.
	b.send(udpwire.AppendListRooms(nil, cfg.Profile, 1))
	eventually(t, "I-TYPE-UNKNOWN drop", func() bool { return s.Stats().Drops[string(udpwire.RuleInstTypeUnknown)] == 1 })
}

func TestCountdownCancelledWhenEmpty(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.CountdownInterval = 300 * time.Millisecond // the DISCONNECT must land within 3 of them
	s := start(t, cfg)
	lob := dial(t, s.Addr(), cfg.Profile)
	id, port := lob.create()
	a := dial(t, at(port), cfg.Profile)
	a.expect(udpwire.ServerJoinAccept, a.inst(udpwire.ClientJoinRequest, 0))
	a.inst(udpwire.ClientReady, 0)
	a.reply() // ALL_READY
	a.reply() // TICK 3
	a.inst(udpwire.ClientDisconnect, 0)
	eventually(t, "room back to Waiting", func() bool {
		st, n, _ := roomState(t, lob, id)
		return st == udpwire.Waiting && n == 0
	})
	time.Sleep(4 * cfg.CountdownInterval)
	if st, _, _ := roomState(t, lob, id); st != udpwire.Waiting || s.Stats().GamesStarted != 0 {
		t.Fatalf("cancelled countdown went on: %v", st)
	}
}

// TestSeatHold: a JOIN_SUCCESS reserves the seat, a storm of joins cannot
// oversubscribe, the countdown waits for held seats, and an untaken seat is
// released after SeatHold.
func TestSeatHold(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.MaxPlayers = 3
	// The unclaimed hold starts with the joins below and must outlast
	// everything up to the roomState check (eight more joins, b's join,
	// two readies, 100 ms of silence): seconds, for a loaded race run.
	cfg.SeatHold = 2 * time.Second
	s := start(t, cfg)
	lob := dial(t, s.Addr(), cfg.Profile)
	id, port := lob.create()
	// Creator enters the instance; two lobby joins take the last seats.
	a := dial(t, at(port), cfg.Profile)
	a.expect(udpwire.ServerJoinAccept, a.inst(udpwire.ClientJoinRequest, 0))
	ok := 0
	for i := 0; i < 10; i++ {
		if lob.join(id) != 0 {
			ok++
		}
	}
	if ok != 2 {
		t.Fatalf("%d of 10 joins succeeded for 2 free seats", ok)
	}
	// One holder arrives (same IP: takes its hold); the other never does.
	b := dial(t, at(port), cfg.Profile)
	b.expect(udpwire.ServerJoinAccept, b.inst(udpwire.ClientJoinRequest, 0))
	// Everyone joined is ready, but a seat is still held: no countdown yet.
	a.inst(udpwire.ClientReady, 0)
	b.inst(udpwire.ClientReady, 0)
	a.expectNone(100 * time.Millisecond)
	if _, n, _ := roomState(t, lob, id); n != 3 {
		t.Fatalf("listed %d players, want 3 (2 joined + 1 held)", n)
	}
	// The hold expires: the seat frees and the countdown starts.
	if m := a.reply(); m.Type != udpwire.ServerAllReady {
		t.Fatalf("got %v, want ALL_READY once the hold expired", m.Type)
	}
	if st := s.Stats(); st.HeldSeats != 0 || st.Players != 2 {
		t.Fatalf("held %d players %d after expiry", st.HeldSeats, st.Players)
	}
}

func TestFullInstanceDenies(t *testing.T) {
	cfg := testConfig()
	cfg.MaxPlayers = 2
	s := start(t, cfg)
	lob := dial(t, s.Addr(), cfg.Profile)
	_, port := lob.create()
	for i := 0; i < 2; i++ {
		c := dial(t, at(port), cfg.Profile)
		c.expect(udpwire.ServerJoinAccept, c.inst(udpwire.ClientJoinRequest, 0))
	}
	c := dial(t, at(port), cfg.Profile)
	c.expect(udpwire.ServerJoinDeny, c.inst(udpwire.ClientJoinRequest, 0))
	if s.Stats().Failures[FailDeny] != 1 {
		t.Fatal("deny not counted")
	}
}

func TestIdlePlayerDropped(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.IdleTimeout = 500 * time.Millisecond // b pings every ~20 ms: far inside it
	s := start(t, cfg)
	lob := dial(t, s.Addr(), cfg.Profile)
	id, port := lob.create()
	a := dial(t, at(port), cfg.Profile) // goes silent
	b := dial(t, at(port), cfg.Profile) // keeps pinging
	a.expect(udpwire.ServerJoinAccept, a.inst(udpwire.ClientJoinRequest, 0))
	b.expect(udpwire.ServerJoinAccept, b.inst(udpwire.ClientJoinRequest, 0))
	deadline := time.Now().Add(wait)
	// The drop notice to b may arrive before the PONG of the ping in
	// flight when a is dropped, so b reads replies until its PONG.
	var bNotice *udpwire.Message
	for {
		seq := b.inst(udpwire.ClientPing, 1)
		for {
			m := b.reply()
			if m.Type == udpwire.ServerPlayerDisconnected && bNotice == nil {
				bNotice = &m
				continue
			}
			if m.Type != udpwire.ServerPong || m.Seq != seq {
				t.Fatalf("b got %v seq %d, want SERVER_PONG seq %d", m.Type, m.Seq, seq)
			}
			break
		}
		if raw, ok := a.recv(20 * time.Millisecond); ok {
			var m udpwire.Message
			if err := (udpwire.Decoder{}).Decode(raw, &m); err != nil || m.Type != udpwire.ServerDisconnect || m.Value != DisconnectTimeout {
				t.Fatalf("idle player got % x (%v), want SERVER_DISCONNECT timeout", raw, err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("idle player never dropped")
		}
	}
	if bNotice == nil {
		m := b.reply()
		bNotice = &m
	}
	if m := *bNotice; m.Type != udpwire.ServerPlayerDisconnected || m.Value != 1 {
		t.Fatalf("b got %v %d, want PLAYER_DISCONNECTED 1", m.Type, m.Value)
	}
	if _, n, _ := roomState(t, lob, id); n != 1 {
		t.Fatalf("listed %d players, want 1", n)
	}
}

func TestCleanupReusesPorts(t *testing.T) {
	cfg := testConfig()
	cfg.MaxInstances = 3
	cfg.BasePort = quietport.Pick(t, "udp", 3)
	cfg.CleanupInterval = 40 * time.Millisecond
	cfg.SeatHold = time.Second // rooms 1 and 3 wait this for a creator who never comes
	cfg.GameLength = time.Millisecond
	s := start(t, cfg)
	lob := dial(t, s.Addr(), cfg.Profile)
	// Room 2 comes from Allocate: its held seat keeps it from being cleaned
	// up (as empty) before its player arrives, however slow the machine.
	var ports []uint16
	_, p1 := lob.create()
	ap, err := s.Allocate(1)
	if err != nil {
		t.Fatal(err)
	}
	_, p3 := lob.create()
	ports = append(ports, p1, ap.Port(), p3)
	for i, p := range ports {
		if int(p) != cfg.BasePort+i {
			t.Fatalf("ports %v, want %d.. in order", ports, cfg.BasePort)
		}
	}
	// Room 2 plays a game to Finished (with its player still there); rooms 1
	// and 3 stay empty. All three go away.
	c := dial(t, at(ports[1]), cfg.Profile)
	c.expect(udpwire.ServerJoinAccept, c.inst(udpwire.ClientJoinRequest, 0))
	c.inst(udpwire.ClientReady, 0)
	eventually(t, "cleanup", func() bool { return len(lob.list()) == 0 })
	// The finished room's player is told the instance closed.
	for {
		m := c.reply()
		if m.Type == udpwire.ServerDisconnect {
			if m.Value != DisconnectShutdown {
				t.Fatalf("disconnect reason %d", m.Value)
			}
			break
		}
	}
	st := s.Stats()
	if st.InstancesClosed != 3 || st.Instances != 0 {
		t.Fatalf("closed %d, live %d", st.InstancesClosed, st.Instances)
	}
	// Ports are reused, ids are not.
	id, p := lob.create()
	if int(p) != cfg.BasePort || id != 4 {
		t.Fatalf("after cleanup: room %d on port %d, want room 4 on %d", id, p, cfg.BasePort)
	}
}

func TestEmptyRoomKeptForAnInterval(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.CleanupInterval = 50 * time.Millisecond
	cfg.SeatHold = 2 * time.Second // far beyond the sleep below, however slow the machine
	s := start(t, cfg)
	lob := dial(t, s.Addr(), cfg.Profile)
	lob.create()
	// The creator has SeatHold and then a cleanup interval to arrive: the
	// room is still listed after several intervals.
	time.Sleep(200 * time.Millisecond)
	if len(lob.list()) != 1 {
		t.Fatal("fresh room cleaned up before its creator's SeatHold passed")
	}
	eventually(t, "cleanup", func() bool { return s.Stats().Instances == 0 })
}

func TestAllocate(t *testing.T) {
	cfg := testConfig()
	cfg.SeatHold = 50 * time.Millisecond
	s := start(t, cfg)
	ap, err := s.Allocate(2)
	if err != nil {
		t.Fatal(err)
	}
	if ap.Addr().String() != "127.0.0.1" || ap.Port() == 0 {
		t.Fatalf("Allocate returned %v", ap)
	}
	lob := dial(t, s.Addr(), cfg.Profile)
	rooms := lob.list()
	if len(rooms) != 1 || rooms[0].Port != ap.Port() || rooms[0].Players != 2 {
		t.Fatalf("list after Allocate(2): %v", rooms)
	}
	// Both seats are held: the lobby's room is full for others only if
	// MaxPlayers is 2; with 4, two more may join.
	// Three joins in turn (each a round trip): the first two get the port, the third nothing.
	id := rooms[0].ID
	if first, second, third := lob.join(id), lob.join(id), lob.join(id); first == 0 || second == 0 || third != 0 {
		t.Fatalf("lobby joins beside 2 allocated seats gave ports %d, %d, %d; want two non-zero, then 0", first, second, third)
	}
	for _, n := range []int{0, -1} {
		if _, err := s.Allocate(n); err == nil {
			t.Errorf("Allocate(%d) succeeded", n)
		}
	}
	// Release of a room nobody joined closes it at once; one with a player
	// stays.
	ap2, _ := s.Allocate(1)
	p := dial(t, at(ap2.Port()), cfg.Profile)
	p.expect(udpwire.ServerJoinAccept, p.inst(udpwire.ClientJoinRequest, 0))
	s.Release(ap2)
	s.Release(ap)
	if rooms := lob.list(); len(rooms) != 1 || rooms[0].Port != ap2.Port() {
		t.Fatalf("after Release: %v", rooms)
	}
}

func TestAllocateAdvertise(t *testing.T) {
	cfg := testConfig()
	cfg.Addr = ":0"
	s := start(t, cfg)
	if ap, err := s.Allocate(1); err != nil || !ap.Addr().IsUnspecified() || !ap.Addr().Is4() {
		t.Fatalf("lobby on every address: Allocate = %v, %v; want 0.0.0.0:port", ap, err)
	}
	cfg.AdvertiseAddr = netip.MustParseAddr("127.0.0.9")
	s2 := start(t, cfg)
	if ap, _ := s2.Allocate(1); ap.Addr() != cfg.AdvertiseAddr {
		t.Fatalf("Allocate = %v, want the advertised address", ap)
	}
}

func TestCloseDisconnectsPlayers(t *testing.T) {
	cfg := testConfig()
	s, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lob := dial(t, s.Addr(), cfg.Profile)
	_, port := lob.create()
	c := dial(t, at(port), cfg.Profile)
	c.expect(udpwire.ServerJoinAccept, c.inst(udpwire.ClientJoinRequest, 0))
	s.Close()
	s.Close() // idempotent
	if m := c.reply(); m.Type != udpwire.ServerDisconnect || m.Value != DisconnectShutdown {
		t.Fatalf("got %v %d", m.Type, m.Value)
	}
	lob.send(udpwire.AppendListRooms(nil, cfg.Profile, 1))
	lob.expectNone(50 * time.Millisecond)
}

func TestStatsText(t *testing.T) {
	st := Stats{Requests: map[string]uint64{"LOBBY_LIST_ROOMS": 3}, Drops: map[string]uint64{"U-CRC": 1}, Rooms: 2}
	var b strings.Builder
	if err := st.WriteText(&b, "udp."); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"udp.requests.LOBBY_LIST_ROOMS 3\n", "udp.drops.U-CRC 1\n", "udp.rooms 2\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
}

// TestHeldSeatTakenByStranger: when the room is full only because of held
// seats, an instance JOIN_REQUEST from an IP that holds none takes the
// oldest hold (the lobby never sold more seats than exist); when it is full
// of joined players, it is denied.
func TestHeldSeatTakenByStranger(t *testing.T) {
	cfg := testConfig()
	cfg.MaxPlayers = 1
	s := start(t, cfg)
	ap, err := s.Allocate(1) // hold with no IP
	if err != nil {
		t.Fatal(err)
	}
	a := dial(t, at(ap.Port()), cfg.Profile)
	a.expect(udpwire.ServerJoinAccept, a.inst(udpwire.ClientJoinRequest, 0))
	b := dial(t, at(ap.Port()), cfg.Profile)
	b.expect(udpwire.ServerJoinDeny, b.inst(udpwire.ClientJoinRequest, 0))
	if st := s.Stats(); st.Players != 1 || st.HeldSeats != 0 {
		t.Fatalf("players %d held %d", st.Players, st.HeldSeats)
	}
}
