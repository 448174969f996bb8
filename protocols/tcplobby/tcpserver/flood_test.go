package tcpserver

import (
	"math/rand/v2"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// floodBytes returns what one flooding connection sends: random bytes, or
// well-framed requests with one of them mutated (a byte flipped, the length
// prefix changed, cut short, or bytes appended). Joins name room ids no
// room has, so the flood cannot sit in the good clients' room.
func floodBytes(r *rand.Rand) []byte {
	if r.IntN(4) == 0 {
		b := make([]byte, r.IntN(300))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	msgs := []tcpwire.Message{
		&tcpwire.ConnectReq{PlayerName: tcpwire.MakeName("f")},
		&tcpwire.ListRoomsReq{},
		&tcpwire.CreateRoomReq{RoomName: tcpwire.MakeName("flood"), PlayerName: tcpwire.MakeName("f")},
		&tcpwire.JoinRoomReq{RoomID: 0xFFFF0000 | r.Uint32()>>16, PlayerName: tcpwire.MakeName("f")},
		&tcpwire.ReadyReq{},
		&tcpwire.StartReq{},
	}
	var b []byte
	for range 1 + r.IntN(6) {
		b = tcpwire.AppendFrame(b, msgs[r.IntN(len(msgs))])
	}
	switch r.IntN(5) {
	case 0:
		b[r.IntN(len(b))] ^= byte(1 + r.IntN(255))
	case 1:
		b[r.IntN(4)] = byte(r.Uint32()) // length prefix of the first frame
	case 2:
		b = b[:r.IntN(len(b))]
	case 3:
		b = append(b, byte(r.Uint32()), byte(r.Uint32()))
	case 4: // well-formed only
	}
	return b
}

// TestFloodWithGoodClients: while flooders open connections and send
// random and mutated-valid bytes (some close at once, some keep the socket
// open without reading), two well-behaved clients play full room cycles
// (create, join, ready, start, countdown, GAME_START) on the connections
// they opened first, and must see exactly the expected frames each time,
// even while flooders are turned away at MaxConns. Afterwards no room and no connection is
// left, and Close leaves no goroutine.
func TestFloodWithGoodClients(t *testing.T) {
	before := runtime.NumGoroutine()
	cfg := testConfig(nil)
	cfg.Linger = 50 * time.Millisecond
	cfg.MaxConns = 40
	s := startServer(t, cfg)

	a, b := dial(t, s), dial(t, s)
	deadline := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := 0
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 42))
			for i := 0; i < 150 && time.Now().Before(deadline); i++ {
				nc, err := net.Dial("tcp", s.Addr().String())
				if err != nil {
					continue // cap reached or backlog full: fine
				}
				mu.Lock()
				conns++
				mu.Unlock()
				nc.SetDeadline(time.Now().Add(ioTimeout))
				nc.Write(floodBytes(r))
				if r.IntN(3) == 0 {
					// Keep it open a little without reading: the
					// server must not wait for it.
					time.Sleep(time.Duration(r.IntN(3)) * time.Millisecond)
				}
				nc.Close()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	cycles := 0
	for cycles < 3 || !isDone(done) {
		if time.Now().After(deadline.Add(time.Second)) {
			break
		}
		// a creates a new room, leaving the previous one (b, alone there
		// now, is told); b follows, which removes the room it leaves.
		ack := a.create("good", "a")
		if ack.RoomID == 0 {
			t.Fatalf("cycle %d: CREATE refused (flooders hold at most 6 rooms)", cycles)
		}
		a.expect(tcpwire.TypeRoomUpdate)
		if cycles > 0 {
			b.expectSeq(tcpwire.TypePlayerLeft, tcpwire.TypeRoomUpdate)
		}
		if b.join(ack.RoomID, "b").Status != tcpwire.JoinSuccess {
			t.Fatalf("cycle %d: JOIN failed", cycles)
		}
		b.expect(tcpwire.TypeRoomUpdate)
		a.expectSeq(tcpwire.TypePlayerJoin, tcpwire.TypeRoomUpdate)
		readyAll(t, []*client{a, b})
		a.send(&tcpwire.StartReq{})
		for _, c := range []*client{a, b} {
			for _, v := range []uint8{3, 2, 1} {
				if m := c.expect(tcpwire.TypeCountdown).(*tcpwire.Countdown); m.Seconds != v {
					t.Fatalf("cycle %d: COUNTDOWN %d, want %d", cycles, m.Seconds, v)
				}
			}
			gs := c.expect(tcpwire.TypeGameStart).(*tcpwire.GameStart)
			if gs.UDPPort != gameAddr.Port() || gs.PlayerCount != 2 {
				t.Fatalf("cycle %d: GAME_START %+v", cycles, gs)
			}
		}
		a.send(&tcpwire.ListRoomsReq{})
		a.expect(tcpwire.TypeListRoomsAck)
		cycles++
	}
	<-done
	if cycles < 3 {
		t.Fatalf("only %d good cycles", cycles)
	}
	mu.Lock()
	t.Logf("%d good cycles during %d flood connections; stats %+v", cycles, conns, s.Stats())
	mu.Unlock()
	a.nc.Close()
	b.nc.Close()
	waitFor(t, "connections to end", func() bool { return s.Stats().ConnsActive == 0 })
	if st := s.Stats(); st.RoomsActive != 0 || st.RoomsCreated != st.RoomsRemoved {
		t.Fatalf("rooms left behind: %+v", st)
	}
	s.Close()
	waitFor(t, "goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
}

func isDone(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
