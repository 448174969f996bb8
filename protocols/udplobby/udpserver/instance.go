package udpserver

import (
	"errors"
	"net"
	"net/netip"
	"time"

	"github.com/lobbybench/lobbybench/internal/pktinfo"
	"github.com/lobbybench/lobbybench/protocols/udplobby/udpwire"
)

// Reasons carried by SERVER_DISCONNECT (udp-lobby.md §15 leaves them open).
const (
	DisconnectTimeout  = 1 // the player was silent for IdleTimeout
	DisconnectShutdown = 2 // the instance is closing (cleanup or server shutdown)
)

// countdownFrom is the first COUNTDOWN_TICK value (3, 2, 1, then GAME_START).
const countdownFrom = 3

// instance is one game room: its own UDP socket and read loop. Every field
// below conn is guarded by Server.mu.
type instance struct {
	s     *Server
	id    uint32
	port  uint16
	slot  int        // pool slot, -1 when the OS chose the port
	owner netip.Addr // IP of the lobby client that created it; zero for Allocate
	conn  *pktinfo.Conn
	max   int

	state      udpwire.RoomState
	players    []player
	holds      []hold // oldest first
	nextPlayer uint32
	seq        uint16 // sequence of server-initiated messages
	idleSince  int64  // ns when it became empty or finished; 0 while in use
	gen        uint32 // bumped to cancel pending countdown/game timers
	left       int    // countdown ticks still to send
	timer      *time.Timer
	closed     bool
	bcast      []byte // broadcast buffer
	last       []byte // the last state message broadcast (ALL_READY, COUNTDOWN_TICK, GAME_START, GAME_END); empty while Waiting
}

type player struct {
	ep       netip.AddrPort
	local    netip.Addr // the server address ep last wrote to: the source of what it is sent
	id       uint32
	ready    bool
	lastSeen int64
}

// hold is a seat reserved by a lobby JOIN_SUCCESS (or Allocate) for a
// player who has not joined the instance yet.
type hold struct {
	ip      netip.Addr // the lobby client's IP; zero for Allocate
	expires int64
}

func newInstance(s *Server, id uint32, conn *pktinfo.Conn, slot, maxPlayers int) *instance {
	return &instance{
		s:       s,
		id:      id,
		port:    conn.LocalAddr().(*net.UDPAddr).AddrPort().Port(),
		slot:    slot,
		conn:    conn,
		max:     maxPlayers,
		players: make([]player, 0, min(maxPlayers, 16)),
		holds:   make([]hold, 0, min(maxPlayers, 16)),
		bcast:   make([]byte, 0, 64),
		last:    make([]byte, 0, 64),
	}
}

func (in *instance) empty() bool { return len(in.players) == 0 && len(in.holds) == 0 }

func (in *instance) joinable() bool {
	return in.state == udpwire.Waiting || in.state == udpwire.Countdown
}

func (in *instance) player(ep netip.AddrPort) *player {
	for i := range in.players {
		if in.players[i].ep == ep {
			return &in.players[i]
		}
	}
	return nil
}

// readLoop serves the instance socket until it is closed.
func (in *instance) readLoop() {
	s := in.s
	defer s.wg.Done()
	defer func() {
		// The socket is really closed (port free) only once this read has
		// returned, so the pool slot is released here, not in shutdown.
		s.mu.Lock()
		if in.slot >= 0 {
			s.slots[in.slot] = false
		}
		s.mu.Unlock()
	}()
	buf := make([]byte, 2048) // instance datagrams are tiny; longer ones fail U-LENGTH
	out := make([]byte, 0, 64)
	var m udpwire.Message
	for {
		n, from, local, err := in.conn.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		var open bool
		if out, open = in.receive(buf[:n], from, local, s.now(), &m, out[:0]); !open {
			return
		}
		if len(out) > 0 {
			s.send(in.conn, out, from, local)
		}
	}
}

// receive handles one datagram from `from`, appending the reply to out (left
// empty when there is none). open is false once the instance is closed.
// Malformed datagrams are counted by rule and dropped without allocating.
func (in *instance) receive(pkt []byte, from netip.AddrPort, local netip.Addr, now int64, m *udpwire.Message, out []byte) (_ []byte, open bool) {
	s := in.s
	if rule := s.idec.DecodeRule(pkt, m); rule != "" {
		s.c.drop(rule)
		return out, true
	}
	s.c.requests[m.Type].Add(1)
	// The datagram's bytes credit its source's budget before anything is
	// sent to it: a READY makes the broadcasts of ALL_READY and the first
	// tick inside handle.
	s.reach(from.Addr(), now, len(pkt), 0)
	s.mu.Lock()
	defer s.mu.Unlock()
	if in.closed {
		return out, false
	}
	out = in.handle(m, from, now, out)
	if len(out) > 0 && !s.reach(from.Addr(), now, 0, len(out)) {
		out = out[:0]
	}
	if local.IsValid() {
		// Broadcasts to this player leave from where it last wrote.
		if p := in.player(from); p != nil {
			p.local = local
		}
	}
	return out, true
}

// handle applies one well-formed client message and returns the reply to
// send (empty for none). Called with Server.mu held.
func (in *instance) handle(m *udpwire.Message, from netip.AddrPort, now int64, out []byte) []byte {
	p := in.player(from)
	if p != nil {
		p.lastSeen = now
	}
	prof := in.s.cfg.Profile
	switch m.Type {
	case udpwire.ClientHello:
		out, _ = udpwire.AppendEmpty(out, prof, udpwire.ServerHello, m.Seq)
	case udpwire.ClientPing:
		out = udpwire.AppendPong(out, prof, m.Seq, m.Value)
	case udpwire.ClientJoinRequest:
		t := udpwire.ServerJoinAccept
		if p == nil && !in.admit(from, now) {
			t = udpwire.ServerJoinDeny
			in.s.c.fail(FailDeny)
		}
		out, _ = udpwire.AppendEmpty(out, prof, t, m.Seq)
	case udpwire.ClientReady:
		if p == nil {
			in.s.c.drops[dropNotJoined].Add(1)
			break
		}
		if in.state != udpwire.Waiting {
			// Server-initiated messages are sent once and UDP may lose
			// them: a player who sends READY once the countdown started
			// (again, or for the first time after joining late) gets the
			// last state message again, byte for byte with its original
			// sequence, so a client deduplicating by sequence sees one.
			p.ready = true
			if len(in.last) > 0 {
				out = append(out, in.last...)
				in.s.c.resent.Add(1)
			}
			break
		}
		if !p.ready {
			p.ready = true
			in.maybeStart(now)
		}
	case udpwire.ClientDisconnect:
		if p == nil {
			in.s.c.drops[dropNotJoined].Add(1)
			break
		}
		in.remove(p.id, now)
	}
	return out
}

// admit adds from as a player if a seat is free or held, and reports
// whether it did. A held seat from the same IP is taken first, then one
// held by Allocate (no IP: the TCP lobby's players), then a free seat; when the
// room is full only because of holds, the oldest hold is taken (the lobby
// never handed out more seats than the room has, so this cannot
// oversubscribe, and a client whose lobby and instance sockets differ in
// IP still gets its seat).
func (in *instance) admit(from netip.AddrPort, now int64) bool {
	if !in.joinable() {
		return false
	}
	in.expireHolds(now)
	h := in.holdFor(from.Addr().Unmap())
	if h < 0 {
		h = in.holdFor(netip.Addr{}) // a seat Allocate held for a TCP player
	}
	switch {
	case h >= 0:
		in.dropHold(h)
	case len(in.players)+len(in.holds) < in.max:
	case len(in.holds) > 0:
		in.dropHold(0)
	default:
		return false
	}
	in.nextPlayer++
	in.players = append(in.players, player{ep: from, id: in.nextPlayer, lastSeen: now})
	in.idleSince = 0
	in.s.invalidate()
	return true
}

func (in *instance) holdFor(ip netip.Addr) int {
	for i, h := range in.holds {
		if h.ip == ip {
			return i
		}
	}
	return -1
}

// addHold and dropHold keep the server's per-IP seat-hold counts in step
// with the holds.
func (in *instance) addHold(h hold) {
	in.holds = append(in.holds, h)
	in.s.hold(h.ip, 1)
}

func (in *instance) dropHold(i int) {
	in.s.hold(in.holds[i].ip, -1)
	in.holds = append(in.holds[:i], in.holds[i+1:]...)
}

// expireHolds releases seats whose holder never reached the instance.
func (in *instance) expireHolds(now int64) {
	n := 0
	for _, h := range in.holds {
		if h.expires > now {
			in.holds[n] = h
			n++
		} else {
			in.s.hold(h.ip, -1)
		}
	}
	if n == len(in.holds) {
		return
	}
	in.holds = in.holds[:n]
	in.s.invalidate()
	in.settle(now)
	in.maybeStart(now)
}

// dropIdle disconnects players silent for IdleTimeout.
func (in *instance) dropIdle(now int64) {
	limit := now - int64(in.s.cfg.IdleTimeout)
	for i := 0; i < len(in.players); {
		p := in.players[i]
		if p.lastSeen >= limit {
			i++
			continue
		}
		in.bcast, _ = udpwire.Append(in.bcast[:0], in.s.cfg.Profile, &udpwire.Message{
			Header: udpwire.Header{Type: udpwire.ServerDisconnect, Seq: in.nextSeq()}, Value: DisconnectTimeout})
		in.tell(p, in.bcast, now)
		in.remove(p.id, now)
	}
}

// remove takes player id out of the room, tells the others, and cancels a
// countdown nobody is left for.
func (in *instance) remove(id uint32, now int64) {
	for i := range in.players {
		if in.players[i].id == id {
			in.players = append(in.players[:i], in.players[i+1:]...)
			break
		}
	}
	in.s.invalidate()
	in.broadcast(udpwire.ServerPlayerDisconnected, id, now)
	in.settle(now)
	in.maybeStart(now)
}

// settle records when the room became empty, and cancels a countdown when
// no player is left.
func (in *instance) settle(now int64) {
	if len(in.players) == 0 && in.state == udpwire.Countdown {
		in.cancelTimer()
		in.state = udpwire.Waiting
		in.last = in.last[:0]
		in.s.invalidate()
	}
	if in.empty() && in.idleSince == 0 {
		in.idleSince = now
	}
}

// maybeStart starts the countdown when every joined player is ready and no
// held seat is still awaited (at now).
func (in *instance) maybeStart(now int64) {
	if in.state != udpwire.Waiting || len(in.players) == 0 || len(in.holds) > 0 {
		return
	}
	for _, p := range in.players {
		if !p.ready {
			return
		}
	}
	in.state = udpwire.Countdown
	in.s.invalidate()
	in.announce(udpwire.ServerAllReady, 0, now)
	in.announce(udpwire.ServerCountdownTick, countdownFrom, now)
	in.left = countdownFrom - 1
	in.schedule(in.s.cfg.CountdownInterval)
}

func (in *instance) schedule(d time.Duration) {
	in.cancelTimer()
	gen := in.gen
	in.timer = time.AfterFunc(d, func() { in.onTimer(gen) })
}

func (in *instance) cancelTimer() {
	in.gen++
	if in.timer != nil {
		in.timer.Stop()
		in.timer = nil
	}
}

// onTimer advances the countdown (ticks, then GAME_START) or ends the game.
func (in *instance) onTimer(gen uint32) {
	in.s.mu.Lock()
	defer in.s.mu.Unlock()
	in.advance(gen, in.s.now())
}

// advance is onTimer's work at now, with Server.mu held.
func (in *instance) advance(gen uint32, now int64) {
	s := in.s
	if in.closed || gen != in.gen {
		return
	}
	switch in.state {
	case udpwire.Countdown:
		if in.left > 0 {
			in.announce(udpwire.ServerCountdownTick, uint32(in.left), now)
			in.left--
			in.schedule(s.cfg.CountdownInterval)
			return
		}
		in.state = udpwire.Playing
		s.invalidate()
		in.announce(udpwire.ServerGameStart, 0, now)
		s.c.games.Add(1)
		s.log.Debug("udp instance: game started", "room", in.id, "players", len(in.players))
		if s.cfg.GameLength > 0 {
			in.schedule(s.cfg.GameLength)
		}
	case udpwire.Playing:
		var winner uint32
		if len(in.players) > 0 {
			winner = in.players[0].id
		}
		in.announce(udpwire.ServerGameEnd, winner, now)
		in.state = udpwire.Finished
		in.idleSince = now
		s.invalidate()
	}
}

func (in *instance) nextSeq() uint16 {
	in.seq++
	return in.seq
}

// broadcast sends a server-initiated message to every player at now.
func (in *instance) broadcast(t udpwire.MsgType, v uint32, now int64) {
	m := udpwire.Message{Header: udpwire.Header{Type: t, Seq: in.nextSeq()}, Value: v}
	var err error
	in.bcast, err = udpwire.Append(in.bcast[:0], in.s.cfg.Profile, &m)
	if err != nil {
		return
	}
	for _, p := range in.players {
		in.tell(p, in.bcast, now)
	}
}

// tell sends a server-initiated message b to p at now, if p's IP may still
// get b back (Server.reach: such a message is paid from its budget, with no
// request to credit it). A legitimate client's whole game fits with room to
// spare (spec header; rtype17 in brackets, 9 bytes more a message): its
// JOIN_REQUEST and READY, 12 [21] bytes each, credit 3 × 24 = 72 [126]
// bytes; it is sent JOIN_ACCEPT 12 [21], ALL_READY 12 [21], three
// COUNTDOWN_TICKs of 13 [22] and GAME_START 12 [21], 75 [129] bytes, then
// GAME_END 16 [25] and SERVER_DISCONNECT 13 [22]: 104 [176] in all, 32
// [50] beyond its credit, against a bucket of at least 16384 bytes by
// default that refills 16384 bytes a second (the countdown alone lasts
// 3 s). A refused message is not lost for good: the client's next READY
// credits 36 [63] bytes and is answered with the last state message.
func (in *instance) tell(p player, b []byte, now int64) {
	if in.s.reach(p.ep.Addr(), now, 0, len(b)) {
		in.s.send(in.conn, b, p.ep, p.local)
	}
}

// announce broadcasts a state message and keeps it, to resend to a player
// who asks again with CLIENT_READY.
func (in *instance) announce(t udpwire.MsgType, v uint32, now int64) {
	in.broadcast(t, v, now)
	in.last = append(in.last[:0], in.bcast...)
}

// shutdown tells the players and closes the socket and timers; the caller
// removes the room. Called with Server.mu held.
func (in *instance) shutdown(reason uint32, now int64) {
	if in.closed {
		return
	}
	in.broadcast(udpwire.ServerDisconnect, reason, now)
	in.cancelTimer()
	in.closed = true
	in.conn.Close()
	in.s.c.destroyed.Add(1)
	in.s.log.Debug("udp instance closed", "room", in.id, "port", in.port)
}
