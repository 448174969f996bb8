package tcpserver

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

func rawFrame(length uint32, body ...byte) []byte {
	return append(binary.LittleEndian.AppendUint32(nil, length), body...)
}

// TestBadFrames: ERROR_MSG then an orderly close, and the room is told.
func TestBadFrames(t *testing.T) {
	tests := []struct {
		name   string
		raw    []byte
		rule   string // in the ERROR_MSG text
		reason string // Stats.Errors key
	}{
		{"length 0", rawFrame(0), tcpwire.RuleFrameEmpty, "frame-empty"},
		{"length 4097", rawFrame(4097), tcpwire.RuleFrameTooLarge, "frame-too-large"},
		{"length 0xffffffff", rawFrame(0xffffffff), tcpwire.RuleFrameTooLarge, "frame-too-large"},
		// The body is still sent: the server must discard it (linger) so
		// the client sees the ERROR_MSG and EOF, not a reset.
		{"length 4097 with its body", rawFrame(4097, make([]byte, 4097)...), tcpwire.RuleFrameTooLarge, "frame-too-large"},
		{"unknown type 0x08", rawFrame(1, 0x08), tcpwire.RuleTypeUnknown, "type-unknown"},
		{"unknown type 0xff with payload", rawFrame(3, 0xff, 1, 2), tcpwire.RuleTypeUnknown, "type-unknown"},
		{"READY_REQ of 2 bytes", rawFrame(2, 0x13, 0), tcpwire.RuleSizeFixed, "wrong-size"},
		{"CREATE_ROOM_REQ of 64 bytes", rawFrame(64, append([]byte{0x03}, make([]byte, 63)...)...), tcpwire.RuleSizeFixed, "wrong-size"},
		{"JOIN_ROOM_REQ of 38 bytes", rawFrame(38, append([]byte{0x05}, make([]byte, 37)...)...), tcpwire.RuleSizeFixed, "wrong-size"},
		{"LIST_ROOMS_ACK sent by a client", rawFrame(2, 0x02, 0), "server-to-client", "wrong-direction"},
		{"GAME_START sent by a client", rawFrame(220, append([]byte{0x16}, make([]byte, 219)...)...), "server-to-client", "wrong-direction"},
		{"ROOM_UPDATE with a bad count", rawFrame(2, 0x07, 9), tcpwire.RuleCountPlayers, "wrong-size"},
		{"truncated frame then EOF", rawFrame(65, 0x03, 'a'), tcpwire.RuleFrameTruncated, "frame-truncated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, testConfig(nil))
			cs, hs, _ := newRoom(t, s, 2)
			cs[1].sendRaw(tt.raw)
			if strings.Contains(tt.name, "then EOF") {
				cs[1].nc.(*net.TCPConn).CloseWrite()
			}
			e := cs[1].expectError(tcpwire.ErrCodeServerError)
			if !strings.Contains(e.Text, tt.rule) {
				t.Errorf("ERROR_MSG text %q does not name %s", e.Text, tt.rule)
			}
			cs[1].expectEOF()
			if pl := cs[0].expect(tcpwire.TypePlayerLeft).(*tcpwire.PlayerLeft); pl.PlayerHash != hs[1] {
				t.Errorf("PLAYER_LEFT %x", pl.PlayerHash)
			}
			cs[0].expect(tcpwire.TypeRoomUpdate)
			st := s.Stats()
			if st.Errors[tt.reason] != 1 || st.Closes["bad-frame"] != 1 {
				t.Errorf("errors %v closes %v", st.Errors, st.Closes)
			}
		})
	}
}

// TestStuckReader: a member that stops reading is disconnected (queue
// overflow, or write timeout when the queue is large) while the other
// members' requests keep being answered, and a member that reads normally
// in the same room is not disconnected. WriteTimeout is a minute in the
// overflow case, so a server that waited on the stuck socket would stall
// the active client past ioTimeout.
func TestStuckReader(t *testing.T) {
	tests := []struct {
		name         string
		maxQueue     int
		writeTimeout time.Duration
		want         string
	}{
		{"queue overflow", 8, time.Minute, "queue-overflow"},
		// The queue holds far more frames than the loop can produce before
		// the write deadline fires, even on a fast idle machine.
		{"write timeout", 1 << 18, 50 * time.Millisecond, "write-timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(nil)
			cfg.MaxQueue = tt.maxQueue
			cfg.WriteTimeout = tt.writeTimeout
			cfg.SendBuffer = 4096
			s := startServer(t, cfg)
			cs, hs, _ := newRoom(t, s, 3)
			active, stuck, healthy := cs[0], cs[1], cs[2]
			stuck.nc.(*net.TCPConn).SetReadBuffer(4096)

			// active toggles ready; healthy reads in lockstep, so only the
			// stuck client falls behind.
			ready := false
			leftSeen := map[*client]bool{}
			for i := 0; !leftSeen[active] || !leftSeen[healthy]; i++ {
				if i == 200000 {
					t.Fatal("stuck client never disconnected")
				}
				active.send(&tcpwire.ReadyReq{})
				for _, c := range []*client{active, healthy} {
					for got := 0; got < 2; {
						switch m := c.next().(type) {
						case *tcpwire.PlayerReady:
							if c == active {
								ready = m.Ready
							}
							got++
						case *tcpwire.RoomUpdate:
							got++
						case *tcpwire.PlayerLeft:
							if m.PlayerHash != hs[1] {
								t.Fatalf("PLAYER_LEFT %x, want the stuck client's %x", m.PlayerHash, hs[1])
							}
							leftSeen[c] = true
							c.expect(tcpwire.TypeRoomUpdate)
						default:
							t.Fatalf("unexpected %v", m.Type())
						}
					}
				}
			}
			if st := s.Stats(); st.Closes[tt.want] != 1 || len(st.Closes) != 1 {
				t.Fatalf("closes %v, want only %s", st.Closes, tt.want)
			}
			// The room is still usable.
			if !ready {
				active.send(&tcpwire.ReadyReq{})
				active.expectSeq(tcpwire.TypePlayerReady, tcpwire.TypeRoomUpdate)
			}
			// healthy's ready state is unknown to the test: compare via START.
			active.send(&tcpwire.StartReq{})
			active.expectError(tcpwire.ErrCodeNotAllReady)
		})
	}
}

// TestHalfFrameClient: a member stuck inside a frame blocks nothing (the
// game starts and it even receives GAME_START), and is closed after the
// idle timeout with ERROR_MSG.
func TestHalfFrameClient(t *testing.T) {
	cfg := testConfig(nil)
	cfg.IdleTimeout = time.Second
	s := startServer(t, cfg)
	cs, _, _ := newRoom(t, s, 4)
	half := cs[3]
	readyAll(t, cs)
	half.sendRaw([]byte{0x41, 0x00}) // two bytes of a length prefix
	cs[0].send(&tcpwire.StartReq{})
	for _, c := range cs {
		c.expectSeq(tcpwire.TypeCountdown, tcpwire.TypeCountdown, tcpwire.TypeCountdown, tcpwire.TypeGameStart)
	}
	// The others leave before they idle out themselves.
	for i, c := range cs[:3] {
		c.send(&tcpwire.Disconnect{})
		c.expectEOF()
		for _, o := range cs[i+1:] {
			o.expectSeq(tcpwire.TypePlayerLeft, tcpwire.TypeRoomUpdate)
		}
	}
	if e := half.expectError(tcpwire.ErrCodeServerError); e.Text != "idle timeout" {
		t.Fatalf("text %q", e.Text)
	}
	half.expectEOF()
	if st := s.Stats(); st.Closes["idle-timeout"] < 1 {
		t.Fatalf("closes %v", st.Closes)
	}
}

// TestIdleTimeout: silent connections are closed, talking ones are not.
func TestIdleTimeout(t *testing.T) {
	cfg := testConfig(nil)
	// The talker speaks every 20 ms: it is dropped only if the machine
	// stalls it for the whole timeout. 500 ms was within reach of a
	// loaded 2-core machine; 1.5 s is not.
	cfg.IdleTimeout = 1500 * time.Millisecond
	s := startServer(t, cfg)
	silent := dial(t, s)
	talker := dial(t, s)
	// Talk for two timeouts: the silent connection is dropped after one,
	// and a server that did not count the talker's requests as activity
	// would have dropped the talker (connected just after it) long before
	// the loop ends.
	start := time.Now()
	for time.Since(start) < 2*cfg.IdleTimeout {
		talker.send(&tcpwire.ListRoomsReq{})
		talker.expect(tcpwire.TypeListRoomsAck)
		time.Sleep(20 * time.Millisecond)
	}
	if e := silent.expectError(tcpwire.ErrCodeServerError); e.Text != "idle timeout" {
		t.Fatalf("text %q", e.Text)
	}
	silent.expectEOF()
	talker.send(&tcpwire.ListRoomsReq{})
	talker.expect(tcpwire.TypeListRoomsAck)
	if st := s.Stats(); st.Closes["idle-timeout"] != 1 {
		t.Fatalf("closes %v", st.Closes)
	}
}

// TestConnCap: beyond MaxConns a connection gets ERROR_MSG and is closed;
// a freed slot is usable again.
func TestConnCap(t *testing.T) {
	cfg := testConfig(nil)
	cfg.MaxConns = 2
	s := startServer(t, cfg)
	a, b := dial(t, s), dial(t, s)
	for _, c := range []*client{a, b} { // both registered
		c.send(&tcpwire.ListRoomsReq{})
		c.expect(tcpwire.TypeListRoomsAck)
	}
	over := dial(t, s)
	if e := over.expectError(tcpwire.ErrCodeServerError); !strings.Contains(e.Text, "server full") {
		t.Fatalf("text %q", e.Text)
	}
	over.expectEOF()
	if st := s.Stats(); st.ConnsRejected != 1 || st.ConnsAccepted != 2 {
		t.Fatalf("rejected %d accepted %d", st.ConnsRejected, st.ConnsAccepted)
	}
	a.send(&tcpwire.Disconnect{})
	a.expectEOF()
	waitFor(t, "slot freed", func() bool { return s.Stats().ConnsActive == 1 })
	c := dial(t, s)
	c.send(&tcpwire.ListRoomsReq{})
	c.expect(tcpwire.TypeListRoomsAck)
}

// TestClose: Close tells every client, closes them, and Serve returns nil.
func TestClose(t *testing.T) {
	cfg := testConfig(nil)
	cfg.CountdownInterval = time.Hour
	s, err := Listen(cfg)
	if err == nil {
		t.Fatal("Listen without a Pool succeeded")
	}
	cfg.Pool = &fakePool{addr: gameAddr}
	before := runtime.NumGoroutine()
	s, err = Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(context.Background()) }()
	cs, _, _ := newRoom(t, s, 2)
	readyAll(t, cs)
	cs[0].send(&tcpwire.StartReq{})
	for _, c := range cs {
		c.expect(tcpwire.TypeCountdown)
	}
	s.Close()
	for _, c := range cs {
		if e := c.expectError(tcpwire.ErrCodeServerError); e.Text != "server shutting down" {
			t.Fatalf("text %q", e.Text)
		}
		c.expectEOF()
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if st := s.Stats(); st.ConnsActive != 0 || st.Closes["shutdown"] != 2 {
		t.Fatalf("stats %+v", st)
	}
	if _, err := net.Dial("tcp", s.Addr().String()); err == nil {
		t.Fatal("still accepting after Close")
	}
	s.Close() // idempotent
	// Every server goroutine is gone (timers included).
	waitFor(t, "goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
}

func TestConfigValidation(t *testing.T) {
	bad := DefaultConfig()
	bad.MaxRooms = 17
	bad.MaxPlayers = 5
	bad.MaxQueue = -1
	_, err := Listen(bad)
	if err == nil {
		t.Fatal("invalid config accepted")
	}
	for _, want := range []string{"MaxRooms 17", "MaxPlayers 5", "MaxQueue -1", "Pool is nil"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not report %q", err, want)
		}
	}
}

func TestStatsFlat(t *testing.T) {
	s := startServer(t, testConfig(nil))
	c := dial(t, s)
	c.send(&tcpwire.StartReq{})
	c.expectError(tcpwire.ErrCodeRoomNotFound)
	c.sendRaw(rawFrame(1, 0x42))
	c.expectError(tcpwire.ErrCodeServerError)
	c.expectEOF()
	waitFor(t, "close", func() bool { return s.Stats().ConnsActive == 0 })
	got := s.Stats().Flat()
	want := map[string]uint64{
		"conns.accepted":        1,
		"frames_in.START_REQ":   1,
		"frames_in.0x42":        1,
		"frames_out.ERROR_MSG":  2,
		"errors.not-in-room":    1,
		"errors.type-unknown":   1,
		"closes.bad-frame":      1,
		"conns.active":          0,
		"rooms.active":          0,
		"games.started":         0,
		"conns.rejected":        0,
		"rooms.created":         0,
		"rooms.removed":         0,
		"games.countdowns":      0,
		"games.cancelled":       0,
		"conns.rejected_per_ip": 0,
		"conns.source_ips":      0,
		"rooms.owner_ips":       0,
	}
	if len(got) != len(want) {
		t.Errorf("Flat has %d keys, want %d: %v", len(got), len(want), got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
}

func TestStaticPool(t *testing.T) {
	if a, err := (StaticPool{Addr: gameAddr}).Allocate(4); err != nil || a != gameAddr {
		t.Fatalf("Allocate = %v, %v", a, err)
	}
	if _, err := (StaticPool{}).Allocate(4); err == nil {
		t.Fatal("zero StaticPool allocated")
	}
}

// TestCloseRacesServe: Close before, during or right after Serve's start
// is safe (run with -race) and Serve returns nil.
func TestCloseRacesServe(t *testing.T) {
	for i := range 20 {
		s, err := Listen(testConfig(&fakePool{addr: gameAddr}))
		if err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		if i%2 == 0 {
			go func() { served <- s.Serve(context.Background()) }()
			s.Close()
		} else {
			s.Close()
			go func() { served <- s.Serve(context.Background()) }()
		}
		if err := <-served; err != nil {
			t.Fatalf("Serve: %v", err)
		}
	}
}

// TestCloseWaitsForPool: Close returns only after an Allocate in flight has
// returned and its address been released, so the pool can be closed next.
func TestCloseWaitsForPool(t *testing.T) {
	gate := make(chan struct{})
	pool := &fakePool{addr: gameAddr, called: make(chan int, 1), gate: gate, relCh: make(chan netip.AddrPort, 1)}
	s, err := Listen(testConfig(pool))
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(context.Background())
	cs, _, _ := newRoom(t, s, 1)
	readyAll(t, cs)
	cs[0].send(&tcpwire.StartReq{})
	<-pool.called
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while Allocate was running")
	case <-time.After(50 * time.Millisecond):
	}
	close(gate)
	<-closed
	select {
	case a := <-pool.relCh:
		if a != gameAddr {
			t.Fatalf("released %v", a)
		}
	default:
		t.Fatal("address allocated during Close was not released")
	}
}
