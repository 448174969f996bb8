package udpclient

import (
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// fakeLobby is an in-process UDP lobby with instances, following
// udp-lobby.md unless a hook changes what it does. Hooks run on the
// server goroutine and return the datagrams to send back (nil: silence).
type fakeLobby struct {
	t    testing.TB
	p    udpwire.Profile
	conn *net.UDPConn

	mu       sync.Mutex
	nextID   uint32
	rooms    map[uint32]*fakeRoom
	received map[udpwire.MsgType]int
	seqs     map[udpwire.MsgType][]uint16

	// lobbyHook, when set, answers lobby requests instead of the default.
	lobbyHook func(f *fakeLobby, m *udpwire.Message, def []byte) []byte
	// instHook, when set, answers instance requests instead of the default.
	instHook func(f *fakeLobby, r *fakeRoom, m *udpwire.Message, def []byte) []byte
	// silent drops every request (a dead server).
	silent bool
	// countdown is the tick interval after all players are ready.
	countdown time.Duration
	// portOverride, when non-zero, is what JOIN_SUCCESS says.
	joinPort uint16
	// dup sends every lobby reply twice.
	dup bool
	// size is the players a room takes.
	size int
	// otherPort makes every instance send from a second socket, not from
	// the port the lobby handed out (replies and events alike).
	otherPort bool
	// spray, when set, is a sprayer: before each lobby reply, what it
	// returns for the request (nil: nothing) goes to the client from a
	// socket of its own (sprayFrom), as another program on the host would
	// send.
	spray     func(m *udpwire.Message, def []byte) []byte
	sprayFrom *net.UDPConn
}

type fakeRoom struct {
	id      uint32
	conn    *net.UDPConn
	out     *net.UDPConn // what the instance sends from: conn, or a second socket (otherPort)
	port    uint16
	players map[netip.AddrPort]bool // ready
	started bool
}

func newFakeLobby(t testing.TB, p udpwire.Profile, setup ...func(*fakeLobby)) *fakeLobby {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeLobby{t: t, p: p, conn: c, rooms: map[uint32]*fakeRoom{}, received: map[udpwire.MsgType]int{},
		seqs: map[udpwire.MsgType][]uint16{}, countdown: 5 * time.Millisecond, size: 4}
	for _, fn := range setup {
		fn(f)
	}
	if f.spray != nil {
		if f.sprayFrom, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.sprayFrom.Close() })
	}
	go f.serve()
	t.Cleanup(func() {
		c.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, r := range f.rooms {
			r.conn.Close()
			if r.out != r.conn {
				r.out.Close()
			}
		}
	})
	return f
}

func (f *fakeLobby) addr() netip.AddrPort { return f.conn.LocalAddr().(*net.UDPAddr).AddrPort() }

func (f *fakeLobby) count(t udpwire.MsgType) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.received[t]
}

func (f *fakeLobby) seqsOf(t udpwire.MsgType) []uint16 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]uint16(nil), f.seqs[t]...)
}

func (f *fakeLobby) serve() {
	buf := make([]byte, 65536)
	dec := udpwire.Decoder{Profile: f.p, Dir: udpwire.ClientToServer, Channel: udpwire.ChannelLobby}
	for {
		n, from, err := f.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		var m udpwire.Message
		if dec.Decode(buf[:n], &m) != nil {
			continue // malformed: silence
		}
		f.mu.Lock()
		f.received[m.Type]++
		f.seqs[m.Type] = append(f.seqs[m.Type], m.Seq)
		silent := f.silent
		f.mu.Unlock()
		if silent {
			continue
		}
		def := f.defaultLobby(&m)
		out := def
		if f.lobbyHook != nil {
			out = f.lobbyHook(f, &m, def)
		}
		if f.spray != nil {
			if junk := f.spray(&m, def); junk != nil {
				f.sprayFrom.WriteToUDPAddrPort(junk, from)
			}
		}
		if out != nil {
			f.conn.WriteToUDPAddrPort(out, from)
			if f.dup {
				f.conn.WriteToUDPAddrPort(out, from)
			}
		}
	}
}

func (f *fakeLobby) defaultLobby(m *udpwire.Message) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch m.Type {
	case udpwire.LobbyListRooms:
		var rooms []udpwire.Room
		for id := uint32(1); id <= f.nextID; id++ {
			if r := f.rooms[id]; r != nil {
				st := udpwire.Waiting
				if r.started {
					st = udpwire.Playing
				}
				rooms = append(rooms, udpwire.Room{ID: id, Players: uint16(len(r.players)), MaxPlayers: uint16(f.size), Port: r.port, State: st})
			}
		}
		b, err := udpwire.AppendRoomList(nil, f.p, m.Seq, rooms)
		if err != nil {
			f.t.Error(err)
		}
		return b
	case udpwire.LobbyCreateRoom:
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			return udpwire.AppendJoinFailed(nil, f.p, m.Seq)
		}
		f.nextID++
		r := &fakeRoom{id: f.nextID, conn: c, out: c, port: uint16(c.LocalAddr().(*net.UDPAddr).Port), players: map[netip.AddrPort]bool{}}
		if f.otherPort {
			if o, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}); err == nil {
				r.out = o
			}
		}
		f.rooms[r.id] = r
		go f.serveRoom(r)
		return udpwire.AppendRoomCreated(nil, f.p, m.Seq, r.id, r.port)
	case udpwire.LobbyJoinRoom:
		r := f.rooms[m.RoomID]
		if r == nil || r.started {
			return udpwire.AppendJoinFailed(nil, f.p, m.Seq)
		}
		port := r.port
		if f.joinPort != 0 {
			port = f.joinPort
		}
		return udpwire.AppendJoinSuccess(nil, f.p, m.Seq, r.id, port)
	}
	return nil
}

func (f *fakeLobby) serveRoom(r *fakeRoom) {
	buf := make([]byte, 2048)
	dec := udpwire.Decoder{Profile: f.p, Dir: udpwire.ClientToServer, Channel: udpwire.ChannelInstance}
	for {
		n, from, err := r.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		var m udpwire.Message
		if dec.Decode(buf[:n], &m) != nil {
			continue
		}
		f.mu.Lock()
		f.received[m.Type]++
		f.seqs[m.Type] = append(f.seqs[m.Type], m.Seq)
		f.mu.Unlock()
		var def []byte
		switch m.Type {
		case udpwire.ClientHello:
			def, _ = udpwire.AppendEmpty(nil, f.p, udpwire.ServerHello, m.Seq)
		case udpwire.ClientJoinRequest:
			f.mu.Lock()
			if r.started || len(r.players) >= f.size {
				def, _ = udpwire.AppendEmpty(nil, f.p, udpwire.ServerJoinDeny, m.Seq)
			} else {
				r.players[from] = false
				def, _ = udpwire.AppendEmpty(nil, f.p, udpwire.ServerJoinAccept, m.Seq)
			}
			f.mu.Unlock()
		case udpwire.ClientPing:
			def = udpwire.AppendPong(nil, f.p, m.Seq, m.Value)
		case udpwire.ClientReady:
			f.mu.Lock()
			r.players[from] = true
			all := len(r.players) == f.size && !r.started
			for _, ready := range r.players {
				all = all && ready
			}
			if all {
				r.started = true
			}
			var to []netip.AddrPort
			for a := range r.players {
				to = append(to, a)
			}
			f.mu.Unlock()
			if all {
				go f.countdownRoom(r, to)
			}
		case udpwire.ClientDisconnect:
			f.mu.Lock()
			delete(r.players, from)
			f.mu.Unlock()
		}
		out := def
		if f.instHook != nil {
			out = f.instHook(f, r, &m, def)
		}
		if out != nil {
			r.out.WriteToUDPAddrPort(out, from)
		}
	}
}

func (f *fakeLobby) countdownRoom(r *fakeRoom, to []netip.AddrPort) {
	send := func(b []byte) {
		for _, a := range to {
			r.out.WriteToUDPAddrPort(b, a)
		}
	}
	b, _ := udpwire.AppendEmpty(nil, f.p, udpwire.ServerAllReady, 0)
	send(b)
	for s := 3; s >= 1; s-- {
		b, _ := udpwire.Append(nil, f.p, &udpwire.Message{Header: udpwire.Header{Type: udpwire.ServerCountdownTick}, Value: uint32(s)})
		send(b)
		time.Sleep(f.countdown)
	}
	b, _ = udpwire.AppendEmpty(nil, f.p, udpwire.ServerGameStart, 0)
	send(b)
}
