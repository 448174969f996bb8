package tcpclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpserver"
	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
	"github.com/lobbybench/lobbybench/result"
	"github.com/lobbybench/lobbybench/simclient"
)

// failingPool is an InstancePool out of instances, in the UDP lobby's words.
type failingPool struct{}

func (failingPool) Allocate(int) (netip.AddrPort, error) {
	return netip.AddrPort{}, errors.New("udp: allocate: no instance (max-instances)")
}

// startServer runs the reference TCP lobby on 127.0.0.1 port 0 for the
// test, its defaults changed by set.
func startServer(t testing.TB, set func(*tcpserver.Config)) *tcpserver.Server {
	t.Helper()
	cfg := tcpserver.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.CountdownInterval = 5 * time.Millisecond
	cfg.Pool = tcpserver.StaticPool{Addr: netip.MustParseAddrPort("127.0.0.1:9999")}
	set(&cfg)
	srv, err := tcpserver.Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); srv.Close(); <-done })
	return srv
}

// rawPlayer is a connection of the test's own to the lobby: it creates a
// room (and may start it) so that the session under test finds the room
// taken, full or in game. It stays open until the test ends.
type rawPlayer struct {
	t  *testing.T
	c  net.Conn
	fr *tcpwire.FrameReader
}

func dialRaw(t *testing.T, addr netip.AddrPort) *rawPlayer {
	t.Helper()
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	return &rawPlayer{t: t, c: c, fr: tcpwire.NewFrameReader(c, 0)}
}

// send writes m and reads frames until one of type want.
func (r *rawPlayer) send(m tcpwire.Message, want tcpwire.Type) tcpwire.Message {
	r.t.Helper()
	if _, err := r.c.Write(frame(m)); err != nil {
		r.t.Fatal(err)
	}
	for range 100 {
		p, err := r.fr.Next()
		if err != nil {
			r.t.Fatalf("waiting for %v: %v", want, err)
		}
		if reply, err := tcpwire.Decode(p); err == nil && reply.Type() == want {
			return reply
		}
	}
	r.t.Fatalf("no %v in 100 frames", want)
	return nil
}

// createRoom makes the raw player create a room; it returns its id.
func (r *rawPlayer) createRoom() uint32 {
	r.t.Helper()
	ack := r.send(&tcpwire.CreateRoomReq{RoomName: tcpwire.MakeName("held"), PlayerName: tcpwire.MakeName("holder")}, tcpwire.TypeCreateRoomAck)
	id := ack.(*tcpwire.CreateRoomAck).RoomID
	if id == 0 {
		r.t.Fatal("the raw player's create was refused")
	}
	return id
}

// TestRefusalNamed: every refusal of the tcp-lobby client is a
// simclient.Refusal naming the reply (the server's own words included), the
// request, what the reply means (tcp-lobby.md) and the reference server's
// counter and setting that govern it; its reason code is unchanged.
func TestRefusalNamed(t *testing.T) {
	noop := func(*tcpserver.Config) {}
	hold := func(t *testing.T, addr netip.AddrPort) string { dialRaw(t, addr).createRoom(); return "" }
	holdID := func(t *testing.T, addr netip.AddrPort) string { return fmt.Sprint(dialRaw(t, addr).createRoom()) }
	holdStarted := func(t *testing.T, addr netip.AddrPort) string {
		r := dialRaw(t, addr)
		id := r.createRoom()
		r.send(&tcpwire.ReadyReq{}, tcpwire.TypePlayerReady)
		r.send(&tcpwire.StartReq{}, tcpwire.TypeCountdown)
		return fmt.Sprint(id)
	}
	for _, tt := range []struct {
		name   string
		set    func(*tcpserver.Config)
		before func(t *testing.T, addr netip.AddrPort) string // returns the room id the flow's %s takes
		flow   string
		reason string
		want   []string
	}{
		{"create beyond the per-address room quota", func(c *tcpserver.Config) { c.MaxRoomsPerIP = 1 }, hold, "[connect, create]", simclient.ReasonRoomFull,
			[]string{"the server answered CREATE_ROOM_ACK RoomID 0 (hash 0) to CREATE_ROOM_REQ: ", "tcp-lobby.md §5.1",
				"tcp-lobby.errors.rooms-per-ip", "--tcp-max-rooms-per-ip", "tcp-lobby.errors.rooms-exhausted", "MAX_ROOMS", "lobbybench describe"}},
		{"create when every room is taken", func(c *tcpserver.Config) { c.MaxRooms, c.MaxRoomsPerIP = 1, -1 }, hold, "[connect, create]", simclient.ReasonRoomFull,
			[]string{"the server answered CREATE_ROOM_ACK RoomID 0", "tcp-lobby.errors.rooms-exhausted", "--tcp-max-rooms-per-ip"}},
		{"join of a missing room", noop, nil, "[connect, {join: 12345}]", result.ReasonJoinFailed,
			[]string{"the server answered JOIN_ROOM_ACK ROOM_NOT_FOUND to JOIN_ROOM_REQ for room 12345: ", "tcp-lobby.md §5.1", "tcp-lobby.errors.room-not-found"}},
		{"join of a full room", func(c *tcpserver.Config) { c.MaxPlayers = 1 }, holdID, "[connect, {join: %s}]", result.ReasonJoinFailed,
			[]string{"the server answered JOIN_ROOM_ACK ROOM_FULL to JOIN_ROOM_REQ for room ", "MAX_PLAYERS (4)", "tcp-lobby.errors.room-full"}},
		{"join of a room in game", func(c *tcpserver.Config) { c.CountdownInterval = time.Minute }, holdStarted, "[connect, {join: %s}]", result.ReasonJoinFailed,
			[]string{"the server answered JOIN_ROOM_ACK ROOM_IN_GAME to JOIN_ROOM_REQ", "START_REQ on", "tcp-lobby.errors.room-in-game"}},
		{"start from a non-host", noop, holdID, "[connect, {join: %s}, ready, start]", simclient.ReasonRefused,
			[]string{`the server answered ERROR_MSG 0x03 "only the host can start the game" to START_REQ: `, "not host (tcp-lobby.md §5.4)", "tcp-lobby.errors.not-host"}},
		{"start with a player not ready", noop, nil, "[connect, create, start]", simclient.ReasonRefused,
			[]string{`the server answered ERROR_MSG 0x04 "not all players are ready" to START_REQ: `, "tcp-lobby.md §5.4", "tcp-lobby.errors.not-all-ready"}},
		{"ready outside a room", noop, nil, "[connect, ready]", simclient.ReasonRefused,
			[]string{`the server answered ERROR_MSG 0x02 "not in a room" to READY_REQ: `, "tcp-lobby.errors.not-in-room"}},
		{"no game instance", func(c *tcpserver.Config) { c.Pool = failingPool{} }, nil, "[connect, create, ready, start, wait_game_start]", simclient.ReasonRefused,
			[]string{`the server answered ERROR_MSG 0x06 "no game instance available: udp: allocate: no instance (max-instances)" to the room's start (waiting for GAME_START): `,
				"tcp-lobby.errors.pool-error", "--max-instances", "--cleanup-interval", "embedded_server max_instances, cleanup_interval"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			addr := startServer(t, tt.set).Addr()
			flow := tt.flow
			if tt.before != nil {
				if id := tt.before(t, addr); strings.Contains(flow, "%s") {
					flow = fmt.Sprintf(flow, id)
				}
			}
			p := plan(t, "defaults: {timeout: 10s, retries: 0}\n", "  - steps: "+flow+"\n")
			checkRefusal(t, runSessions(t, p, addr, 1).errs[0], tt.reason, tt.want)
		})
	}
}

// TestRefusalNamedFake: the refusals the reference server gives only under
// conditions a test cannot hold still (its connection caps close the
// connection at once) or never (CONNECT_ACK Success 0 needs an empty
// name, which the client never sends), from a fake lobby speaking its words.
func TestRefusalNamedFake(t *testing.T) {
	errorOn := func(code tcpwire.ErrorCode, text string) func(tcpwire.Message) [][]byte {
		return func(req tcpwire.Message) [][]byte {
			if _, ok := req.(*tcpwire.ConnectReq); ok {
				return [][]byte{frame(tcpwire.NewErrorMsg(code, text))}
			}
			return nil
		}
	}
	for _, tt := range []struct {
		name  string
		reply func(tcpwire.Message) [][]byte
		want  []string
	}{
		{"connect refused", func(req tcpwire.Message) [][]byte {
			return [][]byte{frame(&tcpwire.ConnectAck{})}
		}, []string{`the server answered CONNECT_ACK Success 0 to CONNECT_REQ for name "bot0": `, "tcp-lobby.md §5.2", "tcp-lobby.errors.invalid-name"}},
		{"per-address connection cap", errorOn(tcpwire.ErrCodeServerError, "too many connections from your address"),
			[]string{`the server answered ERROR_MSG 0x06 "too many connections from your address" to CONNECT_REQ: `, "--max-conns-per-ip", "tcp-lobby.conns.rejected_per_ip"}},
		{"connection cap", errorOn(tcpwire.ErrCodeServerError, "server full: too many connections"),
			[]string{`ERROR_MSG 0x06 "server full: too many connections"`, "--max-conns,", "tcp-lobby.conns.rejected "}},
		{"another server's error", errorOn(tcpwire.ErrCodeServerError, "database down"),
			[]string{`ERROR_MSG 0x06 "database down"`, "a server error (tcp-lobby.md §5.5)", "--max-conns", "--max-conns-per-ip", "--tcp-idle-timeout", "--max-instances"}},
		{"a code the protocol does not list", errorOn(0x42, "banned"),
			[]string{`ERROR_MSG 0x42 "banned" to CONNECT_REQ: `, "a code tcp-lobby.md §5.5 does not list"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := plan(t, "defaults: {timeout: 10s, retries: 0}\n", "  - steps: [connect]\n")
			checkRefusal(t, runSessions(t, p, script(t, tt.reply), 1).errs[0], simclient.ReasonRefused, tt.want)
		})
	}
}

func checkRefusal(t *testing.T, err error, reason string, want []string) {
	t.Helper()
	if !simclient.IsRefusal(err) {
		t.Fatalf("error %v is no refusal", err)
	}
	var se *simclient.StepError
	if !errors.As(err, &se) || se.Reason != reason {
		t.Errorf("error %v: not a step failure with reason %s", err, reason)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
}
