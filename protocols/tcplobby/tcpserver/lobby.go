package tcpserver

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/lobbybench/lobbybench/protocols/tcplobby/tcpwire"
)

type roomState uint8

const (
	stateWaiting   roomState = iota // players join, toggle ready
	stateCountdown                  // COUNTDOWN ticks running; joins refused
	statePlaying                    // GAME_START sent; joins refused
)

// room is one lobby room. Guarded by Server.mu.
type room struct {
	id        uint32
	name      tcpwire.Name
	members   []*member // join order; members[0] is the host
	state     roomState
	gen       uint64 // bumped on every countdown start/cancel; stale timers see a mismatch
	remaining int    // COUNTDOWN value last sent
	timer     *time.Timer
	removed   bool
	owner     netip.Addr // IP of the connection that created it (Server.roomsByIP)
}

// member is one player of a room.
type member struct {
	c    *conn
	info tcpwire.PlayerInfo
}

func (r *room) stopTimer() {
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
}

// handle dispatches one well-framed payload p. It reports whether the
// reader should keep reading.
func (s *Server) handle(c *conn, p []byte) bool {
	t, err := tcpwire.CheckSize(p)
	s.mu.Lock()
	defer s.unlock()
	if c.closed {
		return false
	}
	if err != nil {
		why := errWrongSize
		if tcpwire.RuleOf(err) == tcpwire.RuleTypeUnknown {
			why = errTypeUnknown
		}
		return s.badFrameLocked(c, why, err.Error())
	}
	o := tcpwire.Options{Lenient: true} // names are normalised, not rejected (seed §8.3)
	switch t {
	case tcpwire.TypeListRoomsReq:
		s.listLocked(c)
	case tcpwire.TypeConnectReq:
		var m tcpwire.ConnectReq
		if err := m.DecodeOpts(p, o); err != nil {
			return s.badFrameLocked(c, errWrongSize, err.Error())
		}
		s.connectLocked(c, &m)
	case tcpwire.TypeCreateRoomReq:
		var m tcpwire.CreateRoomReq
		if err := m.DecodeOpts(p, o); err != nil {
			return s.badFrameLocked(c, errWrongSize, err.Error())
		}
		s.createLocked(c, &m)
	case tcpwire.TypeJoinRoomReq:
		var m tcpwire.JoinRoomReq
		if err := m.DecodeOpts(p, o); err != nil {
			return s.badFrameLocked(c, errWrongSize, err.Error())
		}
		s.joinLocked(c, &m)
	case tcpwire.TypeReadyReq:
		s.readyLocked(c)
	case tcpwire.TypeStartReq:
		s.startLocked(c)
	case tcpwire.TypeDisconnect:
		s.dropLocked(c, closeDisconnect, nil, true)
		return false
	default:
		return s.badFrameLocked(c, errWrongDirection,
			fmt.Sprintf("%v is a server-to-client message", t))
	}
	return true
}

// badFrameLocked answers ERROR_MSG and closes (tcp-lobby.md §7).
func (s *Server) badFrameLocked(c *conn, why reason, text string) bool {
	s.st.errors[why].Add(1)
	s.dropLocked(c, closeBadFrame, errorFrame(tcpwire.ErrCodeServerError, text), true)
	return false
}

// refuseLocked answers ERROR_MSG code and keeps the connection.
func (s *Server) refuseLocked(c *conn, why reason, code tcpwire.ErrorCode, text string) {
	s.st.errors[why].Add(1)
	s.sendLocked(c, errorFrame(code, text))
}

func (s *Server) listLocked(c *conn) {
	var m tcpwire.ListRoomsAck
	for _, r := range s.rooms {
		if int(m.Count) == len(m.Rooms) {
			break
		}
		m.Rooms[m.Count] = tcpwire.RoomInfo{
			ID:          r.id,
			Name:        r.name,
			PlayerCount: uint8(len(r.members)),
			MaxPlayers:  uint8(s.cfg.MaxPlayers),
			InGame:      r.state != stateWaiting,
		}
		m.Count++
	}
	s.sendLocked(c, frame(&m))
}

func (s *Server) connectLocked(c *conn, m *tcpwire.ConnectReq) {
	name, ok := cleanName(m.PlayerName)
	if !ok {
		s.st.errors[errInvalidName].Add(1)
		s.sendLocked(c, frame(&tcpwire.ConnectAck{}))
		return
	}
	c.name = name
	if c.hash == 0 {
		c.hash = nonZeroRand()
	}
	s.sendLocked(c, frame(&tcpwire.ConnectAck{Success: true, PlayerHash: c.hash}))
}

func (s *Server) createLocked(c *conn, m *tcpwire.CreateRoomReq) {
	name, ok := cleanName(m.PlayerName)
	if !ok {
		s.refuseLocked(c, errInvalidName, tcpwire.ErrCodeInvalidName, "invalid player name: empty")
		return
	}
	roomName, _ := cleanName(m.RoomName)
	// A player is in one room at a time: creating leaves the current one.
	// A CREATE refused for lack of rooms changes nothing, so it must not
	// cost the player the room it is in; leaving counts as freeing a room
	// only when the player is its last member.
	freed := 0
	if c.room != nil && len(c.room.members) == 1 {
		freed = 1
	}
	if len(s.rooms)-freed >= s.cfg.MaxRooms {
		s.st.errors[errRoomsExhausted].Add(1)
		s.sendLocked(c, frame(&tcpwire.CreateRoomAck{})) // RoomID 0 = failed
		return
	}
	owned := s.roomsByIP[c.ip]
	if freed == 1 && c.room.owner == c.ip {
		owned--
	}
	if s.cfg.MaxRoomsPerIP > 0 && owned >= s.cfg.MaxRoomsPerIP {
		s.st.errors[errRoomsPerIP].Add(1)
		s.sendLocked(c, frame(&tcpwire.CreateRoomAck{}))
		return
	}
	s.leaveLocked(c)
	r := &room{id: s.newRoomIDLocked(), name: roomName, owner: c.ip}
	count(s.roomsByIP, r.owner, 1)
	s.rooms = append(s.rooms, r)
	s.st.roomsCreated.Add(1)
	mb := s.addMemberLocked(r, c, name)
	s.sendLocked(c, frame(&tcpwire.CreateRoomAck{RoomID: r.id, PlayerHash: mb.info.Hash}))
	s.broadcastLocked(r, frame(roomUpdate(r)), nil)
}

func (s *Server) joinLocked(c *conn, m *tcpwire.JoinRoomReq) {
	name, ok := cleanName(m.PlayerName)
	if !ok {
		s.refuseLocked(c, errInvalidName, tcpwire.ErrCodeInvalidName, "invalid player name: empty")
		return
	}
	var r *room
	if m.RoomID != 0 {
		for _, x := range s.rooms {
			if x.id == m.RoomID {
				r = x
				break
			}
		}
	}
	fail := func(why reason, st tcpwire.JoinStatus) {
		s.st.errors[why].Add(1)
		s.sendLocked(c, frame(&tcpwire.JoinRoomAck{Status: st}))
	}
	switch {
	case r == nil:
		fail(errRoomNotFound, tcpwire.JoinRoomNotFound)
		return
	case r == c.room:
		// Already a member: answer with the current room, change nothing.
		s.sendLocked(c, frame(joinAck(r, c.member.info.Hash)))
		return
	case r.state != stateWaiting:
		fail(errRoomInGame, tcpwire.JoinRoomInGame)
		return
	case len(r.members) >= s.cfg.MaxPlayers:
		fail(errRoomFull, tcpwire.JoinRoomFull)
		return
	}
	s.leaveLocked(c)
	mb := s.addMemberLocked(r, c, name)
	s.sendLocked(c, frame(joinAck(r, mb.info.Hash)))
	s.broadcastLocked(r, frame(&tcpwire.PlayerJoin{Player: mb.info}), c)
	s.broadcastLocked(r, frame(roomUpdate(r)), nil)
}

func (s *Server) readyLocked(c *conn) {
	r := c.room
	if r == nil {
		s.refuseLocked(c, errNotInRoom, tcpwire.ErrCodeRoomNotFound, "not in a room")
		return
	}
	if r.state == statePlaying {
		s.st.errors[errIgnored].Add(1)
		return
	}
	mb := c.member
	mb.info.Ready = !mb.info.Ready
	if r.state == stateCountdown && !mb.info.Ready {
		s.cancelLocked(r) // START needs everyone ready until GAME_START
	}
	s.broadcastLocked(r, frame(&tcpwire.PlayerReady{PlayerHash: mb.info.Hash, Ready: mb.info.Ready}), nil)
	s.broadcastLocked(r, frame(roomUpdate(r)), nil)
}

func (s *Server) startLocked(c *conn) {
	r := c.room
	switch {
	case r == nil:
		s.refuseLocked(c, errNotInRoom, tcpwire.ErrCodeRoomNotFound, "not in a room")
		return
	case r.members[0].c != c:
		s.refuseLocked(c, errNotHost, tcpwire.ErrCodeNotHost, "only the host can start the game")
		return
	case r.state != stateWaiting:
		s.st.errors[errIgnored].Add(1) // already counting down or playing
		return
	}
	for _, mb := range r.members {
		if !mb.info.Ready {
			s.refuseLocked(c, errNotAllReady, tcpwire.ErrCodeNotAllReady, "not all players are ready")
			return
		}
	}
	s.st.countdowns.Add(1)
	r.state = stateCountdown
	r.gen++
	r.remaining = s.cfg.CountdownFrom
	s.broadcastLocked(r, frame(&tcpwire.Countdown{Seconds: uint8(r.remaining)}), nil)
	s.armLocked(r)
}

// armLocked schedules r's next countdown step.
func (s *Server) armLocked(r *room) {
	gen := r.gen
	r.timer = time.AfterFunc(s.cfg.CountdownInterval, func() { s.tick(r, gen) })
}

// tick is one countdown step: the next COUNTDOWN, or after the last one the
// instance allocation and GAME_START.
func (s *Server) tick(r *room, gen uint64) {
	s.mu.Lock()
	if s.closed || r.removed || r.gen != gen || r.state != stateCountdown {
		s.mu.Unlock()
		return
	}
	r.timer = nil
	r.remaining--
	if r.remaining > 0 {
		s.broadcastLocked(r, frame(&tcpwire.Countdown{Seconds: uint8(r.remaining)}), nil)
		s.armLocked(r)
		s.unlock()
		return
	}
	n := len(r.members)
	s.allocWG.Add(1) // under mu while open: Close waits for it
	defer s.allocWG.Done()
	s.mu.Unlock()

	// The pool may bind a socket: never call it under mu. Membership cannot
	// change meanwhile without bumping gen (joins are refused, a leave or an
	// un-ready cancels).
	addr, err := s.cfg.Pool.Allocate(n)
	if err == nil {
		err = checkGameAddr(addr)
	}

	s.mu.Lock()
	if s.closed || r.removed || r.gen != gen || r.state != stateCountdown {
		s.unlock()
		if err == nil {
			if rel, ok := s.cfg.Pool.(Releaser); ok {
				rel.Release(addr) // outside mu: the pool may close a socket
			}
		}
		return
	}
	defer s.unlock()
	if err != nil {
		s.st.errors[errPool].Add(1)
		s.log.Warn("tcp game instance allocation failed", "room", r.id, "players", n, "err", err)
		s.cancelLocked(r)
		s.broadcastLocked(r, errorFrame(tcpwire.ErrCodeServerError, "no game instance available: "+err.Error()), nil)
		return
	}
	r.state = statePlaying
	s.st.games.Add(1)
	gs := gameStart(r, addr)
	var shared []byte
	if !addr.Addr().IsUnspecified() {
		shared = frame(gs)
	}
	for _, mb := range r.members {
		f := shared
		if f == nil {
			// The instance listens on every interface: announce the address
			// this client reached us on.
			gs.ServerIP = tcpwire.MakeIP(localIP(mb.c.nc).String())
			f = frame(gs)
		}
		s.sendLocked(mb.c, f)
	}
}

// cancelLocked stops r's countdown (if any) and returns it to waiting.
func (s *Server) cancelLocked(r *room) {
	if r.state != stateCountdown {
		return
	}
	r.stopTimer()
	r.state = stateWaiting
	r.gen++
	s.st.cancelled.Add(1)
}

// leaveLocked removes c from its room: PLAYER_LEFT and ROOM_UPDATE to the
// remaining members, host handed to the next player in join order, a
// countdown cancelled, an empty room removed.
func (s *Server) leaveLocked(c *conn) {
	r := c.room
	if r == nil {
		return
	}
	hash := c.member.info.Hash
	r.members = slices.DeleteFunc(r.members, func(mb *member) bool { return mb.c == c })
	c.room, c.member = nil, nil
	if len(r.members) == 0 {
		r.stopTimer()
		r.removed = true
		count(s.roomsByIP, r.owner, -1)
		s.rooms = slices.DeleteFunc(s.rooms, func(x *room) bool { return x == r })
		s.st.roomsRemoved.Add(1)
		return
	}
	s.cancelLocked(r)
	if s.closed {
		return // everyone is being disconnected: no news to send
	}
	s.broadcastLocked(r, frame(&tcpwire.PlayerLeft{PlayerHash: hash}), nil)
	s.broadcastLocked(r, frame(roomUpdate(r)), nil)
}

// addMemberLocked seats c in r at the lowest free slot with a hash unique
// in the room (the CONNECT_REQ hash when it is).
func (s *Server) addMemberLocked(r *room, c *conn, name tcpwire.Name) *member {
	var used [tcpwire.MaxPlayers + 1]bool
	for _, mb := range r.members {
		used[mb.info.Number] = true
	}
	slot := uint8(1)
	for used[slot] {
		slot++
	}
	hash := c.hash
	for hash == 0 || r.hasHash(hash) {
		hash = nonZeroRand()
	}
	mb := &member{c: c, info: tcpwire.PlayerInfo{Number: slot, Hash: hash, Name: name}}
	r.members = append(r.members, mb)
	c.room, c.member = r, mb
	return mb
}

func (r *room) hasHash(h uint64) bool {
	for _, mb := range r.members {
		if mb.info.Hash == h {
			return true
		}
	}
	return false
}

// broadcastLocked queues the same frame f to every member of r except skip.
func (s *Server) broadcastLocked(r *room, f []byte, skip *conn) {
	for _, mb := range r.members {
		if mb.c != skip {
			s.sendLocked(mb.c, f)
		}
	}
}

// newRoomIDLocked returns a non-zero id not in use, increasing.
func (s *Server) newRoomIDLocked() uint32 {
	for {
		s.lastRoom++
		if s.lastRoom == 0 {
			continue
		}
		if !slices.ContainsFunc(s.rooms, func(r *room) bool { return r.id == s.lastRoom }) {
			return s.lastRoom
		}
	}
}

func roomUpdate(r *room) *tcpwire.RoomUpdate {
	m := &tcpwire.RoomUpdate{Count: uint8(len(r.members))}
	for i, mb := range r.members {
		m.Players[i] = mb.info
	}
	return m
}

func joinAck(r *room, hash uint64) *tcpwire.JoinRoomAck {
	m := &tcpwire.JoinRoomAck{Status: tcpwire.JoinSuccess, PlayerHash: hash, Count: uint8(len(r.members))}
	for i, mb := range r.members {
		m.Players[i] = mb.info
	}
	return m
}

// spawn holds the spawn position of each slot (1-4): left edge, spread
// vertically, as an R-Type-like game expects.
var spawn = [tcpwire.MaxPlayers][2]float32{{100, 150}, {100, 300}, {100, 450}, {100, 600}}

func gameStart(r *room, addr netip.AddrPort) *tcpwire.GameStart {
	m := &tcpwire.GameStart{
		ServerIP:    tcpwire.MakeIP(addr.Addr().Unmap().WithZone("").String()),
		UDPPort:     addr.Port(),
		PlayerCount: uint8(len(r.members)),
	}
	for i, mb := range r.members {
		m.Players[i] = mb.info
		m.Spawn[i] = spawn[mb.info.Number-1]
	}
	return m
}

// checkGameAddr rejects what GAME_START cannot carry.
func checkGameAddr(a netip.AddrPort) error {
	if !a.IsValid() || a.Port() == 0 {
		return fmt.Errorf("pool returned invalid address %v", a)
	}
	if s := a.Addr().Unmap().WithZone("").String(); len(s) >= tcpwire.IPSize {
		return fmt.Errorf("address %s does not fit GameStartInfo.ServerIP char[%d]", s, tcpwire.IPSize)
	}
	return nil
}

// localIP returns the local address of nc, unmapped.
func localIP(nc net.Conn) netip.Addr {
	if a, ok := nc.LocalAddr().(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap().WithZone("")
	}
	return netip.IPv4Unspecified()
}

// cleanName normalises a char[32] name (tcp-lobby.md §8.3) as
// tcplobby.MakeName would, without allocating: the bytes before the first
// NUL, an unterminated name truncated to 31 bytes on a rune boundary, zero
// padding. ok is false for an empty name.
func cleanName(n tcpwire.Name) (out tcpwire.Name, ok bool) {
	i := bytes.IndexByte(n[:], 0)
	if i < 0 {
		i = len(n) - 1
		j := i
		for j > 0 && i-j < utf8.UTFMax-1 && !utf8.RuneStart(n[j]) {
			j--
		}
		if utf8.RuneStart(n[j]) {
			i = j
		}
	}
	copy(out[:i], n[:i])
	return out, i > 0
}

func nonZeroRand() uint64 {
	for {
		if h := rand.Uint64(); h != 0 {
			return h
		}
	}
}
