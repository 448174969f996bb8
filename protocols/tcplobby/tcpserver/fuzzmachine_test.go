package tcpserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

// pipeConn is a connection with no socket behind it: FuzzMachine feeds the
// server's handler itself and reads its out queue, as the read and write
// loops would.
type pipeConn struct{ remote netip.AddrPort }

func (p *pipeConn) Read([]byte) (int, error)         { return 0, io.EOF }
func (p *pipeConn) Write(b []byte) (int, error)      { return len(b), nil }
func (p *pipeConn) Close() error                     { return nil }
func (p *pipeConn) LocalAddr() net.Addr              { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7777} }
func (p *pipeConn) RemoteAddr() net.Addr             { return net.TCPAddrFromAddrPort(p.remote) }
func (p *pipeConn) SetDeadline(time.Time) error      { return nil }
func (p *pipeConn) SetReadDeadline(time.Time) error  { return nil }
func (p *pipeConn) SetWriteDeadline(time.Time) error { return nil }

// machineConfig is small so every bound is reachable: connections in all
// and per IP, rooms in all and per IP, seats, the out queue. Countdown
// ticks only happen when the input says so.
func machineConfig(pool InstancePool) Config {
	cfg := testConfig(pool)
	cfg.MaxConns = 6
	cfg.MaxConnsPerIP = 3
	cfg.MaxRooms = 3
	cfg.MaxRoomsPerIP = 2
	cfg.MaxPlayers = 3
	cfg.MaxQueue = 8
	cfg.CountdownFrom = 2
	cfg.CountdownInterval = time.Hour
	return cfg
}

// FuzzMachine drives the TCP lobby's connection state machine with a
// sequence of operations decoded from the input: connections opening from
// four source IPs, well-formed requests and raw bytes on them, peers
// closing, countdowns ticking, the instance pool failing. Nothing runs
// behind the input's back (no socket, no read or write goroutine, no timer
// firing), so an input replays identically. After every operation the
// invariants hold (machineInvariants): tables within their caps, every
// membership consistent both ways, the per-IP tables equal to what exists,
// no room gone while it had members; every frame the server queues decodes
// strictly as a server-to-client message; once every peer has gone, no room
// and no connection is left.
func FuzzMachine(f *testing.F) {
	const (
		open, msg, raw, eof, tick, poolFail = 0, 1, 2, 3, 4, 5
		c1, c2                              = 1 << 3, 2 << 3
	)
	connect, list, create, join, ready, start, disc := byte(0), byte(1), byte(2), byte(3), byte(4), byte(5), byte(6)
	f.Add([]byte{open, 0, msg, create, msg, list})
	f.Add([]byte{open, 0, open, 1, msg, create, c1 | msg, join, msg, ready, c1 | msg, ready, msg, start, tick, 0, tick, 0, tick, 0})
	f.Add([]byte{open, 0, open, 0, open, 0, open, 0, msg, create, c1 | msg, create, c2 | msg, create, eof, 0, c1 | eof, 0})
	f.Add([]byte{open, 0, msg, connect, msg, ready, msg, start, c1 | msg, disc, raw, 3, 0, 1, 0x13})
	f.Add([]byte{open, 2, open, 3, msg, create, c1 | msg, join, msg, ready, c1 | msg, ready, poolFail, 1, msg, start, tick, 0, tick, 0, tick, 0, poolFail, 0, msg, start, tick, 0, tick, 0})
	f.Add([]byte{open, 0, msg, create, raw, 6, 0, 0, 0, 2, 0x0b, 0})
	// A member un-readies during the countdown: it must be cancelled.
	f.Add([]byte{open, 0, open, 1, msg, create, c1 | msg, join, msg, ready, c1 | msg, ready, msg, start, tick, 0, c1 | msg, ready, tick, 0, tick, 0})
	f.Fuzz(machineOps)
}

// machineOps is FuzzMachine's body: two bytes an operation, op (low 3
// bits) and a connection index (high 5 bits), then an argument; raw takes
// argument-many bytes after it.
func machineOps(t *testing.T, ops []byte) {
	pool := &fakePool{addr: gameAddr}
	s, err := Listen(machineConfig(pool))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var live []*conn
	gone := map[*conn]bool{}
	defer func() {
		// On a failure too: the connections' goroutines (emulated) end,
		// or Close would wait for them forever.
		for _, c := range live {
			if gone[c] {
				continue
			}
			c.readFailed(io.EOF, 0)
			for range c.out {
			}
			s.connWG.Add(-2)
			s.forget(c)
		}
	}()
	port := uint16(40000)
	// flush is the write loop: every queued frame is checked; a closed
	// connection whose queue is drained is done, as its goroutines would be.
	flush := func() {
		kept := make([]*conn, 0, len(live))
		for _, c := range live {
			done := false
		drain:
			for {
				select {
				case f, ok := <-c.out:
					if !ok {
						done = true
						break drain
					}
					checkServerFrame(t, f)
				default:
					break drain
				}
			}
			if done {
				s.connWG.Add(-2)
				s.forget(c)
				gone[c] = true
				continue
			}
			kept = append(kept, c)
		}
		live = kept
	}
	// read is the read loop over one burst of bytes from c's peer: whole
	// frames are handled, a frame cut short ends the connection (the peer
	// stopped mid-frame).
	read := func(c *conn, b []byte) {
		fr := tcpwire.NewFrameReader(bytes.NewReader(b), s.cfg.MaxFrame)
		for {
			p, err := fr.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				c.readFailed(err, fr.Length)
				return
			}
			s.st.framesIn[p[0]].Add(1)
			if !s.handle(c, p) {
				return
			}
		}
	}
	for n := 0; len(ops) >= 2 && n < 200; n++ {
		op, arg := ops[0]&7, ops[1]
		var c *conn
		if len(live) > 0 {
			c = live[int(ops[0]>>3)%len(live)]
		}
		ops = ops[2:]
		before := s.snapshotRooms()
		switch op {
		case 0: // a connection opens from one of four IPs
			port++
			nc := &pipeConn{netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1 + arg%4}), port)}
			if c, _ := s.register(nc); c != nil {
				live = append(live, c)
			}
		case 1: // a well-formed request
			if c == nil {
				continue
			}
			name := tcpwire.MakeName("p")
			if arg&0x80 != 0 {
				name = tcpwire.Name{} // empty: invalid
			}
			var m tcpwire.Message
			switch arg & 7 {
			case 0:
				m = &tcpwire.ConnectReq{PlayerName: name}
			case 1:
				m = &tcpwire.ListRoomsReq{}
			case 2:
				m = &tcpwire.CreateRoomReq{RoomName: tcpwire.MakeName("r"), PlayerName: name}
			case 3: // an existing room, or any small id
				id := uint32(arg>>3) & 7
				if r := s.nthRoom(int(id)); r != nil && arg&0x40 == 0 {
					id = r.id
				}
				m = &tcpwire.JoinRoomReq{RoomID: id, PlayerName: name}
			case 4:
				m = &tcpwire.ReadyReq{}
			case 5:
				m = &tcpwire.StartReq{}
			default:
				m = &tcpwire.Disconnect{}
			}
			read(c, tcpwire.AppendFrame(nil, m))
		case 2: // raw bytes
			k := min(int(arg), len(ops))
			b := ops[:k]
			ops = ops[k:]
			if c != nil {
				read(c, b)
			}
		case 3: // the peer closes between frames
			if c != nil {
				c.readFailed(io.EOF, 0)
			}
		case 4: // the countdown of a room ticks
			if r := s.nthRoom(int(arg)); r != nil {
				s.mu.Lock()
				gen := r.gen
				s.mu.Unlock()
				s.tick(r, gen)
			}
		case 5: // the instance pool starts or stops failing
			pool.mu.Lock()
			pool.err = nil
			if arg&1 != 0 {
				pool.err = errors.New("pool exhausted")
			}
			pool.mu.Unlock()
		}
		flush()
		if err := s.machineInvariants(before); err != nil {
			t.Fatal(err)
		}
	}
	// Every peer goes: nothing may be left behind.
	for _, c := range live {
		c.readFailed(io.EOF, 0)
	}
	flush()
	if len(live) != 0 {
		t.Fatalf("%d connections never finished", len(live))
	}
	if err := s.machineInvariants(nil); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.rooms) != 0 || len(s.conns) != 0 || len(s.roomsByIP) != 0 || len(s.connsByIP) != 0 {
		t.Fatalf("left behind: %d rooms, %d conns, rooms by IP %v, conns by IP %v",
			len(s.rooms), len(s.conns), s.roomsByIP, s.connsByIP)
	}
}

// checkServerFrame decodes one queued frame (length prefix included)
// strictly and wants a server-to-client type.
func checkServerFrame(t *testing.T, f []byte) {
	t.Helper()
	fr := tcpwire.NewFrameReader(bytes.NewReader(f), tcpwire.DefaultMaxFrame)
	p, err := fr.Next()
	if err != nil {
		t.Fatalf("queued frame % x: %v", f, err)
	}
	if _, err := fr.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("queued frame % x is not one frame", f)
	}
	m, err := tcpwire.Decode(p)
	if err != nil {
		t.Fatalf("queued frame % x: %v", f, err)
	}
	switch m.Type() {
	case tcpwire.TypeListRoomsReq, tcpwire.TypeCreateRoomReq, tcpwire.TypeJoinRoomReq,
		tcpwire.TypeConnectReq, tcpwire.TypeReadyReq, tcpwire.TypeStartReq, tcpwire.TypeDisconnect:
		t.Fatalf("server queued client-to-server %v", m.Type())
	}
}

func (s *Server) nthRoom(k int) *room {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.rooms) == 0 {
		return nil
	}
	return s.rooms[k%len(s.rooms)]
}

func (s *Server) snapshotRooms() []*room {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*room(nil), s.rooms...)
}

// machineInvariants checks the lobby between two operations; before is the
// room list before the last one (nil: not checked).
func (s *Server) machineInvariants(before []*room) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cfg
	if len(s.doomed) != 0 || len(s.toClose) != 0 {
		return fmt.Errorf("%d doomed, %d to close after unlock", len(s.doomed), len(s.toClose))
	}
	if len(s.conns) > c.MaxConns || len(s.rooms) > c.MaxRooms {
		return fmt.Errorf("%d conns (max %d), %d rooms (max %d)", len(s.conns), c.MaxConns, len(s.rooms), c.MaxRooms)
	}
	for _, r := range before {
		if !r.removed && !containsRoom(s.rooms, r) {
			return fmt.Errorf("room %d vanished without being removed", r.id)
		}
		if r.removed && len(r.members) != 0 {
			return fmt.Errorf("room %d removed with %d members", r.id, len(r.members))
		}
	}
	byIP := map[netip.Addr]int{}
	for cn := range s.conns {
		count(byIP, cn.ip, 1)
		if cn.room == nil {
			if cn.member != nil {
				return errors.New("a connection has a member but no room")
			}
			continue
		}
		if cn.closed {
			return fmt.Errorf("a closed connection is still in room %d", cn.room.id)
		}
		if !containsRoom(s.rooms, cn.room) || cn.room.removed {
			return fmt.Errorf("a connection is in room %d, which is gone", cn.room.id)
		}
		n := 0
		for _, mb := range cn.room.members {
			if mb.c == cn {
				n++
				if mb != cn.member {
					return fmt.Errorf("room %d: member record differs from the connection's", cn.room.id)
				}
			}
		}
		if n != 1 {
			return fmt.Errorf("a connection is %d times a member of room %d", n, cn.room.id)
		}
	}
	if !maps.Equal(byIP, s.connsByIP) {
		return fmt.Errorf("conns by IP %v, connections say %v", s.connsByIP, byIP)
	}
	owners := map[netip.Addr]int{}
	ids := map[uint32]bool{}
	for _, r := range s.rooms {
		if r.id == 0 || ids[r.id] || r.removed {
			return fmt.Errorf("room %d: zero, doubled or removed", r.id)
		}
		ids[r.id] = true
		count(owners, r.owner, 1)
		if len(r.members) == 0 || len(r.members) > c.MaxPlayers {
			return fmt.Errorf("room %d has %d members (max %d)", r.id, len(r.members), c.MaxPlayers)
		}
		slots := map[uint8]bool{}
		hashes := map[uint64]bool{}
		for _, mb := range r.members {
			if mb.c.room != r || mb.c.member != mb {
				return fmt.Errorf("room %d lists a member whose connection is elsewhere", r.id)
			}
			if _, ok := s.conns[mb.c]; !ok {
				return fmt.Errorf("room %d lists a forgotten connection", r.id)
			}
			n := mb.info.Number
			if n < 1 || int(n) > c.MaxPlayers || slots[n] || hashes[mb.info.Hash] || mb.info.Hash == 0 {
				return fmt.Errorf("room %d: slot %d or hash %x doubled or out of range", r.id, n, mb.info.Hash)
			}
			slots[n], hashes[mb.info.Hash] = true, true
		}
		if r.state == stateWaiting && r.timer != nil {
			return fmt.Errorf("room %d waiting with a countdown timer", r.id)
		}
		if r.state == stateCountdown {
			for _, mb := range r.members {
				if !mb.info.Ready {
					return fmt.Errorf("room %d counts down with player %d not ready", r.id, mb.info.Number)
				}
			}
		}
	}
	if !maps.Equal(owners, s.roomsByIP) {
		return fmt.Errorf("rooms by IP %v, rooms say %v", s.roomsByIP, owners)
	}
	for ip, n := range s.roomsByIP {
		if c.MaxRoomsPerIP > 0 && n > c.MaxRoomsPerIP {
			return fmt.Errorf("%v owns %d rooms, cap %d", ip, n, c.MaxRoomsPerIP)
		}
	}
	for ip, n := range s.connsByIP {
		if c.MaxConnsPerIP > 0 && n > c.MaxConnsPerIP {
			return fmt.Errorf("%v has %d connections, cap %d", ip, n, c.MaxConnsPerIP)
		}
	}
	return nil
}

func containsRoom(rooms []*room, r *room) bool {
	for _, x := range rooms {
		if x == r {
			return true
		}
	}
	return false
}
